/*
 * sbce_soak: see soak.h.  Usage:
 *
 *   sbce_soak [--seconds N] [--sessions K] [--kills M] [--seed S]
 *             [--op-timeout T] [--daemon PATH] [--keep]
 *
 * Why WRITEs acknowledged before a kill -9 must read back after the restart
 * (backends/be_file.c): be_file_write() without FUA is be_pwrite_all(), a
 * pwrite(2) loop that returns only once every byte is in the file; with FUA
 * it is pwritev2(RWF_DSYNC), or pwrite + fdatasync.  The SCSI core
 * (protocol/scsi/sbc/sbc_rw.c, write_work on a worker) completes the command
 * with GOOD only after the backend write returned.  So when GOOD is on the
 * wire the data is in the kernel's page cache of the backing file, which
 * outlives the process: SIGKILL ends the daemon, not the kernel, and the
 * restarted daemon's pread(2) sees those pages.  (FUA and SYNCHRONIZE CACHE
 * matter for a power loss or a kernel crash, which the soak does not
 * simulate.)  This holds because the LUs have no volatile write cache
 * (volatile_write_cache = false, the default, written out in the
 * configuration below): with one, be_cache.c keeps written data in the
 * daemon's memory until a flush and a SIGKILL loses it by design.
 *
 * Exit status: 0 if every check held, 1 otherwise, 2 for a usage error.
 */
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "soak.h"

#define RSS_SLACK_KB (32 * 1024)
/*
 * The peak the floods of op_malformed may cause (out-of-window WRITEs,
 * unread NOP-In echoes) stays within the buffer budget (max_buffer_bytes
 * below) plus the same slack: docs/security.md.
 */
#define BUFFER_BUDGET_KB (64 * 1024)
#define FAIL_DETAILS 30

struct soak soak;

static const char config[] =
	"# sbce_soak: two LUs on plain files, no volatile write cache\n"
	"[daemon]\n"
	"max_buffer_bytes = 64M\n"
	"[target \"" ITEST_TARGET "\"]\n"
	"alias = soak\n"
	"\n"
	"[lun \"" ITEST_TARGET "\" 0]\n"
	"path = @DIR@/lun0.img\n"
	"size = 64M\n"
	"logical_block_size = 512\n"
	"volatile_write_cache = false\n"
	"\n"
	"[lun \"" ITEST_TARGET "\" 1]\n"
	"path = @DIR@/lun1.img\n"
	"size = 64M\n"
	"logical_block_size = 4096\n"
	"volatile_write_cache = false\n";

/* Descriptors and RSS: after the last (re)start before any login, with every session logged in, at the end. */
static struct proc_sample pre, base, fin;
static bool have_base, have_fin, alive_at_end;
static int term_status = -1;
static uint64_t start_ms;

uint64_t rnd(void)
{
	return itest_rnd(&soak.rng);
}

uint64_t below(uint64_t n)
{
	return itest_below(&soak.rng, n);
}

double elapsed_s(void)
{
	return (double)(itest_now_ms() - soak.t0_ms) / 1000.0;
}

