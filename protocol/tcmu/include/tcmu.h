/*
 * sbcemu TCMU front end: the user side of the Linux kernel's TCMU
 * (target_core_user), so that LIO's targetcli can put sbcemu logical units
 * behind any LIO fabric as `user:sbcemu` backstores (docs/tcmu.md).
 *
 * Each TCMU device of our subtype is one logical unit: the daemon builds a
 * SCSI device for it (LUN 0) from the device's cfgstring, and the front end
 * carries the commands of the device's ring to it through the SCSI core, on
 * the loop thread (backend I/O on the workers, like the iSCSI front end).
 * Every call here is made on the loop's thread.
 */
#ifndef SBCEMU_TCMU_H
#define SBCEMU_TCMU_H

/*
 * Layering (docs/architecture.md): only the daemon's front-end adapter
 * (daemon/frontends/) includes a transport; the rest of the daemon reaches
 * it through frontend.h.
 */
#if defined(SBCE_BUILDING_BACKENDS) || defined(SBCE_BUILDING_SCSI) || defined(SBCE_BUILDING_CONFIG) || \
	defined(SBCE_BUILDING_ISCSI) || defined(SBCE_BUILDING_DAEMON)
#error "sbcemu layering: the TCMU front end is included by daemon/frontends/ only (the daemon uses frontend.h)"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ev_loop;
struct scsi_device;
struct tcmu_server;

/* What the kernel says about a device (its UIO name and configfs attributes). */
struct tcmu_device_info {
	unsigned uio_minor;       /* /dev/uio<N> */
	unsigned hba;             /* configfs core/user_<hba> */
	char name[256];           /* the backstore's name (configfs directory) */
	char cfgstring[512];      /* what follows "<subtype>/" in the device's dev_config */
	uint64_t dev_size;        /* configfs dev_size in bytes (0: unknown) */
	uint32_t block_size;      /* configfs hw_block_size (0: unknown) */
};

/* What the daemon provides. */
struct tcmu_handler {
	/*
	 * Checks a cfgstring (what follows "<subtype>/") without opening
	 * anything, for targetcli's CheckConfig: 0, or -1 with a one-line reason.
	 */
	int (*check_config)(void *arg, const char *cfgstring, char *reason, size_t len);
	/*
	 * Builds the SCSI device (LU 0) a TCMU device serves.  When the LU
	 * cannot be built (a bad cfgstring, a backing file that cannot be
	 * opened) it returns a device without any LU and writes the reason: the
	 * kernel is told the device failed, and until it removes it every
	 * command gets LOGICAL UNIT NOT SUPPORTED instead of a timeout.  NULL
	 * (reason set) only when out of memory.
	 */
	struct scsi_device *(*open_device)(void *arg, const struct tcmu_device_info *info, char *reason, size_t len);
	/* The device went away and its commands have ended: the daemon frees what open_device built. */
	void (*close_device)(void *arg, struct scsi_device *dev);
	/* One line for the log (level: 0 error, 1 warn, 2 info, 3 debug), for levels up to log_level. */
	void (*log)(void *arg, int level, const char *message);
	int log_level;
	void *arg;
};

/*
 * A front end serving TCMU devices whose subtype is `subtype` ("sbcemu")
 * on loop (needed: devices go on a later loop iteration than their last
 * command).  Nothing is attached yet.  NULL when out of memory.
 */
struct tcmu_server *tcmu_server_create(struct ev_loop *loop, const char *subtype, const struct tcmu_handler *h);

/*
 * Starts serving: the TCM-USER netlink family's device events (the kernel
 * then waits for sbcemu's answer before it enables an sbcemu device, so a
 * refused cfgstring fails the enable), then every sbcemu UIO device that
 * exists already (the daemon restarted, or configfs was restored before it
 * came up).  0, or -1 with reason (TCMU is not loaded, no permission).
 */
int tcmu_server_start(struct tcmu_server *srv, char *reason, size_t len);

/*
 * Makes the subtype known to targetcli on the D-Bus system bus: registered
 * with tcmu-runner's org.kernel.TCMUService1 when that runs, else as
 * org.kernel.TCMUService1 itself; config_desc is the ConfigDesc property
 * (targetcli's `help create`), check_config answers CheckConfig.  0, or -1
 * with reason (no system bus: backstores then work, but targetcli does not
 * list the subtype).
 */
int tcmu_server_dbus_start(struct tcmu_server *srv, const char *config_desc, char *reason, size_t len);

/*
 * Attaches a device whose ring is already mapped: map (map_len bytes) is the
 * UIO map, fd the UIO file descriptor (read: wait for the kernel's kick;
 * write 4 bytes: tell it completions are there); the device takes both.
 * Used by the UIO scan and by the simulated kernel of the tests.  Commands
 * a previous handler left in the ring are failed by the kernel (BUSY) and
 * the ring starts afresh.  Returns 0; 1 when attached with its LU refused
 * (reason set, see open_device); or -1 with reason (a bad mailbox, out of
 * memory), the caller keeping map and fd.
 */
int tcmu_server_attach(struct tcmu_server *srv, const struct tcmu_device_info *info, void *map, size_t map_len,
		       int fd, char *reason, size_t len);
/* Reads the ring of the device on UIO minor now (what the fd watcher does; the tests call it). */
void tcmu_server_poll(struct tcmu_server *srv, unsigned uio_minor);
/*
 * Detaches the device on UIO minor: its commands are aborted, it is closed
 * once they have ended (on the loop), then done(arg, 0) runs (possibly
 * before return); done(arg, -ENODEV) if there is no such device.
 */
void tcmu_server_detach(struct tcmu_server *srv, unsigned uio_minor, void (*done)(void *arg, int err), void *arg);
/* Devices attached now. */
unsigned tcmu_server_device_count(const struct tcmu_server *srv);

/*
 * Stops taking commands, lets those in flight finish and their completions
 * reach the rings, detaches every device, then done(arg).
 */
void tcmu_server_drain(struct tcmu_server *srv, void (*done)(void *arg), void *arg);
void tcmu_server_destroy(struct tcmu_server *srv);

#endif
