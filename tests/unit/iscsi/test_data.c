/* Data transfer over the wire (RFC 7143 11.3-11.8): Data-In, R2T, Data-Out, residuals, sense, DataSN errors. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iscsi_harness.h"
#include "pdu.h"

static struct session S;

static void setup(void)
{
	harness_start(NULL);
}

static void teardown(void)
{
	close(S.fd);
	harness_stop();
}

static void data_out(uint32_t itt, uint32_t ttt, uint32_t data_sn, uint32_t offset, bool final, const uint8_t *data,
		     uint32_t len)
{
	uint8_t bhs[48] = { 0x05, (uint8_t)(final ? 0x80 : 0) };

	put_be32(bhs + 16, itt);
	put_be32(bhs + 20, ttt);
	put_be32(bhs + 28, S.exp_stat_sn);
	put_be32(bhs + 36, data_sn);
	put_be32(bhs + 40, offset);
	pdu_send(S.fd, bhs, data, len);
}

/* Reads blocks back and returns the data (malloc'd). */
static uint8_t *read_back(uint32_t lba, uint16_t blocks)
{
	uint8_t cdb[16], bhs[48];
	uint8_t *buf = calloc(1, blocks * 512u);
	uint32_t got = 0;
	struct pdu p;

	cdb_rw10(cdb, 0x28, lba, blocks);
	bhs_scsi_cmd(bhs, 0xc1, S.itt++, blocks * 512u, S.cmd_sn++, S.exp_stat_sn, cdb, 10);
	pdu_send(S.fd, bhs, NULL, 0);
	for (;;) {
		ck_assert(pdu_recv(S.fd, &p, 5000));
		ck_assert_uint_eq(p.bhs[0], 0x25);
		memcpy(buf + get_be32(p.bhs + 40), p.data, p.data_len);
		got += p.data_len;
		if (p.bhs[1] & 0x01) {
			S.exp_stat_sn = get_be32(p.bhs + 24) + 1;
			pdu_free(&p);
			break;
		}
		pdu_free(&p);
	}
	ck_assert_uint_eq(got, blocks * 512u);
	return buf;
}

/*
 * RFC 7143 11.7: Data-In segments of the initiator's MaxRecvDataSegmentLength,
 * DataSN from 0, BufferOffset, status collapsed into the last one (F and S),
 * underflow residual when EDTL exceeds the transfer.
 */
START_TEST(read_data_in_segments_and_residual)
{
	uint8_t cdb[16], bhs[48];
	struct pdu p;

	session_open(&S, "MaxRecvDataSegmentLength=4096");
	cdb_rw10(cdb, 0x28, 0, 16);
	bhs_scsi_cmd(bhs, 0xc1, 0x51, 10000, S.cmd_sn++, S.exp_stat_sn, cdb, 10);
	pdu_send(S.fd, bhs, NULL, 0);

	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(p.bhs[0], 0x25);
	ck_assert_uint_eq(p.bhs[1], 0x00); /* not final, no status */
	ck_assert_uint_eq(p.data_len, 4096);
	ck_assert_uint_eq(get_be32(p.bhs + 16), 0x51);
	ck_assert_uint_eq(get_be32(p.bhs + 20), 0xffffffff);
	ck_assert_uint_eq(get_be32(p.bhs + 36), 0); /* DataSN */
	ck_assert_uint_eq(get_be32(p.bhs + 40), 0); /* BufferOffset */
	pdu_free(&p);

	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(p.bhs[1], 0x80 | 0x02 | 0x01); /* F, U, S */
	ck_assert_uint_eq(p.bhs[3], 0x00);               /* GOOD */
	ck_assert_uint_eq(p.data_len, 4096);
	ck_assert_uint_eq(get_be32(p.bhs + 24), S.exp_stat_sn); /* StatSN */
	ck_assert_uint_eq(get_be32(p.bhs + 28), S.cmd_sn);      /* ExpCmdSN */
	ck_assert_uint_eq(get_be32(p.bhs + 36), 1);
	ck_assert_uint_eq(get_be32(p.bhs + 40), 4096);
	ck_assert_uint_eq(get_be32(p.bhs + 44), 10000 - 8192); /* Residual Count */
	pdu_free(&p);
}
END_TEST

