/*
 * SIGTERM with commands in flight (README, "commands in flight finish";
 * docs/architecture.md, "Start-up and shutdown"): every command the daemon
 * took gets its response before the connection closes, and a write that
 * reached the medium was acknowledged.  Per write, after a restart:
 * responded GOOD => its blocks hold its data (SBC-4 4.2: an acknowledged
 * write is on the medium), and its blocks hold its data => it was responded
 * to (a command executed without a response is one the initiator must
 * treat as lost).  Several rounds, SIGTERM at different points of the batch;
 * in the last ones the initiator keeps sending NOP-Outs while it reads the
 * responses, so the daemon closes connections with input it has not read
 * (close(2) then resets the connection and drops what is still queued,
 * unless the daemon shuts down its side and drains that input first).
 */
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "itest.h"
#include "itest_raw.h"

#define NCMDS 320 /* at most, per round */
#define BLOCKS_MAX 256

static struct itest_daemon d;

/* One round: ncmds WRITE(10)s of blocks each, the first immediate bytes of each as immediate data. */
struct round {
	int ncmds;
	uint32_t blocks;
	uint32_t immediate;
	useconds_t delay_us; /* SIGTERM this long after the last command was sent */
	bool chatter;        /* after SIGTERM the initiator keeps sending NOP-Outs as it reads */
};

