/*
 * Power-loss emulation (volatile_write_cache; docs/atomic.md): with a
 * volatile write cache, a SIGKILL of sbcemud is a power cut.  What was
 * flushed (SYNCHRONIZE CACHE), written with FUA, or written with WRITE
 * ATOMIC survives; writes not yet flushed are lost; a clean shutdown
 * (SIGTERM) writes the cache back.  Reads before the cut see the cached data.
 *
 * Then the same at run time, without the process restarting (sbcemuctl
 * power-cut, docs/control.md): every connection is dropped, the device comes
 * back as after a power on (06/29/00 POWER ON, RESET, OR BUS DEVICE RESET
 * OCCURRED, SAM-5 6.3.1), persistent reservations kept only with APTPL
 * (SPC-4 5.13.5), mode pages back at their saved values (SPC-4 7.5.1); and a
 * cut under a write load loses only writes that were not acknowledged as
 * durable.
 *
 * Environment: SBCEMUCTL (the sbcemuctl binary; CMake sets it).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* ---- sbcemuctl power-cut ---- */

static bool ctl_num(const char *json, const char *key, long long *v)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(json, pat);
	if (!p)
		return false;
	*v = strtoll(p + strlen(pat), NULL, 10);
	return true;
}

/* sbcemuctl --json power-cut; the numbers of its result (-1 when missing); false if it did not exit 0. */
static bool power_cut(struct itest_daemon *d, long long *dropped, long long *lost)
{
	char out[1024];
	int rc = itest_ctl(d, out, sizeof(out), "--json power-cut");

	*dropped = *lost = -1;
	if (rc == 0) {
		ctl_num(out, "connections_dropped", dropped);
		ctl_num(out, "cache_bytes_lost", lost);
	}
	return itest_ok(rc == 0, "sbcemuctl power-cut -> exit 0", "exit %d: %s", rc, out);
}

static void prout_register(struct iscsi_context *s, uint64_t key, bool aptpl, const char *name)
{
	uint8_t param[24] = { 0 }, cdb[10] = { 0x5f, 0x00, 0, 0, 0, 0, 0, 0, 24, 0 };

	itest_put_be64(param + 8, key);
	param[20] = aptpl ? 0x01 : 0x00;
	itest_expect_cmd(s, 0, name, cdb, 10, ITEST_OUT, param, sizeof(param), 0, EXPECT_GOOD, NULL);
}

/* PERSISTENT RESERVE IN READ KEYS: the number of registered keys (-1 on failure), the first in *first. */
static int read_keys(struct iscsi_context *s, uint64_t *first)
{
	uint8_t cdb[10] = { 0x5e, 0x00, 0, 0, 0, 0, 0, 0x01, 0x00, 0 };
	struct itest_result r;
	int n = -1;

	itest_cmd(s, 0, cdb, 10, ITEST_IN, NULL, 0, 256, &r);
	if (r.transport_ok && r.status == 0 && r.data_len >= 8) {
		n = (int)(itest_get_be32(r.data + 4) / 8);
		*first = n && r.data_len >= 16 ? itest_get_be64(r.data + 8) : 0;
	}
	itest_result_free(&r);
	return n;
}

/* The Control mode page (0Ah) via MODE SENSE(10) DBD=1, current values: 12 bytes into page, or false. */
static bool control_page(struct iscsi_context *s, uint8_t page[12])
{
	uint8_t cdb[10] = { 0x5a, 0x08, 0x0a, 0, 0, 0, 0, 0, 64, 0 };
	struct itest_result r;
	bool ok;

	itest_cmd(s, 0, cdb, 10, ITEST_IN, NULL, 0, 64, &r);
	ok = r.transport_ok && r.status == 0 && r.data_len >= 20 && (r.data[8] & 0x3f) == 0x0a;
	if (ok)
		memcpy(page, r.data + 8, 12);
	itest_result_free(&r);
	return ok;
}

/* MODE SELECT(10) PF=1 SP=0 (not saved) of the Control page with D_SENSE set. */
static void set_d_sense(struct iscsi_context *s)
{
	uint8_t page[12], buf[20] = { 0 }, cdb[10] = { 0x55, 0x10, 0, 0, 0, 0, 0, 0, 20, 0 };

	if (!itest_ok(control_page(s, page), "MODE SENSE(10) Control page (0Ah) -> GOOD", NULL))
		return;
	memcpy(buf + 8, page, 12);
	buf[8] &= 0x7f; /* PS is reserved in MODE SELECT */
	buf[10] |= 0x04;
	itest_expect_cmd(s, 0, "MODE SELECT(10) SP=0 Control D_SENSE=1 (current, not saved) -> GOOD", cdb, 10,
			 ITEST_OUT, buf, sizeof(buf), 0, EXPECT_GOOD, NULL);
}

