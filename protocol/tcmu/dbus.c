/*
 * targetcli's view of TCMU handlers: D-Bus objects under
 * /org/kernel/TCMUService1 on the system bus, one per subtype, each with
 * interface org.kernel.TCMUService1 (property ConfigDesc, method
 * CheckConfig(s) -> (b, s)), found through the org.freedesktop.DBus.
 * ObjectManager at /org/kernel/TCMUService1 of the bus name
 * org.kernel.TCMUService1 (targetcli-fb ui_backstore.py; tcmu-runner's
 * tcmu-handler.xml and main.c).
 *
 * That name belongs to tcmu-runner when it runs.  A second handler daemon
 * then owns org.kernel.TCMUService1.HandlerManager1.<subtype>, exports
 * CheckConfig at /org/kernel/TCMUService1/HandlerManager1/<subtype> and
 * calls tcmu-runner's RegisterHandler(subtype, config description):
 * tcmu-runner publishes the subtype's object and forwards CheckConfig to
 * it, and forgets it when the name goes (tcmu-runner's libtcmu-register.c
 * does the same for its own external handlers).  When nobody owns
 * org.kernel.TCMUService1 this front end owns it, with the object manager
 * and its subtype's object.  Either way it follows the name: tcmu-runner
 * coming or going switches between the two.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <systemd/sd-bus.h>

#include "tcmu_internal.h"

#define SERVICE "org.kernel.TCMUService1"
#define ROOT_PATH "/org/kernel/TCMUService1"
#define MANAGER_IFACE "org.kernel.TCMUService1.HandlerManager1"
#define MANAGER_PATH "/org/kernel/TCMUService1/HandlerManager1"

struct tcmu_dbus {
	struct tcmu_server *srv;
	sd_bus *bus;
	char *config_desc;
	char own_name[128];      /* org.kernel.TCMUService1.HandlerManager1.<subtype> */
	char handler_path[128];  /* ..., the object tcmu-runner forwards CheckConfig to */
	char object_path[128];   /* /org/kernel/TCMUService1/<subtype>, when we own the service name */
	sd_bus_slot *handler_slot, *object_slot, *manager_slot, *watch_slot, *register_slot;
	bool own_service;        /* we are org.kernel.TCMUService1 */
	ev_io io;
	ev_timer timer;
};

static void bus_update(struct tcmu_dbus *d);

/* ---- CheckConfig and ConfigDesc ---- */

static int check_config(sd_bus_message *m, void *arg, sd_bus_error *error)
{
	struct tcmu_dbus *d = arg;
	struct tcmu_server *srv = d->srv;
	const char *cfg;
	char reason[512] = "";
	size_t len = strlen(srv->subtype);
	int rc;

	(void)error;
	rc = sd_bus_message_read(m, "s", &cfg);
	if (rc < 0)
		return rc;
	/* targetcli sends "<subtype>/<cfgstring>" (ui_backstore.py ui_command_create). */
	if (strncmp(cfg, srv->subtype, len) == 0 && cfg[len] == '/')
		cfg += len + 1;
	if (!srv->h.check_config || srv->h.check_config(srv->h.arg, cfg, reason, sizeof(reason)) == 0)
		return sd_bus_reply_method_return(m, "bs", 1, "success");
	tcmu_log(srv, 2, "CheckConfig refused \"%s\": %s", cfg, reason);
	return sd_bus_reply_method_return(m, "bs", 0, reason);
}

static int config_desc(sd_bus *bus, const char *path, const char *iface, const char *property,
		       sd_bus_message *reply, void *arg, sd_bus_error *error)
{
	struct tcmu_dbus *d = arg;

	(void)bus, (void)path, (void)iface, (void)property, (void)error;
	return sd_bus_message_append(reply, "s", d->config_desc);
}

