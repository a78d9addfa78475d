/*
 * The control socket (docs/control.md): a Unix stream socket, mode 0600,
 * served on the loop thread.  One request per connection: a JSON object on
 * one line (at most SBCE_CONTROL_REQUEST_MAX bytes, within
 * SBCE_CONTROL_CLIENT_TIMEOUT seconds and with no silence longer than
 * SBCE_CONTROL_CLIENT_IDLE), checked whole against its command's
 * members before the command runs, then one JSON reply line, then close.
 * Only root and the daemon's own user are served (SO_PEERCRED), whatever the
 * socket's mode.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "control_internal.h"

struct control_client {
	struct sbce_control *ctl;
	struct control_client *next;
	int fd;
	ev_io io;
	ev_timer timer;
	char *in;          /* the request so far */
	ev_tstamp deadline; /* the whole request by then (SBCE_CONTROL_CLIENT_TIMEOUT) */
	size_t in_len;
	char *out;         /* the reply */
	size_t out_len, out_off;
};

struct sbce_control {
	struct sbce_daemon *d;
	int fd;
	ev_io accept_io;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct control_client *clients;
	unsigned nclients;
};

static void restart_timer(struct control_client *c);

static void client_close(struct control_client *c)
{
	struct sbce_control *ctl = c->ctl;
	struct ev_loop *loop = ctl->d->loop.loop;
	struct control_client **pp;

	ev_io_stop(loop, &c->io);
	ev_timer_stop(loop, &c->timer);
	close(c->fd);
	for (pp = &ctl->clients; *pp != c; pp = &(*pp)->next)
		;
	*pp = c->next;
	free(c->in);
	free(c->out);
	free(c);
	if (ctl->nclients-- == SBCE_CONTROL_CLIENTS_MAX)
		ev_io_start(loop, &ctl->accept_io); /* room again */
}

static json_t *error_reply(const char *why)
{
	return json_pack("{s:b, s:s}", "ok", 0, "error", why);
}

/* The members a command accepts: a request with another is refused whole. */
static int check_members(struct sbce_daemon *d, const struct sbce_control_command *cmd, const json_t *req,
			 char *err, size_t errlen)
{
	const char *key;
	json_t *value;

	json_object_foreach((json_t *)req, key, value) {
		bool known = strcmp(key, "command") == 0;

		for (const char *const *m = cmd->members; !known && m && *m; m++)
			known = strcmp(*m, SBCE_CONTROL_MEMBER_FRONTEND_LU) == 0 ? sbce_frontend_has_lus(d, key)
										 : strcmp(key, *m) == 0;
		if (!known) {
			snprintf(err, errlen, "%s: unknown member \"%s\"", cmd->name, key);
			return -1;
		}
	}
	return 0;
}

json_t *sbce_control_run(struct sbce_daemon *d, const char *line, size_t len)
{
	char err[512] = "";
	json_error_t jerr;
	json_t *req = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr), *result, *reply;
	const json_t *name;
	const struct sbce_control_command *cmd;

	if (!req) {
		snprintf(err, sizeof(err), "malformed JSON at character %d: %s", jerr.position, jerr.text);
		return error_reply(err);
	}
	name = json_object_get(req, "command");
	if (!json_is_object(req) || !json_is_string(name)) {
		json_decref(req);
		return error_reply("the request must be a JSON object with a \"command\" string");
	}
	for (cmd = sbce_control_commands; cmd->name && strcmp(cmd->name, json_string_value(name)) != 0; cmd++)
		;
	if (!cmd->name) {
		snprintf(err, sizeof(err), "unknown command \"%.64s\"", json_string_value(name));
		json_decref(req);
		return error_reply(err);
	}
	result = json_object();
	if (!result || check_members(d, cmd, req, err, sizeof(err)) != 0 ||
	    cmd->run(d, req, result, err, sizeof(err)) != 0) {
		json_decref(result);
		json_decref(req);
		return error_reply(err[0] ? err : "out of memory");
	}
	json_decref(req);
	if (cmd->saves && d->cfg->daemon.autosave)
		sbce_control_autosave(d);
	reply = json_pack("{s:b, s:o}", "ok", 1, "result", result);
	return reply ? reply : error_reply("out of memory");
}

static void client_write(struct control_client *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return; /* the write watcher calls again */
		if (n <= 0)
			break;
		c->out_off += (size_t)n;
	}
	client_close(c);
}

static void client_reply(struct control_client *c, json_t *reply)
{
	struct ev_loop *loop = c->ctl->d->loop.loop;
	char *text = reply ? json_dumps(reply, JSON_COMPACT) : NULL;

	json_decref(reply);
	ev_io_stop(loop, &c->io);
	if (!text) {
		client_close(c);
		return;
	}
	c->out_len = strlen(text) + 1;
	c->out = malloc(c->out_len);
	if (c->out) {
		memcpy(c->out, text, c->out_len - 1);
		c->out[c->out_len - 1] = '\n';
	}
	free(text);
	if (!c->out) {
		client_close(c);
		return;
	}
	ev_io_set(&c->io, c->fd, EV_WRITE);
	ev_io_start(loop, &c->io);
	client_write(c);
}

static void client_read(struct control_client *c)
{
	for (;;) {
		char *nl;
		ssize_t n = recv(c->fd, c->in + c->in_len, SBCE_CONTROL_REQUEST_MAX + 1 - c->in_len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			client_close(c); /* gone before its request was whole: nothing changes */
			return;
		}
		nl = memchr(c->in + c->in_len, '\n', (size_t)n);
		c->in_len += (size_t)n;
		restart_timer(c);
		if (nl) {
			client_reply(c, sbce_control_run(c->ctl->d, c->in, (size_t)(nl - c->in)));
			return;
		}
		if (c->in_len > SBCE_CONTROL_REQUEST_MAX) {
			char why[96];

			snprintf(why, sizeof(why), "request longer than %d bytes", SBCE_CONTROL_REQUEST_MAX);
			client_reply(c, error_reply(why));
			return;
		}
	}
}

