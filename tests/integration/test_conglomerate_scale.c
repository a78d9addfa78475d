/*
 * Conglomerates at scale (docs/conglomerate.md), as a benchmark printed in
 * the test log ("# ..." notes), not as timed assertions: 10 000 subsidiary
 * LUs of one administrative LU, all bound to every initiator ("*"), so to
 * the one I_T nexus of this test.
 *
 * Printed: the time of one subsidiary-bind and one subsidiary-unbind of a
 * single element, on the control socket directly (and, for reference,
 * through sbcemuctl, process start included, next to a no-op `status`), with
 * 10 and with 10 000 subsidiaries, and their ratio (it should not grow with
 * the count); the time of the bulk create and bind requests; the time of
 * REPORT LUNS listing 10 001 / 10 002 LUNs; the daemon's resident set and
 * open descriptors per idle subsidiary.
 *
 * Checked: REPORT LUNS (SELECT REPORT 12h to the administrative LU, 00h to
 * LUN 0) lists exactly the bound subsidiaries, in element order, in the
 * two-level format (00 05 EE EE 00 00 00 00), before and after unbinding
 * half of them; the unit attentions of 10 000 binds do not pile up (a few
 * TEST UNIT READYs clear them); idle subsidiaries are not opened (no
 * descriptor, no backing file; `subsidiaries` says closed), so the daemon's
 * descriptors do not grow with them; the resident set per idle subsidiary
 * stays under 4 KiB.  Then the set is scattered (every odd element of
 * 1-4999 unbound and destroyed: 2500 bound, 7500 there, as ranges of one
 * element each): REPORT LUNS lists exactly the 2500, a single bind/unbind is
 * timed again, and `save` must write the whole running state (the
 * `subsidiaries` and `bindings` keys: docs/conglomerate.md), however long
 * the lists are.
 */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"

#define ADMIN 5
#define MANY 10000u
#define FEW 10u
#define SOCK_ROUNDS 300     /* single bind/unbind round trips on the control socket */
#define CTL_ROUNDS 15       /* ... and through sbcemuctl */
#define RL_ROUNDS 5         /* REPORT LUNS repetitions */
#define RL_ALLOC (128u * 1024u)

static const char config_scale[] =
	"[target \"" ITEST_TARGET "\"]\n"
	"[lun \"" ITEST_TARGET "\" 0]\n"
	"path = @DIR@/lun0.img\n"
	"size = 16M\n"
	"[lun \"" ITEST_TARGET "\" 5]\n"
	"kind = conglomerate\n"
	"subsidiary_template = vvol\n"
	"[lu \"vvol\"]\n"
	"kind = conventional\n"
	"size = 1M\n"
	"logical_block_size = 512\n";

static struct itest_daemon d;
static struct iscsi_context *s;
static char sock_path[700];

/* ---- measurements ---- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The median of n samples (sorted in place), in microseconds. */
static double median_us(uint64_t *ns, size_t n)
{
	if (!n)
		return 0;
	qsort(ns, n, sizeof(*ns), cmp_u64);
	return (n % 2 ? (double)ns[n / 2] : ((double)ns[n / 2 - 1] + (double)ns[n / 2]) / 2) / 1e3;
}

/* Open descriptors of the daemon (entries of /proc/PID/fd), or -1. */
static long daemon_fds(void)
{
	char path[64];
	struct dirent *e;
	long n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)d.pid);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((e = readdir(dir)))
		if (e->d_name[0] != '.')
			n++;
	closedir(dir);
	return n;
}

struct snapshot {
	long rss_kib, fds;
};

static struct snapshot snap(const char *when)
{
	struct snapshot sn;

	usleep(100 * 1000); /* let the control connections of the last requests close */
	sn.rss_kib = itest_proc_kib(d.pid, "VmRSS");
	sn.fds = daemon_fds();
	itest_note("sbcemud %s: VmRSS %ld KiB, %ld open descriptors", when, sn.rss_kib, sn.fds);
	return sn;
}

/* ---- the control socket, directly (one request line, one reply line, close) ---- */

/*
 * Sends the request line (printf-style, a newline added) and reads the reply
 * into a malloc'd string (NULL: no connection or no reply).
 */