/* RFC 7143 11.4.7.2: sense data in the SCSI Response behind a 2-byte SenseLength. */
START_TEST(read_out_of_range_sense)
{
	uint8_t cdb[16], bhs[48];
	struct pdu p;

	session_open(&S, NULL);
	cdb_rw10(cdb, 0x28, 2048 * 64, 1);
	bhs_scsi_cmd(bhs, 0xc1, 0x52, 512, S.cmd_sn++, S.exp_stat_sn, cdb, 10);
	pdu_send(S.fd, bhs, NULL, 0);
	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(p.bhs[0], 0x21);
	ck_assert_uint_eq(p.bhs[2], 0x00); /* command completed at target */
	ck_assert_uint_eq(p.bhs[3], 0x02); /* CHECK CONDITION */
	ck_assert_uint_ge(p.data_len, 2 + 18);
	ck_assert_uint_eq(get_be16(p.data), p.data_len - 2);
	ck_assert_uint_eq(p.data[2] & 0x7f, 0x70);
	ck_assert_uint_eq(p.data[2 + 2] & 0x0f, 0x05); /* ILLEGAL REQUEST */
	ck_assert_uint_eq(p.data[2 + 12], 0x21);       /* LOGICAL BLOCK ADDRESS OUT OF RANGE */
	pdu_free(&p);
}
END_TEST

/*
 * RFC 7143 11.8 / 13.10, 13.11, 13.13: with InitialR2T=Yes and ImmediateData=No
 * every byte is solicited; R2Ts are at most MaxBurstLength long and, with
 * MaxOutstandingR2T=1, one at a time; R2TSN counts from 0.
 */
START_TEST(write_r2t_sequences)
{
	uint8_t cdb[16], bhs[48], data[8192], *back;
	struct pdu p;

	for (int i = 0; i < 8192; i++)
		data[i] = (uint8_t)(i * 7);
	session_open(&S, "InitialR2T=Yes\nImmediateData=No\nMaxBurstLength=4096\nFirstBurstLength=4096");
	cdb_rw10(cdb, 0x2a, 10, 16);
	bhs_scsi_cmd(bhs, 0xa1, 0x60, 8192, S.cmd_sn++, S.exp_stat_sn, cdb, 10);
	pdu_send(S.fd, bhs, NULL, 0);
	for (uint32_t n = 0; n < 2; n++) {
		uint32_t ttt;
		ck_assert(pdu_recv(S.fd, &p, 5000));
		ck_assert_uint_eq(p.bhs[0], 0x31);
		ck_assert_uint_eq(p.bhs[1], 0x80);
		ck_assert_uint_eq(get_be32(p.bhs + 16), 0x60);
		ttt = get_be32(p.bhs + 20);
		ck_assert_uint_ne(ttt, 0xffffffff);
		ck_assert_uint_eq(get_be32(p.bhs + 24), S.exp_stat_sn); /* StatSN not advanced */
		ck_assert_uint_eq(get_be32(p.bhs + 36), n);            /* R2TSN */
		ck_assert_uint_eq(get_be32(p.bhs + 40), n * 4096);     /* BufferOffset */
		ck_assert_uint_eq(get_be32(p.bhs + 44), 4096);         /* Desired Data Transfer Length */
		pdu_free(&p);
		data_out(0x60, ttt, 0, n * 4096, false, data + n * 4096, 2048);
		data_out(0x60, ttt, 1, n * 4096 + 2048, true, data + n * 4096 + 2048, 2048);
	}
	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(p.bhs[0], 0x21);
	ck_assert_uint_eq(p.bhs[3], 0x00);
	ck_assert_uint_eq(get_be32(p.bhs + 36), 2); /* ExpDataSN: R2Ts sent */
	S.exp_stat_sn = get_be32(p.bhs + 24) + 1;
	pdu_free(&p);
	back = read_back(10, 16);
	ck_assert_mem_eq(back, data, 8192);
	free(back);
}
END_TEST

