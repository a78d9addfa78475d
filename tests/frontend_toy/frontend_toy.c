/*
 * A toy front end: an in-process transport that exists only in the tests,
 * to show that a third front end needs this one file and its CMake lines,
 * and no edit anywhere else (daemon/sbcemud/frontend.h is all it uses of
 * the daemon, scsi.h all it uses of the SCSI core).
 *
 * It is linked into sbcemud_toy beside the iSCSI and TCMU front ends and
 * starts only when $SBCEMU_TOY_SOCKET names a Unix socket to listen on.  A
 * client speaks lines there:
 *   login DEVICE INITIATOR         -> "ok" | "error REASON"
 *       an I_T nexus to DEVICE: a configured target's name, or "toy/lu0"
 *   cmd TAG LUN CDB EXPLEN [DATA]  -> "done TAG STATUS SENSE DATA" | "aborted TAG"
 *       CDB and DATA (the Data-Out) in hex; EXPLEN the expected transfer
 *       length; STATUS two hex digits; SENSE and DATA (the Data-In) in hex,
 *       "-" when empty.  Replies come as commands complete.
 * With $SBCEMU_TOY_LU (a cfgstring of [lun] keys) it also makes a device of
 * its own, "toy/lu0", whose LUN 0 the control names as toy:lu0.
 *
 * A toy: replies are written with blocking send() on the loop thread, which
 * a real front end would queue instead.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "sbcemud.h"

#define TOY_LINE_MAX 65536
#define TOY_OWN_DEVICE "toy/lu0"

struct toy_task;

struct toy_conn {
	struct toy *toy;
	struct toy_conn *next;
	int fd;
	ev_io io;
	char in[TOY_LINE_MAX];
	size_t in_len;
	struct scsi_nexus *nexus; /* after login */
	char device[CFG_NAME_MAX];
	char initiator[224];
	struct toy_task *tasks;   /* submitted, not finished */
	unsigned commands;
};

struct toy_task {
	struct scsi_cmd cmd;      /* first: the core's callbacks get &cmd */
	struct toy *toy;
	struct toy_conn *conn;    /* NULL once the connection is gone */
	struct toy_task *next;
	char tag[32];
	uint8_t *data_out;
	uint32_t data_out_len;
	struct iovec iov;
};

struct toy {
	struct sbce_daemon *d;
	int fd;
	ev_io accept_io;
	struct sockaddr_un addr;
	struct toy_conn *conns;
	struct scsi_device *own;  /* TOY_OWN_DEVICE, or NULL */
	struct sbce_alarm *own_alarm;
	char own_path[CFG_PATH_MAX];
	unsigned outstanding;     /* tasks not released */
	void (*drained)(void *arg);
	void *drained_arg;
};

/* ---- the transport ---- */