/* An immediate NOP-Out that wants no reply (RFC 7143 11.18: ITT FFFFFFFFh, TTT FFFFFFFFh, I = 1). */
static void send_ping(struct itest_raw *c)
{
	uint8_t bhs[48] = { RAW_OP_NOP_OUT | 0x40, 0x80 };

	memset(bhs + 16, 0xff, 8);
	bhs[24] = c->cmdsn >> 24, bhs[25] = c->cmdsn >> 16, bhs[26] = c->cmdsn >> 8, bhs[27] = c->cmdsn;
	bhs[28] = c->exp_statsn >> 24, bhs[29] = c->exp_statsn >> 16, bhs[30] = c->exp_statsn >> 8;
	bhs[31] = c->exp_statsn;
	if (send(c->fd, bhs, sizeof(bhs), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		/* the connection went, or its send buffer is full: the reads below tell */
	}
}

static void write10(uint8_t *cdb, uint32_t lba, uint32_t blocks)
{
	memset(cdb, 0, 10);
	cdb[0] = 0x2a;
	cdb[2] = lba >> 24, cdb[3] = lba >> 16, cdb[4] = lba >> 8, cdb[5] = lba;
	cdb[7] = blocks >> 8, cdb[8] = blocks;
}

static uint8_t fill_of(int i)
{
	return (uint8_t)(0x10 + (i % 200));
}

/*
 * An R2T for a write of this round (RFC 7143 11.8): the Data-Out PDUs it asks
 * for (11.7), their data the command's fill byte, each at most the target's
 * MaxRecvDataSegmentLength.
 */
static void answer_r2t(struct itest_raw *c, const struct itest_pdu *r2t, uint32_t first_itt, int ncmds)
{
	uint32_t itt = itest_get_be32(r2t->bhs + 16), off = itest_get_be32(r2t->bhs + 40);
	uint32_t left = itest_get_be32(r2t->bhs + 44), datasn = 0;
	static uint8_t data[256 * 1024];

	if (itt - first_itt >= (uint32_t)ncmds)
		return;
	memset(data, fill_of((int)(itt - first_itt)), sizeof(data));
	while (left) {
		uint32_t n = left < c->target_mrdsl ? left : c->target_mrdsl;
		uint8_t bhs[48] = { 0x05 };

		n = n < sizeof(data) ? n : sizeof(data);
		bhs[1] = n == left ? 0x80 : 0;
		bhs[5] = n >> 16, bhs[6] = n >> 8, bhs[7] = n;
		memcpy(bhs + 8, r2t->bhs + 8, 8);   /* LUN */
		memcpy(bhs + 16, r2t->bhs + 16, 8); /* ITT, TTT */
		itest_put_be32(bhs + 28, c->exp_statsn);
		itest_put_be32(bhs + 36, datasn++);
		itest_put_be32(bhs + 40, off);
		itest_raw_send(c, bhs, data, n);
		off += n;
		left -= n;
	}
}

/* One round: the writes sent at once, SIGTERM after delay_us; returns false if the harness failed. */
static bool round_trip(int round, const struct round *rd, int *responded, int *landed, int *bad_lost,
		       int *bad_silent, int *resets)
{
	struct itest_raw c = { .fd = -1 };
	uint8_t bhs[48], cdb[10], *buf = malloc((size_t)rd->ncmds * (48 + rd->immediate)), good[NCMDS] = { 0 };
	uint32_t first_itt;
	size_t len = 0;
	char err[256];
	struct itest_pdu p;
	int st, end = 0, round_good = 0;

	if (itest_daemon_start(&d) != 0 ||
	    itest_raw_login(&c, &d, ITEST_INITIATOR_1, ITEST_TARGET, false, false, true, err, sizeof(err))) {
		free(buf);
		return false;
	}
	itest_raw_clear_ua(&c, 0);
	first_itt = c.itt;
	for (int i = 0; i < rd->ncmds; i++) {
		write10(cdb, (uint32_t)(round * NCMDS + i) * BLOCKS_MAX, rd->blocks);
		itest_raw_scsi_cmd(&c, bhs, 0, cdb, 10, false, true, rd->blocks * 512);
		bhs[5] = rd->immediate >> 16, bhs[6] = rd->immediate >> 8, bhs[7] = rd->immediate; /* immediate data */
		memcpy(buf + len, bhs, 48);
		memset(buf + len + 48, fill_of(i), rd->immediate);
		len += 48 + rd->immediate;
	}
	itest_raw_write(c.fd, buf, len);
	usleep(rd->delay_us);
	itest_daemon_signal(&d, SIGTERM);
	/* A slow initiator: it goes on sending for a while before it reads what came back. */
	for (int ms = 0; rd->chatter && ms < 300; ms++) {
		send_ping(&c);
		usleep(1000);
	}
	for (;;) {
		uint32_t itt;

		if (rd->chatter) { /* a ping each millisecond until the next PDU starts, then the whole PDU */
			struct pollfd pfd = { .fd = c.fd, .events = POLLIN };

			send_ping(&c);
			if (poll(&pfd, 1, 1) == 0)
				continue;
		}
		if ((end = itest_raw_recv(&c, &p, 10000)) != 1)
			break;
		itt = itest_get_be32(p.bhs + 16);

		if ((p.bhs[0] & 0x3f) == RAW_OP_SCSI_RSP && itt - first_itt < (uint32_t)rd->ncmds && p.bhs[3] == 0)
			good[itt - first_itt] = 1;
		if ((p.bhs[0] & 0x3f) == RAW_OP_R2T)
			answer_r2t(&c, &p, first_itt, rd->ncmds);
		itest_pdu_free(&p);
	}
	itest_raw_close(&c);
	/*
	 * RFC 7143 6.1 (and TCP): after its last response the target closes its
	 * side in order (FIN), even while the initiator is still sending; a
	 * reset would drop what the initiator has not read yet, and tells it of
	 * a failure where there was none.
	 */
	if (end != 0) {
		itest_note("round %d: the connection ended with %s, not an orderly close", round,
			   end == -1 ? "a reset" : end == -2 ? "a timeout" : "an error");
		(*resets)++;
	}
	st = itest_daemon_stop(&d, SIGTERM);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		itest_note("round %d: sbcemud exit status 0x%x", round, st);
	/* After a restart: what reached the medium. */
	if (itest_daemon_start(&d) != 0 ||
	    itest_raw_login(&c, &d, ITEST_INITIATOR_1, ITEST_TARGET, false, false, true, err, sizeof(err))) {
		free(buf);
		return false;
	}
	itest_raw_clear_ua(&c, 0);
	for (int i = 0; i < rd->ncmds; i++) {
		uint8_t rcdb[10] = { 0x28 }, want = fill_of(i);
		uint32_t lba = (uint32_t)(round * NCMDS + i) * BLOCKS_MAX, want_bytes = rd->blocks * 512;
		uint32_t hits = 0, bytes = 0, first_part = 0;

		rcdb[2] = lba >> 24, rcdb[3] = lba >> 16, rcdb[4] = lba >> 8, rcdb[5] = lba;
		rcdb[7] = rd->blocks >> 8, rcdb[8] = rd->blocks;
		itest_raw_scsi_cmd(&c, bhs, 0, rcdb, 10, true, false, want_bytes);
		itest_raw_send(&c, bhs, NULL, 0);
		while (itest_raw_recv(&c, &p, 5000) == 1) {
			int op = p.bhs[0] & 0x3f;

			for (uint32_t k = 0; op == RAW_OP_DATA_IN && k < p.data_len; k++) {
				hits += p.data[k] == want;
				first_part += p.data[k] == want && bytes + k < rd->immediate;
			}
			bytes += op == RAW_OP_DATA_IN ? p.data_len : 0;
			itest_pdu_free(&p);
			if (op == RAW_OP_SCSI_RSP || (op == RAW_OP_DATA_IN && (p.bhs[1] & 0x01))) {
				c.exp_statsn++;
				break;
			}
		}
		/* A write landed if any of it did (its immediate part may have been written alone). */
		*responded += good[i];
		*landed += hits == want_bytes;
		*bad_lost += good[i] && hits != want_bytes;
		*bad_silent += !good[i] && (hits == want_bytes || first_part == rd->immediate);
		round_good += good[i];
	}
	itest_note("round %d: %d WRITE(10)s of %u blocks, SIGTERM after %u us: %d GOOD", round, rd->ncmds, rd->blocks,
		   (unsigned)rd->delay_us, round_good);
	itest_raw_close(&c);
	itest_daemon_stop(&d, SIGTERM);
	free(buf);
	return true;
}

int main(int argc, char **argv)
{
	/*
	 * Writes whole in their immediate data (32 KiB), and writes of 128 KiB
	 * whose last 64 KiB the target asks for with an R2T (FirstBurstLength
	 * 64 KiB, RFC 7143 13.14): these are in flight waiting for Data-Out when
	 * SIGTERM comes, and must finish too.  The R2T rounds stay inside the
	 * command window (128).
	 */
	static const struct round rounds[] = {
		{ 320, 64, 32768, 0, false },	   { 320, 64, 32768, 1000, false },  { 320, 64, 32768, 3000, false },
		{ 320, 64, 32768, 10000, false }, { 320, 64, 32768, 30000, false }, { 320, 64, 32768, 100000, false },
		{ 100, 256, 65536, 0, false },	   { 100, 256, 65536, 2000, false }, { 100, 256, 65536, 10000, false },
		{ 100, 256, 65536, 50000, false },
		{ 160, 64, 32768, 0, true },   { 160, 64, 32768, 2000, true }, { 160, 64, 32768, 20000, true },
		{ 100, 256, 65536, 2000, true },
	};
	int responded = 0, landed = 0, lost = 0, silent = 0, resets = 0;
	bool ok = true;

	itest_init(argc, argv, "test_shutdown_inflight: SIGTERM with writes in flight");
	itest_daemon_init(&d, "shutdown-inflight");
	/* Every write of every round has blocks of its own: LUN 0 of the default configuration, made 1 GiB. */
	{
		char config[4096], *size;

		snprintf(config, sizeof(config), "%s", itest_default_config);
		size = strstr(config, "size = 64M\n");
		if (!size) {
			itest_ok(false, "the default configuration has LUN 0 of 64M", "it changed");
			return itest_finish();
		}
		memmove(size + 10, size + 11, strlen(size + 11) + 1);
		memcpy(size, "size = 1G\n", 10);
		if (itest_daemon_write_config(&d, config) != 0)
			return itest_finish();
	}
	for (unsigned r = 0; r < sizeof(rounds) / sizeof(rounds[0]) && ok; r++)
		ok = round_trip((int)r, &rounds[r], &responded, &landed, &lost, &silent, &resets);
	itest_ok(ok,
		 "6 rounds of 320 WRITE(10)s of 32 KiB in immediate data, 4 of 100 WRITE(10)s of 128 KiB half in "
		 "immediate data and half after an R2T; SIGTERM 0-100 ms after sending; 4 more with NOP-Outs "
		 "sent all along",
		 "harness failed");
	itest_note("%d writes acknowledged GOOD, %d found on the medium after the restart", responded, landed);
	itest_ok(lost == 0, "SBC-4 4.2: every write acknowledged GOOD before shutdown is on the medium after it",
		 "%d acknowledged writes missing", lost);
	itest_ok(silent == 0, "README shutdown: every write that reached the medium got its response first",
		 "%d writes landed without a response", silent);
	itest_ok(responded > 0, "at least some writes completed before the connection closed", "none did");
	itest_ok(resets == 0, "every round's connection ended with an orderly close (FIN), none with a reset",
		 "%d rounds ended otherwise", resets);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