/*
 * Immediate data and unsolicited Data-Out up to FirstBurstLength (InitialR2T=No),
 * then an R2T for the rest, starting at FirstBurstLength.
 */
START_TEST(write_immediate_unsolicited_then_r2t)
{
	uint8_t cdb[16], bhs[48], data[8192], *back;
	struct pdu p;
	uint32_t ttt;

	for (int i = 0; i < 8192; i++)
		data[i] = (uint8_t)(i * 13 + 1);
	session_open(&S, "InitialR2T=No\nImmediateData=Yes\nFirstBurstLength=4096");
	cdb_rw10(cdb, 0x2a, 20, 16);
	bhs_scsi_cmd(bhs, 0x21, 0x61, 8192, S.cmd_sn++, S.exp_stat_sn, cdb, 10); /* F = 0: unsolicited follows */
	pdu_send(S.fd, bhs, data, 1024);
	data_out(0x61, 0xffffffff, 0, 1024, false, data + 1024, 1024);
	data_out(0x61, 0xffffffff, 1, 2048, true, data + 2048, 2048);
	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(p.bhs[0], 0x31);
	ck_assert_uint_eq(get_be32(p.bhs + 36), 0);
	ck_assert_uint_eq(get_be32(p.bhs + 40), 4096);
	ck_assert_uint_eq(get_be32(p.bhs + 44), 4096);
	ttt = get_be32(p.bhs + 20);
	pdu_free(&p);
	data_out(0x61, ttt, 0, 4096, true, data + 4096, 4096);
	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(p.bhs[0], 0x21);
	ck_assert_uint_eq(p.bhs[3], 0x00);
	S.exp_stat_sn = get_be32(p.bhs + 24) + 1;
	pdu_free(&p);
	back = read_back(20, 16);
	ck_assert_mem_eq(back, data, 8192);
	free(back);
}
END_TEST

/*
 * A Data-Out with a wrong DataSN: Reject (protocol error, the header echoed)
 * and the task ends with CHECK CONDITION, ABORTED COMMAND, DATA PHASE ERROR;
 * the connection stays usable.
 */
START_TEST(write_datasn_error)
{
	uint8_t cdb[16], bhs[48], data[1024] = { 0 };
	struct pdu p;
	uint32_t ttt;

	session_open(&S, "InitialR2T=Yes\nImmediateData=No");
	cdb_rw10(cdb, 0x2a, 30, 2);
	bhs_scsi_cmd(bhs, 0xa1, 0x62, 1024, S.cmd_sn++, S.exp_stat_sn, cdb, 10);
	pdu_send(S.fd, bhs, NULL, 0);
	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(p.bhs[0], 0x31);
	ttt = get_be32(p.bhs + 20);
	pdu_free(&p);
	data_out(0x62, ttt, 27, 0, true, data, 1024);
	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(p.bhs[0], 0x3f);
	ck_assert_uint_eq(p.bhs[2], 0x04);
	ck_assert_uint_eq(p.data_len, 48);
	ck_assert_uint_eq(p.data[0], 0x05);
	ck_assert_uint_eq(get_be32(p.data + 36), 27);
	pdu_free(&p);
	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(p.bhs[0], 0x21);
	ck_assert_uint_eq(get_be32(p.bhs + 16), 0x62);
	ck_assert_uint_eq(p.bhs[3], 0x02);
	ck_assert_uint_eq(p.data[2 + 2] & 0x0f, 0x0b); /* ABORTED COMMAND */
	ck_assert_uint_eq(p.data[2 + 12], 0x4b);
	ck_assert_uint_eq(p.data[2 + 13], 0x00);
	S.exp_stat_sn = get_be32(p.bhs + 24) + 1;
	pdu_free(&p);
	free(read_back(30, 2));
}
END_TEST

/*
 * Sends a Data-Out PDU in two writes 50 ms apart: the header and the first
 * `first` bytes of its data segment, then the rest with its digest (crc
 * made wrong when bad_digest) and, in the same write, `tail` bytes that
 * follow it (the next PDU).  The target reads a segment of 8 KiB or more
 * whose task waits for it in place (conn.c, rx_direct_start), so the split
 * makes it take that path.
 */
