/*
 * A backend on a Ceph RBD image, through librbd (librbd.h, Ceph 16.2).
 *
 * READ and WRITE without PI go through submit_rw: rbd_aio_readv /
 * rbd_aio_writev started on the event loop's thread, completed on librbd's,
 * so a command waiting for the cluster holds no worker.  The other calls
 * are librbd's synchronous ones, made on a worker thread as the file
 * backend's are (readv / writev: the aio call, waited for).  The connection is opened
 * with the librbd cache off (rbd_cache = false), so a write librbd
 * acknowledges has been acknowledged by the OSDs, which do so once the
 * write is on every replica's journal or store ("RBD cache config
 * settings", https://docs.ceph.com/en/pacific/rbd/rbd-config-ref/; "Data
 * durability", https://docs.ceph.com/en/pacific/architecture/): every
 * completed write is durable, FUA needs nothing more and flush is
 * rbd_flush, which then has nothing to write back.
 *
 * Deallocation: discard is rbd_write_zeroes without THICK_PROVISION, which
 * deallocates the whole objects of the range and zeroes its partial ones,
 * so later reads return zeros whatever the range's alignment (rbd_discard
 * skips partial objects by default: rbd_skip_partial_discard).
 *
 * One writer per image: a writable image is opened with its exclusive lock
 * held (rbd_lock_acquire, RBD_LOCK_MODE_EXCLUSIVE), so another client's
 * writes and lock attempts fail with -EROFS while this one serves it.  The
 * lock owner's address is recorded in p->owner_record; a lock held by the
 * address recorded there is this LU's own from before a crash (the caller
 * guarantees that only one process uses the record) and is broken, which
 * blocklists that dead client.  A lock held by anyone else is not: opening
 * fails.  When another client breaks this one's lock, Ceph blocklists this
 * client and every later call fails with -ESHUTDOWN: a node that lost its
 * image never writes to it again ("Exclusive locking",
 * https://docs.ceph.com/en/pacific/rbd/rbd-exclusive-locks/).
 *
 * Opened later (be_rbd_open_later): when the image cannot be had at
 * start-up (the cluster out of reach, the pool or the image missing, its
 * lock held by a live client), a thread of the backend's own tries again
 * every LATER_RETRY_S seconds; until it succeeds every call fails with
 * -ESHUTDOWN and ready() says false.  With p->ask_holder each attempt asks
 * for a lock another client holds (rbd_lock_acquire), which librbd grants
 * once that client has released it or died (then librbd breaks the dead client's
 * lock, which blocklists it): the failover of a node in standby.  The
 * client that takes the lock writes p->holder_note beside the image's state
 * (omap key "holder" of the state object); an attempt that finds the lock
 * held reads it, so a node in standby knows who holds the image
 * (backend_ops.holder_note: REPORT TARGET PORT GROUPS of every node names
 * the same group active).  A client with a note also beats beside the
 * image, and reads the others' heartbeats (be_rbd_beat.c,
 * backend_ops.peer_alive: a dead node's group shows offline).  A waiting
 * client asks the holder through a notification of the state object,
 * which the holder watches (be_rbd_ask.c: backend_ops.ask_holder, serve).
 *
 * Atomic writes: RADOS applies each operation on an object whole, and
 * librbd makes a write that lies inside one object one write operation
 * ("Data striping", https://docs.ceph.com/en/pacific/architecture/), so
 * write_atomic takes a range inside one object (atomic_unit: the object
 * size; 4 MiB, RBD's default, until an image opened later is there) and
 * refuses others (-EINVAL); a write across objects is not all or nothing.
 * Not offered: several ranges as one unit, allocation counts
 * (-EOPNOTSUPP), the power cut.
 * BE_IO_NOWAIT calls answer -EAGAIN at once: whether an image's bytes can
 * be had without waiting is never known here.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rados/librados.h>
#include <rbd/librbd.h>

#include "backend.h"
#include "be_rbd_ask.h"
#include "be_rbd_beat.h"

struct later;
struct fence_watch;

#define STATE_NAME_MAX 64
#define STATE_BLOBS_MAX 64 /* omap values read at once: more than the core keeps */
#define NOTE_MAX 64
#define NOTE_KEY "holder" /* the omap key of the lock holder's note (backend_ops.holder_note) */

/* A named blob of state (backend_ops.state_load / state_store), as last read or written. */
struct state_blob {
	struct state_blob *next;
	char name[STATE_NAME_MAX];
	size_t len;
	uint8_t data[];
};

struct be_rbd {
	struct backend be;
	rados_t cluster;
	rados_ioctx_t ioctx;
	rbd_image_t image;
	struct later *later; /* be_rbd_open_later; NULL: opened at once */
	char owner[256];     /* the lock owner's address, ours once take_lock took it; "" without a lock */
	char state_oid[300]; /* the object whose omap holds the state blobs: "sbcemu_state.<image>" */
	uint64_t object_size; /* the image's (rbd_stat), once open */
	pthread_mutex_t blobs_lock;
	struct state_blob *blobs;
	char note[NOTE_MAX]; /* be_rbd_params.holder_note: written with the lock; "" none */
	/* While another client holds the image: a connection of its own that reads its state (state_peek). */
	pthread_mutex_t peek_lock;
	struct be_rbd *peek; /* cluster, ioctx and state_oid only; NULL until the first peek */
	struct rbd_beat *beat; /* this node's heartbeat and the others' (be_rbd_beat.c); NULL without a note */
	struct fence_watch *watches; /* [watch_lock] its watches of the state object (fence_watch_start) */
	struct rbd_asks *asks; /* the waiting clients' questions, while it holds the image (be_rbd_ask.c) */
	struct rbd_asks *tells; /* the holder's notices, while it waits (be_rbd_ask.c) */
	struct rbd_listen *listen; /* its watch for them while it waits: the later thread's, then release's */
};

#define LATER_RETRY_S 5
#define DEFAULT_OBJECT_SIZE (4u << 20) /* rbd_default_order 22 */

/* A fenced connection's handles, kept open until the process exits (keep_fenced). */
struct retired {
	struct retired *next;
	rados_t cluster;
	rados_ioctx_t ioctx;
	rbd_image_t image;
};

/*
 * The image opened on a thread of its own (be_rbd_open_later), and opened
 * again after a fencing (rejoin).
 */
struct later {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool ready;      /* the image is open: read with __atomic_load_n, acquire */
	bool running;    /* the thread has not ended */
	bool started;    /* the thread was made and is not joined yet */
	bool rejoin;     /* be_rbd_params.rejoin: fenced, the image is opened again (rejoin) */
	bool stop;       /* the backend was closed: the thread ends */
	bool detached;   /* ... and frees it: its attempt outlasted the close's wait */
	char last_error[512]; /* why the last attempt failed */
	char seen_note[NOTE_MAX]; /* the holder's note as the last attempt read it; "" none */
	uint64_t size;
	bool read_only;
	struct be_rbd_params p;
	char conf[4096], id[256], pool[256], image[256], owner_record[4096], note[NOTE_MAX];
};

/* Whether the image is there to be used (always, unless be_rbd_open_later is still trying). */
static bool usable(const struct be_rbd *r)
{
	return !r->later || __atomic_load_n(&r->later->ready, __ATOMIC_ACQUIRE);
}

static struct be_rbd *be_rbd_from(struct backend *be)
{
	return (struct be_rbd *)((char *)be - offsetof(struct be_rbd, be));
}

/* The handles, which rejoin replaces while calls made with the old ones may still run. */
static rbd_image_t image_of(struct be_rbd *r)
{
	return __atomic_load_n(&r->image, __ATOMIC_ACQUIRE);
}

static rados_ioctx_t ioctx_of(struct be_rbd *r)
{
	return __atomic_load_n(&r->ioctx, __ATOMIC_ACQUIRE);
}

static void rejoin(struct be_rbd *r);
static struct later *later_new(const struct be_rbd_params *p, uint64_t size, bool read_only, const char *why);

/* A result from the cluster: -ESHUTDOWN once another client broke our lock (blocklisted: rejoin). */
static int seen(struct be_rbd *r, int rc)
{
	if (rc == -ESHUTDOWN)
		rejoin(r);
	return rc;
}

