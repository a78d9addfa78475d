/*
 * Inside the rbd module (be_rbd.c, be_rbd_ask.c): messages between the
 * clients that serve one image (backend_ops.ask_holder, tell_peers, serve,
 * take_request, answer), carried by RADOS watch/notify on the image's
 * state object ("Watch/Notify", librados.h: rados_notify2,
 * rados_notify_ack, rados_decode_notify_response).  Questions (ASK_TAG)
 * go from a waiting client to the holder, which watches the object
 * (be_rbd.c, fence_watch_start) and answers in its acknowledgement;
 * notices (TELL_TAG) go from the holder to the waiting clients, which
 * watch it while they wait (rbd_listen_start), and each acknowledges a
 * notice once its user has acted on it.
 */
#ifndef SBCEMU_BE_RBD_ASK_H
#define SBCEMU_BE_RBD_ASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rados/librados.h>

/* How long a waiting client's question waits for the holder's answer, and a notice for the waiting clients. */
#define RBD_ASK_TIMEOUT_MS 5000
#define RBD_TELL_TIMEOUT_MS 3000

/* The first 8 bytes of a notification's payload: what it is. */
#define RBD_ASK_TAG "SBCEASK1"
#define RBD_TELL_TAG "SBCETEL1"

struct rbd_asks;

/* The notifications that start with tag (RBD_ASK_TAG or RBD_TELL_TAG) are kept. */
struct rbd_asks *rbd_asks_new(const char *tag);
/* Forgets what is kept: their askers get no answer (their notify times out). */
void rbd_asks_free(struct rbd_asks *a);
/*
 * From the watch's callback (librados's thread): true when data is a
 * question (rbd_ask) and a is serving (rbd_asks_serve): it is kept, to be
 * answered through io on object oid; false when the caller acknowledges
 * the notification itself, with nothing.
 */
bool rbd_asks_arrived(struct rbd_asks *a, rados_ioctx_t io, const char *oid, uint64_t notify_id, uint64_t cookie,
		      const void *data, size_t len);
/* backend_ops.serve, take_request and answer (false: token is not one of a's). */
void rbd_asks_serve(struct rbd_asks *a, void (*arrived)(void *arg), void *arg);
int rbd_asks_take(struct rbd_asks *a, uint8_t **req, size_t *len, void **token);
bool rbd_asks_answer(struct rbd_asks *a, void *token, const uint8_t *reply, size_t len);
/*
 * io's connection goes: what it kept and nobody took is acknowledged now
 * (empty), and the answers to what was taken will be sent to nobody.
 */
void rbd_asks_forget_io(struct rbd_asks *a, rados_ioctx_t io);
/*
 * backend_ops.ask_holder through io on object oid: req, tagged RBD_ASK_TAG,
 * to the watchers, the first non-empty answer in *reply (malloc); -ENOTCONN
 * when none came.
 */
int rbd_ask(rados_ioctx_t io, const char *oid, const uint8_t *req, size_t len, uint8_t **reply, size_t *reply_len);

/*
 * A waiting client's watch of the state object, on a connection of its own
 * (be_rbd_ask.c): the notices (RBD_TELL_TAG) are kept in tells, every other
 * notification is acknowledged at once, empty.  NULL when the cluster
 * cannot be reached (the caller tries again later).
 */
struct rbd_listen;
struct be_rbd_params;
struct rbd_listen *rbd_listen_start(const struct be_rbd_params *p, const char *oid, struct rbd_asks *tells);
/* Ends the watch (what it kept is acknowledged, rbd_asks_forget_io) and the connection. */
void rbd_listen_stop(struct rbd_listen *l);
/* Whether the watch broke (the OSD dropped it): stop it and start another (any thread). */
bool rbd_listen_broken(const struct rbd_listen *l);
/*
 * backend_ops.tell_peers through io on object oid: msg, tagged RBD_TELL_TAG,
 * to every watcher; 0 once each acknowledged it, -ETIMEDOUT when one did not
 * within RBD_TELL_TIMEOUT_MS, or the store's error.
 */
int rbd_tell(rados_ioctx_t io, const char *oid, const uint8_t *msg, size_t len);

#endif
