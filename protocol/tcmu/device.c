/*
 * TCMU devices: ring entries -> struct scsi_cmd in a task -> the SCSI core
 * -> completion written back into the ring (tcmu_internal.h).
 *
 * A command's Data-Out and Data-In are the kernel's data area buffers
 * themselves (the task's iovecs): the core reads Data-Out from them and its
 * data path reads the medium straight into them, with no copy in the
 * daemon.  What the ring does not carry the core does not see: task
 * attributes (every command is SIMPLE), protection information (the DIF
 * iovecs are not read), the initiator (one I_T nexus per device), REPORT
 * LUNS and persistent reservations (the kernel answers them: docs/tcmu.md).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tcmu_internal.h"

void tcmu_log(struct tcmu_server *srv, int level, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!srv->h.log || level > srv->h.log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	srv->h.log(srv->h.arg, level, msg);
}

struct tcmu_dev *tcmu_find_device(struct tcmu_server *srv, unsigned uio_minor)
{
	for (struct tcmu_dev *d = srv->devices; d; d = d->next)
		if (d->info.uio_minor == uio_minor)
			return d;
	return NULL;
}

/* ---- telling the kernel ---- */

/* UIO: a 4-byte write to the device makes the kernel read the completions (tcmu_irqcontrol). */
static void notify_kernel(struct tcmu_dev *dev)
{
	uint32_t one = 1;

	dev->notify = false;
	if (write(dev->fd, &one, sizeof(one)) != sizeof(one) && errno != EAGAIN)
		tcmu_log(dev->srv, 1, "uio%u: cannot notify the kernel: %s", dev->info.uio_minor, strerror(errno));
}

static void write_completion(struct tcmu_dev *dev, struct tcmu_task *t, uint8_t status, const uint8_t *sense,
			     size_t sense_len, uint32_t read_len)
{
	if (!tcmu_ring_complete(&dev->ring, t->cmd_id, status, sense, sense_len, read_len))
		tcmu_log(dev->srv, 0, "uio%u: no ring slot left for the completion of cmd_id %u", dev->info.uio_minor,
			 t->cmd_id);
	dev->notify = true;
}

/* ---- tasks ---- */

static void finish_detach(struct tcmu_dev *dev);
static void defer_finish(struct tcmu_dev *dev);
static void reaper_cb(struct ev_loop *loop, ev_timer *w, int revents);

/*
 * A task for a command of iovcnt data buffers: a cached one with room for
 * them, else a new one.  Zeroed but for the command, which
 * scsi_cmd_init sets whole.  The cache saves a command's calloc and free,
 * about a tenth of the daemon's instructions per TCMU command
 * (docs/performance.md).
 */
static struct tcmu_task *task_alloc(struct tcmu_server *srv, unsigned iovcnt)
{
	struct tcmu_task *t = srv->task_cache;
	unsigned room = iovcnt > TCMU_TASK_IOV_MIN ? iovcnt : TCMU_TASK_IOV_MIN;

	if (t && t->iov_room >= iovcnt) {
		srv->task_cache = t->cache_next;
		srv->task_cache_len--;
		room = t->iov_room;
	} else {
		t = malloc(sizeof(*t) + 2 * (size_t)room * sizeof(struct iovec)); /* iov, then the pieces */
		if (!t)
			return NULL;
	}
	memset((char *)t + offsetof(struct tcmu_task, dev), 0, sizeof(*t) - offsetof(struct tcmu_task, dev));
	t->iov_room = room;
	return t;
}

static void task_free(struct tcmu_task *t)
{
	struct tcmu_dev *dev = t->dev;
	struct tcmu_server *srv = dev->srv;

	LIST_REMOVE(t, link);
	scsi_cmd_release(&t->cmd);
	if (srv->task_cache_len < TCMU_TASK_CACHE_MAX) {
		t->cache_next = srv->task_cache;
		srv->task_cache = t;
		srv->task_cache_len++;
	} else {
		free(t);
	}
	dev->in_flight--;
	/* The kernel gets the ring space back at once, even from a device that is going. */
	if (dev->notify)
		notify_kernel(dev);
	/* Inside the core's completion of the last command: its LU must outlive the call. */
	if (dev->detaching && dev->in_flight == 0)
		defer_finish(dev);
}

static struct tcmu_task *task_of(struct scsi_cmd *cmd)
{
	return (struct tcmu_task *)((char *)cmd - offsetof(struct tcmu_task, cmd));
}

