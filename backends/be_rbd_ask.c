/*
 * Questions from the clients that wait for an image to the one that holds
 * it (be_rbd_ask.h).  A question is a notification of the state object
 * whose payload starts with ASK_TAG; every other notification is
 * acknowledged at once with nothing by the watch's callback (be_rbd.c).
 * The holder keeps each question until its user answers it; the
 * answer is the payload of the holder's acknowledgement, which RADOS hands
 * to the notifier with every watcher's ("rados_notify2 ... reply_buffer",
 * librados.h).  A holder that never answers (dead, or cut off) costs the
 * asker RBD_ASK_TIMEOUT_MS.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "be_rbd_ask.h"
#include "be_rbd_beat.h" /* rbd_connect_pool */

#define ASK_TAG_LEN 8
#define ASK_MAX (64u << 10)
#define OID_MAX 300

struct kept {
	struct kept *next;
	rados_ioctx_t io;
	char oid[OID_MAX];
	uint64_t notify_id, cookie;
	size_t len;
	uint8_t data[];
};

struct rbd_asks {
	char tag[ASK_TAG_LEN];      /* the notifications kept: those whose payload starts with it */
	pthread_mutex_t lock;
	void (*arrived)(void *arg); /* [lock] NULL: not serving */
	void *arg;
	struct kept *head, **tail;  /* [lock] not taken yet */
	struct kept *taken;         /* [lock] taken, not answered */
};

struct rbd_asks *rbd_asks_new(const char *tag)
{
	struct rbd_asks *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	memcpy(a->tag, tag, ASK_TAG_LEN);
	pthread_mutex_init(&a->lock, NULL);
	a->tail = &a->head;
	return a;
}

static void free_list(struct kept *k)
{
	while (k) {
		struct kept *next = k->next;
		free(k);
		k = next;
	}
}

void rbd_asks_free(struct rbd_asks *a)
{
	if (!a)
		return;
	free_list(a->head);
	free_list(a->taken);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

bool rbd_asks_arrived(struct rbd_asks *a, rados_ioctx_t io, const char *oid, uint64_t notify_id, uint64_t cookie,
		      const void *data, size_t len)
{
	struct kept *k;
	bool kept = false;

	if (!a || len < ASK_TAG_LEN || len > ASK_MAX || memcmp(data, a->tag, ASK_TAG_LEN) != 0)
		return false;
	pthread_mutex_lock(&a->lock);
	if (a->arrived && strlen(oid) < OID_MAX && (k = calloc(1, sizeof(*k) + len - ASK_TAG_LEN))) {
		k->io = io;
		strcpy(k->oid, oid);
		k->notify_id = notify_id;
		k->cookie = cookie;
		k->len = len - ASK_TAG_LEN;
		memcpy(k->data, (const uint8_t *)data + ASK_TAG_LEN, k->len);
		*a->tail = k;
		a->tail = &k->next;
		a->arrived(a->arg);
		kept = true;
	}
	pthread_mutex_unlock(&a->lock);
	return kept;
}

void rbd_asks_serve(struct rbd_asks *a, void (*arrived)(void *arg), void *arg)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	a->arrived = arrived;
	a->arg = arg;
	pthread_mutex_unlock(&a->lock);
}

int rbd_asks_take(struct rbd_asks *a, uint8_t **req, size_t *len, void **token)
{
	struct kept *k;
	int rc = -ENOENT;

	if (!a)
		return rc;
	pthread_mutex_lock(&a->lock);
	k = a->head;
	if (k && !(*req = malloc(k->len ? k->len : 1))) {
		rc = -ENOMEM;
	} else if (k) {
		memcpy(*req, k->data, k->len);
		*len = k->len;
		*token = k;
		if (!(a->head = k->next))
			a->tail = &a->head;
		k->next = a->taken;
		a->taken = k;
		rc = 0;
	}
	pthread_mutex_unlock(&a->lock);
	return rc;
}

bool rbd_asks_answer(struct rbd_asks *a, void *token, const uint8_t *reply, size_t len)
{
	struct kept **pp, *k = NULL;

	if (!a)
		return false;
	pthread_mutex_lock(&a->lock);
	for (pp = &a->taken; *pp; pp = &(*pp)->next)
		if (*pp == token) {
			k = *pp;
			*pp = k->next;
			break;
		}
	pthread_mutex_unlock(&a->lock);
	if (!k)
		return false;
	/* librados sends the acknowledgement and returns (IoCtxImpl::notify_ack waits for nothing). */
	if (k->io)
		(void)rados_notify_ack(k->io, k->oid, k->notify_id, k->cookie, (const char *)reply, (int)len);
	free(k);
	return true;
}

void rbd_asks_forget_io(struct rbd_asks *a, rados_ioctx_t io)
{
	struct kept *k, **pp, *acked = NULL;

	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	for (pp = &a->head; (k = *pp);) {
		if (k->io != io) {
			pp = &k->next;
			continue;
		}
		*pp = k->next;
		k->next = acked;
		acked = k;
	}
	a->tail = &a->head;
	while (*a->tail)
		a->tail = &(*a->tail)->next;
	for (k = a->taken; k; k = k->next)
		if (k->io == io)
			k->io = NULL; /* its answer, when it comes, is sent to nobody */
	pthread_mutex_unlock(&a->lock);
	for (k = acked; k; k = acked) {
		acked = k->next;
		(void)rados_notify_ack(k->io, k->oid, k->notify_id, k->cookie, NULL, 0);
		free(k);
	}
}