static char *ctl_raw(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *ctl_raw(const char *fmt, ...)
{
	static char req[65536];
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	size_t len, sent = 0, got = 0, cap = 65536;
	char *reply;
	va_list ap;
	int fd, n;

	va_start(ap, fmt);
	n = vsnprintf(req, sizeof(req) - 1, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(req) - 1)
		return NULL;
	len = (size_t)n;
	req[len++] = '\n';
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return NULL;
	memcpy(a.sun_path, sock_path, strlen(sock_path) + 1);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		close(fd);
		return NULL;
	}
	while (sent < len) {
		ssize_t k = send(fd, req + sent, len - sent, MSG_NOSIGNAL);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		sent += (size_t)k;
	}
	reply = malloc(cap);
	while (reply) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t k;

		if (got + 1 >= cap) {
			char *more = realloc(reply, cap * 2);

			if (!more) {
				free(reply);
				reply = NULL;
				break;
			}
			reply = more;
			cap *= 2;
		}
		if (poll(&p, 1, 20000) <= 0)
			break;
		k = recv(fd, reply + got, cap - 1 - got, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
		if (reply[got - 1] == '\n')
			break;
	}
	close(fd);
	if (reply && !got) {
		free(reply);
		return NULL;
	}
	if (reply)
		reply[got] = '\0';
	return reply;
}

static bool reply_ok(const char *reply)
{
	return reply && (strstr(reply, "\"ok\": true") || strstr(reply, "\"ok\":true"));
}

/* One request on the socket, its round trip in ns; *ok whether the daemon said "ok": true. */
static uint64_t timed_raw(bool *ok, char *why, size_t whylen, const char *command, unsigned element)
{
	uint64_t t0 = now_ns(), t;
	char *reply;

	if (element)
		reply = ctl_raw("{\"command\": \"%s\", \"lun\": %d, \"elements\": \"%u\", \"initiator\": \"*\"}", command,
				ADMIN, element);
	else
		reply = ctl_raw("{\"command\": \"%s\"}", command);
	t = now_ns() - t0;
	*ok = reply_ok(reply);
	if (!*ok && why[0] == '\0')
		snprintf(why, whylen, "%s %u: %.300s", command, element, reply ? reply : "(no reply)");
	free(reply);
	return t;
}

struct timing {
	double bind_us, unbind_us, noop_us;             /* control socket */
	double ctl_bind_us, ctl_unbind_us, ctl_noop_us; /* sbcemuctl (process start included) */
};

/*
 * Unbinds and binds again element (bound to "*" on entry) SOCK_ROUNDS times
 * each way on the socket (after a few unmeasured ones), interleaved with as
 * many no-op `status` requests; then CTL_ROUNDS times through sbcemuctl.
 */
static struct timing time_single(unsigned element, const char *state)
{
	static uint64_t b[SOCK_ROUNDS], u[SOCK_ROUNDS], z[SOCK_ROUNDS];
	struct timing t = { 0 };
	char why[512] = "", name[300];
	bool ok, all = true;
	int rc, bad = 0;

	for (int i = 0; i < SOCK_ROUNDS / 2; i++) { /* warm-up, not measured */
		timed_raw(&ok, why, sizeof(why), "subsidiary-unbind", element);
		all = all && ok;
		timed_raw(&ok, why, sizeof(why), "subsidiary-bind", element);
		all = all && ok;
		timed_raw(&ok, why, sizeof(why), "status", 0);
		all = all && ok;
	}
	for (int i = 0; i < SOCK_ROUNDS; i++) {
		u[i] = timed_raw(&ok, why, sizeof(why), "subsidiary-unbind", element);
		all = all && ok;
		b[i] = timed_raw(&ok, why, sizeof(why), "subsidiary-bind", element);
		all = all && ok;
		z[i] = timed_raw(&ok, why, sizeof(why), "status", 0);
		all = all && ok;
	}
	snprintf(name, sizeof(name), "%s: %d single unbind/bind round trips of element %u on the control socket -> "
		 "\"ok\": true", state, SOCK_ROUNDS, element);
	itest_ok(all, name, "%s", why);
	t.unbind_us = median_us(u, SOCK_ROUNDS);
	t.bind_us = median_us(b, SOCK_ROUNDS);
	t.noop_us = median_us(z, SOCK_ROUNDS);