/*
 * The core wants Data-Out bytes [data_out_offset, + want): the slice of the
 * data area buffers that holds them (all of them but for a streamed
 * WRITE SCATTERED).  Fewer bytes if the buffers are shorter: the core
 * answers the shortfall.
 */
static void transport_need_data_out(struct scsi_cmd *cmd)
{
	struct tcmu_task *t = task_of(cmd);
	uint64_t skip = cmd->data_out_offset, want = scsi_cmd_data_out_want(cmd), got = 0;
	unsigned n = 0;

	t->piece = t->iov + t->iov_room; /* room for iovcnt pieces: task_alloc */
	for (unsigned i = 0; i < t->iovcnt && got < want; i++) {
		uint64_t len = t->iov[i].iov_len;

		if (skip >= len) {
			skip -= len;
			continue;
		}
		len -= skip;
		if (len > want - got)
			len = want - got;
		t->piece[n++] = (struct iovec){ .iov_base = (uint8_t *)t->iov[i].iov_base + skip, .iov_len = len };
		got += len;
		skip = 0;
	}
	t->npiece = n;
	scsi_cmd_set_data_out(cmd, t->piece, n, (uint32_t)got);
	scsi_cmd_data_out_ready(cmd);
}

/* Data-In goes straight into the data area buffers (as many bytes of them as the core asks for). */
static int transport_alloc_data_in(struct scsi_cmd *cmd, uint32_t len, struct scsi_sgl *sgl)
{
	struct tcmu_task *t = task_of(cmd);
	uint64_t got = 0;
	unsigned n = 0;

	while (n < t->iovcnt && got < len) {
		got += t->iov[n].iov_len;
		n++;
	}
	if (got < len)
		return -1; /* the core builds it in its own buffer; completion copies what fits */
	*sgl = (struct scsi_sgl){ .iov = t->iov, .iovcnt = n };
	return 0;
}

/*
 * Data-In the core built in a buffer of its own (the data area buffers were
 * shorter than what it builds, as for an INQUIRY with a small allocation
 * length): copied into them, as much as they hold.  Returns the bytes there.
 */
static uint32_t data_in_to_buffers(struct tcmu_task *t)
{
	struct scsi_cmd *cmd = &t->cmd;
	uint64_t len = cmd->data_in_len < t->data_len ? cmd->data_in_len : t->data_len, off = 0;

	if (cmd->data_in_sgl.iovcnt || !cmd->data_in)
		return (uint32_t)len; /* already there (or nothing) */
	for (unsigned i = 0; i < t->iovcnt && off < len; i++) {
		uint64_t n = t->iov[i].iov_len < len - off ? t->iov[i].iov_len : len - off;

		memcpy(t->iov[i].iov_base, cmd->data_in + off, n);
		off += n;
	}
	return (uint32_t)len;
}

static void transport_complete(struct scsi_cmd *cmd)
{
	struct tcmu_task *t = task_of(cmd);
	struct tcmu_dev *dev = t->dev;
	uint32_t read_len = data_in_to_buffers(t);

	write_completion(dev, t, cmd->status, cmd->sense, cmd->sense_len, read_len);
	task_free(t);
}

/* SAM-5 7.2: an aborted task gets no status from the device server; the ring slot still needs its completion. */
static void transport_aborted(struct scsi_cmd *cmd)
{
	struct tcmu_task *t = task_of(cmd);

	write_completion(t->dev, t, SCSI_STATUS_TASK_ABORTED, NULL, 0, 0);
	task_free(t);
}

static const struct scsi_transport_ops tcmu_transport = {
	.need_data_out = transport_need_data_out,
	.alloc_data_in = transport_alloc_data_in,
	.complete = transport_complete,
	.aborted = transport_aborted,
	.max_sense_len = TCMU_SENSE_BUFFERSIZE,
	.protocol_identifier = TCMU_PROTOCOL_IDENTIFIER,
};