/*
 * Sends the PDU whose 48-byte header is bhs with data segment data (len
 * bytes, a multiple of 4) in two writes 50 ms apart, cut first bytes into
 * the segment (so that the target has the header and not all of the
 * segment: the receive-in-place path), with the digests the session
 * negotiated (a wrong data digest if bad_digest) and tail after it in the
 * second write.
 */
static void pdu_send_split(uint8_t *bhs, const uint8_t *data, uint32_t len, uint32_t first, bool bad_digest,
			   const uint8_t *tail, size_t tail_len)
{
	uint8_t *wire = malloc(52 + len + 8 + tail_len);
	size_t n = 0, cut;

	put_be24(bhs + 5, len);
	memcpy(wire, bhs, 48);
	n = 48;
	if (harness_header_digest()) {
		iscsi_digest_put(wire + 48, iscsi_crc32c(wire, 48));
		n += 4;
	}
	memcpy(wire + n, data, len);
	n += len;
	if (harness_data_digest()) {
		iscsi_digest_put(wire + n, iscsi_crc32c(data, len) ^ (bad_digest ? 1u : 0u));
		n += 4;
	}
	cut = n - len - (harness_data_digest() ? 4 : 0) + first;
	if (tail_len)
		memcpy(wire + n, tail, tail_len);
	n += tail_len;
	pdu_send_raw(S.fd, wire, cut);
	usleep(50 * 1000);
	pdu_send_raw(S.fd, wire + cut, n - cut);
	free(wire);
}

/* A Data-Out PDU (RFC 7143 11.7) sent as pdu_send_split does. */
static void data_out_split(uint32_t itt, uint32_t ttt, uint32_t data_sn, uint32_t offset, bool final,
			   const uint8_t *data, uint32_t len, uint32_t first, bool bad_digest, const uint8_t *tail,
			   size_t tail_len)
{
	uint8_t bhs[48] = { 0x05 };

	bhs[1] = final ? 0x80 : 0;
	put_be32(bhs + 16, itt);
	put_be32(bhs + 20, ttt);
	put_be32(bhs + 28, S.exp_stat_sn);
	put_be32(bhs + 36, data_sn);
	put_be32(bhs + 40, offset);
	pdu_send_split(bhs, data, len, first, bad_digest, tail, tail_len);
}

/*
 * Data-Out segments received in place (straight into the command's buffer,
 * docs/performance.md) are checked as any other (RFC 7143 11.7, 7.8): a
 * 32 KiB R2T sequence in two split PDUs, with header and data digests, is
 * written whole; a data digest error (Reject reason 02h) discards its PDU,
 * whose place the initiator fills again; a split PDU with a wrong DataSN is
 * rejected (04h) and ends the task with 0B/4B/00 without touching the
 * blocks written before.
 */