	for (int i = 0; i < CTL_ROUNDS; i++) {
		uint64_t t0 = now_ns();

		rc = itest_ctl(&d, NULL, 0, "subsidiary unbind %d %u --initiator '*'", ADMIN, element);
		u[i] = now_ns() - t0;
		bad += rc != 0;
		t0 = now_ns();
		rc = itest_ctl(&d, NULL, 0, "subsidiary bind %d %u --initiator '*'", ADMIN, element);
		b[i] = now_ns() - t0;
		bad += rc != 0;
		t0 = now_ns();
		rc = itest_ctl(&d, NULL, 0, "status");
		z[i] = now_ns() - t0;
		bad += rc != 0;
	}
	snprintf(name, sizeof(name), "%s: %d sbcemuctl subsidiary unbind/bind of element %u -> exit 0", state,
		 CTL_ROUNDS, element);
	itest_ok(bad == 0, name, "%d of %d sbcemuctl runs failed (stderr in the daemon log)", bad, 3 * CTL_ROUNDS);
	t.ctl_unbind_us = median_us(u, CTL_ROUNDS);
	t.ctl_bind_us = median_us(b, CTL_ROUNDS);
	t.ctl_noop_us = median_us(z, CTL_ROUNDS);

	itest_note("%s, element %u, control socket (median of %d): bind %.1f us, unbind %.1f us, no-op status %.1f us "
		   "(bind - no-op %.1f us, unbind - no-op %.1f us)",
		   state, element, SOCK_ROUNDS, t.bind_us, t.unbind_us, t.noop_us, t.bind_us - t.noop_us,
		   t.unbind_us - t.noop_us);
	itest_note("%s, element %u, sbcemuctl (median of %d, process start included): bind %.0f us, unbind %.0f us, "
		   "status %.0f us (bind - status %.0f us, unbind - status %.0f us)",
		   state, element, CTL_ROUNDS, t.ctl_bind_us, t.ctl_unbind_us, t.ctl_noop_us,
		   t.ctl_bind_us - t.ctl_noop_us, t.ctl_unbind_us - t.ctl_noop_us);
	return t;
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

/* ---- SCSI ---- */

/* Clears the unit attentions the binds raised (3F/0E on any LU, 3F/1A on the administrative LU), then checks they are gone. */
static void clear_and_check(const char *when)
{
	static const uint8_t tur[6] = { 0 };
	struct itest_result r0, r5;
	char name[200];

	itest_clear_ua(s, ADMIN);
	itest_clear_ua(s, 0);
	itest_cmd(s, ADMIN, tur, 6, ITEST_NONE, NULL, 0, 0, &r5);
	itest_cmd(s, 0, tur, 6, ITEST_NONE, NULL, 0, 0, &r0);
	snprintf(name, sizeof(name),
		 "%s: the unit attentions of the binds do not pile up (a few TEST UNIT READYs clear them; then GOOD)",
		 when);
	itest_ok(r5.status == 0 && r0.status == 0, name, "TUR LUN %d: %s; LUN 0: %s", ADMIN, itest_result_str(&r5),
		 itest_result_str(&r0));
	itest_result_free(&r5);
	itest_result_free(&r0);
}

/* The subsidiaries bound to "*": bound[e] for element e; the ones that exist: exists[e]. */
static bool bound[MANY + 1], exists[MANY + 1];

/*
 * REPORT LUNS (SELECT REPORT sel) to lun, RL_ROUNDS times (median printed);
 * checks the list is the want_plain LUs (single-level LUNs, in order) then
 * the elements e with bound[e] of LUN ADMIN, each 00 05 EE EE 00 00 00 00.
 */
static void check_report_luns(int lun, int sel, const int *want_plain, int nplain, const char *what)
{
	uint64_t ns[RL_ROUNDS];
	struct itest_result r = { 0 };
	uint8_t cdb[12] = { 0xa0, 0, (uint8_t)sel };
	uint32_t elements = 0, entries, want_len, len;
	char name[300], why[300] = "";
	bool good = true;
	unsigned next = 1;

	for (unsigned e = 1; e <= MANY; e++)
		elements += bound[e];
	entries = (uint32_t)nplain + elements;
	want_len = 8 * entries;
	itest_put_be32(cdb + 6, RL_ALLOC);
	for (int i = 0; i < RL_ROUNDS; i++) {
		uint64_t t0 = now_ns();

		if (i)
			itest_result_free(&r);
		itest_cmd(s, lun, cdb, 12, ITEST_IN, NULL, 0, RL_ALLOC, &r);
		ns[i] = now_ns() - t0;
		if (r.status != 0)
			break;
	}
	snprintf(name, sizeof(name), "REPORT LUNS SELECT REPORT %02xh to LUN %d, %s bound -> GOOD", sel, lun, what);
	if (!itest_ok(r.status == 0 && r.data_len >= 8, name, "%s, %d bytes", itest_result_str(&r), r.data_len)) {
		itest_result_free(&r);
		return;
	}
	itest_note("REPORT LUNS %02xh to LUN %d, %s bound: %u entries (%u bytes) in %.0f us (median of %d)", sel, lun,
		   what, entries, 8 + want_len, median_us(ns, RL_ROUNDS), RL_ROUNDS);
	len = itest_get_be32(r.data);
	snprintf(name, sizeof(name), "... LUN LIST LENGTH = 8 x %u = %u", entries, want_len);
	itest_ok(len == want_len, name, "got %u (%u entries)", len, len / 8);
	if (r.data_len < (int)(8 + want_len)) {
		good = false;
		snprintf(why, sizeof(why), "only %d bytes of data (want %u)", r.data_len, 8 + want_len);
	}
	for (uint32_t i = 0; good && i < entries; i++) {
		const uint8_t *e = r.data + 8 + 8 * (size_t)i;
		uint8_t want[8] = { 0 };

		if (i < (uint32_t)nplain) {
			want[1] = (uint8_t)want_plain[i];
		} else {
			while (!bound[next])
				next++;
			want[1] = ADMIN;
			want[2] = (uint8_t)((next >> 8) & 0x3f);
			want[3] = (uint8_t)next;
			next++;
		}
		if (memcmp(e, want, 8) != 0) {
			good = false;
			snprintf(why, sizeof(why),
				 "entry %u is %02x %02x %02x %02x %02x %02x %02x %02x, want %02x %02x %02x %02x %02x %02x "
				 "%02x %02x",
				 i, e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7], want[0], want[1], want[2], want[3],
				 want[4], want[5], want[6], want[7]);
		}
	}
	if (nplain == 1)
		snprintf(name, sizeof(name), "... the list is LUN %d itself, then exactly the %u bound %d/E in element order",
			 ADMIN, elements, ADMIN);
	else
		snprintf(name, sizeof(name), "... the list is LUN 0, LUN %d, then exactly the %u bound %d/E in element order",
			 ADMIN, elements, ADMIN);
	itest_ok(good, name, "%s", why);
	itest_result_free(&r);
}