static void submit_cmd(struct tcmu_dev *dev, const struct tcmu_ring_entry *e)
{
	struct tcmu_task *t = task_alloc(dev->srv, e->iovcnt);

	if (!t) {
		static const uint8_t sense[18] = { 0x70, 0, 0x0b, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0x55, 0x03 };
		struct tcmu_task stack = { .cmd_id = e->cmd_id };

		/* No memory for the task: ABORTED COMMAND, INSUFFICIENT RESOURCES in the command's slot. */
		write_completion(dev, &stack, SCSI_STATUS_CHECK_CONDITION, sense, sizeof(sense), 0);
		return;
	}
	t->dev = dev;
	t->cmd_id = e->cmd_id;
	t->iovcnt = e->iovcnt;
	t->data_len = e->data_len;
	tcmu_ring_iovecs(&dev->ring, e, t->iov);
	LIST_INSERT_HEAD(&dev->tasks, t, link);
	dev->in_flight++;
	scsi_cmd_init(&t->cmd, &tcmu_transport, dev->nexus);
	t->cmd.cdb_len = (uint8_t)scsi_cdb_length(e->cdb, e->cdb_max);
	memcpy(t->cmd.cdb, e->cdb, t->cmd.cdb_len);
	t->cmd.tag = e->cmd_id;
	t->cmd.lun = scsi_lun_encode(0);
	t->cmd.task_attr = SCSI_TASK_SIMPLE;
	/* The ring says nothing of the direction: the core knows it from the opcode (its residual needs no more). */
	t->cmd.dir = SCSI_DIR_NONE;
	t->cmd.expected_length = e->data_len > UINT32_MAX ? UINT32_MAX : (uint32_t)e->data_len;
	tcmu_log(dev->srv, 3, "uio%u: <- cmd_id %u CDB[0] 0x%02x, %llu bytes in %u buffer(s)", dev->info.uio_minor,
		 e->cmd_id, t->cmd.cdb[0], (unsigned long long)e->data_len, e->iovcnt);
	scsi_cmd_submit(&t->cmd);
}

static void tmr_done(void *arg, enum scsi_tmf_response response)
{
	(void)arg;
	(void)response;
}

/*
 * A task management notification (TCMU_MAILBOX_FLAG_CAP_TMR): the kernel
 * aborted the listed commands (an ABORT TASK, a reset, a timeout) and waits
 * for their completions.  The core aborts them; each one's slot gets a TASK
 * ABORTED completion when it has ended.  A LOGICAL UNIT RESET also has its
 * effects on the LU (unit attention, reservations: SAM-5 7.7).
 */
static void handle_tmr(struct tcmu_dev *dev, const struct tcmu_ring_entry *e)
{
	tcmu_log(dev->srv, 3, "uio%u: task management %u for %u command(s)", dev->info.uio_minor, e->tmr_type,
		 e->tmr_cmd_cnt);
	if (e->tmr_type == TCMU_TMR_LUN_RESET) {
		scsi_tmf(dev->nexus, scsi_lun_encode(0), SCSI_TMF_LOGICAL_UNIT_RESET, NULL, tmr_done, NULL);
		return;
	}
	for (uint32_t i = 0; i < e->tmr_cmd_cnt; i++) {
		uint16_t id = tcmu_ring_tmr_cmd_id(e, i);
		struct tcmu_task *t;

		LIST_FOREACH(t, &dev->tasks, link) {
			if (t->cmd_id == id) {
				scsi_tmf(dev->nexus, scsi_lun_encode(0), SCSI_TMF_ABORT_TASK, &t->cmd, tmr_done, NULL);
				break;
			}
		}
	}
}

static void process_ring(struct tcmu_dev *dev)
{
	struct tcmu_ring_entry e;
	char err[160];
	int rc;

	while (!dev->broken && !dev->detaching && !dev->srv->draining &&
	       (rc = tcmu_ring_next(&dev->ring, &e, err, sizeof(err))) != 0) {
		if (rc < 0) {
			tcmu_log(dev->srv, 0, "uio%u (%s): %s; the device is not served any more", dev->info.uio_minor,
				 dev->info.name, err);
			dev->broken = true;
			break;
		}
		if (e.op == TCMU_OP_CMD)
			submit_cmd(dev, &e);
		else
			handle_tmr(dev, &e);
	}
	if (tcmu_ring_skip_idle(&dev->ring))
		dev->notify = true;
	if (dev->notify)
		notify_kernel(dev);
}

void tcmu_server_poll(struct tcmu_server *srv, unsigned uio_minor)
{
	struct tcmu_dev *dev = tcmu_find_device(srv, uio_minor);
	uint32_t count;

	if (!dev)
		return;
	/* Reading re-arms the UIO interrupt; nothing to read (a test's kick, a spurious wakeup) is fine. */
	if (read(dev->fd, &count, sizeof(count)) < 0 && errno != EAGAIN && errno != EINTR) {
		/* The UIO device went away under us (the kernel unregistered it): nothing more will come. */
		tcmu_log(srv, 1, "uio%u: read: %s; detaching", uio_minor, strerror(errno));
		tcmu_server_detach(srv, uio_minor, NULL, NULL);
		return;
	}
	process_ring(dev);
}