/* A login whose unit attentions are left for the test: the first TEST UNIT READY must see 06/29/00. */
static struct iscsi_context *login_expect_power_on(struct itest_daemon *d, const char *initiator, const char *name)
{
	struct itest_login opt = { .initiator = initiator, .initial_r2t = -1, .immediate_data = -1 };
	uint8_t tur[6] = { 0 };
	char err[256];
	struct iscsi_context *s = itest_connect(d, &opt, 0, err, sizeof(err));

	if (!itest_ok(s != NULL, "after sbcemuctl power-cut: a new login succeeds", "%s", err))
		return NULL;
	itest_expect_cmd(s, 0, name, tur, 6, ITEST_NONE, NULL, 0, 0, EXPECT_SENSE(6, 0x29, 0x00), NULL);
	itest_clear_ua(s, 0);
	return s;
}

static void test_runtime_cut(struct itest_daemon *d)
{
	uint8_t buf[N * BS], sync10[10] = { 0x35 }, tur[6] = { 0 }, page[12];
	struct iscsi_context *a = session(d), *b = session(d);
	struct itest_result r;
	long long dropped, lost;
	uint64_t key;

	if (!a || !b)
		return;
	prout_register(a, 0xa1, false, "PR OUT REGISTER key A1, APTPL=0 -> GOOD");
	set_d_sense(a);
	itest_clear_ua(b, 0); /* 06/2A/01 MODE PARAMETERS CHANGED */
	fill(buf, 0x1a);
	itest_write16(a, 0, 1000, buf, N, BS, false, "WRITE(16) at LBA 1000");
	itest_expect_cmd(a, 0, "SYNCHRONIZE CACHE(10) -> GOOD", sync10, 10, ITEST_NONE, NULL, 0, 0, EXPECT_GOOD, NULL);
	fill(buf, 0x2b);
	itest_write16(a, 0, 1104, buf, N, BS, false, "WRITE(16) at LBA 1104, not flushed");
	fill(buf, 0x3c);
	itest_write16(b, 0, 1200, buf, N, BS, true, "WRITE(16) FUA at LBA 1200");

	if (!power_cut(d, &dropped, &lost))
		return;
	itest_ok(dropped == 2, "power-cut: both connections to the target dropped (connections_dropped = 2)", "%lld",
		 dropped);
	itest_ok(lost == N * BS, "power-cut: the one unflushed write's cache page lost (cache_bytes_lost = 4096)", "%lld",
		 lost);
	itest_cmd(a, 0, tur, 6, ITEST_NONE, NULL, 0, 0, &r);
	itest_ok(!r.transport_ok, "power-cut: a command on a connection from before the cut gets no response",
		 "%s", itest_result_str(&r));
	itest_result_free(&r);
	itest_close(a);
	itest_close(b);

	a = login_expect_power_on(d, ITEST_INITIATOR_1,
				  "after power-cut: first TEST UNIT READY -> 06/29/00 POWER ON, RESET, OR BUS DEVICE RESET OCCURRED");
	if (!a)
		return;
	itest_ok(holds(a, 1000, 0x1a, "READ(16) LBA 1000"), "after power-cut: the flushed write survives", NULL);
	itest_ok(holds(a, 1104, 0x00, "READ(16) LBA 1104"), "after power-cut: the unflushed write is lost", NULL);
	itest_ok(holds(a, 1200, 0x3c, "READ(16) LBA 1200"), "after power-cut: the FUA write survives", NULL);
	itest_ok(read_keys(a, &key) == 0, "after power-cut: READ KEYS lists no key (APTPL=0 registrations are lost)",
		 NULL);
	itest_ok(control_page(a, page) && !(page[2] & 0x04),
		 "after power-cut: Control page D_SENSE = 0 again (current values = saved values)", "byte 2 = %02Xh",
		 page[2]);
	prout_register(a, 0xc4, true, "PR OUT REGISTER key C4, APTPL=1 -> GOOD");
	itest_close(a);
}

/*
 * A writer in a child process: 8-block writes at LBA BASE + 8i, pattern i % 250 + 1, FUA when i is even, the index
 * of each acknowledged write sent down the pipe, until a command fails (the cut) or 20000 writes.
 */
#define LOAD_BASE 4096u
#define LOAD_MAX 20000u