static int range_check(const struct backend *be, uint64_t offset, uint64_t len)
{
	if (!usable((const struct be_rbd *)((const char *)be - offsetof(struct be_rbd, be))))
		return -ESHUTDOWN;
	return offset > be->size || len > be->size - offset ? -EINVAL : 0;
}

static int write_check(const struct backend *be, uint64_t offset, uint64_t len)
{
	int rc = range_check(be, offset, len);

	return rc ? rc : be->read_only ? -EROFS : 0;
}

/* librbd's byte counts and errors: all of want, or the negative errno (-EIO for a short count). */
static int whole(ssize_t n, size_t want)
{
	if (n < 0)
		return (int)n;
	return (size_t)n == want ? 0 : -EIO;
}

/*
 * A fenced client's handles are never closed: librbd 16.2's rbd_close
 * crashes on an image whose client is blocklisted (seen here, in
 * boost::system::system_error::what, as it gives the lock back).  They are
 * kept here, where the process's exit (and a leak checker) finds them.
 */
static pthread_mutex_t fenced_lock = PTHREAD_MUTEX_INITIALIZER;
static struct retired *fenced_handles;

/* Keeps r's handles on fenced_handles (calls still in flight may use them).  False when out of memory. */
static bool keep_fenced(const struct be_rbd *r)
{
	struct retired *kept = malloc(sizeof(*kept));

	if (!kept)
		return false;
	*kept = (struct retired){ .cluster = r->cluster, .ioctx = r->ioctx, .image = r->image };
	pthread_mutex_lock(&fenced_lock);
	kept->next = fenced_handles;
	fenced_handles = kept;
	pthread_mutex_unlock(&fenced_lock);
	return true;
}

/* Closes what r holds, or keeps it (above) when its client is fenced (rbd_flush: -ESHUTDOWN). */
static void release_handles(struct be_rbd *r)
{
	if (r->image && rbd_flush(r->image) == -ESHUTDOWN && keep_fenced(r)) {
		r->image = NULL;
		r->ioctx = NULL;
		r->cluster = NULL;
		return;
	}
	if (r->image)
		rbd_close(r->image);
	if (r->ioctx)
		rados_ioctx_destroy(r->ioctx);
	if (r->cluster)
		rados_shutdown(r->cluster);
	r->image = NULL;
	r->ioctx = NULL;
	r->cluster = NULL;
}

static void later_free(struct later *l)
{
	if (!l)
		return;
	pthread_mutex_destroy(&l->lock);
	pthread_cond_destroy(&l->cond);
	free(l);
}

static void blobs_free(struct state_blob *b)
{
	while (b) {
		struct state_blob *next = b->next;

		free(b);
		b = next;
	}
}

/*
 * A watch of this client on the state object, through the image's
 * connection, made when it takes the image with rejoin set, so that a
 * node fenced while idle rejoins in standby within seconds, not at its next
 * call to the cluster (until then it would go on reporting its group
 * active).  When its OSD session is lost the watch reports an error
 * (ENOTCONN, also what a blocklisted client that was stopped sees first;
 * EBLOCKLISTED, which is ESHUTDOWN, when the OSD refuses its ping), and
 * fence_watch_error then asks the cluster (an asynchronous stat of the
 * state object): a fenced client's answer is ESHUTDOWN, and r rejoins.
 * Any other answer (the session was lost, the OSD restarted, the client
 * was stopped for longer than osd_client_watch_timeout but nobody took the
 * image) leaves r the holder with a watch librados no longer keeps
 * ("If there is an error, the watch is no longer valid ... a new watch
 * should be created", rados_watch_check in librados.h): it lapses, and a
 * new one replaces it (fence_watch_renew), since the holder also answers
 * the waiting clients' questions through it (be_rbd_ask.c).
 * A fenced connection's watches stay with its handles (keep_fenced), their
 * callbacks doing nothing once the connection is not r's or r is closed.
 */
struct fence_watch {
	struct fence_watch *next;
	struct be_rbd *r;     /* [watch_lock] NULL once r is closed */
	rados_ioctx_t ioctx;  /* the connection it was made on */
	uint64_t cookie;
	char oid[300];        /* the state object it watches */
	bool probing;         /* [watch_lock] a stat is under way */
	bool lapsed;          /* [watch_lock] ended by an error (or never made): replaced, unwatched at close */
	uint64_t stat_size;   /* the stat's answers, unused */
	time_t stat_mtime;
};

static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;

/* Under watch_lock: w is a watch of the connection its open r uses now (not of one fenced before). */
static bool fence_watch_current(const struct fence_watch *w)
{
	return w->r && !w->lapsed && w->ioctx == __atomic_load_n(&w->r->ioctx, __ATOMIC_ACQUIRE);
}

static void fence_watch_notify(void *arg, uint64_t notify_id, uint64_t cookie, uint64_t notifier_id, void *data,
			       size_t len);
static void fence_watch_error(void *arg, uint64_t cookie, int err);

/* librados's thread: the new watch fence_watch_renew asked for is made, or not (then none is left). */
static void fence_rewatch_done(rados_completion_t c, void *arg)
{
	struct fence_watch *w = arg;
	int rc = rados_aio_get_return_value(c);

	rados_aio_release(c);
	pthread_mutex_lock(&watch_lock);
	if (rc == -ESHUTDOWN && fence_watch_current(w))
		rejoin(w->r);
	if (rc < 0)
		w->lapsed = true; /* the next call to the cluster finds a fencing; questions go unanswered */
	pthread_mutex_unlock(&watch_lock);
}

/* Under watch_lock, w current: w lapsed; a new watch of the same connection takes its place. */
static void fence_watch_renew(struct fence_watch *w)
{
	struct fence_watch *n = calloc(1, sizeof(*n));
	rados_completion_t c;

	w->lapsed = true;
	if (!n)
		return;
	n->r = w->r;
	n->ioctx = w->ioctx;
	memcpy(n->oid, w->oid, sizeof(n->oid));
	if (rados_aio_create_completion2(n, fence_rewatch_done, &c) != 0) {
		free(n);
		return;
	}
	/* Asynchronous: a synchronous call on librados's own thread could wait for that thread. */
	if (rados_aio_watch2(n->ioctx, n->oid, c, &n->cookie, fence_watch_notify, fence_watch_error, 0, n) < 0) {
		rados_aio_release(c);
		free(n);
		return;
	}
	n->next = w->r->watches;
	w->r->watches = n;
}

/*
 * librados's thread: a notification of the state object.  The waiting
 * clients' questions (be_rbd_ask.c) are kept for the holder's answer;
 * anything else is acknowledged at once, so that its notifier waits for
 * nothing.
 */
static void fence_watch_notify(void *arg, uint64_t notify_id, uint64_t cookie, uint64_t notifier_id, void *data,
			       size_t len)
{
	struct fence_watch *w = arg;
	bool kept = false;

	(void)notifier_id;
	pthread_mutex_lock(&watch_lock);
	if (fence_watch_current(w))
		kept = rbd_asks_arrived(w->r->asks, w->ioctx, w->oid, notify_id, cookie, data, len);
	pthread_mutex_unlock(&watch_lock);
	if (!kept)
		(void)rados_notify_ack(w->ioctx, w->oid, notify_id, cookie, NULL, 0);
}

/* librados's thread: the stat fence_watch_error asked for has its answer. */
static void fence_probe_done(rados_completion_t c, void *arg)
{
	struct fence_watch *w = arg;
	int rc = rados_aio_get_return_value(c);

	rados_aio_release(c);
	pthread_mutex_lock(&watch_lock);
	w->probing = false;
	if (rc == -ESHUTDOWN && fence_watch_current(w))
		rejoin(w->r);
	else if (fence_watch_current(w))
		fence_watch_renew(w);
	pthread_mutex_unlock(&watch_lock);
}

/* librados's thread: an error of the watch (above). */
static void fence_watch_error(void *arg, uint64_t cookie, int err)
{
	struct fence_watch *w = arg;
	rados_completion_t c;

	(void)cookie;
	pthread_mutex_lock(&watch_lock);
	if (err == -ESHUTDOWN && fence_watch_current(w)) {
		rejoin(w->r);
	} else if (fence_watch_current(w) && !w->probing && rados_aio_create_completion2(w, fence_probe_done, &c) == 0) {
		w->probing = rados_aio_stat(w->ioctx, w->r->state_oid, c, &w->stat_size, &w->stat_mtime) == 0;
		if (!w->probing)
			rados_aio_release(c);
	}
	pthread_mutex_unlock(&watch_lock);
}

