/*
 * A third front end drives the SCSI core and the runtime control with no
 * edit outside its own file (frontend_toy.c, linked into sbcemud_toy beside
 * the iSCSI and TCMU front ends): its commands reach the same devices an
 * iSCSI initiator sees, under the core's rules for a new I_T nexus; the
 * control lists its sessions and its own LU, names that LU for lu-state and
 * fault rules, and a power cut drops its connections as it drops iSCSI ones.
 *
 * Rules checked: SAM-5 5.14 (a new I_T nexus starts with POWER ON, RESET,
 * OR BUS DEVICE RESET OCCURRED, 06/29/00); SPC-4 6.6.2 (the VERSION
 * DESCRIPTORS claim the transport protocol as the transport gives it:
 * iSCSI 0960h over iSCSI, none over the toy); SAM-5 5.1 (a command's data
 * are the device's, whichever transport carries them); docs/control.md
 * (sessions, lus, lu-state, fault-add, power-cut).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <jansson.h>

#include "itest.h"

static struct itest_daemon d;
static char toy_path[sizeof(((struct sockaddr_un *)0)->sun_path)];

/* ---- a client of the toy front end ---- */

/*
 * The toy's socket appears just after the iSCSI portal the test waited for
 * listens (the daemon starts its front ends in turn): a missing or not yet
 * listening socket is tried again for up to 5 s.
 */
static int toy_connect(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };

	memcpy(a.sun_path, toy_path, sizeof(toy_path));
	for (int tries = 0; tries < 250; tries++) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0)
			return -1;
		if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
			return fd;
		close(fd);
		if (errno != ENOENT && errno != ECONNREFUSED)
			return -1;
		usleep(20000);
	}
	return -1;
}

/* One reply line within ms (without its newline): 1, 0 on a timeout, -1 when the connection closed. */
static int toy_read(int fd, char *line, size_t cap, int ms)
{
	size_t len = 0;

	while (len + 1 < cap) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, ms) != 1)
			return 0;
		n = recv(fd, line + len, 1, 0);
		if (n <= 0)
			return -1;
		if (line[len] == '\n') {
			line[len] = '\0';
			return 1;
		}
		len++;
	}
	return -1;
}

static int toy_say(int fd, const char *request, char *line, size_t cap)
{
	char buf[8192];

	snprintf(buf, sizeof(buf), "%s\n", request);
	if (send(fd, buf, strlen(buf), MSG_NOSIGNAL) != (ssize_t)strlen(buf))
		return -1;
	return line ? toy_read(fd, line, cap, 10000) : 1;
}