/* msg, tagged with tag, to the watchers of oid (rados_notify2): its result, their acknowledgements in *out. */
static int notify_tagged(rados_ioctx_t io, const char *oid, const char *tag, const uint8_t *msg, size_t len,
			 uint64_t timeout_ms, char **out, size_t *out_len)
{
	char *buf;
	int rc;

	*out = NULL;
	*out_len = 0;
	if (len > ASK_MAX - ASK_TAG_LEN)
		return -EMSGSIZE;
	if (!(buf = malloc(ASK_TAG_LEN + len)))
		return -ENOMEM;
	memcpy(buf, tag, ASK_TAG_LEN);
	memcpy(buf + ASK_TAG_LEN, msg, len);
	rc = rados_notify2(io, oid, buf, (int)(ASK_TAG_LEN + len), timeout_ms, out, out_len);
	free(buf);
	return rc;
}

int rbd_ask(rados_ioctx_t io, const char *oid, const uint8_t *req, size_t len, uint8_t **reply, size_t *reply_len)
{
	char *out = NULL;
	struct notify_ack_t *acks = NULL;
	struct notify_timeout_t *timeouts = NULL;
	size_t out_len = 0, nr_acks = 0, nr_timeouts = 0;
	int rc;

	*reply = NULL;
	*reply_len = 0;
	rc = notify_tagged(io, oid, RBD_ASK_TAG, req, len, RBD_ASK_TIMEOUT_MS, &out, &out_len);
	/* A watcher that did not answer (-ETIMEDOUT) does not hide one that did. */
	if ((rc == 0 || rc == -ETIMEDOUT) && out &&
	    rados_decode_notify_response(out, out_len, &acks, &nr_acks, &timeouts, &nr_timeouts) == 0) {
		rc = -ENOTCONN;
		for (size_t i = 0; i < nr_acks && rc == -ENOTCONN; i++) {
			if (!acks[i].payload_len)
				continue;
			if (!(*reply = malloc(acks[i].payload_len))) {
				rc = -ENOMEM;
				break;
			}
			memcpy(*reply, acks[i].payload, acks[i].payload_len);
			*reply_len = acks[i].payload_len;
			rc = 0;
		}
		rados_free_notify_response(acks, nr_acks, timeouts);
	} else if (rc == 0 || rc == -ETIMEDOUT) {
		rc = -ENOTCONN;
	}
	if (out)
		rados_buffer_free(out);
	return rc;
}

/* ---- a waiting client's watch ---- */

struct rbd_listen {
	rados_t cluster;
	rados_ioctx_t ioctx;
	uint64_t cookie;
	char oid[OID_MAX];
	struct rbd_asks *tells;
	bool broken; /* [atomic] the watch broke: rbd_listen_broken */
};

/* librados's thread: a notification of the state object, seen by a waiting client. */
static void listen_notify(void *arg, uint64_t notify_id, uint64_t cookie, uint64_t notifier_id, void *data,
			  size_t len)
{
	struct rbd_listen *l = arg;

	(void)notifier_id;
	if (!rbd_asks_arrived(l->tells, l->ioctx, l->oid, notify_id, cookie, data, len))
		(void)rados_notify_ack(l->ioctx, l->oid, notify_id, cookie, NULL, 0);
}

/* librados's thread: the watch broke.  The notices sent until it is made again are lost (their notify times out). */
static void listen_error(void *arg, uint64_t cookie, int err)
{
	struct rbd_listen *l = arg;

	(void)cookie;
	(void)err;
	__atomic_store_n(&l->broken, true, __ATOMIC_RELEASE);
}

bool rbd_listen_broken(const struct rbd_listen *l)
{
	return l && __atomic_load_n(&l->broken, __ATOMIC_ACQUIRE);
}

struct rbd_listen *rbd_listen_start(const struct be_rbd_params *p, const char *oid, struct rbd_asks *tells)
{
	struct rbd_listen *l = calloc(1, sizeof(*l));
	char err[512];

	if (!l || strlen(oid) >= OID_MAX) {
		free(l);
		return NULL;
	}
	snprintf(l->oid, sizeof(l->oid), "%s", oid);
	l->tells = tells;
	if (rbd_connect_pool(p, &l->cluster, &l->ioctx, err, sizeof(err)) < 0 ||
	    rados_watch3(l->ioctx, l->oid, &l->cookie, listen_notify, listen_error, 0, l) < 0) {
		if (l->ioctx)
			rados_ioctx_destroy(l->ioctx);
		if (l->cluster)
			rados_shutdown(l->cluster);
		free(l);
		return NULL;
	}
	return l;
}

void rbd_listen_stop(struct rbd_listen *l)
{
	if (!l)
		return;
	(void)rados_unwatch2(l->ioctx, l->cookie);
	(void)rados_watch_flush(l->cluster); /* no callback runs any more */
	rbd_asks_forget_io(l->tells, l->ioctx);
	rados_ioctx_destroy(l->ioctx);
	rados_shutdown(l->cluster);
	free(l);
}

int rbd_tell(rados_ioctx_t io, const char *oid, const uint8_t *msg, size_t len)
{
	char *out = NULL;
	size_t out_len = 0;
	/* Returns once every watcher acknowledged it (or RBD_TELL_TIMEOUT_MS passed: -ETIMEDOUT). */
	int rc = notify_tagged(io, oid, RBD_TELL_TAG, msg, len, RBD_TELL_TIMEOUT_MS, &out, &out_len);

	if (out)
		rados_buffer_free(out);
	return rc;
}