/* r has just taken the image on its connection: the watch, when r rejoins once fenced (else nothing to do then). */
static void fence_watch_start(struct be_rbd *r)
{
	struct fence_watch *w;

	if (!r->later || !r->later->rejoin || !(w = calloc(1, sizeof(*w))))
		return;
	w->r = r;
	w->ioctx = r->ioctx;
	memcpy(w->oid, r->state_oid, sizeof(w->oid));
	if (rados_watch3(r->ioctx, r->state_oid, &w->cookie, fence_watch_notify, fence_watch_error, 0, w) < 0) {
		free(w); /* no early notice: the next call finds the fencing */
		return;
	}
	pthread_mutex_lock(&watch_lock);
	w->next = r->watches;
	r->watches = w;
	pthread_mutex_unlock(&watch_lock);
}

/* r closes: no callback acts on it any more, and the watches of its connection go. */
static void fence_watch_end(struct be_rbd *r)
{
	struct fence_watch *w, *next, *mine = NULL;
	bool gone = true;

	pthread_mutex_lock(&watch_lock);
	for (w = r->watches; w; w = next) {
		next = w->next;
		w->r = NULL;
		if (w->ioctx == r->ioctx) {
			w->next = mine;
			mine = w;
		}
	}
	r->watches = NULL;
	pthread_mutex_unlock(&watch_lock);
	/*
	 * A stat or a new watch under way ends first; a fenced client's unwatch
	 * fails: its watch stays with the kept handles.  A lapsed watch's unwatch
	 * may fail too (librados keeps its error): it calls nothing any more.
	 */
	if (!mine || rados_aio_flush(r->ioctx) != 0)
		return;
	for (w = mine; w; w = w->next)
		gone &= rados_unwatch2(r->ioctx, w->cookie) == 0 || w->lapsed;
	if (!gone || rados_watch_flush(r->cluster) != 0)
		return;
	for (w = mine; w; w = next) {
		next = w->next;
		free(w);
	}
}

static void release(struct be_rbd *r)
{
	fence_watch_end(r);
	release_handles(r);
	if (r->peek) {
		release_handles(r->peek);
		free(r->peek);
	}
	pthread_mutex_destroy(&r->peek_lock);
	later_free(r->later);
	rbd_asks_free(r->asks);
	rbd_listen_stop(r->listen);
	rbd_asks_free(r->tells);
	blobs_free(r->blobs);
	pthread_mutex_destroy(&r->blobs_lock);
	free(r);
}

/*
 * Closing gives the exclusive lock back, which needs the cluster: with the
 * cluster out of reach rbd_close waits without end.  So it runs on a thread
 * of its own, waited for at most CLOSE_WAIT_S; after that it is left to
 * finish (or to die with the process), and the lock stays with this client
 * until Ceph drops its watch, or until this LU opens again and breaks it
 * (take_lock).
 */
#define CLOSE_WAIT_S 10

struct closing {
	struct be_rbd *r;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done, abandoned;
};

static void closing_free(struct closing *c)
{
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->cond);
	free(c);
}

static void *close_thread(void *p)
{
	struct closing *c = p;
	bool abandoned;

	release(c->r);
	pthread_mutex_lock(&c->lock);
	c->done = true;
	abandoned = c->abandoned;
	pthread_cond_signal(&c->cond);
	pthread_mutex_unlock(&c->lock);
	if (abandoned)
		closing_free(c);
	return NULL;
}

/*
 * A backend still being opened: its thread is told to stop and waited for,
 * at most CLOSE_WAIT_S (an attempt can take the connection timeout, 30 s);
 * past that it is left to free the backend when its attempt ends.  True
 * when it will; false when the backend is this caller's to close (the image
 * open, or never opened).
 */
static bool stop_later(struct be_rbd *r)
{
	struct later *l = r->later;
	struct timespec until;
	bool detached;

	if (!l)
		return false;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += CLOSE_WAIT_S;
	pthread_mutex_lock(&l->lock);
	l->stop = true;
	pthread_cond_broadcast(&l->cond);
	while (l->running && pthread_cond_timedwait(&l->cond, &l->lock, &until) != ETIMEDOUT)
		;
	detached = l->detached = l->running;
	pthread_mutex_unlock(&l->lock);
	if (detached) {
		pthread_detach(l->thread);
		return true;
	}
	if (l->started)
		pthread_join(l->thread, NULL);
	l->started = false;
	return false;
}