/* ---- idle subsidiaries are not opened ---- */

static void check_idle(unsigned count)
{
	char dir[1200], name[200];
	char *reply = ctl_raw("{\"command\": \"subsidiaries\", \"lun\": %d}", ADMIN);
	unsigned closed = 0, open = 0, files = 0;
	struct dirent *e;
	DIR *dd;

	for (const char *p = reply; p && (p = strstr(p, "\"state\"")); p++) {
		const char *v = p + 7;

		while (*v == ' ' || *v == ':')
			v++;
		closed += strncmp(v, "\"closed\"", 8) == 0;
		open += strncmp(v, "\"open\"", 6) == 0;
	}
	snprintf(name, sizeof(name), "`subsidiaries %d`: all %u are there and closed (opened only on first use)", ADMIN,
		 count);
	itest_ok(reply_ok(reply) && closed == count && open == 0, name, "%u closed, %u open; reply %.200s", closed, open,
		 reply ? reply : "(none)");
	itest_note("`subsidiaries %d` reply: %zu bytes", ADMIN, reply ? strlen(reply) : 0);
	free(reply);

	snprintf(dir, sizeof(dir), "%s/%s/lun%d", d.state, ITEST_TARGET, ADMIN);
	dd = opendir(dir);
	if (dd) {
		while ((e = readdir(dd)))
			files += strncmp(e->d_name, "sub", 3) == 0;
		closedir(dd);
	}
	itest_ok(files == 0, "... and none has a backing file or state directory yet (sub<E>.img, sub<E>/)",
		 "%u sub* entries in %s", files, dir);
}

