/*
 * Inside the rbd module (be_rbd.c, be_rbd_beat.c): the connection both
 * make, and the heartbeats of the nodes that serve one image.
 */
#ifndef SBCEMU_BE_RBD_BEAT_H
#define SBCEMU_BE_RBD_BEAT_H

#include <stddef.h>

#include <rados/librados.h>

#include "backend.h"

/*
 * Connects to the cluster of p->conf as client p->id, with the timeouts that
 * make a cluster out of reach fail calls rather than hold them, and opens
 * pool p->pool.  0, or a negative errno with the step in err; what was made
 * is in *cluster and *ioctx either way (NULL where nothing was).
 */
int rbd_connect_pool(const struct be_rbd_params *p, rados_t *cluster, rados_ioctx_t *ioctx, char *err,
		     size_t errlen);

struct rbd_beat;

/*
 * Starts this node's heartbeat beside the image of p: every RBD_BEAT_S a
 * thread of its own, on a connection of its own, moves the omap key
 * "alive.<p->holder_note>" of object oid, and reads the other nodes' keys.
 * NULL when p has no note or no peers, or out of memory.
 */
struct rbd_beat *rbd_beat_start(const struct be_rbd_params *p, const char *oid);
/*
 * Whether the node whose note is note lives (backend_ops.peer_alive): 1
 * its heartbeat moved in the last RBD_BEAT_DEAD_S, 0 not, -ENOENT not known
 * (no read of the heartbeats succeeded in that time, or this node has
 * read them for less).  No I/O: any thread.
 */
int rbd_beat_alive(struct rbd_beat *b, const char *note);
/* Stops the thread; one whose call on the cluster outlasts a short wait frees itself when it returns. */
void rbd_beat_stop(struct rbd_beat *b);

#endif
