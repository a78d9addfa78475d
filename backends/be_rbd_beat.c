/*
 * Heartbeats of the nodes that serve one RBD image (be_rbd_beat.h), so that
 * each can tell whether the others live (backend_ops.peer_alive: REPORT
 * TARGET PORT GROUPS shows a dead node's group offline, docs/alua.md).
 *
 * Each node writes the omap key "alive.<note>" of the image's state object
 * every RBD_BEAT_S: a value that never repeats (a random number drawn at
 * start, and a count).  Each node reads every "alive." key at the same
 * pace and notes, on its own monotonic clock, when each value last
 * changed; clocks are never compared between nodes.  A node whose value
 * has not changed for RBD_BEAT_DEAD_S is dead or cut off from the cluster,
 * which for a host is the same: its ports do not answer for the image.
 *
 * The thread has a connection of its own, made again after a failed call:
 * not the image's, whose client is blocklisted when another node breaks
 * its lock (a fenced node that waits in standby still lives), and whose
 * handles change when it rejoins (be_rbd.c).  Its state is its own too,
 * so a stop that cannot wait for a call held up by an unreachable cluster
 * leaves the thread to free it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "be_rbd_beat.h"

#define RBD_BEAT_S 2
#define RBD_BEAT_DEAD_S 10
#define BEAT_PREFIX "alive."
#define BEAT_NOTE_MAX 64
#define BEAT_PEERS_MAX 16
#define BEAT_VALUE_MAX 40
#define STOP_WAIT_MS 2000

struct beat_peer {
	char note[BEAT_NOTE_MAX];
	char value[BEAT_VALUE_MAX];
	double changed; /* when value last changed (or was first read), CLOCK_MONOTONIC s */
};

struct rbd_beat {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop, running, abandoned;
	double started;   /* the first read of the heartbeats that succeeded; 0: none yet */
	double last_read; /* the last one */
	struct beat_peer peers[BEAT_PEERS_MAX];
	unsigned peer_count;
	/* The thread's own, unlocked. */
	rados_t cluster;
	rados_ioctx_t ioctx;
	uint64_t nonce, count;
	char key[sizeof(BEAT_PREFIX) + BEAT_NOTE_MAX];
	char oid[300];
	char conf[4096], id[256], pool[256];
};

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void disconnect(struct rbd_beat *b)
{
	if (b->ioctx)
		rados_ioctx_destroy(b->ioctx);
	if (b->cluster)
		rados_shutdown(b->cluster);
	b->ioctx = NULL;
	b->cluster = NULL;
}

static void beat_free(struct rbd_beat *b)
{
	disconnect(b);
	pthread_mutex_destroy(&b->lock);
	pthread_cond_destroy(&b->cond);
	free(b);
}

/* This node's key moved on; 0 or a negative errno. */
static int beat_write(struct rbd_beat *b)
{
	char value[BEAT_VALUE_MAX];
	const char *key = b->key, *val = value;
	size_t key_len = strlen(key), val_len;
	rados_write_op_t op = rados_create_write_op();
	int rc;

	if (!op)
		return -ENOMEM;
	val_len = (size_t)snprintf(value, sizeof(value), "%016llx %llu", (unsigned long long)b->nonce,
				   (unsigned long long)++b->count);
	rados_write_op_create(op, LIBRADOS_CREATE_IDEMPOTENT, NULL);
	rados_write_op_omap_set2(op, &key, &val, &key_len, &val_len, 1);
	rc = rados_write_op_operate2(op, b->ioctx, b->oid, NULL, 0);
	rados_release_write_op(op);
	return rc;
}

/* Under b->lock: the other node note's value read at t. */
static void peer_seen(struct rbd_beat *b, const char *note, const char *value, double t)
{
	struct beat_peer *p = NULL;

	for (unsigned i = 0; i < b->peer_count && !p; i++)
		if (strcmp(b->peers[i].note, note) == 0)
			p = &b->peers[i];
	if (!p) {
		if (b->peer_count == BEAT_PEERS_MAX)
			return;
		p = &b->peers[b->peer_count++];
		snprintf(p->note, sizeof(p->note), "%s", note);
		p->value[0] = '\0';
	}
	if (strcmp(p->value, value) != 0) {
		snprintf(p->value, sizeof(p->value), "%s", value);
		p->changed = t;
	}
}