static void be_rbd_close(struct backend *be)
{
	struct closing *c;
	pthread_condattr_t clock_attr;
	struct timespec until;
	pthread_attr_t attr;
	pthread_t thread;
	bool started;

	rbd_beat_stop(be_rbd_from(be)->beat);
	be_rbd_from(be)->beat = NULL;
	if (stop_later(be_rbd_from(be)))
		return;
	if (!be_rbd_from(be)->image) {
		release(be_rbd_from(be)); /* never opened: no lock to give back */
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		release(be_rbd_from(be));
		return;
	}
	c->r = be_rbd_from(be);
	pthread_mutex_init(&c->lock, NULL);
	pthread_condattr_init(&clock_attr);
	pthread_condattr_setclock(&clock_attr, CLOCK_MONOTONIC);
	pthread_cond_init(&c->cond, &clock_attr);
	pthread_condattr_destroy(&clock_attr);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	started = pthread_create(&thread, &attr, close_thread, c) == 0;
	pthread_attr_destroy(&attr);
	if (!started) {
		release(c->r);
		closing_free(c);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += CLOSE_WAIT_S;
	pthread_mutex_lock(&c->lock);
	while (!c->done && pthread_cond_timedwait(&c->cond, &c->lock, &until) != ETIMEDOUT)
		;
	c->abandoned = !c->done;
	pthread_mutex_unlock(&c->lock);
	if (!c->abandoned)
		closing_free(c);
}

static int be_rbd_read(struct backend *be, void *buf, size_t len, uint64_t offset)
{
	int rc = range_check(be, offset, len);

	if (rc || len == 0)
		return rc;
	return seen(be_rbd_from(be), whole(rbd_read(image_of(be_rbd_from(be)), offset, len, buf), len));
}

static int be_rbd_write(struct backend *be, const void *buf, size_t len, uint64_t offset, unsigned flags)
{
	int rc = write_check(be, offset, len);

	(void)flags; /* every acknowledged write is durable (above) */
	if (rc || len == 0)
		return rc;
	return seen(be_rbd_from(be), whole(rbd_write(image_of(be_rbd_from(be)), offset, len, buf), len));
}

/* One write inside one object: one RADOS operation, all or nothing (above). */
static int be_rbd_write_atomic(struct backend *be, const void *buf, size_t len, uint64_t offset)
{
	struct be_rbd *r = be_rbd_from(be);
	int rc = write_check(be, offset, len);
	uint64_t unit = r->object_size ? r->object_size : be->atomic_unit;

	if (rc || len == 0)
		return rc;
	if (offset / unit != (offset + len - 1) / unit)
		return -EINVAL;
	return seen(r, whole(rbd_write(image_of(r), offset, len, buf), len));
}

static size_t iov_bytes(const struct iovec *iov, unsigned iovcnt)
{
	size_t n = 0;

	for (unsigned i = 0; i < iovcnt; i++)
		n += iov[i].iov_len;
	return n;
}

/* One rbd_aio_readv / rbd_aio_writev, waited for. */
static int vectored(struct be_rbd *r, const struct iovec *iov, unsigned iovcnt, uint64_t offset, bool write)
{
	size_t len = iov_bytes(iov, iovcnt);
	rbd_completion_t c;
	ssize_t n;
	int rc;

	if (len == 0)
		return 0;
	rc = rbd_aio_create_completion(NULL, NULL, &c);
	if (rc < 0)
		return rc;
	rc = write ? rbd_aio_writev(image_of(r), iov, (int)iovcnt, offset, c)
		   : rbd_aio_readv(image_of(r), iov, (int)iovcnt, offset, c);
	if (rc < 0) {
		rbd_aio_release(c);
		return seen(r, rc);
	}
	rbd_aio_wait_for_complete(c);
	n = rbd_aio_get_return_value(c);
	rbd_aio_release(c);
	/* An asynchronous write completes with 0, a read with the bytes read (librbd.h, librbd::RBD::AioCompletion). */
	return seen(r, write && n == 0 ? 0 : whole(n, len));
}

static int be_rbd_readv(struct backend *be, const struct iovec *iov, unsigned iovcnt, uint64_t offset, unsigned flags)
{
	int rc = range_check(be, offset, iov_bytes(iov, iovcnt));

	if (rc)
		return rc;
	if (flags & BE_IO_NOWAIT)
		return -EAGAIN;
	return vectored(be_rbd_from(be), iov, iovcnt, offset, false);
}

static int be_rbd_writev(struct backend *be, const struct iovec *iov, unsigned iovcnt, uint64_t offset,
			 unsigned flags)
{
	int rc = write_check(be, offset, iov_bytes(iov, iovcnt));

	if (rc)
		return rc;
	if (flags & BE_IO_NOWAIT)
		return -EAGAIN;
	return vectored(be_rbd_from(be), iov, iovcnt, offset, true);
}

/* An asynchronous call in flight (be_rbd_submit_rw). */
struct rbd_aio {
	struct be_rbd *r;
	void (*done)(void *arg, int rc);
	void *arg;
	size_t len;
	bool write;
};

/* librbd's completion thread. */
static void aio_finished(rbd_completion_t c, void *p)
{
	struct rbd_aio *a = p;
	ssize_t n = rbd_aio_get_return_value(c);
	void (*done)(void *, int) = a->done;
	void *arg = a->arg;
	int rc = seen(a->r, a->write && n == 0 ? 0 : whole(n, a->len));

	rbd_aio_release(c);
	free(a);
	done(arg, rc);
}

static int be_rbd_submit_rw(struct backend *be, bool write, const struct iovec *iov, unsigned iovcnt, uint64_t offset,
			    unsigned flags, void (*done)(void *arg, int rc), void *arg)
{
	struct be_rbd *r = be_rbd_from(be);
	size_t len = iov_bytes(iov, iovcnt);
	struct rbd_aio *a;
	rbd_completion_t c;
	int rc = write ? write_check(be, offset, len) : range_check(be, offset, len);

	(void)flags; /* FUA: every acknowledged write is durable (above) */
	if (rc)
		return rc;
	if (len == 0 || iovcnt > INT_MAX || !(a = malloc(sizeof(*a))))
		return len == 0 ? -EINVAL : -ENOMEM;
	*a = (struct rbd_aio){ .r = r, .done = done, .arg = arg, .len = len, .write = write };
	rc = rbd_aio_create_completion(a, aio_finished, &c);
	if (rc == 0) {
		rc = write ? rbd_aio_writev(image_of(r), iov, (int)iovcnt, offset, c)
			   : rbd_aio_readv(image_of(r), iov, (int)iovcnt, offset, c);
		if (rc < 0)
			rbd_aio_release(c);
	}
	if (rc < 0)
		free(a);
	return seen(r, rc);
}

static int be_rbd_flush(struct backend *be)
{
	struct be_rbd *r = be_rbd_from(be);
	int rc;

	if (!usable(r))
		return 0; /* nothing written yet */
	/*
	 * Fenced (-ESHUTDOWN): every write this client completed is durable
	 * (the cache is off: above), so there is nothing to lose; the next
	 * read or write notices the fencing (seen), not a daemon's last flush.
	 */
	rc = rbd_flush(image_of(r));
	return rc == -ESHUTDOWN ? 0 : rc;
}

/* rbd_write_zeroes takes a size_t; so do the pieces. */
static int zero_range(struct be_rbd *r, uint64_t offset, uint64_t len, int zero_flags)
{
	const uint64_t piece = 1ull << 30;

	while (len) {
		size_t n = (size_t)(len < piece ? len : piece);
		int rc = whole(rbd_write_zeroes(image_of(r), offset, n, zero_flags, 0), n);

		if (rc)
			return seen(r, rc);
		offset += n;
		len -= n;
	}
	return 0;
}

static int be_rbd_discard(struct backend *be, uint64_t offset, uint64_t len)
{
	int rc = write_check(be, offset, len);

	return rc ? rc : zero_range(be_rbd_from(be), offset, len, 0);
}

static int be_rbd_write_zeroes(struct backend *be, uint64_t offset, uint64_t len, unsigned flags)
{
	int rc = write_check(be, offset, len);

	if (rc)
		return rc;
	return zero_range(be_rbd_from(be), offset, len,
			  (flags & BE_ZERO_MAY_DISCARD) ? 0 : RBD_WRITE_ZEROES_FLAG_THICK_PROVISION);
}

/* The first extent from start (extent_cb). */
struct extent_walk {
	uint64_t start, end;   /* the range looked at */
	uint64_t data_end;     /* allocated from start up to here (0: not known yet) */
	uint64_t hole_end;     /* a hole from start up to here (0: not known yet) */
};

/* rbd_diff_iterate2's callback: the image's allocated extents in order; -ECANCELED once the first extent is known. */
static int extent_cb(uint64_t off, size_t len, int exists, void *arg)
{
	struct extent_walk *w = arg;

	if (!exists)
		return 0;
	if (w->data_end == 0 && off > w->start) {
		w->hole_end = off;
		return -ECANCELED;
	}
	if (w->data_end && off > w->data_end)
		return -ECANCELED;
	w->data_end = off + len;
	return 0;
}

/*
 * From the image's allocation (rbd_diff_iterate2 since its creation, byte
 * for byte, through the object map where the image has one).  At most
 * EXTENT_SCAN bytes are looked at per call: the caller asks again for the
 * rest, and a scan of a large image never holds a worker for long.
 */
#define EXTENT_SCAN (1ull << 30)

static int be_rbd_extent(struct backend *be, uint64_t offset, uint64_t max_len, enum be_extent_kind *kind,
			 uint64_t *len)
{
	struct extent_walk w = { .start = offset };
	int rc = range_check(be, offset, 0);

	if (rc)
		return rc;
	if (offset >= be->size)
		return -EINVAL;
	if (max_len > be->size - offset)
		max_len = be->size - offset;
	if (max_len > EXTENT_SCAN)
		max_len = EXTENT_SCAN;
	w.end = offset + max_len;
	rc = rbd_diff_iterate2(image_of(be_rbd_from(be)), NULL, offset, max_len, 1, 0, extent_cb, &w);
	if (rc < 0 && rc != -ECANCELED)
		return seen(be_rbd_from(be), rc);
	if (w.data_end) {
		*kind = BE_EXTENT_ALLOCATED;
		*len = (w.data_end < w.end ? w.data_end : w.end) - offset;
	} else {
		*kind = BE_EXTENT_HOLE;
		*len = (w.hole_end ? w.hole_end : w.end) - offset;
	}
	return 0;
}

static int be_rbd_resize(struct backend *be, uint64_t size)
{
	int rc;

	if (!usable(be_rbd_from(be)))
		return -ESHUTDOWN;
	if (be->read_only)
		return -EROFS;
	rc = seen(be_rbd_from(be), rbd_resize(image_of(be_rbd_from(be)), size));
	if (rc == 0)
		be->size = size;
	return rc;
}

static bool be_rbd_ready(struct backend *be)
{
	return usable(be_rbd_from(be));
}

static void be_rbd_status(struct backend *be, char *buf, size_t len)
{
	struct be_rbd *r = be_rbd_from(be);

	if (r->later)
		pthread_mutex_lock(&r->later->lock); /* the owner and the error, as the thread writes them */
	if (!usable(r))
		snprintf(buf, len, "waiting for the image (tried every %d s): %s", LATER_RETRY_S,
			 r->later->last_error[0] ? r->later->last_error : "not tried yet");
	else if (r->owner[0])
		snprintf(buf, len, "open, its exclusive lock held by this node (%s)", r->owner);
	else
		snprintf(buf, len, "open read-only, without a lock");
	if (r->later)
		pthread_mutex_unlock(&r->later->lock);
}

/* ---- state blobs: the omap of one object beside the image, written by the lock's holder ---- */

static struct state_blob *blob_new(const char *name, const void *data, size_t len)
{
	struct state_blob *b = malloc(sizeof(*b) + len);

	if (b) {
		b->next = NULL;
		snprintf(b->name, sizeof(b->name), "%s", name);
		b->len = len;
		memcpy(b->data, data, len);
	}
	return b;
}

/*
 * Reads every blob of t's image into t->blobs (t: being opened, not yet
 * shared).  0 or a negative errno with the reason in err.  After the lock:
 * what was read is the last that any holder wrote.
 */
static int load_blobs(struct be_rbd *t, const struct be_rbd_params *p, char *err, size_t errlen)
{
	rados_read_op_t op;
	rados_omap_iter_t iter = NULL;
	unsigned char more = 0;
	struct state_blob **tail = &t->blobs;
	int prval = 0, rc;

	op = rados_create_read_op();
	if (!op)
		return -ENOMEM;
	rados_read_op_omap_get_vals2(op, "", "", STATE_BLOBS_MAX, &iter, &more, &prval);
	rc = rados_read_op_operate(op, t->ioctx, t->state_oid, 0);
	if (rc == 0)
		rc = prval;
	for (char *key, *val; rc == 0;) {
		size_t key_len, val_len;

		if (rados_omap_get_next2(iter, &key, &val, &key_len, &val_len) < 0 || !key)
			break;
		if (key_len >= STATE_NAME_MAX)
			continue;
		*tail = blob_new(key, val, val_len);
		if (!*tail) {
			rc = -ENOMEM;
			break;
		}
		tail = &(*tail)->next;
	}
	if (iter)
		rados_omap_get_end(iter);
	rados_release_read_op(op);
	if (rc == -ENOENT)
		rc = 0; /* no state kept yet */
	if (rc < 0)
		snprintf(err, errlen, "pool %s, object %s (the LU's state): %s", p->pool, t->state_oid, strerror(-rc));
	return rc;
}

/*
 * The holder's note (NOTE_KEY) beside the state blobs: written by the
 * client that has just taken the lock, in one operation (RADOS applies it
 * whole); read by one that could not take it.  0, or a negative errno.
 */
/*
 * One write operation on the state object of r: create it if missing, set
 * key to len bytes of val (len 0: remove the key).  RADOS applies an
 * operation whole and acknowledges it once it is durable on the object's
 * replicas; a client that lost the image's lock is blocklisted and fails
 * here (-ESHUTDOWN, EBLOCKLISTED).  0, or a negative errno.
 */
static int omap_write(struct be_rbd *r, const char *key, const char *val, size_t len)
{
	size_t key_len = strlen(key);
	rados_write_op_t op = rados_create_write_op();
	int rc;

	if (!op)
		return -ENOMEM;
	rados_write_op_create(op, LIBRADOS_CREATE_IDEMPOTENT, NULL);
	if (len)
		rados_write_op_omap_set2(op, &key, &val, &key_len, &len, 1);
	else
		rados_write_op_omap_rm_keys2(op, &key, &key_len, 1);
	rc = rados_write_op_operate2(op, ioctx_of(r), r->state_oid, NULL, 0);
	rados_release_write_op(op);
	return rc;
}

static int write_note(struct be_rbd *r, const char *note)
{
	return omap_write(r, NOTE_KEY, note, strlen(note));
}

/* The value of one omap key of the state object, read now: 0, -ENOENT, -EFBIG past max, or the store's error. */
static int read_blob(struct be_rbd *r, const char *name, uint8_t **data, size_t *len, size_t max)
{
	size_t key_len = strlen(name);
	rados_read_op_t op = rados_create_read_op();
	rados_omap_iter_t iter = NULL;
	int prval = 0, rc;

	if (!op)
		return -ENOMEM;
	rados_read_op_omap_get_vals_by_keys2(op, &name, 1, &key_len, &iter, &prval);
	rc = rados_read_op_operate(op, r->ioctx, r->state_oid, 0);
	if (rc == 0)
		rc = prval;
	if (rc == 0) {
		char *k, *v;
		size_t kl, vl;

		rc = -ENOENT;
		if (rados_omap_get_next2(iter, &k, &v, &kl, &vl) == 0 && k && v) {
			rc = vl > max ? -EFBIG : 0;
			if (rc == 0 && !(*data = malloc(vl ? vl : 1)))
				rc = -ENOMEM;
			if (rc == 0) {
				memcpy(*data, v, vl);
				*len = vl;
			}
		}
	}
	if (iter)
		rados_omap_get_end(iter);
	rados_release_read_op(op);
	return rc;
}

/* The holder's note (NOTE_KEY), NUL-terminated in buf ("" when there is none). */
static int read_note(struct be_rbd *r, char *buf, size_t len)
{
	uint8_t *v = NULL;
	size_t n = 0;
	int rc = read_blob(r, NOTE_KEY, &v, &n, SIZE_MAX);

	buf[0] = '\0';
	if (rc == 0)
		snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), (const char *)v);
	free(v);
	return rc == -ENOENT ? 0 : rc;
}