static void io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct tcmu_dev *dev = w->data;

	(void)loop;
	(void)revents;
	tcmu_server_poll(dev->srv, dev->info.uio_minor);
}

/* ---- the server ---- */

struct tcmu_server *tcmu_server_create(struct ev_loop *loop, const char *subtype, const struct tcmu_handler *h)
{
	struct tcmu_server *srv = calloc(1, sizeof(*srv));

	if (!srv)
		return NULL;
	srv->loop = loop;
	ev_init(&srv->reaper, reaper_cb);
	srv->reaper.data = srv;
	snprintf(srv->subtype, sizeof(srv->subtype), "%s", subtype);
	srv->h = *h;
	snprintf(srv->paths.uio_class, sizeof(srv->paths.uio_class), "/sys/class/uio");
	snprintf(srv->paths.dev_dir, sizeof(srv->paths.dev_dir), "/dev");
	snprintf(srv->paths.configfs, sizeof(srv->paths.configfs), "/sys/kernel/config/target/core");
	srv->reset_ring = tcmu_reset_ring;
	return srv;
}

int tcmu_server_attach(struct tcmu_server *srv, const struct tcmu_device_info *info, void *map, size_t map_len,
		       int fd, char *reason, size_t len)
{
	struct tcmu_dev *dev;

	if (tcmu_find_device(srv, info->uio_minor)) {
		snprintf(reason, len, "uio%u is attached already", info->uio_minor);
		return -1;
	}
	dev = calloc(1, sizeof(*dev));
	if (!dev) {
		snprintf(reason, len, "out of memory");
		return -1;
	}
	dev->srv = srv;
	dev->info = *info;
	LIST_INIT(&dev->tasks);
	if (tcmu_ring_init(&dev->ring, map, map_len, reason, len) != 0) {
		free(dev);
		return -1;
	}
	if (dev->ring.mb->cmd_head != dev->ring.mb->cmd_tail) {
		int rc = srv->reset_ring(srv, info);

		tcmu_log(srv, rc ? 0 : 1, "uio%u: commands left in the ring by a previous handler %s", info->uio_minor,
			 rc ? "could not be failed back (configfs action/reset_ring)" : "were failed back (BUSY)");
		if (tcmu_ring_init(&dev->ring, map, map_len, reason, len) != 0) {
			free(dev);
			return -1;
		}
	}
	reason[0] = '\0';
	dev->sdev = srv->h.open_device(srv->h.arg, info, reason, len);
	if (!dev->sdev) {
		free(dev);
		return -1;
	}
	dev->refused = reason[0] != '\0';
	dev->nexus = scsi_nexus_create(dev->sdev, &tcmu_transport, "tcmu", "", 1);
	if (!dev->nexus) {
		srv->h.close_device(srv->h.arg, dev->sdev);
		free(dev);
		snprintf(reason, len, "out of memory");
		return -1;
	}
	/*
	 * The kernel's device outlives this daemon: to its initiators a restart
	 * is no power cycle unless the LU lost something (scsi_nexus_continue).
	 */
	scsi_nexus_continue(dev->nexus);
	dev->fd = fd;
	dev->map = map;
	dev->map_len = map_len;
	dev->next = srv->devices;
	srv->devices = dev;
	srv->ndevices++;
	if (srv->loop) {
		ev_io_init(&dev->io, io_cb, fd, EV_READ);
		dev->io.data = dev;
		ev_io_start(srv->loop, &dev->io);
		dev->watching = true;
	}
	if (dev->refused)
		tcmu_log(srv, 0, "uio%u: %s/%s refused: %s (its commands get LOGICAL UNIT NOT SUPPORTED)", info->uio_minor,
			 srv->subtype, info->name, reason);
	else
		tcmu_log(srv, 2, "uio%u: %s/%s attached (%s)", info->uio_minor, srv->subtype, info->name,
			 info->cfgstring);
	/* Commands the kernel queued before we came (a restart) are read now; the kernel hears of past completions. */
	dev->notify = true;
	process_ring(dev);
	return dev->refused ? 1 : 0;
}

static void unlink_device(struct tcmu_dev *dev)
{
	struct tcmu_server *srv = dev->srv;

	for (struct tcmu_dev **pp = &srv->devices; *pp; pp = &(*pp)->next) {
		if (*pp == dev) {
			*pp = dev->next;
			srv->ndevices--;
			break;
		}
	}
}

/*
 * The last command of a detaching device ended inside the core's completion
 * path, which still uses the LU afterwards: the device goes on the next
 * loop iteration.
 */