static void reply(struct toy_conn *c, const char *line)
{
	size_t len = strlen(line), off = 0;

	while (c && off < len) {
		ssize_t n = send(c->fd, line + off, len - off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		off += (size_t)n;
	}
}

static void hex(char *out, const uint8_t *p, size_t len)
{
	if (!len)
		strcpy(out, "-");
	for (size_t i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
}

static void flushed(void *arg, int err)
{
	struct toy *toy = arg;

	if (err)
		sbce_error("toy: flushing %s failed: %s", TOY_OWN_DEVICE, strerror(-err));
	toy->drained(toy->drained_arg);
}

/* Draining: once no command is left, the own device is flushed, then the daemon hears it. */
static void maybe_drained(struct toy *toy)
{
	if (!toy->drained || toy->outstanding)
		return;
	if (toy->own)
		scsi_device_flush(toy->own, flushed, toy);
	else
		toy->drained(toy->drained_arg);
}

static void task_finish(struct toy_task *t)
{
	struct toy *toy = t->toy;

	if (t->conn) {
		struct toy_task **pp = &t->conn->tasks;

		while (*pp != t)
			pp = &(*pp)->next;
		*pp = t->next;
		t->conn->commands--;
	}
	scsi_cmd_release(&t->cmd);
	free(t->data_out);
	free(t);
	toy->outstanding--;
	maybe_drained(toy);
}

static void toy_need_data_out(struct scsi_cmd *cmd)
{
	struct toy_task *t = (struct toy_task *)cmd;
	uint32_t off = cmd->data_out_offset < t->data_out_len ? cmd->data_out_offset : t->data_out_len;
	uint32_t want = scsi_cmd_data_out_want(cmd);

	if (want > t->data_out_len - off)
		want = t->data_out_len - off; /* the core answers the shortfall */
	t->iov.iov_base = t->data_out + off;
	t->iov.iov_len = want;
	scsi_cmd_set_data_out(cmd, &t->iov, 1, want);
	scsi_cmd_data_out_ready(cmd);
}

static void toy_complete(struct scsi_cmd *cmd)
{
	struct toy_task *t = (struct toy_task *)cmd;
	char *line = malloc(2 * ((size_t)cmd->sense_len + cmd->data_in_len) + 128);

	if (line) {
		int n = sprintf(line, "done %s %02x ", t->tag, cmd->status);

		hex(line + n, cmd->sense, cmd->sense_len);
		strcat(line, " ");
		hex(line + strlen(line), cmd->data_in, cmd->data_in_len);
		strcat(line, "\n");
		reply(t->conn, line);
		free(line);
	}
	task_finish(t);
}

static void toy_aborted(struct scsi_cmd *cmd)
{
	struct toy_task *t = (struct toy_task *)cmd;
	char line[64];

	snprintf(line, sizeof(line), "aborted %s\n", t->tag);
	reply(t->conn, line);
	task_finish(t);
}

/* SPC-4 7.6.1: PROTOCOL IDENTIFIER Fh, no specific protocol; no version descriptor, no TransportIDs. */
static const struct scsi_transport_ops toy_transport = {
	.need_data_out = toy_need_data_out,
	.complete = toy_complete,
	.aborted = toy_aborted,
	.max_sense_len = SCSI_SENSE_BUFFER_MAX,
	.protocol_identifier = 0xf,
};

/* ---- connections ---- */

static void conn_close(struct toy_conn *c)
{
	struct toy_conn **pp = &c->toy->conns;

	while (*pp != c)
		pp = &(*pp)->next;
	*pp = c->next;
	ev_io_stop(c->toy->d->loop.loop, &c->io);
	close(c->fd);
	/* Commands still in the core finish without a connection: their replies go nowhere. */
	for (struct toy_task *t = c->tasks; t; t = t->next)
		t->conn = NULL;
	if (c->nexus)
		scsi_nexus_destroy(c->nexus); /* aborts its commands, as a lost I_T nexus does */
	free(c);
}

static struct scsi_device *device_named(struct toy *toy, const char *name)
{
	int i;

	if (toy->own && strcmp(name, TOY_OWN_DEVICE) == 0)
		return toy->own;
	i = sbce_target_index(toy->d, name);
	return i < 0 ? NULL : toy->d->devices[i];
}

static void do_login(struct toy_conn *c, char *args)
{
	char *save = NULL, *device = strtok_r(args, " ", &save), *initiator = strtok_r(NULL, " ", &save);
	struct scsi_device *dev = device ? device_named(c->toy, device) : NULL;

	if (c->nexus || !initiator || !dev) {
		reply(c, c->nexus ? "error logged in already\n" : !initiator ? "error login DEVICE INITIATOR\n"
										 : "error no such device\n");
		return;
	}
	snprintf(c->device, sizeof(c->device), "%s", device);
	snprintf(c->initiator, sizeof(c->initiator), "%s", initiator);
	c->nexus = scsi_nexus_create(dev, &toy_transport, initiator, device, 1);
	reply(c, c->nexus ? "ok\n" : "error out of memory\n");
}

/* Hex text into bytes: the count, or -1. */
static ssize_t unhex(const char *text, uint8_t *out, size_t cap)
{
	size_t n = strlen(text) / 2;

	if (strlen(text) % 2 || n > cap)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (sscanf(text + 2 * i, "%2hhx", &out[i]) != 1)
			return -1;
	return (ssize_t)n;
}

static void do_cmd(struct toy_conn *c, char *args)
{
	char *save = NULL, *tag = strtok_r(args, " ", &save), *lun = strtok_r(NULL, " ", &save);
	char *cdb = strtok_r(NULL, " ", &save), *explen = strtok_r(NULL, " ", &save), *data = strtok_r(NULL, " ", &save);
	struct toy_task *t;
	ssize_t n;

	if (!c->nexus || !explen || strlen(tag) >= sizeof(t->tag)) {
		reply(c, c->nexus ? "error cmd TAG LUN CDB EXPLEN [DATA]\n" : "error login first\n");
		return;
	}
	t = calloc(1, sizeof(*t));
	if (!t || (data && !(t->data_out = malloc(strlen(data) / 2 + 1)))) {
		free(t);
		reply(c, "error out of memory\n");
		return;
	}
	scsi_cmd_init(&t->cmd, &toy_transport, c->nexus);
	n = unhex(cdb, t->cmd.cdb, SCSI_MAX_CDB_LEN);
	if (n <= 0 || (data && unhex(data, t->data_out, strlen(data) / 2 + 1) < 0)) {
		free(t->data_out);
		free(t);
		reply(c, "error bad hex\n");
		return;
	}
	snprintf(t->tag, sizeof(t->tag), "%s", tag);
	t->toy = c->toy;
	t->conn = c;
	t->cmd.cdb_len = (uint8_t)n;
	t->cmd.lun = scsi_lun_encode((uint32_t)strtoul(lun, NULL, 0));
	t->cmd.expected_length = (uint32_t)strtoul(explen, NULL, 0);
	t->data_out_len = data ? (uint32_t)(strlen(data) / 2) : 0;
	t->cmd.dir = data ? SCSI_DIR_TO_DEVICE : t->cmd.expected_length ? SCSI_DIR_FROM_DEVICE : SCSI_DIR_NONE;
	t->cmd.task_attr = SCSI_TASK_SIMPLE;
	t->next = c->tasks;
	c->tasks = t;
	c->commands++;
	c->toy->outstanding++;
	scsi_cmd_submit(&t->cmd); /* may complete before it returns */
}

static void conn_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct toy_conn *c = w->data;
	ssize_t n = recv(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len, 0);
	char *nl;

	(void)loop;
	(void)revents;
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		conn_close(c);
		return;
	}
	c->in_len += (size_t)n;
	while ((nl = memchr(c->in, '\n', c->in_len))) {
		size_t len = (size_t)(nl - c->in) + 1;

		*nl = '\0';
		if (strncmp(c->in, "login ", 6) == 0)
			do_login(c, c->in + 6);
		else if (strncmp(c->in, "cmd ", 4) == 0)
			do_cmd(c, c->in + 4);
		else
			reply(c, "error unknown request\n");
		memmove(c->in, c->in + len, c->in_len - len);
		c->in_len -= len;
	}
	if (c->in_len == sizeof(c->in))
		conn_close(c);
}