static int be_rbd_state_load(struct backend *be, const char *name, uint8_t **data, size_t *len, size_t max)
{
	struct be_rbd *r = be_rbd_from(be);
	int rc = -ENOENT;

	*data = NULL;
	*len = 0;
	if (!usable(r))
		return -ESHUTDOWN;
	pthread_mutex_lock(&r->blobs_lock);
	for (struct state_blob *b = r->blobs; b; b = b->next) {
		if (strcmp(b->name, name) != 0)
			continue;
		rc = b->len > max ? -EFBIG : 0;
		if (rc == 0 && !(*data = malloc(b->len ? b->len : 1)))
			rc = -ENOMEM;
		if (rc == 0) {
			memcpy(*data, b->data, b->len);
			*len = b->len;
		}
		break;
	}
	pthread_mutex_unlock(&r->blobs_lock);
	return rc;
}

/* Replaces the blob name whole (omap_write), then the copy served from memory. */
static int be_rbd_state_store(struct backend *be, const char *name, const uint8_t *data, size_t len)
{
	struct be_rbd *r = be_rbd_from(be);
	struct state_blob *fresh = NULL, **pp;
	int rc;

	if (!usable(r))
		return -ESHUTDOWN;
	if (strlen(name) >= STATE_NAME_MAX)
		return -ENAMETOOLONG;
	if (len && !(fresh = blob_new(name, data, len)))
		return -ENOMEM;
	rc = omap_write(r, name, (const char *)data, len);
	if (rc < 0) {
		free(fresh);
		return seen(r, rc);
	}
	pthread_mutex_lock(&r->blobs_lock);
	for (pp = &r->blobs; *pp && strcmp((*pp)->name, name) != 0; pp = &(*pp)->next)
		;
	if (*pp) {
		struct state_blob *old = *pp;

		*pp = old->next;
		free(old);
	}
	if (fresh) {
		fresh->next = r->blobs;
		r->blobs = fresh;
	}
	pthread_mutex_unlock(&r->blobs_lock);
	return 0;
}

static int connect_pool(struct be_rbd *r, const struct be_rbd_params *p, char *err, size_t errlen);

/* Under peek_lock: the connection of a waiting client (state_peek, ask_holder) goes; the next call makes another. */
static void peek_drop(struct be_rbd *r)
{
	release_handles(r->peek);
	free(r->peek);
	r->peek = NULL;
}

/* Under peek_lock: that connection, made if need be.  0 or a negative errno. */
static int peek_connect(struct be_rbd *r)
{
	char err[512];
	int rc;

	if (r->peek)
		return 0;
	if (!(r->peek = calloc(1, sizeof(*r->peek))))
		return -ENOMEM;
	rc = connect_pool(r->peek, &r->later->p, err, sizeof(err));
	snprintf(r->peek->state_oid, sizeof(r->peek->state_oid), "sbcemu_state.%s", r->later->p.image);
	if (rc < 0)
		peek_drop(r);
	return rc;
}

