/*
 * The copy manager (SPC-4, third-party copy): what EXTENDED COPY (extended_copy.c) and
 * RECEIVE COPY RESULTS with the Third-party Copy VPD page
 * (receive_copy_results.c) share: the descriptors taken and the limits
 * OPERATING PARAMETERS reports, which the checks enforce.
 */
#ifndef SBCEMU_COPY_H
#define SBCEMU_COPY_H

#ifndef SBCE_BUILDING_SCSI
#error "sbcemu layering: copy.h is internal to the SCSI core (protocol/scsi/): use its public headers"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XCOPY_HEADER_LEN 16      /* EXTENDED COPY(LID1)'s parameter list header */
#define XCOPY_LID4_HEADER_LEN 48 /* EXTENDED COPY(LID4)'s */
#define XCOPY_LID4_LIST_FORMAT 0x01
#define XCOPY_CSCD_LEN 32
#define XCOPY_B2B_LEN 28
#define XCOPY_CSCD_ID 0xe4    /* identification CSCD descriptor */
#define XCOPY_SEG_B2B 0x02    /* block device to block device */
#define XCOPY_LIST_ID_USAGE_NONE 0x3 /* LIST ID USAGE 11b: no list identifier, nothing held */
#define XCOPY_MAX_CSCD 2
#define XCOPY_MAX_SEGMENTS 16
#define XCOPY_MAX_LIST_LENGTH 1024  /* CSCD and segment descriptor bytes together */
#define XCOPY_MAX_SEGMENT_BYTES (256u << 20) /* 65535 blocks of 4096 bytes (the largest block) fit */
/* COPY STATUS counts a list's bytes in 32 bits (receive_copy_results.c). */
_Static_assert((uint64_t)XCOPY_MAX_SEGMENTS * 65535u * 4096u <= UINT32_MAX, "a list's bytes fit TRANSFER COUNT");

#define COPY_PIECE SCSI_COPY_PIECE /* bytes read and written at once, one worker job (counted: OP_PIECE_BUFFER) */

/* THIRD-PARTY COPY OUT (83h) service actions: EXTENDED COPY (SPC-4), token-based copy (SBC-4). */
#define COPY_SA_EXTENDED_COPY_LID1 0x00
#define COPY_SA_EXTENDED_COPY_LID4 0x01
#define COPY_SA_POPULATE_TOKEN 0x10
#define COPY_SA_WRITE_USING_TOKEN 0x11
#define COPY_SA_COPY_OPERATION_ABORT 0x1c

/* ROD tokens (rod_token.c) and what the Third-party Copy VPD page says of them. */
#define ROD_TOKEN_LEN 512
#define ROD_TYPE_PIT_DEFAULT 0x00800000u           /* point in time, default */
#define ROD_TYPE_PIT_CHANGE_VULNERABLE 0x00800001u /* point in time, change vulnerable: the type made */
#define ROD_TYPE_BLOCK_ZERO 0xffff0001u            /* the block device zero ROD token */
#define ROD_MAX_RANGES 64
#define ROD_DEFAULT_TIMEOUT_S 60
#define ROD_MAX_TIMEOUT_S 600

/* RECEIVE COPY RESULTS service actions (SPC-4 table 117). */
#define RCR_COPY_STATUS 0x00
#define RCR_OPERATING_PARAMETERS 0x03
#define RCR_FAILED_SEGMENT_DETAILS 0x04
#define RCR_COPY_STATUS_LID4 0x05
#define RCR_ROD_TOKEN_INFORMATION 0x07

/*
 * The results this nexus holds on cmd's LU for list list_id
 * (receive_copy_results.c): an EXTENDED COPY's (lid1_only: an EXTENDED
 * COPY(LID1)'s), a token-based copy's; NULL when there is none.
 */
struct scsi_cmd;
struct scsi_copy_status *copy_status_held(const struct scsi_cmd *cmd, uint32_t list_id, bool lid1_only);
struct scsi_rod_list *rod_list_held(const struct scsi_cmd *cmd, uint32_t list_id);

/* The Third-party Copy VPD page's descriptors (spc_vpd.c builds the page), at b; returns their bytes. */
size_t copy_manager_vpd(uint8_t *b);

struct scsi_cmd;
struct scsi_lu;
struct zbc_unwritten;

/*
 * A piece of a copy (copy_piece.c): n blocks of dst_lu written at dst, from
 * the same bytes at src of src_lu (src_n of its blocks; COPY_ZEROS: zeros),
 * each LU cmd's own or another of its device; on a zoned source, the blocks
 * that read as zeros.
 */
#define COPY_ZEROS UINT64_MAX
struct copy_piece {
	struct scsi_lu *src_lu, *dst_lu;
	uint64_t src, dst;
	uint32_t n;                      /* destination blocks; 0: no piece begun */
	uint32_t src_n;                  /* source blocks: n of them when both LUs have one block length */
	struct zbc_unwritten *unwritten; /* NULL: none (or not a zoned LU) */
};
/*
 * Loop thread, before a piece of n destination blocks (whole blocks of the
 * source too): the checks of a READ of its source and a
 * WRITE of its destination (medium-error rules; on a zoned LU the zone
 * rules, with the write pointer advance).  SCSI_OK with *p set, or
 * SCSI_FAILED with the sense (COPY ABORTED) in cmd.
 */
enum scsi_result copy_piece_begin(struct scsi_cmd *cmd, struct copy_piece *p, struct scsi_lu *src_lu, uint64_t src,
				  struct scsi_lu *dst_lu, uint64_t dst, uint32_t n);
/* Loop thread, after the piece landed: its advance kept, the bad blocks it wrote repaired; *p emptied. */
void copy_piece_end(struct scsi_cmd *cmd, struct copy_piece *p);
/* Empties *p without ending it (a command that failed: its completion rolls the advance back). */
void copy_piece_free(struct copy_piece *p);

/*
 * Worker: the blocks of piece p (at most COPY_PIECE bytes) read and
 * written, flags the backend's write flags.  0, or nonzero with the
 * failure in cmd (extended_copy.c).
 */
int copy_blocks(struct scsi_cmd *cmd, const struct copy_piece *p, unsigned flags);

#endif