void fail_note(unsigned long *counter, const char *fmt, ...)
{
	static unsigned shown;
	va_list ap;

	(*counter)++;
	if (shown++ >= FAIL_DETAILS) {
		if (shown == FAIL_DETAILS + 1)
			printf("# FAIL: further failures are counted, not shown\n");
		return;
	}
	printf("# FAIL at %.1f s (op #%u): ", elapsed_s(), soak.opno);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/* false (and the run ends) if the daemon died when it was not being killed. */
bool daemon_check(void)
{
	if (soak.st.daemon_died)
		return false;
	if (itest_daemon_alive(&soak.d))
		return true;
	soak.st.daemon_died = true;
	soak.stop = true;
	printf("# DAEMON DIED at %.1f s (op #%u, seed %llu); its log: %s\n", elapsed_s(), soak.opno,
	       (unsigned long long)soak.o.seed, soak.d.log);
	return false;
}

/* ---- options ---- */

static void usage(FILE *f)
{
	fprintf(f, "usage: sbce_soak [--seconds N] [--sessions K] [--kills M] [--seed S] [--op-timeout T]\n"
		   "                 [--daemon PATH] [--keep]\n"
		   "  --seconds N      run for N seconds (default 60)\n"
		   "  --sessions K     K iSCSI sessions, 1..%d (default 8)\n"
		   "  --kills M        M kill -9 and restart rounds spread over the run (default 3)\n"
		   "  --seed S         random seed (default: from the clock)\n"
		   "  --op-timeout T   seconds an operation may take before it is a hang (default 30)\n"
		   "  --daemon PATH    sbcemud binary (default $SBCEMUD, else build/daemon/sbcemud)\n"
		   "  --keep           keep the scratch directory (kept anyway when a check fails)\n",
		SOAK_MAX_SESSIONS);
}

static bool parse_u(const char *s, unsigned long long max, unsigned long long *v)
{
	char *end;

	*v = strtoull(s, &end, 10);
	return *s && !*end && *v <= max;
}

static int parse_opts(int argc, char **argv, struct soak_opts *o)
{
	static const struct option longopts[] = {
		{ "seconds", required_argument, NULL, 's' }, { "sessions", required_argument, NULL, 'k' },
		{ "kills", required_argument, NULL, 'm' },   { "seed", required_argument, NULL, 'S' },
		{ "op-timeout", required_argument, NULL, 't' }, { "daemon", required_argument, NULL, 'd' },
		{ "keep", no_argument, NULL, 'K' },          { "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },          { NULL, 0, NULL, 0 },
	};
	unsigned long long v = 0;
	int c;

	*o = (struct soak_opts){ .seconds = 60, .sessions = 8, .kills = 3, .op_timeout = 30 };
	o->seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		bool ok = true;

		if (c == 's' || c == 'k' || c == 'm' || c == 'S' || c == 't')
			ok = parse_u(optarg, c == 'S' ? UINT64_MAX : c == 'k' ? SOAK_MAX_SESSIONS : 1000000, &v);
		if (!ok || ((c == 's' || c == 'k' || c == 't') && v == 0)) {
			fprintf(stderr, "sbce_soak: bad value: %s\n", optarg);
			return 2;
		}
		switch (c) {
		case 's':
			o->seconds = (unsigned)v;
			break;
		case 'k':
			o->sessions = (unsigned)v;
			break;
		case 'm':
			o->kills = (unsigned)v;
			break;
		case 'S':
			o->seed = v ? v : 1;
			break;
		case 't':
			o->op_timeout = (unsigned)v;
			break;
		case 'd':
			o->daemon = optarg;
			break;
		case 'K':
			o->keep = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	return 0;
}

/* ---- phases ---- */

static void sample(struct proc_sample *p, const char *when)
{
	if (!proc_sample_settled(soak.d.pid, p))
		printf("# cannot read /proc/%d (%s)\n", (int)soak.d.pid, when);
}

static void connect_all(void)
{
	for (unsigned i = 0; i < soak.o.sessions && !soak.stop; i++)
		sess_connect(&soak.sess[i]);
}

/* The descriptors before any login, then RSS and descriptors with every session logged in and idle. */
static void baseline(void)
{
	sample(&pre, "before the logins");
	connect_all();
	idle_service(1000);
	sample(&base, "baseline");
	have_base = !soak.stop;
}

static bool start_daemon(void)
{
	watch_op("starting sbcemud", -1);
	if (itest_daemon_start(&soak.d) != 0) {
		printf("# sbcemud does not start on %s (log %s)\n", soak.d.state, soak.d.log);
		soak.st.daemon_died = true;
		soak.stop = true;
	}
	watch_idle();
	return !soak.stop;
}

/*
 * kill -9 with WRITEs in flight on about half the sessions (old or new
 * afterwards), restart on the same state directory and port, log in again,
 * read every block back: the acknowledged WRITEs must all be there.
 */
static void kill_round(unsigned i)
{
	int st;

	watch_op("a kill round", -1);
	for (unsigned k = 0; k < soak.o.sessions; k++)
		if (soak.sess[k].ctx && below(2))
			write_in_flight(&soak.sess[k], -1);
	if (soak.stop || !daemon_check())
		return;
	st = itest_daemon_stop(&soak.d, SIGKILL);
	soak.st.kills++;
	if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL)
		fail_note(&soak.st.unexpected, "kill %u: sbcemud's wait status is 0x%x, not SIGKILL's", i, st);
	for (unsigned k = 0; k < soak.o.sessions; k++)
		sess_drop(&soak.sess[k], WR_KILLED);
	if (!start_daemon())
		return;
	printf("# kill %u at %.1f s (op #%u): sbcemud restarted, pid %d\n", i, elapsed_s(), soak.opno,
	       (int)soak.d.pid);
	soak.st.reconnects += soak.o.sessions;
	baseline();
	verify_all(true, "reading back after a kill -9");
}

static void progress(void)
{
	unsigned long total = 0;

	for (int i = 0; i < OP_KINDS; i++)
		total += soak.st.ops[i];
	printf("# %.0f s: %lu operations, %lu writes acknowledged, %lu blocks verified, %lu kills, %lu mismatches\n",
	       elapsed_s(), total, soak.st.writes_acked, soak.st.blocks_verified, soak.st.kills, soak.st.mismatches);
}

static void run(void)
{
	uint64_t end = soak.t0_ms + soak.o.seconds * 1000ull, next_check = 0, next_progress = 0;
	unsigned kills = 0;

	while (!soak.stop && itest_now_ms() < end) {
		uint64_t now = itest_now_ms();

		if (kills < soak.o.kills &&
		    now >= soak.t0_ms + soak.o.seconds * 1000ull * (kills + 1) / (soak.o.kills + 1)) {
			kill_round(++kills);
			continue;
		}
		run_one_op();
		if (now >= next_check) {
			daemon_check();
			next_check = now + 1000;
		}
		if (now >= next_progress) {
			if (next_progress)
				progress();
			next_progress = now + (soak.o.verbose ? 5000 : 30000);
		}
	}
}

/* Every block read back, every session logged out, 2 s of quiet, then the daemon's resources. */
static void finish(void)
{
	if (!soak.stop)
		verify_all(false, "final verification");
	for (unsigned i = 0; i < soak.o.sessions; i++) {
		if (soak.stop)
			sess_drop(&soak.sess[i], WR_DROPPED);
		else
			sess_logout(&soak.sess[i]);
	}
	if (soak.stop)
		return;
	sleep(2);
	alive_at_end = daemon_check();
	if (alive_at_end) {
		sample(&fin, "the end");
		have_fin = fin.fds >= 0;
		if (have_fin && fin.fds != pre.fds) {
			printf("# sbcemud's descriptors at the end (%d before the logins):\n", pre.fds);
			proc_print_fds(soak.d.pid);
		}
	}
	watch_op("stopping sbcemud (SIGTERM)", -1);
	term_status = itest_daemon_stop(&soak.d, SIGTERM);
	watch_idle();
}

/* ---- summary ---- */

static void print_ops(void)
{
	unsigned long total = 0;

	for (int i = 0; i < OP_KINDS; i++)
		total += soak.st.ops[i];
	printf("operations      %lu:", total);
	for (int i = 0; i < OP_KINDS; i++)
		printf("%s %s %lu", i ? "," : "", op_names[i], soak.st.ops[i]);
	printf(" (FUA writes %lu)\n", soak.st.fua_writes);
}

static void print_writes(void)
{
	const struct soak_stats *st = &soak.st;

	printf("writes          %lu acknowledged GOOD; %lu left in flight on purpose; outcomes: not executed %lu, "
	       "failed %lu, aborted %lu, dropped %lu, killed %lu\n",
	       st->writes_acked, st->bg_writes, st->writes_outcome[WR_NOT_EXECUTED], st->writes_outcome[WR_FAILED],
	       st->writes_outcome[WR_ABORTED], st->writes_outcome[WR_DROPPED], st->writes_outcome[WR_KILLED]);
}

static bool fds_ok(void)
{
	return have_base && have_fin && fin.fds == pre.fds;
}

static bool rss_ok(void)
{
	return have_base && have_fin && fin.rss_kb <= base.rss_kb + RSS_SLACK_KB;
}

static bool peak_ok(void)
{
	return have_base && have_fin && fin.hwm_kb <= base.rss_kb + BUFFER_BUDGET_KB + RSS_SLACK_KB;
}

static void print_resources(void)
{
	if (!have_base || !have_fin) {
		printf("descriptors     not measured (the run stopped early)\nRSS             not measured\n");
		return;
	}
	printf("descriptors     %d before the logins after the last (re)start, %d with %u sessions logged in "
	       "(baseline), %d at the end with all closed -> %s\n",
	       pre.fds, base.fds, soak.o.sessions, fin.fds, fds_ok() ? "ok" : "LEAK");
	printf("RSS             baseline %ld kB, end %ld kB (limit %ld kB; peak VmHWM %ld kB); threads %d / %d -> %s\n",
	       base.rss_kb, fin.rss_kb, base.rss_kb + RSS_SLACK_KB, fin.hwm_kb, base.threads, fin.threads,
	       rss_ok() ? "ok" : "GROWN");
}

static void print_summary(void)
{
	const struct soak_stats *st = &soak.st;
	const struct soak_opts *o = &soak.o;

	printf("# ---- sbce_soak summary ----\n");
	printf("seed            %llu (replay: scripts/soak --seed %llu --seconds %u --sessions %u --kills %u)\n",
	       (unsigned long long)o->seed, (unsigned long long)o->seed, o->seconds, o->sessions, o->kills);
	printf("seconds         %u requested, %.1f of operations, %.1f end to end\n", o->seconds, elapsed_s(),
	       (double)(itest_now_ms() - start_ms) / 1000.0);
	printf("sessions        %u (%lu logins after drops and kills)\n", o->sessions, st->reconnects);
	print_ops();
	print_writes();
	printf("blocks verified %lu (settled after kills %lu, left not comparable %lu)\n", st->blocks_verified,
	       st->blocks_settled, st->blocks_unknown);
	printf("kills           %lu\n", st->kills);
	printf("malformed PDUs  %lu sent (Reject %lu, dropped %lu, ignored and pinged %lu)\n", st->malformed_pdus,
	       st->raw_rejects, st->raw_drops, st->raw_pongs);
	printf("answers         random CDBs: GOOD/CONDITION MET %lu, CHECK CONDITION %lu, other %lu; TMF: Function "
	       "complete %lu, Task does not exist %lu; unit attentions %lu\n",
	       st->invalid_answers[0], st->invalid_answers[1], st->invalid_answers[2], st->tmf_responses[0],
	       st->tmf_responses[1], st->unit_attentions);
	printf("mismatches      %lu\n", st->mismatches);
	printf("hangs           %lu\n", st->hangs);
	printf("unexpected      %lu answers, %lu lost connections, %lu failed logins\n", st->unexpected,
	       st->lost_connections, st->login_failures);
	print_resources();
	printf("daemon          %s at the end; SIGTERM: %s\n",
	       alive_at_end ? "alive" : st->daemon_died ? "DIED" : "not checked",
	       term_status < 0 ? "not sent" :
	       WIFEXITED(term_status) ? (WEXITSTATUS(term_status) ? "exit status nonzero" : "exit status 0") :
					"killed by a signal");
}

static bool checks(void)
{
	const struct soak_stats *st = &soak.st;
	bool term_ok = term_status >= 0 && WIFEXITED(term_status) && WEXITSTATUS(term_status) == 0;
	bool ok = true;

	ok &= itest_ok(st->mismatches == 0, "every block read back holds what the model allows", "%lu mismatches",
		       st->mismatches);
	ok &= itest_ok(st->hangs == 0, "every operation ended within its timeout", "%lu hangs", st->hangs);
	ok &= itest_ok(!st->unexpected && !st->lost_connections && !st->login_failures,
		       "every answer is one the rules allow, no session lost, every login accepted",
		       "%lu unexpected answers, %lu lost connections, %lu failed logins", st->unexpected,
		       st->lost_connections, st->login_failures);
	ok &= itest_ok(alive_at_end && !st->daemon_died, "sbcemud alive at the end (it died only when killed)", NULL);
	ok &= itest_ok(fds_ok(), "sbcemud's descriptors at the end = before the logins of the last start",
		       "%d at the end, %d before", fin.fds, pre.fds);
	ok &= itest_ok(rss_ok(), "sbcemud's RSS at the end <= baseline + 32 MiB", "%ld kB, baseline %ld kB",
		       fin.rss_kb, base.rss_kb);
	ok &= itest_ok(peak_ok(),
		       "sbcemud's peak RSS since its last start (VmHWM, floods included) <= baseline + max_buffer_bytes "
		       "(64 MiB) + 32 MiB", "%ld kB, baseline %ld kB", fin.hwm_kb, base.rss_kb);
	ok &= itest_ok(term_ok, "sbcemud exits with status 0 on SIGTERM", "wait status 0x%x", term_status);
	return ok;
}

int main(int argc, char **argv)
{
	char *args[2] = { argv[0], NULL };
	int rc = parse_opts(argc, argv, &soak.o);
	bool ok;

	if (rc)
		return rc;
	start_ms = itest_now_ms();
	if (soak.o.daemon)
		setenv("SBCEMUD", soak.o.daemon, 1);
	if (soak.o.keep)
		setenv("ITEST_KEEP", "1", 1);
	itest_init(1, args, "sbce_soak: random I/O, task management, dropped connections, malformed PDUs, kill -9");
	soak.rng = soak.o.seed;
	printf("# seed %llu, %u s, %u sessions, %u kills, operation timeout %u s\n", (unsigned long long)soak.o.seed,
	       soak.o.seconds, soak.o.sessions, soak.o.kills, soak.o.op_timeout);
	if (model_init()) {
		printf("Bail out! out of memory\n");
		return 1;
	}
	for (unsigned i = 0; i < soak.o.sessions; i++) {
		soak.sess[i].idx = (int)i;
		snprintf(soak.sess[i].iqn, sizeof(soak.sess[i].iqn), SOAK_INITIATOR "%u", i);
	}
	itest_daemon_init(&soak.d, "soak");
	if (itest_daemon_write_config(&soak.d, config)) {
		printf("Bail out! cannot write %s\n", soak.d.conf);
		return 1;
	}
	watchdog_start();
	soak.t0_ms = itest_now_ms();
	if (start_daemon()) {
		printf("# sbcemud %s, pid %d on 127.0.0.1:%d, scratch %s\n", soak.d.bin, (int)soak.d.pid, soak.d.port,
		       soak.d.dir);
		baseline();
		run();
	}
	finish();
	print_summary();
	ok = checks();
	printf("result          %s\n", ok ? "PASS" : "FAIL");
	itest_daemon_cleanup(&soak.d);
	model_free();
	return ok ? 0 : 1;
}