/*
 * Waiting for the image: the holder's blob, through a connection kept for
 * this (the attempts on the lock open and close theirs every LATER_RETRY_S).
 * A connection that failed is made again at the next call.
 */
static int be_rbd_state_peek(struct backend *be, const char *name, uint8_t **data, size_t *len, size_t max)
{
	struct be_rbd *r = be_rbd_from(be);
	int rc;

	if (usable(r))
		return be_rbd_state_load(be, name, data, len, max);
	*data = NULL;
	*len = 0;
	pthread_mutex_lock(&r->peek_lock);
	rc = peek_connect(r);
	if (rc == 0)
		rc = read_blob(r->peek, name, data, len, max);
	if (rc < 0 && rc != -ENOENT && rc != -EFBIG && rc != -ENOMEM && r->peek)
		peek_drop(r);
	pthread_mutex_unlock(&r->peek_lock);
	return rc;
}

/* Waiting for the image: a question to its holder (be_rbd_ask.c), through the same connection. */
static int be_rbd_ask_holder(struct backend *be, const uint8_t *req, size_t len, uint8_t **reply, size_t *reply_len)
{
	struct be_rbd *r = be_rbd_from(be);
	int rc;

	*reply = NULL;
	*reply_len = 0;
	if (usable(r))
		return -ENOTCONN; /* this client is the holder */
	pthread_mutex_lock(&r->peek_lock);
	rc = peek_connect(r);
	if (rc == 0)
		rc = rbd_ask(r->peek->ioctx, r->peek->state_oid, req, len, reply, reply_len);
	if (rc < 0 && rc != -ENOTCONN && rc != -ENOMEM && rc != -EMSGSIZE && r->peek)
		peek_drop(r);
	pthread_mutex_unlock(&r->peek_lock);
	return rc;
}

/* Holding the image: a notice to the clients that wait for it (be_rbd_ask.c, rbd_tell). */
static int be_rbd_tell_peers(struct backend *be, const uint8_t *msg, size_t len)
{
	struct be_rbd *r = be_rbd_from(be);

	if (!usable(r) || !r->state_oid[0])
		return -ENOTCONN;
	return seen(r, rbd_tell(ioctx_of(r), r->state_oid, msg, len));
}

/* The questions kept while it holds the image, and the notices kept while it waits. */
static void be_rbd_serve(struct backend *be, void (*arrived)(void *arg), void *arg)
{
	rbd_asks_serve(be_rbd_from(be)->asks, arrived, arg);
	rbd_asks_serve(be_rbd_from(be)->tells, arrived, arg);
}

static int be_rbd_take_request(struct backend *be, uint8_t **req, size_t *len, void **token)
{
	int rc = rbd_asks_take(be_rbd_from(be)->asks, req, len, token);

	return rc == -ENOENT ? rbd_asks_take(be_rbd_from(be)->tells, req, len, token) : rc;
}

static void be_rbd_answer(struct backend *be, void *token, const uint8_t *reply, size_t len)
{
	if (!rbd_asks_answer(be_rbd_from(be)->asks, token, reply, len))
		rbd_asks_answer(be_rbd_from(be)->tells, token, reply, len);
}

static int be_rbd_holder_note(struct backend *be, char *buf, size_t len)
{
	struct be_rbd *r = be_rbd_from(be);
	int rc = -ENOENT;

	if (usable(r)) {
		if (r->note[0])
			rc = snprintf(buf, len, "%s", r->note) < 0 ? -EIO : 0;
		return rc;
	}
	pthread_mutex_lock(&r->later->lock);
	if (r->later->seen_note[0])
		rc = snprintf(buf, len, "%s", r->later->seen_note) < 0 ? -EIO : 0;
	pthread_mutex_unlock(&r->later->lock);
	return rc;
}

static int be_rbd_peer_alive(struct backend *be, const char *note)
{
	struct be_rbd *r = be_rbd_from(be);

	return r->beat ? rbd_beat_alive(r->beat, note) : -ENOENT;
}

static const struct backend_ops be_rbd_ops = {
	.name = "rbd",
	.ready = be_rbd_ready,
	.status = be_rbd_status,
	.close = be_rbd_close,
	.read = be_rbd_read,
	.write = be_rbd_write,
	.readv = be_rbd_readv,
	.writev = be_rbd_writev,
	.submit_rw = be_rbd_submit_rw,
	.flush = be_rbd_flush,
	.discard = be_rbd_discard,
	.write_zeroes = be_rbd_write_zeroes,
	.extent = be_rbd_extent,
	.resize = be_rbd_resize,
	.write_atomic = be_rbd_write_atomic,
	.state_load = be_rbd_state_load,
	.state_store = be_rbd_state_store,
	.state_peek = be_rbd_state_peek,
	.holder_note = be_rbd_holder_note,
	.peer_alive = be_rbd_peer_alive,
	.ask_holder = be_rbd_ask_holder,
	.tell_peers = be_rbd_tell_peers,
	.serve = be_rbd_serve,
	.take_request = be_rbd_take_request,
	.answer = be_rbd_answer,
};

int rbd_connect_pool(const struct be_rbd_params *p, rados_t *cluster, rados_ioctx_t *ioctx, char *err, size_t errlen)
{
	int rc = rados_create(cluster, p->id);

	if (rc < 0) {
		snprintf(err, errlen, "rados_create(%s): %s", p->id, strerror(-rc));
		return rc;
	}
	rc = rados_conf_read_file(*cluster, p->conf);
	if (rc < 0) {
		snprintf(err, errlen, "%s: %s", p->conf, strerror(-rc));
		return rc;
	}
	rc = rados_conf_set(*cluster, "rbd_cache", "false");
	/*
	 * A cluster that stops answering must fail commands, not hold them
	 * (and the daemon's shutdown) forever: the connection gives up after
	 * 30 s, a monitor or OSD request after 60 s (-ETIMEDOUT; librados
	 * rados_osd_op_timeout and rados_mon_op_timeout, 0 = wait forever).
	 */
	if (rc == 0)
		rc = rados_conf_set(*cluster, "client_mount_timeout", "30");
	if (rc == 0)
		rc = rados_conf_set(*cluster, "rados_osd_op_timeout", "60");
	if (rc == 0)
		rc = rados_conf_set(*cluster, "rados_mon_op_timeout", "30");
	if (rc < 0) {
		snprintf(err, errlen, "rados_conf_set: %s", strerror(-rc));
		return rc;
	}
	rc = rados_connect(*cluster);
	if (rc < 0) {
		snprintf(err, errlen, "cannot connect to the cluster of %s as client.%s: %s", p->conf, p->id,
			 strerror(-rc));
		return rc;
	}
	rc = rados_ioctx_create(*cluster, p->pool, ioctx);
	if (rc < 0)
		snprintf(err, errlen, "pool %s: %s", p->pool, strerror(-rc));
	return rc;
}

/* Connects r to the cluster and opens the pool (rbd_connect_pool).  0, or a negative errno with the step in err. */
static int connect_pool(struct be_rbd *r, const struct be_rbd_params *p, char *err, size_t errlen)
{
	return rbd_connect_pool(p, &r->cluster, &r->ioctx, err, errlen);
}

/* The one lock owner of the image (rbd_lock_get_owners) into buf; 0, or a negative errno (-ENOENT: none). */
static int lock_owner(struct be_rbd *r, rbd_lock_mode_t *mode, char *buf, size_t len)
{
	char *owners[4];
	size_t n = 4;
	int rc = rbd_lock_get_owners(r->image, mode, owners, &n);

	if (rc < 0)
		return rc;
	if (n == 0)
		rc = -ENOENT;
	else
		snprintf(buf, len, "%s", owners[0]);
	rbd_lock_get_owners_cleanup(owners, n);
	return rc;
}

static bool recorded_owner(const char *path, const char *owner)
{
	char line[256] = "";
	FILE *f = path ? fopen(path, "r") : NULL;

	if (!f)
		return false;
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	line[strcspn(line, "\n")] = '\0';
	return line[0] && strcmp(line, owner) == 0;
}

