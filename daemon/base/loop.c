/*
 * The event loop: libev's default loop (the only one that may watch
 * signals), with SIGTERM/SIGINT (graceful shutdown) and SIGHUP watchers.
 * SIGPIPE is ignored: a peer closing its socket is an error return, not a
 * reason to die.
 */
#include <signal.h>

#include "daemon.h"

static struct sbce_loop *from_watcher(ev_signal *w)
{
	return w->data;
}

static void terminate_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
	struct sbce_loop *l = from_watcher(w);

	(void)loop;
	(void)revents;
	l->on_terminate(l->arg, w->signum);
}

static void hangup_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
	struct sbce_loop *l = from_watcher(w);

	(void)loop;
	(void)revents;
	l->on_hangup(l->arg);
}

int sbce_loop_init(struct sbce_loop *l, void (*on_terminate)(void *arg, int signum), void (*on_hangup)(void *arg),
		   void *arg)
{
	l->loop = ev_default_loop(EVFLAG_AUTO);
	if (!l->loop)
		return -1;
	l->on_terminate = on_terminate;
	l->on_hangup = on_hangup;
	l->arg = arg;
	signal(SIGPIPE, SIG_IGN);
	ev_signal_init(&l->sigterm, terminate_cb, SIGTERM);
	ev_signal_init(&l->sigint, terminate_cb, SIGINT);
	ev_signal_init(&l->sighup, hangup_cb, SIGHUP);
	l->sigterm.data = l->sigint.data = l->sighup.data = l;
	ev_signal_start(l->loop, &l->sigterm);
	ev_signal_start(l->loop, &l->sigint);
	ev_signal_start(l->loop, &l->sighup);
	return 0;
}

void sbce_loop_run(struct sbce_loop *l)
{
	ev_run(l->loop, 0);
}

void sbce_loop_stop(struct sbce_loop *l)
{
	ev_break(l->loop, EVBREAK_ALL);
}

void sbce_loop_fini(struct sbce_loop *l)
{
	if (!l->loop)
		return;
	ev_signal_stop(l->loop, &l->sigterm);
	ev_signal_stop(l->loop, &l->sigint);
	ev_signal_stop(l->loop, &l->sighup);
	ev_loop_destroy(l->loop);
	l->loop = NULL;
}
