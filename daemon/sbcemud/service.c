/*
 * What the service manager is told (sd_notify(3); systemd.service(5),
 * Type=notify): READY=1 once start() is done (every portal listens, every LU
 * is open, the TCMU front end has attached the backstores that exist),
 * RELOADING=1 and READY=1 around a SIGHUP, STOPPING=1 when the shutdown
 * starts, STATUS= lines an operator reads in `systemctl status`, and
 * WATCHDOG=1 from the event loop itself, so a loop that hangs stops the
 * keep-alives and systemd restarts the daemon (WatchdogSec=).  Outside
 * systemd ($NOTIFY_SOCKET unset) every call does nothing.
 */
#include <systemd/sd-daemon.h>

#include "sbcemud.h"

struct lu_count {
	size_t targets_lus, frontend_lus;
};

static void count_lu(void *arg, const struct sbce_lu_ref *ref)
{
	struct lu_count *c = arg;

	if (ref->frontend)
		c->frontend_lus++;
	else
		c->targets_lus++;
}

static void notify_status(struct sbce_daemon *d, const char *first)
{
	struct lu_count c = { 0 };

	sbce_foreach_lu(d, count_lu, &c);
	sd_notifyf(0, "%sSTATUS=serving %zu LU%s of %zu target%s, %zu LU%s of front ends (TCMU)", first,
		   c.targets_lus, c.targets_lus == 1 ? "" : "s", d->device_count, d->device_count == 1 ? "" : "s",
		   c.frontend_lus, c.frontend_lus == 1 ? "" : "s");
}

static void watchdog_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)w;
	(void)revents;
	sd_notify(0, "WATCHDOG=1");
}

void sbce_service_ready(struct sbce_daemon *d)
{
	uint64_t usec = 0;

	notify_status(d, "READY=1\n");
	/* Keep-alives at half the interval systemd waits (sd_watchdog_enabled(3)). */
	if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0) {
		ev_timer_init(&d->watchdog_timer, watchdog_cb, 0., (double)usec / 2e6);
		ev_timer_again(d->loop.loop, &d->watchdog_timer);
	}
}

void sbce_service_reloading(struct sbce_daemon *d)
{
	(void)d;
	sd_notify(0, "RELOADING=1\nSTATUS=reloading the configuration");
}

void sbce_service_reloaded(struct sbce_daemon *d)
{
	notify_status(d, "READY=1\n");
}

void sbce_service_stopping(struct sbce_daemon *d)
{
	(void)d;
	sd_notify(0, "STOPPING=1\nSTATUS=finishing the commands in flight, then flushing every LU");
}

void sbce_service_stop(struct sbce_daemon *d)
{
	if (d->loop.loop && ev_is_active(&d->watchdog_timer))
		ev_timer_stop(d->loop.loop, &d->watchdog_timer);
}