/* Writes owner to path durably (a new file, mode 0600, renamed over the old one).  0, or a negative errno. */
static int record_owner(const char *path, const char *owner)
{
	char tmp[4200], line[300];
	int fd, n, rc = 0;

	n = snprintf(line, sizeof(line), "%s\n", owner);
	if (snprintf(tmp, sizeof(tmp), "%s.new", path) >= (int)sizeof(tmp) || n >= (int)sizeof(line))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (write(fd, line, (size_t)n) != n || be_fdatasync(fd) != 0)
		rc = -EIO;
	if (close(fd) != 0 && rc == 0)
		rc = -EIO;
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -errno;
	return rc;
}

/*
 * Takes the image's exclusive lock (above).  The owner is looked at first:
 * rbd_lock_acquire asks a live owner, which refuses at once, but waits for
 * a dead one until the OSDs drop its watch (osd_client_watch_timeout, 30 s).
 * 0, or a negative errno with the reason in err.
 */
static int take_lock(struct be_rbd *r, const struct be_rbd_params *p, bool ask_holder, char *err, size_t errlen)
{
	rbd_lock_mode_t mode;
	char owner[256];
	int rc = lock_owner(r, &mode, owner, sizeof(owner));

	if (rc == 0 && !recorded_owner(p->owner_record, owner)) {
		if (!ask_holder) {
			snprintf(err, errlen, "image %s/%s: its exclusive lock is held by %s, another client%s", p->pool,
				 p->image, owner,
				 p->ask_holder ? "" : " (rbd_unavailable = standby waits for it: docs/rbd.md)");
			return -EROFS;
		}
		/*
		 * Failover: librbd asks the holder, which keeps the lock while it
		 * lives (this attempt fails at once); once the OSDs have dropped a
		 * dead holder's watch (osd_client_watch_timeout), librbd breaks its
		 * lock, blocklisting it (rbd_blocklist_on_break), and takes it.
		 */
		rc = rbd_lock_acquire(r->image, RBD_LOCK_MODE_EXCLUSIVE);
		if (rc < 0) {
			snprintf(err, errlen, "image %s/%s: its exclusive lock is held by %s, another client, which keeps "
				 "it (%s)", p->pool, p->image, owner, strerror(-rc));
			return rc;
		}
	} else {
		/* Free, or this LU's own from before a crash (above). */
		if (rc == 0)
			rc = rbd_lock_break(r->image, mode, owner);
		else if (rc == -ENOENT)
			rc = 0;
		if (rc == 0)
			rc = rbd_lock_acquire(r->image, RBD_LOCK_MODE_EXCLUSIVE);
	}
	if (rc == 0)
		rc = lock_owner(r, &mode, owner, sizeof(owner));
	if (rc == 0)
		snprintf(r->owner, sizeof(r->owner), "%s", owner);
	if (rc == 0 && p->owner_record)
		rc = record_owner(p->owner_record, owner);
	if (rc < 0)
		snprintf(err, errlen, "image %s/%s: cannot take its exclusive lock: %s", p->pool, p->image,
			 strerror(-rc));
	return rc;
}

/* Opens the image, creating it at size when it is missing; grows one smaller than size. */
static int open_image(struct be_rbd *r, const struct be_rbd_params *p, uint64_t size, bool read_only, char *err,
		      size_t errlen)
{
	uint64_t have;
	int order = 0, rc;

	snprintf(r->state_oid, sizeof(r->state_oid), "sbcemu_state.%s", p->image);
	rc = read_only ? rbd_open_read_only(r->ioctx, p->image, &r->image, NULL)
		       : rbd_open(r->ioctx, p->image, &r->image, NULL);
	if (rc == -ENOENT && !read_only && size) {
		rc = rbd_create(r->ioctx, p->image, size, &order);
		if (rc == 0)
			rc = rbd_open(r->ioctx, p->image, &r->image, NULL);
	} else if (rc == -ENOENT) {
		snprintf(err, errlen, "image %s/%s does not exist%s", p->pool, p->image,
			 read_only ? " (and write_protect never creates one)" : " and no size was configured to create it");
		return rc;
	}
	if (rc < 0) {
		snprintf(err, errlen, "image %s/%s: %s", p->pool, p->image, strerror(-rc));
		return rc;
	}
	rc = rbd_get_size(r->image, &have);
	if (rc == 0 && size && have > size) {
		snprintf(err, errlen, "image %s/%s holds %llu bytes, more than the configured size %llu; refusing to "
			 "shrink it", p->pool, p->image, (unsigned long long)have, (unsigned long long)size);
		return -EINVAL;
	}
	if (rc == 0 && size > have) {
		rc = read_only ? -EROFS : rbd_resize(r->image, size);
		have = size;
	}
	if (rc < 0) {
		snprintf(err, errlen, "image %s/%s: cannot size it: %s", p->pool, p->image, strerror(-rc));
		return rc;
	}
	r->be.size = have;
	{
		rbd_image_info_t info;

		if (rbd_stat(r->image, &info, sizeof(info)) == 0)
			r->object_size = info.obj_size;
	}
	return 0;
}

/* With the lock just taken: p->holder_note for the clients that wait (write_note).  0, or a negative errno with the reason in err. */
static int leave_note(struct be_rbd *r, const struct be_rbd_params *p, char *err, size_t errlen)
{
	int rc;

	if (!p->holder_note || !p->holder_note[0])
		return 0;
	snprintf(r->note, sizeof(r->note), "%s", p->holder_note);
	rc = write_note(r, r->note);
	if (rc < 0)
		snprintf(err, errlen, "pool %s, object %s (the LU's state): cannot leave the holder's note: %s", p->pool,
			 r->state_oid, strerror(-rc));
	return rc;
}

static struct backend *be_rbd_open(const struct be_rbd_params *p, uint64_t size, bool read_only, char *err,
				   size_t errlen)
{
	struct be_rbd *r = calloc(1, sizeof(*r));

	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r->be.ops = &be_rbd_ops;
	r->be.read_only = read_only;
	r->be.can_discard = true;
	r->be.can_write_atomic = true;
	pthread_mutex_init(&r->blobs_lock, NULL);
	pthread_mutex_init(&r->peek_lock, NULL);
	if (!read_only)
		r->asks = rbd_asks_new(RBD_ASK_TAG); /* NULL: none is answered, as if nobody held the image */
	if (connect_pool(r, p, err, errlen) < 0 || open_image(r, p, size, read_only, err, errlen) < 0 ||
	    (!read_only && (take_lock(r, p, false, err, errlen) < 0 || leave_note(r, p, err, errlen) < 0)) ||
	    load_blobs(r, p, err, errlen) < 0) {
		release(r);
		return NULL;
	}
	r->be.atomic_unit = r->object_size ? r->object_size : DEFAULT_OBJECT_SIZE;
	/* Ready from the start; its thread only runs once fenced (rejoin). */
	if (p->rejoin && !read_only && (r->later = later_new(p, r->be.size, read_only, "")))
		r->later->ready = true;
	fence_watch_start(r);
	r->beat = rbd_beat_start(p, r->state_oid);
	return &r->be;
}

/* One attempt of the thread: the connection, the image and its lock, as be_rbd_open makes them. */
static bool later_attempt(struct be_rbd *r)
{
	struct later *l = r->later;
	struct be_rbd t = { .be = { .ops = &be_rbd_ops } };
	char err[512];

	err[0] = '\0';
	if (connect_pool(&t, &l->p, err, sizeof(err)) < 0 || open_image(&t, &l->p, l->size, l->read_only, err, sizeof(err)) < 0 ||
	    t.be.size != r->be.size ||
	    (!l->read_only && (take_lock(&t, &l->p, l->p.ask_holder, err, sizeof(err)) < 0 ||
			       leave_note(&t, &l->p, err, sizeof(err)) < 0)) ||
	    load_blobs(&t, &l->p, err, sizeof(err)) < 0) {
		char note[NOTE_MAX];
		/* The lock another client keeps: the note it left when it took it (backend_ops.holder_note). */
		bool seen = t.image && !t.owner[0] && read_note(&t, note, sizeof(note)) == 0;

		release_handles(&t);
		blobs_free(t.blobs);
		pthread_mutex_lock(&l->lock);
		snprintf(l->last_error, sizeof(l->last_error), "%s", err[0] ? err : "the image's size changed");
		if (seen)
			memcpy(l->seen_note, note, sizeof(note));
		pthread_mutex_unlock(&l->lock);
		return false;
	}
	pthread_mutex_lock(&l->lock);
	memcpy(r->owner, t.owner, sizeof(r->owner));
	memcpy(r->state_oid, t.state_oid, sizeof(r->state_oid));
	memcpy(r->note, t.note, sizeof(r->note));
	r->object_size = t.object_size;
	/* Read by the core once ready() says true (sbc_write_atomic_recheck). */
	r->be.atomic_unit = t.object_size ? t.object_size : DEFAULT_OBJECT_SIZE;
	pthread_mutex_unlock(&l->lock);
	pthread_mutex_lock(&r->blobs_lock);
	blobs_free(r->blobs); /* a rejoining client's: the blobs as it last knew them */
	r->blobs = t.blobs;
	pthread_mutex_unlock(&r->blobs_lock);
	/* Calls still in flight may read the old handles (kept by rejoin, never closed). */
	__atomic_store_n(&r->cluster, t.cluster, __ATOMIC_RELEASE);
	__atomic_store_n(&r->ioctx, t.ioctx, __ATOMIC_RELEASE);
	__atomic_store_n(&r->image, t.image, __ATOMIC_RELEASE);
	if (!l->read_only)
		fence_watch_start(r);
	return true;
}

