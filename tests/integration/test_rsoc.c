/*
 * REPORT SUPPORTED OPERATION CODES (SPC-4 6.35) over iSCSI: the all-commands
 * format with and without command timeouts descriptors, the one-command
 * formats (REPORTING OPTIONS 001b/010b/011b) and their errors, and that RSOC
 * tells the truth: every command it lists is executed (never 05/20/00 or an
 * unsupported-service-action 05/24/00), and every operation code it does not
 * list gets 05/20/00 INVALID COMMAND OPERATION CODE.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"

static struct iscsi_context *s;

struct listed {
	uint8_t opcode;
	uint16_t sa;
	bool servactv;
	uint16_t cdb_len;
};

static struct listed cmds[256];
static int ncmds;

static void rsoc(int lun, int ro, bool rctd, uint8_t op, uint16_t sa, uint32_t alloc, struct itest_result *r)
{
	uint8_t cdb[12] = { 0xa3, 0x0c, (uint8_t)((rctd ? 0x80 : 0) | ro), op };
	itest_put_be16(cdb + 4, sa);
	itest_put_be32(cdb + 6, alloc);
	itest_cmd(s, lun, cdb, 12, ITEST_IN, NULL, 0, alloc, r);
}

static void test_all_commands(void)
{
	struct itest_result r;
	bool sizes_ok = true;

	rsoc(0, 0, false, 0, 0, 65536, &r);
	if (!itest_ok(itest_result_matches(&r, EXPECT_GOOD) && r.data_len >= 4,
		      "RSOC REPORTING OPTIONS 000b (all commands) -> GOOD", "%s", itest_result_str(&r))) {
		itest_result_free(&r);
		return;
	}
	uint32_t len = itest_get_be32(r.data);
	itest_ok(len + 4 == (uint32_t)r.data_len && len % 8 == 0,
		 "RSOC all: COMMAND DATA LENGTH = bytes returned - 4, multiple of 8 (CTDP=0 descriptors)", "%u vs %d", len,
		 r.data_len);
	for (uint32_t off = 4; off + 8 <= (uint32_t)r.data_len && ncmds < 256; off += 8) {
		const uint8_t *p = r.data + off;
		struct listed c = { .opcode = p[0], .sa = itest_get_be16(p + 2), .servactv = p[5] & 1,
				    .cdb_len = itest_get_be16(p + 6) };
		if (p[5] & 0x02)
			sizes_ok = false; /* CTDP must be 0 when RCTD = 0 */
		cmds[ncmds++] = c;
	}
	itest_ok(sizes_ok, "RSOC all, RCTD=0: CTDP = 0 in every descriptor", NULL);
	itest_ok(ncmds >= 20, "RSOC all lists the foundation's commands (>= 20 descriptors)", "%d", ncmds);
	itest_result_free(&r);

	rsoc(0, 0, true, 0, 0, 65536, &r);
	if (itest_ok(itest_result_matches(&r, EXPECT_GOOD) && r.data_len >= 4,
		     "RSOC all with RCTD=1 (command timeouts descriptors) -> GOOD", "%s", itest_result_str(&r))) {
		uint32_t l = itest_get_be32(r.data);
		bool ok = l % 20 == 0 && l / 20 == (uint32_t)ncmds;
		for (uint32_t off = 4; ok && off + 20 <= (uint32_t)r.data_len; off += 20) {
			const uint8_t *p = r.data + off;
			if (!(p[5] & 0x02) || itest_get_be16(p + 8) != 0x0a)
				ok = false;
		}
		itest_ok(ok, "RSOC all RCTD=1: 20-byte descriptors, CTDP=1, timeouts DESCRIPTOR LENGTH 000Ah",
			 "COMMAND DATA LENGTH %u for %d commands", l, ncmds);
	}
	itest_result_free(&r);

	rsoc(0, 0, false, 0, 0, 12, &r);
	itest_ok(itest_result_matches(&r, EXPECT_GOOD) && r.data_len == 12 &&
			 r.data_len >= 4 && itest_get_be32(r.data) == (uint32_t)ncmds * 8,
		 "RSOC all with ALLOCATION LENGTH 12: truncated, COMMAND DATA LENGTH still the full length",
		 "%s, %d bytes", itest_result_str(&r), r.data_len);
	itest_result_free(&r);
}

