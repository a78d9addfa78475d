/*
 * The TCM-USER generic netlink family (linux/target_core_user.h; the kernel
 * side is drivers/target/target_core_user.c, tcmu_netlink_event_send and
 * tcmu_genl_cmd_done): the kernel multicasts ADDED_DEVICE, REMOVED_DEVICE
 * and RECONFIG_DEVICE to the "config" group and, once a handler sent
 * SET_FEATURES with SUPP_KERN_CMD_REPLY, waits for a <CMD>_DONE reply
 * carrying the device id and a status before it finishes the configfs
 * write that caused the event.
 *
 * Every listener hears every event, whoever's device it is, and the kernel
 * takes the first reply for the device: this front end answers only for
 * devices of its own subtype and leaves the others alone (tcmu-runner
 * answers ADDED for any subtype it does not know with -ENOENT: docs/tcmu.md
 * says how the two live side by side).
 *
 * Two sockets: one joined to the group for events (non-blocking, on the
 * loop), one for requests (SET_FEATURES and the replies, each acknowledged
 * at once by the kernel: the ack is queued before sendmsg returns).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include "tcmu_internal.h"

struct tcmu_netlink {
	struct tcmu_server *srv;
	struct nl_sock *events;
	struct nl_sock *requests;
	int family;
	int replies;             /* what SET_FEATURES last told the kernel: 1 wait for replies, 0 not, -1 unknown */
	ev_io io;
};

static struct nla_policy policy[TCMU_ATTR_MAX + 1] = {
	[TCMU_ATTR_DEVICE] = { .type = NLA_STRING },
	[TCMU_ATTR_MINOR] = { .type = NLA_U32 },
	[TCMU_ATTR_DEV_CFG] = { .type = NLA_STRING },
	[TCMU_ATTR_DEV_SIZE] = { .type = NLA_U64 },
	[TCMU_ATTR_WRITECACHE] = { .type = NLA_U8 },
	[TCMU_ATTR_CMD_STATUS] = { .type = NLA_S32 },
	[TCMU_ATTR_DEVICE_ID] = { .type = NLA_U32 },
	[TCMU_ATTR_SUPP_KERN_CMD_REPLY] = { .type = NLA_U8 },
};

/* The family's version in every message (the kernel's tcmu_genl_family: 2 since Linux 4.15). */
#define TCMU_GENL_VERSION 2

struct ack {
	bool done;
	int err;
};

static int on_ack(struct nl_msg *msg, void *arg)
{
	struct ack *a = arg;

	(void)msg;
	a->done = true;
	a->err = 0;
	return NL_STOP;
}

static int on_error(struct sockaddr_nl *from, struct nlmsgerr *e, void *arg)
{
	struct ack *a = arg;

	(void)from;
	a->done = true;
	a->err = e->error; /* the kernel's negative errno */
	return NL_STOP;
}

/* A request to the kernel, acknowledged: 0 or the kernel's -errno. */
static int request(struct tcmu_netlink *nl, uint8_t cmd, int (*fill)(struct nl_msg *msg, const void *arg),
		   const void *arg)
{
	struct nl_msg *msg = nlmsg_alloc();
	struct ack a = { 0 };
	struct nl_cb *cb;
	int rc;

	if (!msg)
		return -ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family, 0, NLM_F_ACK, cmd, TCMU_GENL_VERSION) ||
	    fill(msg, arg) < 0) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	rc = nl_send_auto(nl->requests, msg);
	nlmsg_free(msg);
	if (rc < 0)
		return -EIO;
	cb = nl_cb_clone(nl_socket_get_cb(nl->requests));
	if (!cb)
		return -ENOMEM;
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, &a);
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, &a);
	while (!a.done && nl_recvmsgs(nl->requests, cb) >= 0)
		;
	nl_cb_put(cb);
	return a.done ? a.err : -EIO;
}

static int fill_features(struct nl_msg *msg, const void *arg)
{
	return nla_put_u8(msg, TCMU_ATTR_SUPP_KERN_CMD_REPLY, *(const uint8_t *)arg);
}