static void *later_thread(void *p)
{
	struct be_rbd *r = p;
	struct later *l = r->later;
	struct timespec until;
	bool detached, first = true;

	pthread_mutex_lock(&l->lock);
	for (;;) {
		bool opened;

		/*
		 * be_rbd_open has just failed: every attempt here comes
		 * LATER_RETRY_S after the last, but the first one that asks a
		 * holder, which is at once (it reads the holder's note, and a dead
		 * holder's lock is broken the sooner).
		 */
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += first && l->p.ask_holder ? 0 : LATER_RETRY_S;
		first = false;
		while (!l->stop && pthread_cond_timedwait(&l->cond, &l->lock, &until) != ETIMEDOUT)
			;
		if (l->stop)
			break;
		pthread_mutex_unlock(&l->lock);
		/* Waiting: the holder's notices are heard (a watch of the state object; again if it failed or broke). */
		if (rbd_listen_broken(r->listen)) {
			rbd_listen_stop(r->listen);
			r->listen = NULL;
		}
		if (r->tells && !r->listen) {
			char oid[sizeof(r->state_oid)];

			snprintf(oid, sizeof(oid), "sbcemu_state.%s", l->p.image);
			r->listen = rbd_listen_start(&l->p, oid, r->tells);
		}
		opened = later_attempt(r);
		if (opened) {
			rbd_listen_stop(r->listen); /* the holder sends them */
			r->listen = NULL;
		}
		pthread_mutex_lock(&l->lock);
		if (opened) {
			__atomic_store_n(&l->ready, true, __ATOMIC_RELEASE);
			break;
		}
	}
	l->running = false;
	detached = l->detached;
	pthread_cond_broadcast(&l->cond);
	pthread_mutex_unlock(&l->lock);
	/* Closed during an attempt: nobody waits for us, and what the attempt opened is ours to close. */
	if (detached)
		release(r);
	return NULL;
}

/* The state of opening the image on a thread (be_rbd_open_later, rejoin), with copies of p; NULL when out of memory. */
static struct later *later_new(const struct be_rbd_params *p, uint64_t size, bool read_only, const char *why)
{
	struct later *l = calloc(1, sizeof(*l));
	pthread_condattr_t clock_attr;

	if (!l)
		return NULL;
	l->size = size;
	l->read_only = read_only;
	l->rejoin = p->rejoin;
	snprintf(l->last_error, sizeof(l->last_error), "%s", why ? why : "");
	snprintf(l->conf, sizeof(l->conf), "%s", p->conf);
	snprintf(l->id, sizeof(l->id), "%s", p->id);
	snprintf(l->pool, sizeof(l->pool), "%s", p->pool);
	snprintf(l->image, sizeof(l->image), "%s", p->image);
	snprintf(l->owner_record, sizeof(l->owner_record), "%s", p->owner_record ? p->owner_record : "");
	snprintf(l->note, sizeof(l->note), "%s", p->holder_note ? p->holder_note : "");
	l->p = (struct be_rbd_params){ .conf = l->conf, .id = l->id, .pool = l->pool, .image = l->image,
				       .owner_record = p->owner_record ? l->owner_record : NULL,
				       .ask_holder = p->ask_holder, .holder_note = l->note, .rejoin = p->rejoin,
				       .peers = p->peers };
	pthread_mutex_init(&l->lock, NULL);
	pthread_condattr_init(&clock_attr);
	pthread_condattr_setclock(&clock_attr, CLOCK_MONOTONIC);
	pthread_cond_init(&l->cond, &clock_attr);
	pthread_condattr_destroy(&clock_attr);
	return l;
}

/*
 * Fenced: another client broke our lock, and Ceph blocklisted this one, so
 * every call fails with -ESHUTDOWN.  With p->rejoin the handles are put
 * aside (calls in flight end on them, failing), ready() turns false, and
 * the thread of be_rbd_open_later opens the image again with a new
 * connection (a new client, not blocklisted), asking the holder for the
 * lock with p->ask_holder: the node waits in standby, and can take the
 * image over again.  Once per fencing: later calls find it under way.
 */
static void rejoin(struct be_rbd *r)
{
	struct later *l = r->later;

	if (!l || !l->rejoin)
		return;
	pthread_mutex_lock(&l->lock);
	/* The fenced handles are kept, never closed (keep_fenced): calls in flight end on them. */
	if (!__atomic_load_n(&l->ready, __ATOMIC_ACQUIRE) || l->running || l->stop || !keep_fenced(r)) {
		pthread_mutex_unlock(&l->lock);
		return;
	}
	if (l->started)
		pthread_join(l->thread, NULL); /* the thread of the last opening, ended */
	l->started = false;
	__atomic_store_n(&l->ready, false, __ATOMIC_RELEASE);
	snprintf(l->last_error, sizeof(l->last_error), "fenced: another client broke this one's lock (it is "
		 "blocklisted); the image is opened again with a new connection");
	r->owner[0] = '\0';
	l->running = true;
	if (pthread_create(&l->thread, NULL, later_thread, r) != 0) {
		l->running = false;
		__atomic_store_n(&l->ready, true, __ATOMIC_RELEASE); /* stays fenced: -ESHUTDOWN, as without rejoin */
	} else {
		l->started = true;
	}
	pthread_mutex_unlock(&l->lock);
}

static struct backend *be_rbd_open_later(const struct be_rbd_params *p, uint64_t size, bool read_only,
					 const char *why)
{
	struct be_rbd *r = calloc(1, sizeof(*r));
	struct later *l = size ? later_new(p, size, read_only, why) : NULL;
	char oid[sizeof(r->state_oid)];

	if (!r || !l) {
		free(r);
		later_free(l);
		return NULL;
	}
	r->be.ops = &be_rbd_ops;
	r->be.read_only = read_only;
	r->be.can_discard = true;
	r->be.size = size;
	r->be.can_write_atomic = true;
	r->be.atomic_unit = DEFAULT_OBJECT_SIZE;
	r->later = l;
	pthread_mutex_init(&r->blobs_lock, NULL);
	pthread_mutex_init(&r->peek_lock, NULL);
	if (!read_only) {
		r->asks = rbd_asks_new(RBD_ASK_TAG); /* NULL: none is answered, as if nobody held the image */
		r->tells = rbd_asks_new(RBD_TELL_TAG); /* NULL: no notice is heard */
	}
	l->running = true;
	if (pthread_create(&l->thread, NULL, later_thread, r) != 0) {
		release(r);
		return NULL;
	}
	l->started = true;
	snprintf(oid, sizeof(oid), "sbcemu_state.%s", p->image);
	r->beat = rbd_beat_start(p, oid);
	return &r->be;
}

/* What be_rbd_module finds in this module (dlsym(3) of BE_RBD_ENTRY_SYMBOL); the module's only visible symbol. */
__attribute__((visibility("default"))) const struct be_rbd_entry sbce_be_rbd_entry = {
	.open = be_rbd_open,
	.open_later = be_rbd_open_later,
};