/* Every node's key, read now; 0 or a negative errno. */
static int beat_read(struct rbd_beat *b)
{
	rados_read_op_t op = rados_create_read_op();
	rados_omap_iter_t iter = NULL;
	unsigned char more = 0;
	int prval = 0, rc;

	if (!op)
		return -ENOMEM;
	rados_read_op_omap_get_vals2(op, "", BEAT_PREFIX, 2 * BEAT_PEERS_MAX, &iter, &more, &prval);
	rc = rados_read_op_operate(op, b->ioctx, b->oid, 0);
	if (rc == 0)
		rc = prval;
	if (rc == 0) {
		double t = now_s();
		char *k, *v;
		size_t kl, vl;

		pthread_mutex_lock(&b->lock);
		while (rados_omap_get_next2(iter, &k, &v, &kl, &vl) == 0 && k) {
			char note[BEAT_NOTE_MAX], value[BEAT_VALUE_MAX];

			if (kl < strlen(BEAT_PREFIX) || kl - strlen(BEAT_PREFIX) >= sizeof(note) || !v)
				continue;
			snprintf(note, sizeof(note), "%.*s", (int)(kl - strlen(BEAT_PREFIX)), k + strlen(BEAT_PREFIX));
			snprintf(value, sizeof(value), "%.*s", (int)(vl < sizeof(value) ? vl : sizeof(value) - 1), v);
			if (strcmp(k, b->key) != 0)
				peer_seen(b, note, value, t);
		}
		if (!b->started)
			b->started = t;
		b->last_read = t;
		pthread_mutex_unlock(&b->lock);
	}
	if (iter)
		rados_omap_get_end(iter);
	rados_release_read_op(op);
	return rc;
}

static void *beat_thread(void *arg)
{
	struct rbd_beat *b = arg;
	struct be_rbd_params p = { .conf = b->conf, .id = b->id, .pool = b->pool };
	bool abandoned;

	pthread_mutex_lock(&b->lock);
	while (!b->stop) {
		struct timespec until;
		char err[512];

		pthread_mutex_unlock(&b->lock);
		if (!b->ioctx && rbd_connect_pool(&p, &b->cluster, &b->ioctx, err, sizeof(err)) < 0)
			disconnect(b);
		if (b->ioctx && (beat_write(b) < 0 || beat_read(b) < 0))
			disconnect(b); /* made again at the next beat */
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += RBD_BEAT_S;
		pthread_mutex_lock(&b->lock);
		while (!b->stop && pthread_cond_timedwait(&b->cond, &b->lock, &until) != ETIMEDOUT)
			;
	}
	b->running = false;
	abandoned = b->abandoned;
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
	if (abandoned)
		beat_free(b);
	return NULL;
}

struct rbd_beat *rbd_beat_start(const struct be_rbd_params *p, const char *oid)
{
	struct rbd_beat *b;
	pthread_condattr_t clock_attr;

	if (!p->peers || !p->holder_note || !p->holder_note[0] || !(b = calloc(1, sizeof(*b))))
		return NULL;
	if (getrandom(&b->nonce, sizeof(b->nonce), 0) != sizeof(b->nonce))
		b->nonce = (uint64_t)(now_s() * 1e9);
	snprintf(b->key, sizeof(b->key), BEAT_PREFIX "%.*s", BEAT_NOTE_MAX - 1, p->holder_note);
	snprintf(b->oid, sizeof(b->oid), "%s", oid);
	snprintf(b->conf, sizeof(b->conf), "%s", p->conf);
	snprintf(b->id, sizeof(b->id), "%s", p->id);
	snprintf(b->pool, sizeof(b->pool), "%s", p->pool);
	pthread_mutex_init(&b->lock, NULL);
	pthread_condattr_init(&clock_attr);
	pthread_condattr_setclock(&clock_attr, CLOCK_MONOTONIC);
	pthread_cond_init(&b->cond, &clock_attr);
	pthread_condattr_destroy(&clock_attr);
	b->running = true;
	if (pthread_create(&b->thread, NULL, beat_thread, b) != 0) {
		beat_free(b);
		return NULL;
	}
	return b;
}

int rbd_beat_alive(struct rbd_beat *b, const char *note)
{
	double t = now_s();
	int rc = -ENOENT;

	pthread_mutex_lock(&b->lock);
	if (b->started && t - b->last_read <= RBD_BEAT_DEAD_S) {
		for (unsigned i = 0; i < b->peer_count && rc == -ENOENT; i++)
			if (strcmp(b->peers[i].note, note) == 0)
				rc = t - b->peers[i].changed <= RBD_BEAT_DEAD_S;
		/* Never seen in that long: not there. */
		if (rc == -ENOENT && t - b->started > RBD_BEAT_DEAD_S)
			rc = 0;
	}
	pthread_mutex_unlock(&b->lock);
	return rc;
}

void rbd_beat_stop(struct rbd_beat *b)
{
	struct timespec until;
	bool abandoned;

	if (!b)
		return;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_nsec += (long)STOP_WAIT_MS * 1000000L;
	until.tv_sec += until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&b->lock);
	b->stop = true;
	pthread_cond_broadcast(&b->cond);
	while (b->running && pthread_cond_timedwait(&b->cond, &b->lock, &until) != ETIMEDOUT)
		;
	abandoned = b->abandoned = b->running;
	pthread_mutex_unlock(&b->lock);
	if (abandoned) {
		pthread_detach(b->thread);
		return;
	}
	pthread_join(b->thread, NULL);
	beat_free(b);
}
