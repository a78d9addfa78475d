/*
 * fuzz_scsi_cdb: the SCSI core (protocol/scsi/) as a transport drives it.
 *
 * Feeds: CDBs and their Data-Out parameter lists through scsi_cmd_submit()
 * on a fresh device with one memory-backed LU (tests/fuzz/common/fuzz_lu.c)
 * and the inline executor, so every parser the opcode table reaches runs:
 * the CDB parsers, and the parameter-list parsers of MODE SELECT, UNMAP,
 * PERSISTENT RESERVE OUT (with TransportIDs, through the iSCSI codec),
 * WRITE SCATTERED (streamed too), COMPARE AND WRITE, SANITIZE, FORMAT UNIT,
 * WRITE ATOMIC, the ZBC OUT service actions, ...
 *
 * Input:
 *   byte 0       bits 0-2: the LU variant (enum fuzz_lu_variant: conventional,
 *                4K behind the write cache, zbc-hm, zbc-ha, PI type 1/2/3, zbc-zd);
 *                bit 3: odd commands come from a second I_T nexus (whose
 *                transport carries 96 bytes of sense, as TCMU does);
 *                bit 4: the transport gives Data-In buffers in pieces (alloc_data_in);
 *                bit 5: Data-Out is handed over in pieces;
 *                bit 6: each command's Data-Out is held until the next command
 *                was submitted (two commands in the task set at once);
 *                bit 7: task attributes SIMPLE, ORDERED, HEAD OF QUEUE in turn
 *   then up to 8 commands separated by "#NEXT#", each one the CDB (6 to 32
 *   bytes, its length from the operation code group, SPC-4 4.2.5.1; 7Fh:
 *   8 + ADDITIONAL CDB LENGTH) followed by its Data-Out parameter list.  The
 *   expected data transfer length is the parameter list's length (64 KiB of
 *   Data-In when there is none).  A command whose first byte is FFh (a
 *   vendor-specific operation code the core does not serve) is the harness's
 *   task management function instead: byte 1 the function (enum
 *   scsi_tmf_function), byte 2 the held command an ABORT TASK names.
 *
 * Checks beyond the sanitizers: the sense data fits the transport (SPC-4
 * 4.4: never more than the transport can carry), CHECK CONDITION comes with
 * sense data, and the Data-In never exceeds the expected transfer length.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_lu.h"
#include "core/scsi_internal.h"

#define MAX_CMDS 8
#define SEPARATOR "#NEXT#"
#define DATA_IN_DEFAULT 65536
#define PIECES 3

/* protocol/iscsi/transport_id.c: the TransportID codec the daemon's iSCSI nexuses use (SPC-4 7.6.4.6). */
size_t iscsi_transport_id_encode(const char *initiator_port_name, uint8_t *tid, size_t cap);
bool iscsi_transport_id_decode(const uint8_t *tid, size_t len, char *initiator_port_name, size_t cap);

struct fuzz_task {
	struct scsi_cmd cmd;          /* first: the core's callbacks get &cmd */
	const uint8_t *param;         /* the Data-Out parameter list (in the input) */
	uint32_t param_len;
	bool split_out;
	bool split_in;
	bool hold;                    /* need_data_out came while holding: deliver later */
	bool want_pending;
	bool alive;                   /* between submit and complete/aborted */
	struct iovec out_iov[PIECES];
	uint8_t *out_piece[PIECES];
	struct iovec in_iov[PIECES];
	uint8_t *in_piece[PIECES];
	uint32_t max_sense;
};

static bool holding;
static bool verbose; /* FUZZ_VERBOSE=1: one line per command, for checking seeds */

static void free_out_pieces(struct fuzz_task *t)
{
	for (int i = 0; i < PIECES; i++) {
		free(t->out_piece[i]);
		t->out_piece[i] = NULL;
	}
}

static void free_in_pieces(struct fuzz_task *t)
{
	for (int i = 0; i < PIECES; i++) {
		free(t->in_piece[i]);
		t->in_piece[i] = NULL;
	}
}

/* Hands the core the Data-Out it asked for: what the input has of it, in one piece or several. */
static void deliver_data_out(struct fuzz_task *t)
{
	struct scsi_cmd *cmd = &t->cmd;
	uint32_t want = scsi_cmd_data_out_want(cmd), off = cmd->data_out_offset, n = 0;

	t->want_pending = false;
	if (off < t->param_len)
		n = t->param_len - off < want ? t->param_len - off : want;
	free_out_pieces(t);
	if (!t->split_out || n < PIECES) {
		t->out_iov[0] = (struct iovec){ .iov_base = (void *)(t->param + off), .iov_len = n };
		scsi_cmd_set_data_out(cmd, t->out_iov, 1, n);
	} else {
		/* Three separately allocated pieces, so that a read past one is caught. */
		uint32_t cut[PIECES + 1] = { 0, n / 3, n / 3 + 1, n };

		for (int i = 0; i < PIECES; i++) {
			uint32_t len = cut[i + 1] - cut[i];

			t->out_piece[i] = malloc(len ? len : 1);
			if (!t->out_piece[i])
				abort();
			memcpy(t->out_piece[i], t->param + off + cut[i], len);
			t->out_iov[i] = (struct iovec){ .iov_base = t->out_piece[i], .iov_len = len };
		}
		scsi_cmd_set_data_out(cmd, t->out_iov, PIECES, n);
	}
	scsi_cmd_data_out_ready(cmd);
}