static void accept_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct toy *toy = w->data;
	int fd = accept4(toy->fd, NULL, NULL, SOCK_CLOEXEC);
	struct toy_conn *c = fd >= 0 ? calloc(1, sizeof(*c)) : NULL;

	(void)revents;
	if (!c) {
		if (fd >= 0)
			close(fd);
		return;
	}
	c->toy = toy;
	c->fd = fd;
	ev_io_init(&c->io, conn_cb, fd, EV_READ);
	c->io.data = c;
	ev_io_start(loop, &c->io);
	c->next = toy->conns;
	toy->conns = c;
}

/* ---- the front end ---- */

/* The device of its own: LUN 0 from the cfgstring in $SBCEMU_TOY_LU.  0, or -1 after logging why. */
static int own_device(struct toy *toy, const char *cfgstring)
{
	struct sbce_daemon *d = toy->d;
	struct cfg_diag diag = { 0 };
	char state_dir[CFG_PATH_MAX + 32], err[512];
	struct cfg_lun l;
	int rc;

	toy->own = scsi_device_create(TOY_OWN_DEVICE, sbce_workers_executor(d->workers), d->resources);
	toy->own_alarm = toy->own ? sbce_alarm_attach(d, toy->own) : NULL;
	if (!toy->own_alarm) {
		sbce_error("toy: out of memory");
		return -1;
	}
	if (cfg_lun_from_cfgstring(d->cfg, "lu0", cfgstring, 0, &l, &diag) != 0) {
		sbce_error("toy: SBCEMU_TOY_LU: %s", diag.text ? diag.text : "invalid");
		cfg_diag_free(&diag);
		return -1;
	}
	cfg_diag_free(&diag);
	snprintf(state_dir, sizeof(state_dir), "%s/toy/lu0/lun0", d->cfg->daemon.state_dir);
	rc = sbce_lu_open(d, toy->own, &l, "toy lu0", state_dir, err, sizeof(err));
	if (rc != 0)
		sbce_error("toy: %s", err);
	snprintf(toy->own_path, sizeof(toy->own_path), "%s", l.path);
	return rc;
}