static void test_one_command(void)
{
	struct itest_result r;
	char name[200];
	int bad = 0;

	for (int i = 0; i < ncmds; i++) {
		const struct listed *c = &cmds[i];
		int ro = c->servactv ? 2 : 1;
		rsoc(0, ro, false, c->opcode, c->sa, 512, &r);
		bool ok = itest_result_matches(&r, EXPECT_GOOD) && r.data_len >= 4 && (r.data[1] & 7) == 3 &&
			  itest_get_be16(r.data + 2) == c->cdb_len && r.data_len >= 4 + c->cdb_len &&
			  r.data[4] == c->opcode;
		if (!ok) {
			bad++;
			snprintf(name, sizeof(name),
				 "RSOC one command (RO=%d) %02Xh/%02Xh: SUPPORT=011b, CDB SIZE %u, usage data byte 0 = opcode",
				 ro, c->opcode, c->sa, c->cdb_len);
			itest_ok(false, name, "%s, %d bytes, support %d, size %u", itest_result_str(&r), r.data_len,
				 r.data_len >= 2 ? r.data[1] & 7 : -1, r.data_len >= 4 ? itest_get_be16(r.data + 2) : 0);
		}
		itest_result_free(&r);
		/* RO=3: same answer whether or not the command has service actions. */
		rsoc(0, 3, true, c->opcode, c->sa, 512, &r);
		ok = itest_result_matches(&r, EXPECT_GOOD) && r.data_len >= 4 && (r.data[1] & 7) == 3 &&
		     (r.data[1] & 0x80) && r.data_len >= 4 + c->cdb_len + 12 &&
		     itest_get_be16(r.data + 4 + c->cdb_len) == 0x0a;
		if (!ok) {
			bad++;
			snprintf(name, sizeof(name),
				 "RSOC RO=011b RCTD=1 %02Xh/%02Xh: SUPPORT=011b, CTDP=1, timeouts descriptor follows usage data",
				 c->opcode, c->sa);
			itest_ok(false, name, "%s, %d bytes", itest_result_str(&r), r.data_len);
		}
		itest_result_free(&r);
	}
	itest_ok(bad == 0, "RSOC one-command answers agree with the all-commands list for every listed command",
		 "%d mismatches (listed above)", bad);

	rsoc(0, 1, false, 0x9e, 0, 512, &r);
	itest_ok(itest_result_matches(&r, EXPECT_SENSE(5, 0x24, 0)),
		 "RSOC RO=001b for 9Eh (has service actions) -> 05/24/00", "%s", itest_result_str(&r));
	itest_result_free(&r);
	rsoc(0, 2, false, 0x28, 0, 512, &r);
	itest_ok(itest_result_matches(&r, EXPECT_SENSE(5, 0x24, 0)),
		 "RSOC RO=010b for 28h (no service actions) -> 05/24/00", "%s", itest_result_str(&r));
	itest_result_free(&r);
	rsoc(0, 7, false, 0x28, 0, 512, &r);
	itest_ok(itest_result_matches(&r, EXPECT_SENSE(5, 0x24, 0)), "RSOC REPORTING OPTIONS 111b (reserved) -> 05/24/00",
		 "%s", itest_result_str(&r));
	itest_result_free(&r);
	rsoc(0, 1, false, 0x02, 0, 512, &r);
	itest_ok(itest_result_matches(&r, EXPECT_GOOD) && r.data_len >= 2 && (r.data[1] & 7) == 1,
		 "RSOC RO=001b for unsupported 02h -> GOOD, SUPPORT = 001b (not supported)", "%s, support %d",
		 itest_result_str(&r), r.data_len >= 2 ? r.data[1] & 7 : -1);
	itest_result_free(&r);
	rsoc(0, 2, false, 0x9e, 0x1f, 512, &r);
	itest_ok(itest_result_matches(&r, EXPECT_GOOD) && r.data_len >= 2 && (r.data[1] & 7) == 1,
		 "RSOC RO=010b for 9Eh/1Fh (unsupported service action) -> GOOD, SUPPORT = 001b", "%s, support %d",
		 itest_result_str(&r), r.data_len >= 2 ? r.data[1] & 7 : -1);
	itest_result_free(&r);
}