static const sd_bus_vtable handler_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_PROPERTY("ConfigDesc", "s", config_desc, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_METHOD("CheckConfig", "s", "bs", check_config, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_VTABLE_END,
};

/* ---- who is org.kernel.TCMUService1 ---- */

static int registered(sd_bus_message *m, void *arg, sd_bus_error *error)
{
	struct tcmu_dbus *d = arg;
	const sd_bus_error *e = sd_bus_message_get_error(m);
	const char *message = "";
	int ok = 0;

	(void)error;
	d->register_slot = sd_bus_slot_unref(d->register_slot);
	if (e)
		tcmu_log(d->srv, 1, "D-Bus: tcmu-runner's RegisterHandler failed: %s", e->message);
	else if (sd_bus_message_read(m, "bs", &ok, &message) >= 0 && !ok)
		tcmu_log(d->srv, 1, "D-Bus: tcmu-runner refused to register %s: %s", d->srv->subtype, message);
	else
		tcmu_log(d->srv, 2, "D-Bus: user:%s registered with tcmu-runner (org.kernel.TCMUService1)",
			 d->srv->subtype);
	return 0;
}

/* We are org.kernel.TCMUService1: the object manager and our subtype's object. */
static int become_service(struct tcmu_dbus *d)
{
	int rc = sd_bus_request_name(d->bus, SERVICE, SD_BUS_NAME_ALLOW_REPLACEMENT);

	if (rc < 0)
		return rc;
	d->own_service = true;
	/* Under the object manager's path it would be listed as a second "sbcemu" object. */
	d->handler_slot = sd_bus_slot_unref(d->handler_slot);
	if (!d->manager_slot && (rc = sd_bus_add_object_manager(d->bus, &d->manager_slot, ROOT_PATH)) < 0)
		return rc;
	if (!d->object_slot &&
	    (rc = sd_bus_add_object_vtable(d->bus, &d->object_slot, d->object_path, SERVICE, handler_vtable, d)) < 0)
		return rc;
	/* A client that listed the objects before sees the new one. */
	sd_bus_emit_object_added(d->bus, d->object_path);
	tcmu_log(d->srv, 2, "D-Bus: serving org.kernel.TCMUService1 (user:%s) for targetcli", d->srv->subtype);
	tcmu_netlink_wait_for_replies(d->srv, true); /* the only handler daemon: the kernel may wait for ours */
	return 0;
}

static int register_with_runner(struct tcmu_dbus *d)
{
	int rc;

	d->register_slot = sd_bus_slot_unref(d->register_slot);
	tcmu_netlink_wait_for_replies(d->srv, false); /* tcmu-runner's answers are not ours */
	if (!d->handler_slot &&
	    (rc = sd_bus_add_object_vtable(d->bus, &d->handler_slot, d->handler_path, SERVICE, handler_vtable, d)) < 0)
		return rc;
	return sd_bus_call_method_async(d->bus, &d->register_slot, SERVICE, MANAGER_PATH, MANAGER_IFACE,
					"RegisterHandler", registered, d, "ss", d->srv->subtype, d->config_desc);
}

/* org.kernel.TCMUService1 changed hands: tcmu-runner came (register with it) or went (take the name). */
static int owner_changed(sd_bus_message *m, void *arg, sd_bus_error *error)
{
	struct tcmu_dbus *d = arg;
	const char *name, *old_owner, *new_owner, *me = NULL;

	(void)error;
	if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0 || strcmp(name, SERVICE) != 0)
		return 0;
	sd_bus_get_unique_name(d->bus, &me);
	if (new_owner[0] && me && strcmp(new_owner, me) == 0)
		return 0;
	if (new_owner[0]) {
		if (d->own_service) {
			/* Someone took the name (it was ours, replaceable): the object stays for nobody. */
			d->own_service = false;
			d->object_slot = sd_bus_slot_unref(d->object_slot);
			d->manager_slot = sd_bus_slot_unref(d->manager_slot);
		}
		if (register_with_runner(d) < 0)
			tcmu_log(d->srv, 1, "D-Bus: cannot call RegisterHandler");
	} else if (!d->own_service && become_service(d) < 0) {
		tcmu_log(d->srv, 1, "D-Bus: cannot own org.kernel.TCMUService1: targetcli will not list user:%s",
			 d->srv->subtype);
	}
	return 0;
}

/* ---- the bus on the loop ---- */

static void bus_process(struct tcmu_dbus *d)
{
	int rc;

	while ((rc = sd_bus_process(d->bus, NULL)) > 0)
		;
	if (rc < 0)
		tcmu_log(d->srv, 1, "D-Bus: %s", strerror(-rc));
	bus_update(d);
}

static void io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	(void)loop, (void)revents;
	bus_process(w->data);
}

static void timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop, (void)revents;
	bus_process(w->data);
}