/* The next silence allowed: SBCE_CONTROL_CLIENT_IDLE, but never past the request's deadline. */
static void restart_timer(struct control_client *c)
{
	struct ev_loop *loop = c->ctl->d->loop.loop;
	ev_tstamp left = c->deadline - ev_now(loop);

	ev_timer_stop(loop, &c->timer);
	ev_timer_set(&c->timer, left < SBCE_CONTROL_CLIENT_IDLE ? (left > 0 ? left : 0.) : SBCE_CONTROL_CLIENT_IDLE,
		     0.);
	ev_timer_start(loop, &c->timer);
}

static void client_io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct control_client *c = w->data;

	(void)loop;
	if (revents & EV_WRITE)
		client_write(c);
	else
		client_read(c);
}

static void client_timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	client_close(w->data);
}

/* Root and the daemon's own user; anyone else is refused (docs/control.md). */
static bool peer_allowed(int fd, uid_t *uid)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
		return false;
	*uid = cred.uid;
	return cred.uid == 0 || cred.uid == geteuid();
}

static void accept_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct sbce_control *ctl = w->data;
	struct control_client *c;
	uid_t uid = (uid_t)-1;
	int fd;

	(void)revents;
	fd = accept4(ctl->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return;
	if (!peer_allowed(fd, &uid)) {
		sbce_warn("control socket: refused a client of uid %d (only root and uid %d)", (int)uid, (int)geteuid());
		close(fd);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (c)
		c->in = malloc(SBCE_CONTROL_REQUEST_MAX + 1);
	if (!c || !c->in) {
		if (c)
			free(c);
		close(fd);
		return;
	}
	c->ctl = ctl;
	c->fd = fd;
	ev_io_init(&c->io, client_io_cb, fd, EV_READ);
	c->io.data = c;
	ev_timer_init(&c->timer, client_timeout_cb, SBCE_CONTROL_CLIENT_IDLE, 0.);
	c->timer.data = c;
	c->deadline = ev_now(loop) + SBCE_CONTROL_CLIENT_TIMEOUT;
	ev_io_start(loop, &c->io);
	ev_timer_start(loop, &c->timer);
	c->next = ctl->clients;
	ctl->clients = c;
	if (++ctl->nclients == SBCE_CONTROL_CLIENTS_MAX)
		ev_io_stop(loop, &ctl->accept_io); /* the rest wait in the backlog */
}

/*
 * A socket left by a daemon that died may be replaced: the state directory's
 * lock, which this daemon holds, proves no other daemon serves it.  Anything
 * else at the path is not ours to remove.
 */
static int clear_stale_socket(const char *path)
{
	struct stat st;

	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	return unlink(path) == 0 ? 0 : -errno;
}

int sbce_control_start(struct sbce_daemon *d)
{
	const char *path = d->cfg->daemon.control_socket;
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct sbce_control *ctl;
	mode_t old_mask;
	int rc;

	if (!path[0]) {
		sbce_info("control socket off (daemon.control_socket is empty)");
		return 0;
	}
	ctl = calloc(1, sizeof(*ctl));
	if (!ctl) {
		sbce_error("out of memory");
		return -1;
	}
	ctl->d = d;
	/* cfg_finish() refused a longer path. */
	if (strlen(path) >= sizeof(ctl->path)) {
		sbce_error("control socket %s: path too long", path);
		free(ctl);
		return -1;
	}
	memcpy(ctl->path, path, strlen(path) + 1);
	memcpy(addr.sun_path, path, strlen(path) + 1);
	/* Its directory: the state directory, or the runtime directory (/run/sbcemu) made here, 0700. */
	*strrchr(ctl->path, '/') = '\0';
	rc = sbce_make_dirs(ctl->path);
	memcpy(ctl->path, path, strlen(path) + 1);
	if (rc == 0)
		rc = clear_stale_socket(path);
	if (rc != 0) {
		sbce_error("control socket %s: %s", path, rc == -EEXIST ? "a file that is not a socket is in the way"
								    : strerror(-rc));
		free(ctl);
		return -1;
	}
	ctl->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	old_mask = umask(0177); /* the socket is born 0600: no window where others may connect */
	rc = ctl->fd < 0 ? -1 : bind(ctl->fd, (struct sockaddr *)&addr, sizeof(addr));
	umask(old_mask);
	if (rc != 0 || chmod(path, 0600) != 0 || listen(ctl->fd, 64) != 0) {
		sbce_error("control socket %s: %s", path, strerror(errno));
		if (ctl->fd >= 0)
			close(ctl->fd);
		free(ctl);
		return -1;
	}
	ev_io_init(&ctl->accept_io, accept_cb, ctl->fd, EV_READ);
	ctl->accept_io.data = ctl;
	ev_io_start(d->loop.loop, &ctl->accept_io);
	d->control = ctl;
	sbce_info("control socket %s (sbcemuctl -s %s)", path, path);
	return 0;
}

void sbce_control_stop(struct sbce_daemon *d)
{
	struct sbce_control *ctl = d->control;

	if (!ctl)
		return;
	while (ctl->clients)
		client_close(ctl->clients);
	ev_io_stop(d->loop.loop, &ctl->accept_io);
	close(ctl->fd);
	unlink(ctl->path);
	free(ctl);
	d->control = NULL;
}