/* A harmless CDB for a listed command: most fields zero, transfer lengths small. */
static void build_cdb(const struct listed *c, uint8_t *cdb, enum itest_dir *dir, size_t *out_len, size_t *in_len)
{
	memset(cdb, 0, 16);
	cdb[0] = c->opcode;
	*dir = ITEST_NONE;
	*out_len = *in_len = 0;
	if (c->servactv)
		cdb[1] = (uint8_t)c->sa;
	switch (c->opcode) {
	case 0x03: /* REQUEST SENSE */
	case 0x12: /* INQUIRY */
	case 0x1a: /* MODE SENSE(6) */
		cdb[4] = 252;
		*dir = ITEST_IN;
		*in_len = 252;
		if (c->opcode == 0x1a)
			cdb[2] = 0x3f;
		break;
	case 0x08: /* READ(6): one block */
		cdb[4] = 1;
		*dir = ITEST_IN;
		*in_len = 512;
		break;
	case 0x0a: /* WRITE(6): one block */
		cdb[4] = 1;
		*dir = ITEST_OUT;
		*out_len = 512;
		break;
	case 0x1b: /* START STOP UNIT: START=1 keeps the LU ready */
		cdb[4] = 0x01;
		break;
	case 0x25:
		*dir = ITEST_IN;
		*in_len = 8;
		break;
	case 0x5a: /* MODE SENSE(10) */
		cdb[2] = 0x3f;
		cdb[8] = 252;
		*dir = ITEST_IN;
		*in_len = 252;
		break;
	case 0x5e: /* PERSISTENT RESERVE IN */
		cdb[8] = 252;
		*dir = ITEST_IN;
		*in_len = 252;
		break;
	case 0x37: /* READ DEFECT DATA(10) */
		cdb[8] = 252;
		*dir = ITEST_IN;
		*in_len = 252;
		break;
	case 0x9e: /* SERVICE ACTION IN(16) */
		cdb[13] = 32;
		*dir = ITEST_IN;
		*in_len = 32;
		break;
	case 0xa0: /* REPORT LUNS */
	case 0xa3: /* MAINTENANCE IN */
	case 0xb7: /* READ DEFECT DATA(12) */
		cdb[9] = 252;
		*dir = ITEST_IN;
		*in_len = 252;
		if (c->opcode == 0xa3) {
			cdb[6] = 0;
			cdb[7] = 0;
			cdb[8] = 0;
			cdb[9] = 252;
		}
		break;
	case 0x41: /* WRITE SAME(10): one block of data, one block */
		cdb[8] = 1;
		*dir = ITEST_OUT;
		*out_len = 512;
		break;
	case 0x93: /* WRITE SAME(16) */
		cdb[13] = 1;
		*dir = ITEST_OUT;
		*out_len = 512;
		break;
	case 0x48: /* SANITIZE: all service actions with IMMED=0; parameter list length 0 */
		break;
	default:
		/* Zero transfer length: READ/WRITE/VERIFY(10/12/16), SYNCHRONIZE CACHE, PRE-FETCH,
		 * COMPARE AND WRITE, UNMAP, MODE SELECT, PERSISTENT RESERVE OUT, RESERVE/RELEASE,
		 * PREVENT ALLOW, TEST UNIT READY, FORMAT UNIT (FMTDATA=0: formats with defaults). */
		break;
	}
}

static const char *opname(uint8_t op)
{
	switch (op) {
	case 0x04:
		return "FORMAT UNIT";
	case 0x48:
		return "SANITIZE";
	default:
		return "";
	}
}

static void test_listed_commands_work(void)
{
	char name[200];
	int bad = 0;

	for (int i = 0; i < ncmds; i++) {
		const struct listed *c = &cmds[i];
		uint8_t cdb[16];
		enum itest_dir dir;
		size_t out_len, in_len;
		uint8_t out[512] = { 0 };
		struct itest_result r;
		bool unsupported;

		/* SANITIZE and FORMAT UNIT would wipe the LU: their support is checked in test_unit_state. */
		if (c->opcode == 0x48 || c->opcode == 0x04) {
			itest_note("%s (%02Xh/%02Xh) listed; executed by test_unit_state", opname(c->opcode), c->opcode, c->sa);
			continue;
		}
		build_cdb(c, cdb, &dir, &out_len, &in_len);
		itest_cmd(s, 0, cdb, c->cdb_len > 16 ? 16 : c->cdb_len, dir, out, out_len, in_len, &r);
		unsupported = !r.transport_ok || itest_result_matches(&r, EXPECT_SENSE(5, 0x20, 0)) ||
			      (c->servactv && itest_result_matches(&r, EXPECT_SENSE(5, 0x24, 0)) && r.sense.sksv &&
			       itest_get_be16(r.sense.sks + 1) == 1);
		if (unsupported) {
			bad++;
			snprintf(name, sizeof(name), "RSOC-listed %02Xh/%02Xh is executed (not 05/20/00)", c->opcode, c->sa);
			itest_ok(false, name, "%s", itest_result_str(&r));
		} else if (itest_verbose()) {
			itest_note("%02Xh/%02Xh -> %s", c->opcode, c->sa, itest_result_str(&r));
		}
		itest_result_free(&r);
		/* Release what RESERVE took; clear reservation conflicts for later commands. */
		if (c->opcode == 0x16 || c->opcode == 0x56) {
			uint8_t rel[10] = { (uint8_t)(c->opcode + 1) };
			itest_cmd(s, 0, rel, c->opcode == 0x16 ? 6 : 10, ITEST_NONE, NULL, 0, 0, &r);
		}
	}
	itest_ok(bad == 0, "every command RSOC lists is executed (none gets 05/20/00 or an unsupported-SA 05/24/00)",
		 "%d listed commands rejected", bad);
}