static void t_need_data_out(struct scsi_cmd *cmd)
{
	struct fuzz_task *t = (struct fuzz_task *)cmd;

	if (t->hold) {
		t->want_pending = true;
		return;
	}
	deliver_data_out(t);
}

static int t_alloc_data_in(struct scsi_cmd *cmd, uint32_t len, struct scsi_sgl *sgl)
{
	struct fuzz_task *t = (struct fuzz_task *)cmd;
	uint32_t cut[PIECES + 1] = { 0, len / 2, len / 2 + (len >= 14 ? 7 : 0), len }; /* ascending for any len */

	if (!t->split_in || len > 16u << 20)
		return -1;
	free_in_pieces(t);
	for (int i = 0; i < PIECES; i++) {
		uint32_t n = cut[i + 1] - cut[i];

		t->in_piece[i] = malloc(n ? n : 1);
		if (!t->in_piece[i])
			abort();
		t->in_iov[i] = (struct iovec){ .iov_base = t->in_piece[i], .iov_len = n };
	}
	*sgl = (struct scsi_sgl){ .iov = t->in_iov, .iovcnt = PIECES };
	return 0;
}

/* Reads every byte the core says it returns, so a short buffer is caught where it is read. */
static uint8_t touch(const uint8_t *p, size_t len)
{
	uint8_t x = 0;

	for (size_t i = 0; i < len; i++)
		x ^= p[i];
	return x;
}

static void t_complete(struct scsi_cmd *cmd)
{
	struct fuzz_task *t = (struct fuzz_task *)cmd;
	volatile uint8_t sink = 0;

	if (cmd->sense_len > t->max_sense || (cmd->status == SCSI_STATUS_CHECK_CONDITION && cmd->sense_len == 0) ||
	    cmd->data_in_len > cmd->expected_length) {
		fprintf(stderr, "fuzz_scsi_cdb: CDB %02x: status %02x, %u bytes of sense (max %u), %u of Data-In "
			"(expected %u)\n", cmd->cdb[0], cmd->status, cmd->sense_len, t->max_sense, cmd->data_in_len,
			cmd->expected_length);
		abort();
	}
	if (verbose)
		fprintf(stderr, "cmd %llu: CDB %02x/%02x: status %02x sense %02x/%02x%02x, %u bytes in\n",
			(unsigned long long)cmd->tag, cmd->cdb[0], cmd->cdb[1], cmd->status,
			cmd->sense_len > 13 ? cmd->sense[2] & 0x0f : 0, cmd->sense_len > 13 ? cmd->sense[12] : 0,
			cmd->sense_len > 13 ? cmd->sense[13] : 0, cmd->data_in_len);
	sink ^= touch(cmd->sense, cmd->sense_len);
	if (cmd->data_in && cmd->data_in_len)
		sink ^= touch(cmd->data_in, cmd->data_in_len);
	for (unsigned i = 0; i < cmd->data_in_sgl.iovcnt; i++)
		sink ^= touch(cmd->data_in_sgl.iov[i].iov_base, cmd->data_in_sgl.iov[i].iov_len);
	(void)sink;
	t->alive = false;
	scsi_cmd_release(cmd);
	free_out_pieces(t);
	free_in_pieces(t);
}

static void t_aborted(struct scsi_cmd *cmd)
{
	struct fuzz_task *t = (struct fuzz_task *)cmd;

	if (verbose)
		fprintf(stderr, "cmd %llu: CDB %02x: aborted\n", (unsigned long long)cmd->tag, cmd->cdb[0]);
	t->alive = false;
	t->want_pending = false;
	scsi_cmd_release(cmd);
	free_out_pieces(t);
	free_in_pieces(t);
}

static const struct scsi_transport_ops transport_iscsi = {
	.need_data_out = t_need_data_out,
	.alloc_data_in = t_alloc_data_in,
	.complete = t_complete,
	.aborted = t_aborted,
	.max_sense_len = SCSI_SENSE_BUFFER_MAX,
	.protocol_identifier = 0x5,
	.transport_id_encode = iscsi_transport_id_encode,
	.transport_id_decode = iscsi_transport_id_decode,
};

/* A second transport as TCMU is: 96 bytes of sense, no TransportIDs. */
static const struct scsi_transport_ops transport_short_sense = {
	.need_data_out = t_need_data_out,
	.alloc_data_in = t_alloc_data_in,
	.complete = t_complete,
	.aborted = t_aborted,
	.max_sense_len = 96,
	.protocol_identifier = 0xf,
};