struct done {
	uint32_t device_id;
	int32_t status;
};

static int fill_done(struct nl_msg *msg, const void *arg)
{
	const struct done *d = arg;

	if (nla_put_s32(msg, TCMU_ATTR_CMD_STATUS, d->status) < 0)
		return -1;
	return nla_put_u32(msg, TCMU_ATTR_DEVICE_ID, d->device_id);
}

/* The <CMD>_DONE the kernel may be waiting for; a kernel that is not waiting answers -ENODEV, which is fine. */
static void reply(struct tcmu_netlink *nl, uint8_t done_cmd, uint32_t device_id, int status, const char *what)
{
	struct done d = { .device_id = device_id, .status = status };
	int rc = request(nl, done_cmd, fill_done, &d);

	if (rc != 0 && rc != -ENODEV)
		tcmu_log(nl->srv, 1, "netlink: the reply to %s (device id %u) failed: %s", what, device_id, strerror(-rc));
}

/* The device the kernel's DEVICE attribute names, if it is one of ours that is attached. */
static struct tcmu_dev *attached(struct tcmu_server *srv, struct nlattr **a)
{
	struct tcmu_dev *dev;

	if (!a[TCMU_ATTR_MINOR])
		return NULL;
	dev = tcmu_find_device(srv, nla_get_u32(a[TCMU_ATTR_MINOR]));
	return dev && !dev->detaching ? dev : NULL;
}

struct removal {
	struct tcmu_netlink *nl;
	uint32_t device_id;
	bool wants_reply;
};

static void removed(void *arg, int err)
{
	struct removal *r = arg;

	if (r->wants_reply)
		reply(r->nl, TCMU_CMD_REMOVED_DEVICE_DONE, r->device_id, err == -ENODEV ? 0 : err, "REMOVED_DEVICE");
	free(r);
}

static void on_added(struct tcmu_netlink *nl, struct nlattr **a, uint32_t id, bool wants_reply)
{
	struct tcmu_server *srv = nl->srv;
	struct tcmu_device_info info;
	char reason[512];
	int rc;

	if (tcmu_parse_uio_name(nla_get_string(a[TCMU_ATTR_DEVICE]), srv->subtype, &info) != 0)
		return; /* not ours: its handler answers */
	rc = tcmu_uio_attach(srv, nla_get_u32(a[TCMU_ATTR_MINOR]), nla_get_string(a[TCMU_ATTR_DEVICE]), reason,
			     sizeof(reason));
	if (rc < 0)
		tcmu_log(srv, 0, "uio%u (%s): not served: %s", nla_get_u32(a[TCMU_ATTR_MINOR]), info.name, reason);
	/* rc 1: attached with its LU refused (logged); the kernel is told, and fails the enable. */
	if (wants_reply)
		reply(nl, TCMU_CMD_ADDED_DEVICE_DONE, id, rc == 0 ? 0 : -EINVAL, "ADDED_DEVICE");
}

/*
 * RECONFIG_DEVICE: LIO asks before it changes dev_config, dev_size or
 * emulate_write_cache of a configured device (restoreconfig rewrites all
 * three).  The same values are fine; a new cfgstring or size would need a
 * different LU, which a device in use cannot become: refused, with a log
 * line (remove the backstore and create it again).  emulate_write_cache is
 * LIO's own emulation, which passthrough devices do not use: sbcemu's
 * Caching mode page (WCE) is what initiators see.
 */