static bool listed_opcode(uint8_t op)
{
	for (int i = 0; i < ncmds; i++)
		if (cmds[i].opcode == op)
			return true;
	return false;
}

static void test_unlisted_rejected(void)
{
	char name[200];
	int bad = 0, tried = 0;

	for (int op = 0; op < 256; op++) {
		uint8_t cdb[16] = { (uint8_t)op };
		int len;
		struct itest_result r;

		if (listed_opcode((uint8_t)op))
			continue;
		if (op >= 0x60 && op <= 0x7f)
			continue; /* group 3: reserved / variable-length CDBs need an AHS */
		len = op < 0x20 ? 6 : op < 0x60 ? 10 : op < 0xa0 ? 16 : op < 0xc0 ? 12 : 16;
		tried++;
		itest_cmd(s, 0, cdb, len, ITEST_NONE, NULL, 0, 0, &r);
		if (!itest_result_matches(&r, EXPECT_SENSE(5, 0x20, 0))) {
			bad++;
			snprintf(name, sizeof(name), "operation code %02Xh, not listed by RSOC -> 05/20/00", op);
			itest_ok(false, name, "got %s", itest_result_str(&r));
		}
		itest_result_free(&r);
		if (!r.transport_ok)
			break;
	}
	itest_ok(bad == 0, "every operation code RSOC does not list gets 05/20/00", "%d of %d did not", bad, tried);
}

static void test_unmap_listing(void)
{
	/* LUN 1 is fully provisioned: UNMAP and GET LBA STATUS are not supported there. */
	struct itest_result r;
	rsoc(1, 1, false, 0x42, 0, 512, &r);
	itest_ok(itest_result_matches(&r, EXPECT_GOOD) && r.data_len >= 2 && (r.data[1] & 7) == 1,
		 "LUN 1 (thick) RSOC for UNMAP: SUPPORT = 001b (not supported)", "%s, support %d", itest_result_str(&r),
		 r.data_len >= 2 ? r.data[1] & 7 : -1);
	itest_result_free(&r);
	{
		uint8_t cdb[10] = { 0x42, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
		itest_expect_cmd(s, 1, "LUN 1 (thick) UNMAP -> 05/20/00", cdb, 10, ITEST_NONE, NULL, 0, 0,
				 EXPECT_SENSE(5, 0x20, 0), NULL);
	}
	rsoc(0, 1, false, 0x42, 0, 512, &r);
	itest_ok(itest_result_matches(&r, EXPECT_GOOD) && r.data_len >= 2 && (r.data[1] & 7) == 3,
		 "LUN 0 (thin) RSOC for UNMAP: SUPPORT = 011b", "%s, support %d", itest_result_str(&r),
		 r.data_len >= 2 ? r.data[1] & 7 : -1);
	itest_result_free(&r);
}

int main(int argc, char **argv)
{
	struct itest_daemon d;

	itest_init(argc, argv, "test_rsoc: REPORT SUPPORTED OPERATION CODES tells the truth");
	itest_daemon_up(&d, "rsoc", itest_default_config);
	s = itest_session(&d, ITEST_INITIATOR_1, 0);
	if (!s)
		return itest_finish();
	itest_clear_ua(s, 0);
	itest_clear_ua(s, 1);

	test_all_commands();
	if (ncmds) {
		test_one_command();
		test_listed_commands_work();
		test_unlisted_rejected();
	}
	test_unmap_listing();

	itest_close(s);
	itest_ok(itest_daemon_alive(&d), "sbcemud still running at the end", NULL);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