START_TEST(write_data_out_in_place)
{
	static uint8_t data[32768], other[16384];
	uint8_t cdb[16], bhs[48], nop[52], *back;
	struct pdu p;
	uint32_t ttt;

	for (unsigned i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 13 + i / 512);
	memset(other, 0xa5, sizeof(other));
	session_open(&S, "InitialR2T=Yes\nImmediateData=No\nHeaderDigest=CRC32C\nDataDigest=CRC32C\n"
			 "MaxBurstLength=32768");
	ck_assert(harness_data_digest());
	cdb_rw10(cdb, 0x2a, 100, 64);
	bhs_scsi_cmd(bhs, 0xa1, 0x70, sizeof(data), S.cmd_sn++, S.exp_stat_sn, cdb, 10);
	pdu_send(S.fd, bhs, NULL, 0);
	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(p.bhs[0], 0x31);
	ck_assert_uint_eq(get_be32(p.bhs + 44), sizeof(data));
	ttt = get_be32(p.bhs + 20);
	pdu_free(&p);
	/* The first half with a bad data digest: rejected, nothing taken. */
	data_out_split(0x70, ttt, 0, 0, false, other, 16384, 1000, true, NULL, 0);
	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(p.bhs[0], 0x3f);
	ck_assert_uint_eq(p.bhs[2], 0x02); /* data digest error */
	pdu_free(&p);
	/* The same place again, then the second half, the two arriving split. */
	data_out_split(0x70, ttt, 0, 0, false, data, 16384, 3, false, NULL, 0);
	/* A NOP-Out follows the second in the same write: read after the segment, from the receive buffer. */
	memset(nop, 0, sizeof(nop));
	nop[0] = 0x40; /* NOP-Out, immediate */
	nop[1] = 0x80;
	put_be32(nop + 16, 0x99);
	put_be32(nop + 20, 0xffffffff);
	put_be32(nop + 24, S.cmd_sn);
	put_be32(nop + 28, S.exp_stat_sn);
	iscsi_digest_put(nop + 48, iscsi_crc32c(nop, 48));
	data_out_split(0x70, ttt, 1, 16384, true, data + 16384, 16384, 8000, false, nop, sizeof(nop));
	for (int got = 0; got < 2; got++) {
		ck_assert(pdu_recv(S.fd, &p, 5000));
		if (p.bhs[0] == 0x20) { /* NOP-In */
			ck_assert_uint_eq(get_be32(p.bhs + 16), 0x99);
		} else {
			ck_assert_uint_eq(p.bhs[0], 0x21);
			ck_assert_uint_eq(get_be32(p.bhs + 16), 0x70);
			ck_assert_uint_eq(p.bhs[3], 0x00);
			S.exp_stat_sn = get_be32(p.bhs + 24) + 1;
		}
		pdu_free(&p);
	}
	back = read_back(100, 64);
	ck_assert_mem_eq(back, data, sizeof(data));
	free(back);

	/* A split PDU with a wrong DataSN over the same blocks: rejected, the blocks keep their data. */
	bhs_scsi_cmd(bhs, 0xa1, 0x71, sizeof(data), S.cmd_sn++, S.exp_stat_sn, cdb, 10);
	pdu_send(S.fd, bhs, NULL, 0);
	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(p.bhs[0], 0x31);
	ttt = get_be32(p.bhs + 20);
	pdu_free(&p);
	data_out_split(0x71, ttt, 5, 0, false, other, 16384, 100, false, NULL, 0);
	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(p.bhs[0], 0x3f);
	ck_assert_uint_eq(p.bhs[2], 0x04);
	pdu_free(&p);
	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(p.bhs[0], 0x21);
	ck_assert_uint_eq(p.bhs[3], 0x02);
	ck_assert_uint_eq(p.data[2 + 2] & 0x0f, 0x0b); /* ABORTED COMMAND */
	ck_assert_uint_eq(p.data[2 + 12], 0x4b);
	S.exp_stat_sn = get_be32(p.bhs + 24) + 1;
	pdu_free(&p);
	back = read_back(100, 64);
	ck_assert_mem_eq(back, data, sizeof(data));
	free(back);
}
END_TEST

/*
 * Immediate data received in place (straight into the buffer its task
 * takes, docs/performance.md) is checked as any other (RFC 7143 11.3,
 * 13.14, 7.8), with header and data digests: a 16 KiB WRITE(10) whose
 * segment arrives split is written whole; with F = 0 the buffer holds the
 * first burst and the Data-Out that completes it lands behind the
 * immediate data; a data digest error (Reject reason 02h) discards the
 * command, whose ITT the initiator can use again; a command with an ITT
 * in use (Reject 07h, "task in progress"), whose data the same
 * checks would take in place, does not touch the task's blocks.
 */
