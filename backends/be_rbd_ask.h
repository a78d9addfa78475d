/*
 * Inside the rbd module (be_rbd.c, be_rbd_ask.c): messages from the
 * clients that wait for an image to the client that holds it
 * (backend_ops.ask_holder, serve, take_request, answer), carried by
 * RADOS watch/notify on the image's state object: the holder watches it
 * (be_rbd.c, fence_watch_start), a waiting client notifies it and reads
 * the holder's answer from the notify's acknowledgements ("Watch/Notify",
 * librados.h: rados_notify2, rados_notify_ack,
 * rados_decode_notify_response).
 */
#ifndef SBCEMU_BE_RBD_ASK_H
#define SBCEMU_BE_RBD_ASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rados/librados.h>

/* How long a waiting client's question waits for the holder's answer. */
#define RBD_ASK_TIMEOUT_MS 5000

struct rbd_asks;

struct rbd_asks *rbd_asks_new(void);
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
/* backend_ops.serve, take_request and answer. */
void rbd_asks_serve(struct rbd_asks *a, void (*arrived)(void *arg), void *arg);
int rbd_asks_take(struct rbd_asks *a, uint8_t **req, size_t *len, void **token);
void rbd_asks_answer(struct rbd_asks *a, void *token, const uint8_t *reply, size_t len);
/*
 * backend_ops.ask_holder through io on object oid: req to the watchers,
 * the first non-empty answer in *reply (malloc); -ENOTCONN when none came.
 */
int rbd_ask(rados_ioctx_t io, const char *oid, const uint8_t *req, size_t len, uint8_t **reply, size_t *reply_len);

#endif