static int toy_start(struct sbce_daemon *d, void **state)
{
	const char *path = getenv("SBCEMU_TOY_SOCKET"), *lu = getenv("SBCEMU_TOY_LU");
	struct toy *toy;

	*state = NULL;
	if (!path || !*path) {
		sbce_info("toy front end off (no SBCEMU_TOY_SOCKET)");
		return 1;
	}
	toy = calloc(1, sizeof(*toy));
	*state = toy;
	if (!toy)
		return -1;
	toy->d = d;
	toy->fd = -1;
	if (lu && own_device(toy, lu) != 0)
		return -1;
	toy->addr.sun_family = AF_UNIX;
	snprintf(toy->addr.sun_path, sizeof(toy->addr.sun_path), "%s", path);
	unlink(path);
	toy->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (toy->fd < 0 || bind(toy->fd, (struct sockaddr *)&toy->addr, sizeof(toy->addr)) != 0 ||
	    listen(toy->fd, 8) != 0) {
		sbce_error("toy: cannot listen on %s: %s", path, strerror(errno));
		return -1;
	}
	ev_io_init(&toy->accept_io, accept_cb, toy->fd, EV_READ);
	toy->accept_io.data = toy;
	ev_io_start(d->loop.loop, &toy->accept_io);
	sbce_info("toy front end on %s", path);
	return 0;
}

static void toy_drain(void *state, void (*done)(void *arg), void *arg)
{
	struct toy *toy = state;

	ev_io_stop(toy->d->loop.loop, &toy->accept_io);
	toy->drained = done;
	toy->drained_arg = arg;
	maybe_drained(toy);
}

static void toy_destroy(void *state)
{
	struct toy *toy = state;

	if (!toy)
		return;
	while (toy->conns)
		conn_close(toy->conns);
	if (toy->fd >= 0) {
		ev_io_stop(toy->d->loop.loop, &toy->accept_io);
		close(toy->fd);
		unlink(toy->addr.sun_path);
	}
	sbce_alarm_detach(toy->d, toy->own_alarm);
	if (toy->own)
		scsi_device_destroy(toy->own);
	free(toy);
}

static void toy_foreach_session(void *state, void (*fn)(void *arg, const struct sbce_session *s), void *arg)
{
	struct toy *toy = state;

	for (struct toy_conn *c = toy->conns; c; c = c->next) {
		struct sbce_attr attr = { "socket", SBCE_ATTR_STRING, .string = toy->addr.sun_path };
		struct sbce_session s = { c->device, c->initiator, c->commands, &attr, 1 };

		if (c->nexus)
			fn(arg, &s);
	}
}

static void toy_foreach_lu(void *state, void (*fn)(void *arg, const struct sbce_frontend_lu *lu), void *arg)
{
	struct toy *toy = state;
	struct sbce_frontend_lu l = { "lu0", toy->own_path, NULL };

	l.lu = toy->own ? scsi_device_find_lu(toy->own, scsi_lun_encode(0)) : NULL;
	if (l.lu)
		fn(arg, &l);
}

/* A power cut, or the target taken away: its connections go as a pulled cable would. */
static unsigned toy_drop_connections(void *state, const char *name, const char *why)
{
	struct toy *toy = state;
	unsigned dropped = 0;

	for (struct toy_conn *c = toy->conns, *next; c; c = next) {
		next = c->next;
		if (c->nexus && strcmp(c->device, name) == 0) {
			sbce_info("toy: %s: connection of %s dropped (%s)", name, c->initiator, why);
			conn_close(c);
			dropped++;
		}
	}
	return dropped;
}

static const struct sbce_frontend_ops frontend_toy = {
	.name = "toy",
	.start = toy_start,
	.drain = toy_drain,
	.destroy = toy_destroy,
	.foreach_session = toy_foreach_session,
	.foreach_lu = toy_foreach_lu,
	.target_removed = toy_drop_connections,
	.drop_connections = toy_drop_connections,
};
SBCE_FRONTEND_REGISTER(frontend_toy)