static void on_reconfig(struct tcmu_netlink *nl, struct nlattr **a, uint32_t id, bool wants_reply)
{
	struct tcmu_dev *dev = attached(nl->srv, a);
	int status = 0;

	if (!dev)
		return;
	if (a[TCMU_ATTR_DEV_CFG]) {
		const char *cfg = nla_get_string(a[TCMU_ATTR_DEV_CFG]);
		size_t len = strlen(nl->srv->subtype);

		if (strncmp(cfg, nl->srv->subtype, len) != 0 || cfg[len] != '/' ||
		    strcmp(cfg + len + 1, dev->info.cfgstring) != 0) {
			tcmu_log(nl->srv, 1, "uio%u (%s): a new cfgstring (%s) is refused: remove the backstore and create "
				 "it again", dev->info.uio_minor, dev->info.name, cfg);
			status = -EINVAL;
		}
	}
	if (a[TCMU_ATTR_DEV_SIZE] && dev->info.dev_size && nla_get_u64(a[TCMU_ATTR_DEV_SIZE]) != dev->info.dev_size) {
		tcmu_log(nl->srv, 1, "uio%u (%s): a new size (%llu bytes) is refused: the logical unit keeps its capacity",
			 dev->info.uio_minor, dev->info.name, (unsigned long long)nla_get_u64(a[TCMU_ATTR_DEV_SIZE]));
		status = -EINVAL;
	}
	if (wants_reply)
		reply(nl, TCMU_CMD_RECONFIG_DEVICE_DONE, id, status, "RECONFIG_DEVICE");
}

static int on_event(struct nl_msg *msg, void *arg)
{
	struct tcmu_netlink *nl = arg;
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct genlmsghdr *gh = genlmsg_hdr(nlh);
	struct nlattr *a[TCMU_ATTR_MAX + 1];
	/* Version 1 kernels (before Linux 4.15) wait for no reply. */
	bool wants_reply = gh->version > 1;
	uint32_t id;

	if (genlmsg_parse(nlh, 0, a, TCMU_ATTR_MAX, policy) < 0 || !a[TCMU_ATTR_DEVICE] || !a[TCMU_ATTR_MINOR])
		return NL_OK;
	id = a[TCMU_ATTR_DEVICE_ID] ? nla_get_u32(a[TCMU_ATTR_DEVICE_ID]) : 0;
	wants_reply = wants_reply && a[TCMU_ATTR_DEVICE_ID];
	switch (gh->cmd) {
	case TCMU_CMD_ADDED_DEVICE:
		if (!nl->srv->draining)
			on_added(nl, a, id, wants_reply);
		break;
	case TCMU_CMD_REMOVED_DEVICE: {
		struct tcmu_dev *dev = attached(nl->srv, a);
		struct removal *r;

		if (!dev || !(r = calloc(1, sizeof(*r))))
			break;
		*r = (struct removal){ .nl = nl, .device_id = id, .wants_reply = wants_reply };
		tcmu_server_detach(nl->srv, dev->info.uio_minor, removed, r);
		break;
	}
	case TCMU_CMD_RECONFIG_DEVICE:
		on_reconfig(nl, a, id, wants_reply);
		break;
	default:
		break;
	}
	return NL_OK;
}

static void io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct tcmu_netlink *nl = w->data;
	int rc;

	(void)loop;
	(void)revents;
	rc = nl_recvmsgs_default(nl->events);
	if (rc < 0 && rc != -NLE_AGAIN)
		tcmu_log(nl->srv, 1, "netlink: %s", nl_geterror(rc));
}

static struct nl_sock *open_socket(char *reason, size_t len)
{
	struct nl_sock *sk = nl_socket_alloc();
	int rc;

	if (!sk) {
		snprintf(reason, len, "out of memory");
		return NULL;
	}
	rc = genl_connect(sk);
	if (rc < 0) {
		snprintf(reason, len, "generic netlink: %s", nl_geterror(rc));
		nl_socket_free(sk);
		return NULL;
	}
	return sk;
}