START_TEST(write_immediate_data_in_place)
{
	static uint8_t data[32768], other[16384];
	uint8_t cdb[16], bhs[48], *back;
	struct pdu p;

	for (unsigned i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + i / 512);
	memset(other, 0x5a, sizeof(other));
	session_open(&S, "InitialR2T=No\nImmediateData=Yes\nHeaderDigest=CRC32C\nDataDigest=CRC32C\n"
			 "FirstBurstLength=32768\nMaxBurstLength=32768");
	ck_assert(harness_data_digest());

	/* A bad data digest: rejected, no task made, no block written. */
	cdb_rw10(cdb, 0x2a, 200, 32);
	bhs_scsi_cmd(bhs, 0xa1, 0x80, 16384, S.cmd_sn, S.exp_stat_sn, cdb, 10);
	pdu_send_split(bhs, other, 16384, 1000, true, NULL, 0);
	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(p.bhs[0], 0x3f);
	ck_assert_uint_eq(p.bhs[2], 0x02); /* data digest error */
	pdu_free(&p);

	/* The same command and CmdSN again, the segment split: written whole. */
	bhs_scsi_cmd(bhs, 0xa1, 0x80, 16384, S.cmd_sn++, S.exp_stat_sn, cdb, 10);
	pdu_send_split(bhs, data, 16384, 3, false, NULL, 0);
	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(p.bhs[0], 0x21);
	ck_assert_uint_eq(get_be32(p.bhs + 16), 0x80);
	ck_assert_uint_eq(p.bhs[3], 0x00);
	S.exp_stat_sn = get_be32(p.bhs + 24) + 1;
	pdu_free(&p);
	back = read_back(200, 32);
	ck_assert_mem_eq(back, data, 16384);
	free(back);

	/*
	 * F = 0: 16 KiB of immediate data, split, into a 32 KiB first burst;
	 * while the task waits for the rest, a command reusing its ITT with a
	 * split segment is rejected; then the unsolicited Data-Out ends the burst.
	 */
	cdb_rw10(cdb, 0x2a, 300, 64);
	bhs_scsi_cmd(bhs, 0x21, 0x81, sizeof(data), S.cmd_sn++, S.exp_stat_sn, cdb, 10);
	pdu_send_split(bhs, data, 16384, 8000, false, NULL, 0);
	bhs_scsi_cmd(bhs, 0xa1, 0x81, 16384, S.cmd_sn, S.exp_stat_sn, cdb, 10);
	pdu_send_split(bhs, other, 16384, 8000, false, NULL, 0);
	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(p.bhs[0], 0x3f);
	ck_assert_uint_eq(p.bhs[2], 0x07); /* task in progress */
	pdu_free(&p);
	data_out_split(0x81, 0xffffffff, 0, 16384, true, data + 16384, 16384, 5000, false, NULL, 0);
	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(p.bhs[0], 0x21);
	ck_assert_uint_eq(get_be32(p.bhs + 16), 0x81);
	ck_assert_uint_eq(p.bhs[3], 0x00);
	S.exp_stat_sn = get_be32(p.bhs + 24) + 1;
	pdu_free(&p);
	back = read_back(300, 64);
	ck_assert_mem_eq(back, data, sizeof(data));
	free(back);
}
END_TEST

/*
 * The same DataSN error on an LU whose Control mode page sets D_SENSE: the
 * task ends through the SCSI core's completion, whose one sense encoder
 * writes descriptor format (SPC-4 4.5.1: response code 72h, sense key in
 * byte 1, ASC/ASCQ in bytes 2-3), like every other CHECK CONDITION.
 */