/* ---- save at scale ---- */

/*
 * The value of key in the [lun "ITEST_TARGET" ADMIN] section of the
 * configuration text that the save reply carries (JSON-escaped), unescaped,
 * malloc'd; NULL when there is none.
 */
static char *saved_key(const char *reply, const char *key)
{
	char header[300], *text, *sec, *line, *out = NULL;
	const char *p = reply ? strstr(reply, "\"config\"") : NULL;
	size_t n = 0, klen = strlen(key);

	if (!p || !(p = strchr(p + 8, '"')))
		return NULL;
	text = malloc(strlen(p) + 1);
	if (!text)
		return NULL;
	for (p++; *p && *p != '"'; p++) {
		if (*p == '\\' && p[1]) {
			p++;
			text[n++] = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p;
		} else {
			text[n++] = *p;
		}
	}
	text[n] = '\0';
	snprintf(header, sizeof(header), "[lun \"%s\" %d]", ITEST_TARGET, ADMIN);
	sec = strstr(text, header);
	for (line = sec ? strchr(sec, '\n') : NULL; line && line[1] && line[1] != '['; line = strchr(line + 1, '\n')) {
		const char *v = line + 1;

		if (strncmp(v, key, klen) != 0)
			continue;
		v += klen;
		while (*v == ' ' || *v == '=')
			v++;
		out = strndup(v, strcspn(v, "\n"));
		break;
	}
	free(text);
	return out;
}

/*
 * Save writes each of subsidiaries and bindings on one line the parser takes
 * (at most 199 characters, docs/conglomerate.md): ranges fit whatever their
 * size; 2500 scattered elements do not, and save says so rather than write
 * a list cut short.
 */
static void check_save_ranges(void)
{
	char *reply = ctl_raw("{\"command\": \"save\"}");
	char *subs = saved_key(reply, "subsidiaries"), *binds = saved_key(reply, "bindings");

	itest_ok(reply_ok(reply) && subs && binds && strcmp(subs, "1-10000") == 0 && strcmp(binds, "*=1-10000") == 0,
		 "save with 10000 subsidiaries bound in one range: subsidiaries = 1-10000, bindings = *=1-10000",
		 "subsidiaries \"%.80s\", bindings \"%.80s\"; reply %.200s", subs ? subs : "(none)",
		 binds ? binds : "(none)", reply ? reply : "(no reply)");
	free(subs);
	free(binds);
	free(reply);
}

static void check_save(void)
{
	char *reply = ctl_raw("{\"command\": \"save\"}");

	itest_ok(reply && !reply_ok(reply) && strstr(reply, "no longer fit one configuration line"),
		 "save with 7500 subsidiaries and 2500 scattered bindings: refused, naming the limit (never cut short)",
		 "%.300s", reply ? reply : "(no reply)");
	free(reply);
}

/* ---- the steps ---- */

static bool ctl_step(const char *args, const char *name, uint64_t *ms)
{
	char out[4096];
	uint64_t t0 = itest_now_ms();
	int rc = itest_ctl(&d, out, sizeof(out), "%s", args);

	if (ms)
		*ms = itest_now_ms() - t0;
	return itest_ok(rc == 0, name, "exit %d: %.300s", rc, out);
}

/*
 * One request on the socket (elements a list too long for a command line;
 * with "initiator": "*" for bind and unbind), timed; a check that it succeeded.
 */
static void raw_step(const char *command, const char *elements, const char *name)
{
	bool binding = strstr(command, "bind") != NULL;
	uint64_t t0 = now_ns();
	char *reply = ctl_raw("{\"command\": \"%s\", \"lun\": %d, \"elements\": \"%s\"%s}", command, ADMIN, elements,
			      binding ? ", \"initiator\": \"*\"" : "");

	itest_note("%s of %zu characters of elements: %.1f ms", command, strlen(elements), (double)(now_ns() - t0) / 1e6);
	itest_ok(reply_ok(reply), name, "%.300s", reply ? reply : "(no reply)");
	free(reply);
}