static void writer(struct itest_daemon *d, int fd)
{
	struct itest_login opt = { .initiator = ITEST_INITIATOR_2, .initial_r2t = -1, .immediate_data = -1 };
	uint8_t buf[N * BS];
	char err[256];
	struct iscsi_context *s = itest_connect(d, &opt, 0, err, sizeof(err));

	alarm(60);
	if (!s)
		_exit(1);
	itest_clear_ua(s, 0);
	for (uint32_t i = 0; i < LOAD_MAX; i++) {
		uint8_t cdb[16] = { (uint8_t)0x8a, (uint8_t)(i % 2 ? 0 : 0x08) };
		struct itest_result r;

		fill(buf, (uint8_t)(i % 250 + 1));
		itest_put_be64(cdb + 2, LOAD_BASE + (uint64_t)i * N);
		itest_put_be32(cdb + 10, N);
		itest_cmd(s, 0, cdb, 16, ITEST_OUT, buf, sizeof(buf), 0, &r);
		if (!r.transport_ok || r.status != 0)
			_exit(0);
		itest_result_free(&r);
		if (write(fd, &i, sizeof(i)) != sizeof(i))
			_exit(1);
	}
	_exit(0);
}

static void test_cut_under_load(struct itest_daemon *d)
{
	struct iscsi_context *s;
	long long dropped, lost;
	uint32_t i, acked = 0, got;
	unsigned durable_lost = 0, cached_lost = 0, unwritten_bad = 0;
	uint64_t key = 0;
	int fds[2], st;
	pid_t pid;

	if (pipe(fds) != 0)
		return;
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		writer(d, fds[1]);
	}
	close(fds[1]);
	/* Cut once 200 writes are acknowledged, while the writer goes on. */
	while (acked < 200 && read(fds[0], &got, sizeof(got)) == sizeof(got))
		acked = got + 1;
	if (!itest_ok(acked == 200, "under load: the writer's first 200 writes acknowledged", "%u", acked) ||
	    !power_cut(d, &dropped, &lost)) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		close(fds[0]);
		return;
	}
	while (read(fds[0], &got, sizeof(got)) == sizeof(got))
		acked = got + 1;
	close(fds[0]);
	waitpid(pid, &st, 0);
	itest_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0 && acked < LOAD_MAX,
		 "under load: the writer's connection is dropped by the cut", "status %d, %u acknowledged", st, acked);
	itest_note("under load: %u writes acknowledged, %lld bytes of cache lost", acked, lost);
	itest_ok(dropped == 1, "under load: power-cut drops the writer's connection (connections_dropped = 1)", "%lld",
		 dropped);

	s = login_expect_power_on(d, ITEST_INITIATOR_1,
				  "after a cut under load: first TEST UNIT READY -> 06/29/00");
	if (!s)
		return;
	/* Acknowledged FUA writes must hold; acknowledged cached ones are lost; the one in flight is old or new whole. */
	for (i = 0; i < acked + 1 && i < LOAD_MAX; i++) {
		uint8_t v = (uint8_t)(i % 250 + 1);
		bool is_new = holds(s, LOAD_BASE + (uint64_t)i * N, v, "READ(16)");
		bool is_old = !is_new && holds(s, LOAD_BASE + (uint64_t)i * N, 0, "READ(16)");

		if (i == acked)
			unwritten_bad += !is_new && !is_old;
		else if (i % 2 == 0)
			durable_lost += !is_new;
		else
			cached_lost += is_old;
	}
	itest_ok(durable_lost == 0, "under load: every acknowledged FUA write survives the cut", "%u lost",
		 durable_lost);
	itest_ok(cached_lost == acked / 2,
		 "under load: every acknowledged write left in the volatile cache is lost (reads zeros)",
		 "%u of %u lost", cached_lost, acked / 2);
	/* The odd writes below acked were cached; so may be the one in flight (i = acked) when it is odd. */
	itest_ok(lost == (long long)(acked / 2) * N * BS ||
			 (acked % 2 == 1 && lost == (long long)(acked / 2 + 1) * N * BS),
		 "under load: cache_bytes_lost = the unflushed writes' bytes (with the one in flight, if cached)",
		 "%lld, expected %u", lost, acked / 2 * N * BS);
	itest_ok(unwritten_bad == 0, "under load: the write in flight at the cut reads back old or new, never torn",
		 NULL);
	itest_ok(read_keys(s, &key) == 1 && key == 0xc4,
		 "after a cut: the APTPL=1 registration (key C4) persists", "first key %llx", (unsigned long long)key);
	itest_close(s);
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

	test_runtime_cut(&d);
	test_cut_under_load(&d);
	itest_ok(itest_daemon_alive(&d), "sbcemud still running at the end", NULL);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
