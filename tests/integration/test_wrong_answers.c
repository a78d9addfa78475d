/*
 * Commands whose iSCSI framing does not match their CDB get the answer RFC
 * 7143 and SAM-5 give them, not a GOOD that hides what happened:
 *
 * - RFC 7143 11.3.1: R and/or W must be set when Expected Data Transfer
 *   Length (EDTL) is not 0; a command without either and a non-zero EDTL is
 *   rejected (Reject reason 09h, Invalid PDU Field) and not executed.
 * - RFC 7143 11.4.5.2: SPDTL > EDTL is an overflow, signalled with the O
 *   bit and Residual Count = SPDTL - EDTL.  The command itself is
 *   processed on the data the initiator's buffer holds (FCP-4 9.4.2 a),
 *   which libiscsi's iSCSIResiduals tests require: a WRITE writes the whole
 *   blocks that arrived and no more, a READ sends EDTL bytes.  A direction
 *   the initiator did not announce has an empty buffer: no Data-In is sent
 *   to an initiator that did not set R, no Data-Out is asked of one that did
 *   not set W, and the whole transfer is the overflow.
 * - A Data-Out PDU with an empty data segment carries nothing and ends
 *   nothing (RFC 7143 11.7): the command completes when the rest arrives.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"
#include "itest_raw.h"

static struct itest_daemon d;
static struct itest_raw c = { .fd = -1 };

/* The SCSI Response of the last command (skipping Data-In, whose bytes go to data_in). */
struct answer {
	int opcode;             /* 0x21 SCSI Response, 0x3f Reject, -1 nothing */
	int status, key, asc, ascq;
	int reject_reason;
	bool overflow, underflow;
	uint32_t residual;
	uint32_t data_in;       /* Data-In bytes received */
};

static void await(struct answer *a)
{
	struct itest_pdu p;

	memset(a, 0, sizeof(*a));
	a->opcode = -1;
	while (itest_raw_recv(&c, &p, 5000) == 1) {
		int op = p.bhs[0] & 0x3f;

		if (op == RAW_OP_DATA_IN) {
			a->data_in += p.data_len;
			if (!(p.bhs[1] & 0x01)) { /* no S bit: the status comes in a SCSI Response */
				itest_pdu_free(&p);
				continue;
			}
			a->opcode = RAW_OP_SCSI_RSP;
			a->status = p.bhs[3];
		} else if (op == RAW_OP_SCSI_RSP) {
			a->opcode = op;
			a->status = p.bhs[3];
			if (p.data_len >= 2 + 14) {
				const uint8_t *s = p.data + 2;

				a->key = s[2] & 0xf;
				a->asc = s[12];
				a->ascq = s[13];
			}
		} else if (op == RAW_OP_REJECT) {
			a->opcode = op;
			a->reject_reason = p.bhs[2];
		} else {
			itest_pdu_free(&p);
			continue;
		}
		a->overflow = p.bhs[1] & 0x04;
		a->underflow = p.bhs[1] & 0x02;
		a->residual = (uint32_t)p.bhs[44] << 24 | p.bhs[45] << 16 | p.bhs[46] << 8 | p.bhs[47];
		itest_pdu_free(&p);
		c.exp_statsn++;
		return;
	}
}

static void send_cmd(const uint8_t *cdb, bool read, bool write, uint32_t edtl)
{
	uint8_t bhs[48];

	itest_raw_scsi_cmd(&c, bhs, 0, cdb, 10, read, write, edtl);
	itest_raw_send(&c, bhs, NULL, 0);
}

static void rw10(uint8_t *cdb, uint8_t op, uint32_t lba, uint16_t blocks)
{
	memset(cdb, 0, 10);
	cdb[0] = op;
	cdb[2] = lba >> 24, cdb[3] = lba >> 16, cdb[4] = lba >> 8, cdb[5] = lba;
	cdb[7] = blocks >> 8, cdb[8] = blocks;
}

/* Reads LBA lba (one 512-byte block) through a well-formed READ(10): its first byte. */
static int first_byte(uint32_t lba)
{
	uint8_t cdb[10];
	struct itest_pdu p;
	int b = -1;

	rw10(cdb, 0x28, lba, 1);
	send_cmd(cdb, true, false, 512);
	while (itest_raw_recv(&c, &p, 5000) == 1) {
		int op = p.bhs[0] & 0x3f;

		if (op == RAW_OP_DATA_IN && p.data_len)
			b = p.data[0];
		if (op == RAW_OP_SCSI_RSP || (op == RAW_OP_DATA_IN && (p.bhs[1] & 0x01))) {
			itest_pdu_free(&p);
			c.exp_statsn++;
			break;
		}
		itest_pdu_free(&p);
	}
	return b;
}