static void tmf_done(void *arg, enum scsi_tmf_response response)
{
	(void)arg;
	(void)response;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fuzz_task tasks[MAX_CMDS];
	struct scsi_nexus *nexus[2];
	struct scsi_device *dev;
	const uint8_t *p, *end;
	uint8_t flags;
	int ncmds = 0;

	if (size < 2)
		return 0;
	verbose = getenv("FUZZ_VERBOSE") != NULL;
	flags = data[0];
	dev = scsi_device_create("iqn.2026-12.org.sbcemu:fuzz", &scsi_executor_inline, NULL);
	fuzz_lu_create(dev, fuzz_lu_variant(flags & 7), 0);
	nexus[0] = scsi_nexus_create(dev, &transport_iscsi, "iqn.2026-12.org.sbcemu:i0,i,0x800000000001",
				     "iqn.2026-12.org.sbcemu:fuzz,t,0x0001", 1);
	nexus[1] = scsi_nexus_create(dev, &transport_short_sense, "iqn.2026-12.org.sbcemu:i1,i,0x800000000002",
				     "iqn.2026-12.org.sbcemu:fuzz,t,0x0001", 1);
	if (!nexus[0] || !nexus[1])
		abort();
	/* SAM-5 5.14: the POWER ON unit attention would answer the first command; start past it. */
	for (int n = 0; n < 2; n++) {
		struct scsi_itl *itl = scsi_itl_get(nexus[n], 0);

		if (itl)
			itl->ua_pending = 0;
	}

	memset(tasks, 0, sizeof(tasks));
	holding = flags & 0x40;
	p = data + 1;
	end = data + size;
	while (p < end && ncmds < MAX_CMDS) {
		const uint8_t *next = memmem(p, (size_t)(end - p), SEPARATOR, sizeof(SEPARATOR) - 1);
		const uint8_t *piece_end = next ? next : end;
		size_t avail = (size_t)(piece_end - p), clen;
		struct fuzz_task *t = &tasks[ncmds];
		int which = (flags & 0x08) ? ncmds & 1 : 0;

		if (avail > 0 && p[0] == 0xff) {
			/* The harness's task management function. */
			enum scsi_tmf_function fn = (enum scsi_tmf_function)((avail > 1 ? p[1] : 0) % 7);
			struct fuzz_task *ref = avail > 2 ? &tasks[p[2] % MAX_CMDS] : NULL;

			scsi_tmf(nexus[which], scsi_lun_encode(0), fn, ref && ref->alive ? &ref->cmd : NULL, tmf_done,
				 NULL);
		} else if (avail > 0) {
			clen = scsi_cdb_length(p, avail);
			scsi_cmd_init(&t->cmd, which ? &transport_short_sense : &transport_iscsi, nexus[which]);
			memcpy(t->cmd.cdb, p, clen);
			/* A transport hands over at least 16 bytes (an iSCSI BHS carries 16, TCMU the whole CDB). */
			t->cmd.cdb_len = (uint8_t)(clen < 16 ? 16 : clen);
			t->cmd.lun = scsi_lun_encode(0);
			t->cmd.tag = (uint64_t)ncmds;
			t->cmd.task_attr = (flags & 0x80) ? (enum scsi_task_attr)(ncmds % 3) : SCSI_TASK_SIMPLE;
			t->param = p + clen;
			t->param_len = (uint32_t)(avail - clen);
			t->split_out = flags & 0x20;
			t->split_in = flags & 0x10;
			t->hold = holding;
			t->max_sense = which ? 96 : SCSI_SENSE_BUFFER_MAX;
			t->alive = true;
			if (t->param_len) {
				t->cmd.dir = SCSI_DIR_TO_DEVICE;
				t->cmd.expected_length = t->param_len;
			} else {
				t->cmd.dir = SCSI_DIR_FROM_DEVICE;
				t->cmd.expected_length = DATA_IN_DEFAULT;
			}
			scsi_cmd_submit(&t->cmd);
			/* The previous command's held Data-Out goes now that this one is in the task set. */
			for (int i = 0; i < ncmds; i++)
				if (tasks[i].alive && tasks[i].want_pending) {
					tasks[i].hold = false;
					deliver_data_out(&tasks[i]);
				}
		}
		ncmds++;
		p = next ? next + sizeof(SEPARATOR) - 1 : end;
	}
	/* What still waits for its Data-Out gets it now (a streamed command may ask again). */
	for (int round = 0; round < 64; round++) {
		bool any = false;

		for (int i = 0; i < ncmds; i++) {
			if (tasks[i].alive && tasks[i].want_pending) {
				tasks[i].hold = false;
				deliver_data_out(&tasks[i]);
				any = true;
			}
		}
		if (!any)
			break;
	}
	for (int i = 0; i < ncmds; i++)
		tasks[i].hold = false;
	scsi_nexus_destroy(nexus[0]);
	scsi_nexus_destroy(nexus[1]);
	scsi_device_destroy(dev);
	fuzz_state_reset();
	return 0;
}