static void reaper_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct tcmu_server *srv = w->data;
	struct tcmu_dev *dev, *next;

	(void)loop;
	(void)revents;
	for (dev = srv->devices; dev; dev = next) {
		next = dev->next;
		if (dev->finishing)
			finish_detach(dev);
	}
}

static void defer_finish(struct tcmu_dev *dev)
{
	struct tcmu_server *srv = dev->srv;

	dev->finishing = true;
	if (!ev_is_active(&srv->reaper)) {
		ev_timer_set(&srv->reaper, 0., 0.);
		ev_timer_start(srv->loop, &srv->reaper);
	}
}

/* The last command has ended: the device goes. */
static void finish_detach(struct tcmu_dev *dev)
{
	struct tcmu_server *srv = dev->srv;
	void (*done)(void *arg, int err) = dev->detached;
	void *arg = dev->detached_arg;

	if (dev->notify)
		notify_kernel(dev);
	unlink_device(dev);
	if (dev->nexus)
		scsi_nexus_destroy(dev->nexus); /* no command left: it goes at once */
	srv->h.close_device(srv->h.arg, dev->sdev);
	munmap(dev->map, dev->map_len);
	close(dev->fd);
	tcmu_log(srv, 2, "uio%u: %s/%s detached", dev->info.uio_minor, srv->subtype, dev->info.name);
	free(dev);
	if (done)
		done(arg, 0);
	if (srv->draining && !srv->devices && srv->drained) {
		void (*drained)(void *arg) = srv->drained;

		srv->drained = NULL;
		drained(srv->drained_arg);
	}
}

/*
 * Stops reading the ring; with abort the commands in the core end now
 * (through aborted(), their nexus with the last), else they finish; the
 * device closes once none is left.
 */
static void start_detach(struct tcmu_dev *dev, bool abort, void (*done)(void *arg, int err), void *arg)
{
	dev->detaching = true;
	dev->detached = done;
	dev->detached_arg = arg;
	if (dev->watching) {
		ev_io_stop(dev->srv->loop, &dev->io);
		dev->watching = false;
	}
	if (abort) {
		struct scsi_nexus *nexus = dev->nexus;

		dev->nexus = NULL;
		scsi_nexus_destroy(nexus);
	}
	if (dev->in_flight == 0)
		finish_detach(dev);
}

void tcmu_server_detach(struct tcmu_server *srv, unsigned uio_minor, void (*done)(void *arg, int err), void *arg)
{
	struct tcmu_dev *dev = tcmu_find_device(srv, uio_minor);

	if (!dev || dev->detaching) {
		if (done)
			done(arg, -ENODEV);
		return;
	}
	start_detach(dev, true, done, arg);
}

unsigned tcmu_server_device_count(const struct tcmu_server *srv)
{
	return srv->ndevices;
}

void tcmu_server_drain(struct tcmu_server *srv, void (*done)(void *arg), void *arg)
{
	struct tcmu_dev *dev, *next;

	srv->draining = true;
	srv->drained = done;
	srv->drained_arg = arg;
	/* No new device, no targetcli request; when tcmu-runner is not there to answer, the kernel stops waiting. */
	tcmu_netlink_close(srv, !tcmu_dbus_runner_present(srv));
	tcmu_dbus_close(srv);
	if (!srv->devices) {
		srv->drained = NULL;
		done(arg);
		return;
	}
	/* The devices stay configured in the kernel: a restarted daemon attaches them again. */
	for (dev = srv->devices; dev; dev = next) {
		next = dev->next;
		if (!dev->detaching)
			start_detach(dev, false, NULL, NULL);
	}
}

void tcmu_server_destroy(struct tcmu_server *srv)
{
	if (!srv)
		return;
	tcmu_dbus_close(srv);
	tcmu_netlink_close(srv, false);
	ev_timer_stop(srv->loop, &srv->reaper);
	while (srv->devices) {
		struct tcmu_dev *dev = srv->devices;

		/* After a drain there is none; what is left here has no command in the core (a failed start). */
		unlink_device(dev);
		if (dev->watching)
			ev_io_stop(srv->loop, &dev->io);
		if (dev->nexus)
			scsi_nexus_destroy(dev->nexus);
		srv->h.close_device(srv->h.arg, dev->sdev);
		munmap(dev->map, dev->map_len);
		close(dev->fd);
		free(dev);
	}
	while (srv->task_cache) {
		struct tcmu_task *t = srv->task_cache;

		srv->task_cache = t->cache_next;
		free(t);
	}
	free(srv);
}