/* Writes one block of `fill` at lba with a well-formed WRITE(10) and immediate data. */
static void fill_block(uint32_t lba, uint8_t fill)
{
	uint8_t cdb[10], bhs[48], buf[512];
	struct answer a;

	memset(buf, fill, sizeof(buf));
	rw10(cdb, 0x2a, lba, 1);
	itest_raw_scsi_cmd(&c, bhs, 0, cdb, 10, false, true, 512);
	itest_raw_send(&c, bhs, buf, 512);
	await(&a);
}

int main(int argc, char **argv)
{
	uint8_t cdb[10], bhs[48], buf[1024];
	char err[256];
	struct answer a;

	itest_init(argc, argv, "test_wrong_answers: framing that does not match the CDB (RFC 7143 11.3.1, 11.4.5.2; SAM-5 5.4.3)");
	itest_daemon_up(&d, "wrong-answers", itest_default_config);
	if (itest_raw_login(&c, &d, ITEST_INITIATOR_1, ITEST_TARGET, false, false, true, err, sizeof(err))) {
		itest_ok(false, "login", "%s", err);
		return itest_finish();
	}
	itest_raw_clear_ua(&c, 0);

	/* WRITE(10) of one block, neither R nor W, EDTL 512: rejected, nothing written. */
	fill_block(100, 0xaa);
	rw10(cdb, 0x2a, 100, 1);
	send_cmd(cdb, false, false, 512);
	await(&a);
	itest_ok(a.opcode == RAW_OP_REJECT && a.reject_reason == 0x09,
		 "RFC 7143 11.3.1: EDTL 512 with neither R nor W -> Reject, reason 09h (Invalid PDU Field)",
		 "opcode %02x reason %02x status %02x", a.opcode, a.reject_reason, a.status);
	/* The rejected command used no CmdSN (RFC 7143 11.17.1): the next one takes the same. */
	if (a.opcode == RAW_OP_REJECT)
		c.cmdsn--;

	/* READ(10) of one block, neither R nor W, EDTL 512: rejected too. */
	rw10(cdb, 0x28, 100, 1);
	send_cmd(cdb, false, false, 512);
	await(&a);
	itest_ok(a.opcode == RAW_OP_REJECT && a.reject_reason == 0x09,
		 "RFC 7143 11.3.1: READ(10), EDTL 512, neither R nor W -> Reject, reason 09h",
		 "opcode %02x reason %02x status %02x, %u Data-In bytes", a.opcode, a.reject_reason, a.status,
		 a.data_in);
	if (a.opcode == RAW_OP_REJECT)
		c.cmdsn--;

	/* WRITE(10) of one block with EDTL 0 (no W, as RFC 7143 11.3.1 wants): overflow, nothing written. */
	rw10(cdb, 0x2a, 100, 1);
	send_cmd(cdb, false, false, 0);
	await(&a);
	itest_ok(a.opcode == RAW_OP_SCSI_RSP && a.status == 0 && a.overflow && a.residual == 512,
		 "RFC 7143 11.4.5.2, FCP-4 9.4.2 a): WRITE(10) 1 block, EDTL 0 -> GOOD on no data, O bit, residual 512",
		 "opcode %02x status %02x sense %x/%02x/%02x O %d residual %u", a.opcode, a.status, a.key, a.asc,
		 a.ascq, a.overflow, a.residual);
	itest_ok(first_byte(100) == 0xaa, "... and the block keeps its data", "first byte %02x", first_byte(100));

	/* WRITE(10) of two blocks with EDTL 512 (W): the block that arrived is written, overflow 512. */
	fill_block(101, 0xaa);
	memset(buf, 0x55, sizeof(buf));
	rw10(cdb, 0x2a, 100, 2);
	itest_raw_scsi_cmd(&c, bhs, 0, cdb, 10, false, true, 512);
	itest_raw_send(&c, bhs, buf, 512);
	await(&a);
	itest_ok(a.opcode == RAW_OP_SCSI_RSP && a.status == 0 && a.overflow && a.residual == 512,
		 "RFC 7143 11.4.5.2, FCP-4 9.4.2 a): WRITE(10) 2 blocks, EDTL 512 -> GOOD, O bit, residual 512",
		 "opcode %02x status %02x sense %x/%02x/%02x O %d residual %u", a.opcode, a.status, a.key, a.asc,
		 a.ascq, a.overflow, a.residual);
	itest_ok(first_byte(100) == 0x55 && first_byte(101) == 0xaa,
		 "... the first block is written, the second (beyond EDTL) is not",
		 "first bytes %02x %02x", first_byte(100), first_byte(101));

	/* WRITE(10) of one block with R set, not W, EDTL 512: no Data-Out may be asked for (no R2T). */
	fill_block(100, 0xaa);
	rw10(cdb, 0x2a, 100, 1);
	send_cmd(cdb, true, false, 512);
	await(&a);
	itest_ok(a.opcode == RAW_OP_SCSI_RSP && a.status == 0 && a.data_in == 0 && a.overflow && a.residual == 512,
		 "RFC 7143 11.4.5.2: WRITE(10) with R and not W (no Data-Out buffer) -> GOOD on no data, no Data-In, "
		 "O bit, residual 512",
		 "opcode %02x status %02x sense %x/%02x/%02x, %u Data-In bytes, O %d residual %u", a.opcode, a.status,
		 a.key, a.asc, a.ascq, a.data_in, a.overflow, a.residual);
	itest_ok(first_byte(100) == 0xaa, "... and the block keeps its data", "first byte %02x", first_byte(100));

	/* READ(10) of one block with W set, not R, EDTL 512: no Data-In may be sent (RFC 7143 11.7.1). */
	rw10(cdb, 0x28, 100, 1);
	send_cmd(cdb, false, true, 512);
	await(&a);
	itest_ok(a.opcode == RAW_OP_SCSI_RSP && a.data_in == 0 && a.overflow && a.residual == 512,
		 "RFC 7143 11.4.5.2: READ(10) with W and not R (no Data-In buffer) -> no Data-In, O bit, residual 512",
		 "opcode %02x status %02x sense %x/%02x/%02x, %u Data-In bytes, O %d residual %u", a.opcode, a.status,
		 a.key, a.asc, a.ascq, a.data_in, a.overflow, a.residual);

	/* READ(10) of one block with EDTL 0: no Data-In, overflow of 512 (SAM-5 5.4.3 a). */
	rw10(cdb, 0x28, 100, 1);
	send_cmd(cdb, false, false, 0);
	await(&a);
	itest_ok(a.opcode == RAW_OP_SCSI_RSP && a.status == 0 && a.data_in == 0 && a.overflow && a.residual == 512,
		 "RFC 7143 11.4.5.2: READ(10) 1 block, EDTL 0 -> GOOD, no Data-In, O bit, residual 512",
		 "opcode %02x status %02x, %u Data-In bytes, O %d residual %u", a.opcode, a.status, a.data_in,
		 a.overflow, a.residual);

	/* An empty Data-Out PDU in the middle of a solicited sequence (F 0): carries nothing, ends nothing. */
	{
		struct itest_pdu p;
		uint32_t ttt = 0, got_r2t = 0;

		memset(buf, 0x77, sizeof(buf));
		rw10(cdb, 0x2a, 100, 2);
		itest_raw_scsi_cmd(&c, bhs, 0, cdb, 10, false, true, 1024);
		itest_raw_send(&c, bhs, NULL, 0);
		while (!got_r2t && itest_raw_recv(&c, &p, 5000) == 1) {
			if ((p.bhs[0] & 0x3f) == RAW_OP_R2T) {
				got_r2t = 1;
				ttt = (uint32_t)p.bhs[20] << 24 | p.bhs[21] << 16 | p.bhs[22] << 8 | p.bhs[23];
			}
			itest_pdu_free(&p);
		}
		memset(bhs, 0, sizeof(bhs));
		bhs[0] = RAW_OP_DATA_OUT;
		bhs[1] = 0x00;
		bhs[16] = (c.itt - 1) >> 24, bhs[17] = (c.itt - 1) >> 16, bhs[18] = (c.itt - 1) >> 8, bhs[19] = c.itt - 1;
		bhs[20] = ttt >> 24, bhs[21] = ttt >> 16, bhs[22] = ttt >> 8, bhs[23] = ttt;
		bhs[28] = c.exp_statsn >> 24, bhs[29] = c.exp_statsn >> 16, bhs[30] = c.exp_statsn >> 8;
		bhs[31] = c.exp_statsn;
		itest_raw_send(&c, bhs, NULL, 0); /* DataSN 0, offset 0, no data */
		bhs[1] = 0x80;
		bhs[39] = 1; /* DataSN 1 */
		itest_raw_send(&c, bhs, buf, 1024);
		await(&a);
		itest_ok(got_r2t && a.opcode == RAW_OP_SCSI_RSP && a.status == 0,
			 "RFC 7143 11.7: an empty Data-Out PDU then the data -> the WRITE completes GOOD",
			 "R2T %u, opcode %02x status %02x sense %x/%02x/%02x", got_r2t, a.opcode, a.status, a.key, a.asc,
			 a.ascq);
		itest_ok(first_byte(100) == 0x77 && first_byte(101) == 0x77, "... and both blocks hold the data",
			 "first bytes %02x %02x", first_byte(100), first_byte(101));
		itest_ok(itest_daemon_alive(&d), "the daemon is still running", "it died");
	}
	itest_raw_close(&c);
	itest_daemon_cleanup(&d);
	return itest_finish();
}