/* A connection logged in to device as initiator, or -1. */
static int toy_login(const char *device, const char *initiator)
{
	char req[512], line[256];
	int fd = toy_connect();

	snprintf(req, sizeof(req), "login %s %s", device, initiator);
	if (fd < 0 || toy_say(fd, req, line, sizeof(line)) != 1 || strcmp(line, "ok") != 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

struct toy_result {
	int status;          /* -1: no reply */
	uint8_t sense[260];
	int sense_len;
	uint8_t data[8192];
	int data_len;
};

static int unhex(const char *text, uint8_t *out, int cap)
{
	int n = 0;

	if (strcmp(text, "-") == 0)
		return 0;
	while (text[2 * n] && text[2 * n + 1] && n < cap && sscanf(text + 2 * n, "%2hhx", &out[n]) == 1)
		n++;
	return n;
}

/* Sends cdb (hex) to LUN lun with Data-Out data (hex or NULL), waits for its reply. */
static void toy_cmd(int fd, int lun, const char *cdb, unsigned explen, const char *data, struct toy_result *r)
{
	static char req[20000], line[20000];
	char status[8], sense[600], din[17000];

	memset(r, 0, sizeof(*r));
	r->status = -1;
	snprintf(req, sizeof(req), "cmd 1 %d %s %u%s%s", lun, cdb, explen, data ? " " : "", data ? data : "");
	if (toy_say(fd, req, line, sizeof(line)) != 1 ||
	    sscanf(line, "done 1 %7s %599s %16999s", status, sense, din) != 3)
		return;
	r->status = (int)strtol(status, NULL, 16);
	r->sense_len = unhex(sense, r->sense, sizeof(r->sense));
	r->data_len = unhex(din, r->data, sizeof(r->data));
}

static bool toy_expect_sense(const struct toy_result *r, int key, int asc, int ascq, const char *name)
{
	struct itest_sense s;

	itest_parse_sense(&s, r->sense, r->sense_len);
	return itest_ok(r->status == 2 && s.key == key && s.asc == asc && s.ascq == ascq, name,
			"status %d, sense %02x/%02x/%02x", r->status, s.key, s.asc, s.ascq);
}

/* Whether the VERSION DESCRIPTORS of standard INQUIRY data (bytes 58-73) hold v. */
static bool claims_version(const uint8_t *inq, int len, uint16_t v)
{
	for (int off = 58; off + 1 < len && off < 74; off += 2)
		if (itest_get_be16(inq + off) == v)
			return true;
	return false;
}

/* ---- the control ---- */

/* "sbcemuctl --json ARGS" parsed, or NULL. */
static json_t *ctl_json(const char *args)
{
	static char out[65536];

	if (itest_ctl(&d, out, sizeof(out), "--json %s", args) != 0)
		return NULL;
	return json_loads(out, 0, NULL);
}

/* The first element of result's array key whose member m is the string v, or NULL. */
static json_t *find_row(json_t *result, const char *key, const char *m, const char *v)
{
	size_t i;
	json_t *row;

	json_array_foreach(json_object_get(result, key), i, row)
		if (json_is_string(json_object_get(row, m)) && strcmp(json_string_value(json_object_get(row, m)), v) == 0)
			return row;
	return NULL;
}

int main(int argc, char **argv)
{
	struct iscsi_context *s;
	struct itest_result ir;
	struct toy_result r;
	uint8_t block[512], back[512];
	char hex[2 * 512 + 1], line[256], out[4096];
	json_t *j, *row;
	int fd, own, held;

	itest_init(argc, argv, "test_frontend_toy");
	itest_daemon_init(&d, "frontend_toy");
	if (snprintf(toy_path, sizeof(toy_path), "%s/toy.sock", d.dir) >= (int)sizeof(toy_path)) {
		itest_ok(false, "the toy's socket path fits a Unix socket address", "%s is too long", d.dir);
		return itest_finish();
	}
	setenv("SBCEMU_TOY_SOCKET", toy_path, 1);
	setenv("SBCEMU_TOY_LU", "size=16M;path=toy0.img", 1);
	if (itest_daemon_write_config(&d, itest_default_config) != 0 || itest_daemon_start(&d) != 0) {
		itest_ok(false, "sbcemud_toy starts with the toy front end", "see %s", d.log);
		return itest_finish();
	}

	/* The toy's I_T nexus to the configured target: the core's rules for a new nexus. */
	fd = toy_login(ITEST_TARGET, "toy-initiator-1");
	itest_ok(fd >= 0, "toy: login to the configured target's device", "no ok from %s", toy_path);
	if (fd < 0)
		goto out;
	toy_cmd(fd, 0, "000000000000", 0, NULL, &r);
	toy_expect_sense(&r, 6, 0x29, 0x00, "toy: first TEST UNIT READY of a new I_T nexus -> 06/29/00 (SAM-5 5.14)");
	toy_cmd(fd, 0, "000000000000", 0, NULL, &r);
	itest_ok(r.status == 0, "toy: TEST UNIT READY then -> GOOD", "status %d", r.status);

	/* SPC-4 6.6.2: the transport's version descriptor, as each transport claims it. */
	toy_cmd(fd, 0, "120000006000", 96, NULL, &r);
	itest_ok(r.status == 0 && r.data_len == 96 && !claims_version(r.data, r.data_len, 0x0960) &&
			 claims_version(r.data, r.data_len, 0x0460),
		 "toy: standard INQUIRY claims SPC-4 (0460h) and no transport protocol (no iSCSI 0960h)",
		 "status %d, %d bytes", r.status, r.data_len);
	s = itest_session(&d, ITEST_INITIATOR_1, 0);
	if (!s)
		goto out;
	itest_cmd(s, 0, (const uint8_t[]){ 0x12, 0, 0, 0, 96, 0 }, 6, ITEST_IN, NULL, 0, 96, &ir);
	itest_ok(ir.status == 0 && claims_version(ir.data, ir.data_len, 0x0960),
		 "iSCSI: standard INQUIRY of the same LU claims iSCSI (0960h)", "%s", itest_result_str(&ir));
	itest_result_free(&ir);

	/* SAM-5 5.1: what the toy writes is the device's: an iSCSI READ returns it. */
	itest_pattern(block, sizeof(block), 77);
	for (size_t i = 0; i < sizeof(block); i++)
		sprintf(hex + 2 * i, "%02x", block[i]);
	toy_cmd(fd, 0, "2a000000006400000100", 512, hex, &r); /* WRITE(10) LBA 100, 1 block */
	itest_ok(r.status == 0, "toy: WRITE(10) LBA 100 -> GOOD", "status %d", r.status);
	itest_ok(itest_read16(s, 0, 100, back, 1, 512, "iSCSI: READ(16) LBA 100") &&
			 memcmp(back, block, sizeof(block)) == 0,
		 "iSCSI: READ(16) LBA 100 returns the block the toy wrote", "data differs");

	/* The control sees the toy's session and its own LU, and names that LU. */
	j = ctl_json("sessions");
	row = j ? find_row(j, "sessions", "frontend", "toy") : NULL;
	itest_ok(row && strcmp(json_string_value(json_object_get(row, "target")), ITEST_TARGET) == 0 &&
			 strcmp(json_string_value(json_object_get(row, "initiator")), "toy-initiator-1") == 0 &&
			 find_row(j, "sessions", "frontend", "iscsi"),
		 "sessions: the toy's session (frontend toy, its target and initiator) beside the iSCSI one",
		 "no such row");
	json_decref(j);
	j = ctl_json("lus");
	row = j ? find_row(j, "lus", "toy", "lu0") : NULL;
	itest_ok(row && strcmp(json_string_value(json_object_get(row, "frontend")), "toy") == 0 &&
			 json_integer_value(json_object_get(row, "blocks")) == 16 * 2048,
		 "lus: the toy's own LU toy:lu0 (16 MiB) beside the target's", "no such row");
	json_decref(j);
	itest_ctl(&d, out, sizeof(out), "lus");
	itest_ok(strstr(out, "toy:lu0") != NULL, "sbcemuctl lus (table) names it toy:lu0", "%.300s", out);
	own = toy_login("toy/lu0", "toy-initiator-2");
	itest_ok(own >= 0, "toy: login to its own device toy/lu0", "no ok");
	if (own >= 0) {
		toy_cmd(own, 0, "000000000000", 0, NULL, &r); /* the power-on unit attention */
		itest_ctl_expect(&d, out, sizeof(out), 0, "lu state 0 offline --frontend-lu toy:lu0",
				 "sbcemuctl lu state 0 offline --frontend-lu toy:lu0 -> exit 0");
		toy_cmd(own, 0, "000000000000", 0, NULL, &r);
		toy_expect_sense(&r, 2, 0x04, 0x03, "toy:lu0 offline: TEST UNIT READY -> 02/04/03 (SPC-4 4.5.1)");
		itest_ctl_expect(&d, out, sizeof(out), 0, "lu state 0 ready --frontend-lu toy:lu0",
				 "sbcemuctl lu state 0 ready --frontend-lu toy:lu0 -> exit 0");
		toy_cmd(own, 0, "000000000000", 0, NULL, &r);
		toy_expect_sense(&r, 6, 0x28, 0x00, "toy:lu0 ready again: NOT READY TO READY CHANGE, 06/28/00");
		itest_ctl_expect(&d, out, sizeof(out), 0,
				 "fault add 0 sense --frontend-lu toy:lu0 --opcode 0x28 --sense 3/0x11/0 --count 1",
				 "sbcemuctl fault add 0 sense --frontend-lu toy:lu0 -> exit 0");
		toy_cmd(own, 0, "28000000000000000100", 512, NULL, &r);
		toy_expect_sense(&r, 3, 0x11, 0x00, "toy:lu0 fault rule: READ(10) -> 03/11/00 as the rule says");
		itest_ctl(&d, out, sizeof(out), "fault list");
		itest_ok(strstr(out, "toy:lu0") != NULL, "fault list names the rule's LU toy:lu0", "%.300s", out);
		close(own);
	}

	/* A power cut drops the toy's connection as it drops iSCSI ones: a held command gets no reply. */
	itest_ctl_expect(&d, out, sizeof(out), 0, "fault add 0 hold --opcode 0x28 --count 1",
			 "sbcemuctl fault add 0 hold --opcode 0x28 (the target's LUN 0) -> exit 0");
	toy_say(fd, "cmd 7 0 28000000000000000100 512", NULL, 0);
	held = toy_read(fd, line, sizeof(line), 300);
	j = ctl_json("sessions");
	row = j ? find_row(j, "sessions", "frontend", "toy") : NULL;
	itest_ok(held == 0 && row && json_integer_value(json_object_get(row, "commands")) == 1,
		 "a READ(10) held by the rule: no reply, the toy's session shows 1 command", "read %d", held);
	json_decref(j);
	j = ctl_json("power-cut");
	itest_ok(j && json_integer_value(json_object_get(j, "connections_dropped")) == 2,
		 "power-cut drops 2 connections: the iSCSI session's and the toy's", "%s",
		 j ? "another count" : "refused");
	json_decref(j);
	itest_ok(toy_read(fd, line, sizeof(line), 5000) == -1, "the toy's connection closes without a reply",
		 "got \"%s\"", line);
	close(fd);
	itest_close(s);
	fd = toy_login(ITEST_TARGET, "toy-initiator-1");
	toy_cmd(fd, 0, "000000000000", 0, NULL, &r);
	toy_expect_sense(&r, 6, 0x29, 0x00, "after the power cut a new toy nexus gets 06/29/00 again");
	close(fd);
	itest_ok(itest_daemon_stop(&d, SIGTERM) == 0, "SIGTERM: sbcemud_toy drains the toy front end and exits 0",
		 "see %s", d.log);
out:
	itest_daemon_cleanup(&d);
	return itest_finish();
}