int tcmu_netlink_open(struct tcmu_server *srv, char *reason, size_t len)
{
	struct tcmu_netlink *nl = calloc(1, sizeof(*nl));
	uint8_t on = 1;
	int group, rc;

	if (!nl) {
		snprintf(reason, len, "out of memory");
		return -1;
	}
	nl->srv = srv;
	srv->nl = nl;
	if (!(nl->requests = open_socket(reason, len)) || !(nl->events = open_socket(reason, len)))
		return -1;
	nl->family = genl_ctrl_resolve(nl->requests, "TCM-USER");
	group = genl_ctrl_resolve_grp(nl->requests, "TCM-USER", "config");
	if (nl->family < 0 || group < 0) {
		snprintf(reason, len, "no TCM-USER generic netlink family (is target_core_user loaded?)");
		return -1;
	}
	nl_socket_disable_seq_check(nl->events); /* multicast events carry no sequence numbers of ours */
	nl_socket_modify_cb(nl->events, NL_CB_VALID, NL_CB_CUSTOM, on_event, nl);
	rc = nl_socket_add_membership(nl->events, group);
	if (rc == 0)
		rc = nl_socket_set_nonblocking(nl->events);
	if (rc < 0) {
		snprintf(reason, len, "joining TCM-USER's config group: %s", nl_geterror(rc));
		return -1;
	}
	/* From now on the kernel waits for a reply to each event about a device (one of ours or not). */
	rc = request(nl, TCMU_CMD_SET_FEATURES, fill_features, &on);
	nl->replies = rc == 0 ? 1 : -1;
	if (rc == -EOPNOTSUPP)
		tcmu_log(srv, 1, "netlink: this kernel waits for no reply to its device events");
	else if (rc != 0) {
		snprintf(reason, len, "TCM-USER SET_FEATURES: %s", strerror(-rc));
		return -1;
	}
	if (srv->loop) {
		ev_io_init(&nl->io, io_cb, nl_socket_get_fd(nl->events), EV_READ);
		nl->io.data = nl;
		ev_io_start(srv->loop, &nl->io);
	}
	return 0;
}

int tcmu_netlink_reply_added(struct tcmu_server *srv, const struct tcmu_device_info *info, int status)
{
	char buf[32];
	int rc;

	if (!srv->nl)
		return -ENOTCONN;
	/* The kernel's device id (se_dev.dev_index) is the device's statistics/scsi_dev/indx. */
	rc = tcmu_configfs_read(srv, info, "statistics/scsi_dev/indx", buf, sizeof(buf));
	if (rc != 0)
		return rc;
	reply(srv->nl, TCMU_CMD_ADDED_DEVICE_DONE, (uint32_t)strtoul(buf, NULL, 10), status, "ADDED_DEVICE");
	return 0;
}

void tcmu_netlink_wait_for_replies(struct tcmu_server *srv, bool on)
{
	struct tcmu_netlink *nl = srv->nl;
	uint8_t value = on;
	int rc;

	if (!nl || nl->family <= 0 || nl->replies == (int)on)
		return;
	rc = request(nl, TCMU_CMD_SET_FEATURES, fill_features, &value);
	if (rc == 0 || rc == -EOPNOTSUPP)
		nl->replies = on;
	if (rc == 0)
		tcmu_log(srv, 2, on ? "netlink: the kernel waits for the replies to its device events again"
				    : "netlink: tcmu-runner answers device events too: the kernel is told to wait for no "
				      "reply, so neither daemon's answer decides for the other's devices");
	else if (rc != -EOPNOTSUPP)
		tcmu_log(srv, 1, "netlink: SET_FEATURES: %s", strerror(-rc));
}

void tcmu_netlink_close(struct tcmu_server *srv, bool stop_replies)
{
	struct tcmu_netlink *nl = srv->nl;
	uint8_t off = 0;

	if (!nl)
		return;
	/*
	 * The kernel's wait for a reply has no timeout (tcmu_wait_genl_cmd_reply):
	 * with nobody left to answer, a later enable of a device would hang.
	 */
	if (stop_replies && nl->family > 0 && request(nl, TCMU_CMD_SET_FEATURES, fill_features, &off) != 0)
		tcmu_log(srv, 1, "netlink: could not tell the kernel to stop waiting for replies");
	if (ev_is_active(&nl->io))
		ev_io_stop(srv->loop, &nl->io);
	if (nl->events)
		nl_socket_free(nl->events);
	if (nl->requests)
		nl_socket_free(nl->requests);
	free(nl);
	srv->nl = NULL;
}
