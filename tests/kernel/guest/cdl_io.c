/*
 * cdl_io: one 4 KiB O_DIRECT read through Linux AIO with an I/O priority
 * hint, for the kernel suite "cdl" (tests/kernel/guest/cdl.sh).  Built
 * static on the host by tests/kernel/run.sh and run in the guest.
 *
 *   cdl_io DEVICE OFFSET HINT
 *
 * HINT 0: no priority; 1..7: IOPRIO_HINT_DEV_DURATION_LIMIT_1..7 (Linux
 * include/uapi/linux/ioprio.h) in the best-effort class, which sd (6.5+,
 * with cdl_enable = 1) turns into the DLD field of READ(16) (sd_cdl_dld).
 * The ioprio rides in iocb.aio_reqprio with IOCB_FLAG_IOPRIO, as fio's
 * libaio engine sends it.  Prints one line: "result=ok ms=N" or
 * "result=errno:NAME ms=N" (ETIME: a duration limit's policy ended it).
 * Exit status 0 when the program itself worked, 2 on usage or set-up errors.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef IOCB_FLAG_IOPRIO
#define IOCB_FLAG_IOPRIO (1 << 1)
#endif
#define IOPRIO_CLASS_BE 2
/* ioprio: class bits 15:13, hint bits 12:3, level bits 2:0 (IOPRIO_PRIO_VALUE_HINT). */
#define IOPRIO_VALUE(class, level, hint) ((uint16_t)((class) << 13 | (hint) << 3 | (level)))

static const char *errno_name(int e)
{
	switch (e) {
	case ETIME:
		return "ETIME";
	case EINVAL:
		return "EINVAL";
	case EIO:
		return "EIO";
	default:
		return strerror(e);
	}
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	aio_context_t ctx = 0;
	struct iocb cb, *cbs[1] = { &cb };
	struct io_event ev;
	void *buf;
	int fd, hint;
	double t0;
	long n;

	if (argc != 4) {
		fprintf(stderr, "usage: cdl_io DEVICE OFFSET HINT\n");
		return 2;
	}
	hint = atoi(argv[3]);
	fd = open(argv[1], O_RDONLY | O_DIRECT);
	if (fd < 0 || posix_memalign(&buf, 4096, 4096) != 0 || syscall(SYS_io_setup, 1, &ctx) != 0) {
		perror("cdl_io: set-up");
		return 2;
	}
	memset(&cb, 0, sizeof(cb));
	cb.aio_lio_opcode = IOCB_CMD_PREAD;
	cb.aio_fildes = (uint32_t)fd;
	cb.aio_buf = (uint64_t)(uintptr_t)buf;
	cb.aio_nbytes = 4096;
	cb.aio_offset = strtoll(argv[2], NULL, 0);
	if (hint) {
		cb.aio_flags = IOCB_FLAG_IOPRIO;
		cb.aio_reqprio = (int16_t)IOPRIO_VALUE(IOPRIO_CLASS_BE, 4, hint);
	}
	t0 = now_ms();
	n = syscall(SYS_io_submit, ctx, 1, cbs);
	if (n != 1) {
		/* A kernel without ioprio hints refuses the priority at submission. */
		printf("result=errno:%s ms=%.0f\n", errno_name(n < 0 ? errno : EIO), now_ms() - t0);
		return 0;
	}
	if (syscall(SYS_io_getevents, ctx, 1, 1, &ev, NULL) != 1) {
		perror("cdl_io: io_getevents");
		return 2;
	}
	if (ev.res == 4096)
		printf("result=ok ms=%.0f\n", now_ms() - t0);
	else
		printf("result=errno:%s ms=%.0f\n", errno_name(ev.res < 0 ? (int)-ev.res : EIO), now_ms() - t0);
	return 0;
}
