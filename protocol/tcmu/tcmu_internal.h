/*
 * TCMU front end internals shared by the files of protocol/tcmu/.
 *
 * Object model: a server owns devices; a device is one UIO map (mailbox,
 * command ring, data area) and its fd, one I_T nexus of the SCSI device the
 * daemon built for it, and the tasks (each embeds a struct scsi_cmd) read
 * from the ring and not yet completed into it.  Everything runs on the
 * loop thread; no globals.
 */
#ifndef SBCEMU_TCMU_INTERNAL_H
#define SBCEMU_TCMU_INTERNAL_H

#ifndef SBCE_BUILDING_TCMU
#error "sbcemu layering: tcmu_internal.h is internal to the TCMU front end (protocol/tcmu/): use its public header"
#endif

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include <ev.h>

#include "ring.h"
#include "scsi.h"
#include "tcmu.h"

/* SPC-4 7.6.1 table 362: PROTOCOL IDENTIFIER Fh, no specific protocol (LIO's fabric is hidden from the handler). */
#define TCMU_PROTOCOL_IDENTIFIER 0xf
#define TCMU_DIR_MAX 256    /* the directories of struct tcmu_paths */
#define TCMU_PATH_MAX 1024  /* a file under one of them */

struct tcmu_task;
struct tcmu_netlink;
struct tcmu_dbus;

struct tcmu_dev {
	struct tcmu_server *srv;
	struct tcmu_dev *next;
	struct tcmu_device_info info;
	int fd;
	void *map;
	size_t map_len;
	struct tcmu_ring ring;
	ev_io io;
	bool watching;
	struct scsi_device *sdev;
	struct scsi_nexus *nexus;
	LIST_HEAD(, tcmu_task) tasks;   /* read from the ring, not yet completed into it; newest first */
	unsigned in_flight;
	bool notify;                    /* completions written since the kernel was last told */
	bool broken;                    /* the ring held an entry the kernel cannot have written */
	bool refused;                   /* its cfgstring was refused: the device has no LU (LOGICAL UNIT NOT SUPPORTED) */
	bool detaching;
	bool finishing;                 /* its last command ended: it goes on the next loop iteration */
	void (*detached)(void *arg, int err);
	void *detached_arg;
};

struct tcmu_task {
	struct scsi_cmd cmd;            /* embedded: container_of from the core's callbacks */
	struct tcmu_dev *dev;
	LIST_ENTRY(tcmu_task) link;     /* dev->tasks */
	uint16_t cmd_id;
	uint64_t data_len;              /* the data buffers' length */
	struct iovec *piece;            /* Data-Out handed to the core (a slice of iov), after iov[iov_room] */
	unsigned npiece;
	unsigned iovcnt;
	unsigned iov_room;              /* iovecs the allocation has room for (a cached task is reused when enough) */
	struct tcmu_task *cache_next;   /* tcmu_server.task_cache */
	struct iovec iov[];             /* the data buffers, in the data area; then room for as many pieces */
};

/* Freed tasks kept for the next commands (device.c), at most this many per server. */
#define TCMU_TASK_CACHE_MAX 64
/* Iovecs a new task has room for at least, so that a cached one fits most commands. */
#define TCMU_TASK_IOV_MIN 8

/* Where the kernel's files are (the tests point them at a directory of their own). */
struct tcmu_paths {
	char uio_class[TCMU_DIR_MAX];  /* /sys/class/uio */
	char dev_dir[TCMU_DIR_MAX];    /* /dev */
	char configfs[TCMU_DIR_MAX];   /* /sys/kernel/config/target/core */
};

struct tcmu_server {
	struct ev_loop *loop;
	struct tcmu_task *task_cache;   /* freed tasks, for the next commands of any device */
	unsigned task_cache_len;
	char subtype[64];
	struct tcmu_handler h;
	struct tcmu_paths paths;
	/* the ring of an attached device holds commands nobody completed: have the kernel fail them (uio.c) */
	int (*reset_ring)(struct tcmu_server *srv, const struct tcmu_device_info *info);
	struct tcmu_netlink *nl;
	struct tcmu_dbus *dbus;
	ev_timer reaper;                /* devices whose last command ended go here (device.c) */
	struct tcmu_dev *devices;
	unsigned ndevices;
	bool draining;
	void (*drained)(void *arg);
	void *drained_arg;
};

/* device.c */
void tcmu_log(struct tcmu_server *srv, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
struct tcmu_dev *tcmu_find_device(struct tcmu_server *srv, unsigned uio_minor);

/* uio.c */
/*
 * Splits a UIO name "tcm-user/<hba>/<name>/<subtype>/<cfgstring>" into info
 * (hba, name, cfgstring): 0; 1 when the subtype is not `subtype` (the
 * whole word: "sbcemu" does not match "sbcemu2"); -1 when it is no TCMU
 * device name.
 */
int tcmu_parse_uio_name(const char *uio_name, const char *subtype, struct tcmu_device_info *info);
/* A file of the device's configfs directory ("info", "enable", "attrib/...", "action/..."): 0 or -errno. */
int tcmu_configfs_read(const struct tcmu_server *srv, const struct tcmu_device_info *info, const char *file,
		       char *buf, size_t len);
int tcmu_configfs_write(const struct tcmu_server *srv, const struct tcmu_device_info *info, const char *file,
			const char *text);
/* block_dev, reset_ring, unblock through configfs: 0 or -errno. */
int tcmu_reset_ring(struct tcmu_server *srv, const struct tcmu_device_info *info);
/*
 * Opens, maps and attaches the UIO device uio<minor> named uio_name: 0;
 * 1 when it is not of the server's subtype (left alone) or attached with
 * its cfgstring refused (reason set); -1 with reason when it cannot be.
 */
int tcmu_uio_attach(struct tcmu_server *srv, unsigned minor, const char *uio_name, char *reason, size_t len);
/* Attaches every UIO device of the server's subtype not attached yet; returns how many. */
int tcmu_server_scan(struct tcmu_server *srv);

/* netlink.c: the TCM-USER generic netlink family. */
int tcmu_netlink_open(struct tcmu_server *srv, char *reason, size_t len);
/* Stops listening; with stop_replies the kernel is told to wait for no handler's reply any more. */
void tcmu_netlink_close(struct tcmu_server *srv, bool stop_replies);
/*
 * Tells the kernel the result of an ADDED_DEVICE it may be waiting for on a
 * device found by the scan (enable not yet done).  0 or -errno.
 */
int tcmu_netlink_reply_added(struct tcmu_server *srv, const struct tcmu_device_info *info, int status);
/*
 * Whether the kernel waits for a reply to each device event (SET_FEATURES
 * SUPP_KERN_CMD_REPLY, a setting of the whole TCM-USER family): on while
 * this front end is the only handler daemon, off while tcmu-runner runs
 * beside it (dbus.c follows which), since the kernel takes the first reply
 * for a device and tcmu-runner answers every subtype it does not know with
 * an error (docs/tcmu.md, "Beside tcmu-runner").
 */
void tcmu_netlink_wait_for_replies(struct tcmu_server *srv, bool on);

/* dbus.c: targetcli's handler registry (org.kernel.TCMUService1). */
void tcmu_dbus_close(struct tcmu_server *srv);
/* tcmu-runner is org.kernel.TCMUService1 (our subtype is registered with it). */
bool tcmu_dbus_runner_present(const struct tcmu_server *srv);

#endif
