/*
 * Power-loss emulation (volatile_write_cache; docs/atomic.md): with a
 * volatile write cache, a SIGKILL of sbcemud is a power cut.  What was
 * flushed (SYNCHRONIZE CACHE), written with FUA, or written with WRITE
 * ATOMIC survives; writes not yet flushed are lost; a clean shutdown
 * (SIGTERM) writes the cache back.  Reads before the cut see the cached data.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"

#define BS 512u
#define N 8u

static const char config[] =
	"[target \"" ITEST_TARGET "\"]\n"
	"[lun \"" ITEST_TARGET "\" 0]\n"
	"path = @DIR@/lun0.img\n"
	"size = 16M\n"
	"logical_block_size = 512\n"
	"volatile_write_cache = true\n"
	"max_atomic_transfer_length = 64\n";

static void fill(uint8_t *b, uint8_t v)
{
	memset(b, v, N * BS);
}

static bool holds(struct iscsi_context *s, uint64_t lba, uint8_t v, const char *name)
{
	uint8_t got[N * BS], want[N * BS];

	fill(want, v);
	return itest_read16(s, 0, lba, got, N, BS, name) && memcmp(got, want, sizeof(got)) == 0;
}

static struct iscsi_context *session(struct itest_daemon *d)
{
	struct iscsi_context *s = itest_session(d, ITEST_INITIATOR_1, 0);

	if (s)
		itest_clear_ua(s, 0);
	return s;
}

int main(int argc, char **argv)
{
	struct itest_daemon d;
	struct iscsi_context *s;
	uint8_t buf[N * BS], sync10[10] = { 0x35 }, wa[16] = { 0x9c };

	itest_init(argc, argv, "test_power_cut: volatile write cache and SIGKILL as a power cut");
	itest_daemon_up(&d, "power-cut", config);
	s = session(&d);
	if (!s)
		return itest_finish();

	fill(buf, 0xa1);
	itest_write16(s, 0, 0, buf, N, BS, false, "WRITE(16) A at LBA 0");
	itest_expect_cmd(s, 0, "SYNCHRONIZE CACHE(10) -> GOOD", sync10, 10, ITEST_NONE, NULL, 0, 0, EXPECT_GOOD, NULL);
	fill(buf, 0xb2);
	itest_write16(s, 0, 100, buf, N, BS, false, "WRITE(16) B at LBA 100, not flushed");
	fill(buf, 0xc3);
	itest_write16(s, 0, 200, buf, N, BS, true, "WRITE(16) FUA C at LBA 200");
	fill(buf, 0xd4);
	itest_put_be64(wa + 2, 300);
	itest_put_be16(wa + 12, N);
	itest_expect_cmd(s, 0, "WRITE ATOMIC(16) D at LBA 300 -> GOOD", wa, 16, ITEST_OUT, buf, sizeof(buf), 0,
			 EXPECT_GOOD, NULL);
	fill(buf, 0xe5);
	itest_write16(s, 0, 0, buf, N, BS, false, "WRITE(16) E over A at LBA 0, not flushed");
	itest_ok(holds(s, 100, 0xb2, "READ(16) B"), "before the cut: the unflushed write B reads back (from the cache)",
		 NULL);
	itest_ok(holds(s, 0, 0xe5, "READ(16) E"), "before the cut: the unflushed overwrite E reads back", NULL);
	itest_close(s);

	itest_daemon_stop(&d, SIGKILL); /* the power cut */
	itest_daemon_start(&d);
	s = session(&d);
	if (!s)
		return itest_finish();
	itest_ok(holds(s, 0, 0xa1, "READ(16) LBA 0"),
		 "after the cut: LBA 0 holds A, flushed by SYNCHRONIZE CACHE (the unflushed E is lost)", NULL);
	itest_ok(holds(s, 100, 0x00, "READ(16) LBA 100"), "after the cut: the unflushed write B is lost", NULL);
	itest_ok(holds(s, 200, 0xc3, "READ(16) LBA 200"), "after the cut: the FUA write C survives", NULL);
	itest_ok(holds(s, 300, 0xd4, "READ(16) LBA 300"), "after the cut: the WRITE ATOMIC D survives whole", NULL);

	fill(buf, 0xf6);
	itest_write16(s, 0, 400, buf, N, BS, false, "WRITE(16) F at LBA 400, not flushed");
	itest_close(s);
	itest_daemon_stop(&d, SIGTERM); /* a clean shutdown writes the cache back */
	itest_daemon_start(&d);
	s = session(&d);
	if (!s)
		return itest_finish();
	itest_ok(holds(s, 400, 0xf6, "READ(16) LBA 400"), "after a clean shutdown (SIGTERM): the cached write F is kept",
		 NULL);
	itest_close(s);
	itest_ok(itest_daemon_alive(&d), "sbcemud still running at the end", NULL);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