/* What the bus waits for next: its fd's events and its timeout (CLOCK_MONOTONIC, microseconds). */
static void bus_update(struct tcmu_dbus *d)
{
	struct ev_loop *loop = d->srv->loop;
	int events = sd_bus_get_events(d->bus);
	uint64_t until;

	if (!loop)
		return;
	ev_io_stop(loop, &d->io);
	if (events > 0) {
		ev_io_set(&d->io, sd_bus_get_fd(d->bus),
			  ((events & POLLIN) ? EV_READ : 0) | ((events & POLLOUT) ? EV_WRITE : 0));
		ev_io_start(loop, &d->io);
	}
	ev_timer_stop(loop, &d->timer);
	if (sd_bus_get_timeout(d->bus, &until) >= 0 && until != UINT64_MAX) {
		struct timespec ts;
		uint64_t now;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
		ev_timer_set(&d->timer, until > now ? (double)(until - now) / 1e6 : 0., 0.);
		ev_timer_start(loop, &d->timer);
	}
}

int tcmu_server_dbus_start(struct tcmu_server *srv, const char *desc, char *reason, size_t len)
{
	struct tcmu_dbus *d = calloc(1, sizeof(*d));
	int rc, has_owner = 0;
	sd_bus_message *reply = NULL;
	sd_bus_error err = SD_BUS_ERROR_NULL;

	if (!d || !(d->config_desc = strdup(desc))) {
		free(d);
		snprintf(reason, len, "out of memory");
		return -1;
	}
	d->srv = srv;
	srv->dbus = d;
	snprintf(d->own_name, sizeof(d->own_name), MANAGER_IFACE ".%s", srv->subtype);
	snprintf(d->handler_path, sizeof(d->handler_path), MANAGER_PATH "/%s", srv->subtype);
	snprintf(d->object_path, sizeof(d->object_path), ROOT_PATH "/%s", srv->subtype);
	ev_init(&d->io, io_cb);
	d->io.data = d;
	ev_init(&d->timer, timer_cb);
	d->timer.data = d;
	rc = sd_bus_open_system(&d->bus);
	if (rc < 0) {
		snprintf(reason, len, "no D-Bus system bus (%s)", strerror(-rc));
		goto fail;
	}
	rc = sd_bus_request_name(d->bus, d->own_name, 0);
	if (rc < 0) {
		snprintf(reason, len, "cannot own %s on the system bus (%s; is the D-Bus policy installed?)", d->own_name,
			 strerror(-rc));
		goto fail;
	}
	rc = sd_bus_match_signal(d->bus, &d->watch_slot, "org.freedesktop.DBus", "/org/freedesktop/DBus",
				 "org.freedesktop.DBus", "NameOwnerChanged", owner_changed, d);
	if (rc >= 0)
		rc = sd_bus_call_method(d->bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
					"NameHasOwner", &err, &reply, "s", SERVICE);
	if (rc >= 0)
		rc = sd_bus_message_read(reply, "b", &has_owner);
	sd_bus_message_unref(reply);
	sd_bus_error_free(&err);
	if (rc >= 0)
		rc = has_owner ? register_with_runner(d) : become_service(d);
	if (rc < 0) {
		snprintf(reason, len, "%s on the system bus (%s)",
			 has_owner ? "cannot call tcmu-runner's RegisterHandler" : "cannot own org.kernel.TCMUService1",
			 strerror(-rc));
		goto fail;
	}
	bus_process(d);
	return 0;
fail:
	tcmu_dbus_close(srv);
	return -1;
}

void tcmu_dbus_close(struct tcmu_server *srv)
{
	struct tcmu_dbus *d = srv->dbus;

	if (!d)
		return;
	if (srv->loop) {
		ev_io_stop(srv->loop, &d->io);
		ev_timer_stop(srv->loop, &d->timer);
	}
	sd_bus_slot_unref(d->register_slot);
	sd_bus_slot_unref(d->watch_slot);
	sd_bus_slot_unref(d->object_slot);
	sd_bus_slot_unref(d->manager_slot);
	sd_bus_slot_unref(d->handler_slot);
	if (d->bus)
		sd_bus_flush_close_unref(d->bus);
	free(d->config_desc);
	free(d);
	srv->dbus = NULL;
}

bool tcmu_dbus_runner_present(const struct tcmu_server *srv)
{
	return srv->dbus && !srv->dbus->own_service;
}