int main(int argc, char **argv)
{
	static const int plain_admin[] = { ADMIN }, plain_all[] = { 0, ADMIN };
	static char list[65536];
	struct snapshot s0, s1, s2, s3, s4;
	struct timing few, many, scattered;
	uint64_t ms_create, ms_bind, ms_unbind;
	char args[200];
	double per_sub_bytes, per_sub_fds;
	size_t n = 0;

	itest_init(argc, argv, "test_conglomerate_scale: 10000 subsidiaries bound to one nexus");
	itest_daemon_up(&d, "conglomerate-scale", config_scale);
	snprintf(sock_path, sizeof(sock_path), "%s/control.sock", d.state);
	s = itest_session(&d, ITEST_INITIATOR_1, 0);
	if (!s) {
		itest_daemon_cleanup(&d);
		return itest_finish();
	}
	iscsi_set_timeout(s, 60);
	itest_clear_ua(s, ADMIN);
	s0 = snap("with no subsidiary (one session)");

	/* 10 subsidiaries */
	snprintf(args, sizeof(args), "subsidiary create %d 1-%u", ADMIN, FEW);
	ctl_step(args, "sbcemuctl subsidiary create 5 1-10 -> exit 0", NULL);
	snprintf(args, sizeof(args), "subsidiary bind %d 1-%u --initiator '*'", ADMIN, FEW);
	ctl_step(args, "sbcemuctl subsidiary bind 5 1-10 --initiator '*' -> exit 0", NULL);
	for (unsigned e = 1; e <= FEW; e++)
		bound[e] = true;
	few = time_single(FEW, "10 subsidiaries");
	clear_and_check("10 subsidiaries");
	check_report_luns(ADMIN, 0x12, plain_admin, 1, "10");
	s1 = snap("with 10 idle subsidiaries bound");

	/* 10 000: one create request, one bind request (1-10 are bound already: binding them again is refused) */
	snprintf(args, sizeof(args), "subsidiary create %d %u-%u", ADMIN, FEW + 1, MANY);
	ctl_step(args, "sbcemuctl subsidiary create 5 11-10000 (one request) -> exit 0", &ms_create);
	snprintf(args, sizeof(args), "subsidiary bind %d %u-%u --initiator '*'", ADMIN, FEW + 1, MANY);
	ctl_step(args, "sbcemuctl subsidiary bind 5 11-10000 --initiator '*' (one request) -> exit 0", &ms_bind);
	for (unsigned e = 1; e <= MANY; e++)
		bound[e] = exists[e] = true;
	itest_note("one request: create 9990 subsidiaries %llu ms, bind them %llu ms (sbcemuctl, process start included)",
		   (unsigned long long)ms_create, (unsigned long long)ms_bind);
	s2 = snap("with 10000 idle subsidiaries bound");
	per_sub_bytes = (double)(s2.rss_kib - s1.rss_kib) * 1024.0 / (MANY - FEW);
	per_sub_fds = (double)(s2.fds - s1.fds) / (MANY - FEW);
	itest_note("per idle subsidiary (10 -> 10000): %.1f bytes of VmRSS (%+ld KiB in all), %.4f descriptors "
		   "(%+ld in all)",
		   per_sub_bytes, s2.rss_kib - s1.rss_kib, per_sub_fds, s2.fds - s1.fds);
	itest_ok(s1.fds > 0 && s2.fds > 0 && s2.fds - s1.fds <= 4,
		 "no descriptor per idle subsidiary: open descriptors grow by at most 4 from 10 to 10000 bound",
		 "%ld -> %ld", s1.fds, s2.fds);
	itest_ok(s1.rss_kib > 0 && s2.rss_kib > 0 && per_sub_bytes < 4096,
		 "resident set per idle subsidiary under 4 KiB", "%.1f bytes (VmRSS %ld -> %ld KiB)", per_sub_bytes,
		 s1.rss_kib, s2.rss_kib);
	check_idle(MANY);
	snap("after listing the 10000 (`subsidiaries 5`, one reply)");

	clear_and_check("10000 subsidiaries bound in one request");
	check_report_luns(ADMIN, 0x12, plain_admin, 1, "10000");
	check_report_luns(0, 0x00, plain_all, 2, "10000");
	snap("after REPORT LUNS with 10000");

	many = time_single(MANY, "10000 subsidiaries");
	check_save_ranges();
	itest_note("single bind/unbind, 10000 vs 10 subsidiaries (control socket medians): bind %.1f / %.1f us = %.2f, "
		   "unbind %.1f / %.1f us = %.2f, no-op %.1f / %.1f us = %.2f",
		   many.bind_us, few.bind_us, ratio(many.bind_us, few.bind_us), many.unbind_us, few.unbind_us,
		   ratio(many.unbind_us, few.unbind_us), many.noop_us, few.noop_us, ratio(many.noop_us, few.noop_us));
	itest_note("... above the no-op: bind %.1f / %.1f us, unbind %.1f / %.1f us", many.bind_us - many.noop_us,
		   few.bind_us - few.noop_us, many.unbind_us - many.noop_us, few.unbind_us - few.noop_us);
	itest_note("single bind/unbind, 10000 vs 10 subsidiaries (sbcemuctl medians): bind %.0f / %.0f us = %.2f, "
		   "unbind %.0f / %.0f us = %.2f",
		   many.ctl_bind_us, few.ctl_bind_us, ratio(many.ctl_bind_us, few.ctl_bind_us), many.ctl_unbind_us,
		   few.ctl_unbind_us, ratio(many.ctl_unbind_us, few.ctl_unbind_us));
	s3 = snap("with 10000 idle subsidiaries, after the bind/unbind rounds");
	itest_ok(s3.fds > 0 && s3.fds - s1.fds <= 4,
		 "... still no descriptor per subsidiary after REPORT LUNS and the rounds (none was opened)",
		 "%ld -> %ld", s1.fds, s3.fds);

	/* unbind half */
	snprintf(args, sizeof(args), "subsidiary unbind %d %u-%u --initiator '*'", ADMIN, MANY / 2 + 1, MANY);
	ctl_step(args, "sbcemuctl subsidiary unbind 5 5001-10000 --initiator '*' (one request) -> exit 0", &ms_unbind);
	for (unsigned e = MANY / 2 + 1; e <= MANY; e++)
		bound[e] = false;
	itest_note("one request: unbind 5000 subsidiaries %llu ms (sbcemuctl, process start included)",
		   (unsigned long long)ms_unbind);
	clear_and_check("5000 unbound in one request");
	check_report_luns(ADMIN, 0x12, plain_admin, 1, "5000 (1-5000)");
	check_report_luns(0, 0x00, plain_all, 2, "5000 (1-5000)");

	/* scattered: every odd element of 1-4999 unbound too, 2500 bound (2, 4, ..., 5000) */
	for (unsigned e = 1; e < MANY / 2; e += 2) {
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%u", n ? ", " : "", e);
		bound[e] = false;
	}
	raw_step("subsidiary-unbind", list, "subsidiary-unbind of the 2500 odd elements 1, 3, ..., 4999 (one request)");
	raw_step("subsidiary-destroy", list, "subsidiary-destroy of the 2500 odd elements 1, 3, ..., 4999 (one request)");
	for (unsigned e = 1; e < MANY / 2; e += 2)
		exists[e] = false;
	clear_and_check("2500 scattered ones unbound");
	check_report_luns(ADMIN, 0x12, plain_admin, 1, "2500 scattered (2, 4, ..., 5000)");
	check_report_luns(0, 0x00, plain_all, 2, "2500 scattered (2, 4, ..., 5000)");
	scattered = time_single(MANY / 2, "10000 subsidiaries, 2500 scattered bound");
	itest_note("single bind/unbind, scattered 2500 bound vs 10000 contiguous (control socket medians): bind %.1f / "
		   "%.1f us = %.2f, unbind %.1f / %.1f us = %.2f",
		   scattered.bind_us, many.bind_us, ratio(scattered.bind_us, many.bind_us), scattered.unbind_us,
		   many.unbind_us, ratio(scattered.unbind_us, many.unbind_us));
	clear_and_check("after the scattered rounds");
	check_save();

	s4 = snap("at the end");
	itest_note("sbcemud VmRSS %ld KiB at the end (%ld at the start), %ld descriptors (%ld at the start)", s4.rss_kib,
		   s0.rss_kib, s4.fds, s0.fds);
	itest_close(s);
	itest_ok(itest_daemon_alive(&d), "sbcemud still running at the end", NULL);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