START_TEST(write_datasn_error_honours_d_sense)
{
	static const uint8_t mode_sense[6] = { 0x1a, 0x08, 0x0a, 0x00, 255, 0x00 }; /* DBD, Control page */
	uint8_t cdb[16] = { 0 }, bhs[48], data[1024] = { 0 }, param[4 + 12] = { 0 };
	struct pdu p;
	uint32_t ttt;

	session_open(&S, "InitialR2T=Yes\nImmediateData=Yes");
	/* MODE SENSE(6) of the Control page, then MODE SELECT(6) of it with D_SENSE = 1. */
	memcpy(cdb, mode_sense, 6);
	bhs_scsi_cmd(bhs, 0xc1, 0x70, 255, S.cmd_sn++, S.exp_stat_sn, cdb, 6);
	pdu_send(S.fd, bhs, NULL, 0);
	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(p.bhs[0], 0x25); /* Data-In with status */
	ck_assert_uint_ge(p.data_len, 4 + 12);
	memcpy(param + 4, p.data + 4, 12);
	S.exp_stat_sn = get_be32(p.bhs + 24) + 1;
	pdu_free(&p);
	param[4] &= 0x3f;   /* PS is reserved in MODE SELECT */
	param[4 + 2] |= 0x04; /* D_SENSE */
	memset(cdb, 0, sizeof(cdb));
	cdb[0] = 0x15;
	cdb[1] = 0x10; /* PF */
	cdb[4] = sizeof(param);
	bhs_scsi_cmd(bhs, 0xa1, 0x71, sizeof(param), S.cmd_sn++, S.exp_stat_sn, cdb, 6);
	pdu_send(S.fd, bhs, param, sizeof(param));
	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(p.bhs[0], 0x21);
	ck_assert_uint_eq(p.bhs[3], 0x00); /* GOOD */
	S.exp_stat_sn = get_be32(p.bhs + 24) + 1;
	pdu_free(&p);

	cdb_rw10(cdb, 0x2a, 30, 2);
	bhs_scsi_cmd(bhs, 0xa1, 0x72, 1024, S.cmd_sn++, S.exp_stat_sn, cdb, 10);
	pdu_send(S.fd, bhs, NULL, 0);
	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(p.bhs[0], 0x31);
	ttt = get_be32(p.bhs + 20);
	pdu_free(&p);
	data_out(0x72, ttt, 27, 0, true, data, 1024);
	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(p.bhs[0], 0x3f); /* the Reject */
	pdu_free(&p);
	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(p.bhs[0], 0x21);
	ck_assert_uint_eq(get_be32(p.bhs + 16), 0x72);
	ck_assert_uint_eq(p.bhs[3], 0x02);
	ck_assert_uint_eq(p.data[2 + 0], 0x72);        /* descriptor format, current */
	ck_assert_uint_eq(p.data[2 + 1] & 0x0f, 0x0b); /* ABORTED COMMAND */
	ck_assert_uint_eq(p.data[2 + 2], 0x4b);        /* DATA PHASE ERROR */
	ck_assert_uint_eq(p.data[2 + 3], 0x00);
	S.exp_stat_sn = get_be32(p.bhs + 24) + 1;
	pdu_free(&p);
}
END_TEST

/* Extended CDB AHS (RFC 7143 11.3.5): a 32-byte CDB arrives whole (here an unsupported one: CHECK CONDITION). */
START_TEST(extended_cdb_ahs)
{
	uint8_t bhs[48 + 20], cdb[32];
	struct pdu p;

	session_open(&S, NULL);
	memset(cdb, 0, sizeof(cdb));
	cdb[0] = 0x7f;
	cdb[7] = 0x18;
	bhs_scsi_cmd(bhs, 0x81, 0x70, 0, S.cmd_sn++, S.exp_stat_sn, cdb, 16);
	bhs[4] = 5; /* TotalAHSLength: 20 bytes */
	memset(bhs + 48, 0, 20);
	put_be16(bhs + 48, 17); /* AHSLength: reserved byte + 16 CDB bytes */
	bhs[50] = 1;            /* Extended CDB */
	memcpy(bhs + 52, cdb + 16, 16);
	{
		/* send BHS + AHS as one header */
		pdu_send_raw(S.fd, bhs, sizeof(bhs));
	}
	ck_assert(pdu_recv(S.fd, &p, 5000));
	ck_assert_uint_eq(p.bhs[0], 0x21);
	ck_assert_uint_eq(get_be32(p.bhs + 16), 0x70);
	ck_assert_uint_eq(p.bhs[3], 0x02);
	pdu_free(&p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("iscsi_data");
	TCase *tc = tcase_create("data");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, read_data_in_segments_and_residual);
	tcase_add_test(tc, read_out_of_range_sense);
	tcase_add_test(tc, write_datasn_error_honours_d_sense);
	tcase_add_test(tc, write_r2t_sequences);
	tcase_add_test(tc, write_immediate_unsolicited_then_r2t);
	tcase_add_test(tc, write_datasn_error);
	tcase_add_test(tc, write_data_out_in_place);
	tcase_add_test(tc, write_immediate_data_in_place);
	tcase_add_test(tc, extended_cdb_ahs);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
