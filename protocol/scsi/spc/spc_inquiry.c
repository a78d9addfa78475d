/*
 * INQUIRY (SPC-4 6.6): the standard INQUIRY data here, the vital product
 * data pages in spc_vpd.c.
 *
 * CDB: byte 1 bit 0 EVPD (CMDDT, bit 1, is obsolete and refused by the
 * opcode table's CDB USAGE DATA); byte 2 PAGE CODE; bytes 3-4 ALLOCATION
 * LENGTH (16 bits since SPC-3).  An ALLOCATION LENGTH of zero is not an error:
 * no data is transferred (SPC-4 4.2.5.6).
 *
 * INQUIRY runs for a LUN without a logical unit (the opcode row has
 * OP_NO_LU_OK): the data then says PERIPHERAL QUALIFIER 011b, PERIPHERAL
 * DEVICE TYPE 1Fh, which is how SAM-5 hosts learn the LUN is empty.
 */
#include <string.h>

#include "sbc/sbc_pi.h"
#include "spc/spc.h"

/* Standard INQUIRY data with version descriptors: bytes 0-95 (SPC-4 table 142). */
#define STD_INQUIRY_LEN 96

void spc_put_ascii(uint8_t *dst, const char *src, size_t len)
{
	size_t n = src ? strnlen(src, len) : 0;

	memset(dst, ' ', len);
	for (size_t i = 0; i < n; i++) {
		/* SPC-4 4.4.1: only 20h-7Eh in ASCII fields. */
		uint8_t c = (uint8_t)src[i];
		dst[i] = c >= 0x20 && c <= 0x7e ? c : ' ';
	}
}

uint64_t spc_lu_hash(const struct scsi_lu *lu)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a offset basis */
	const char *name = lu->dev->name;

	for (; *name; name++) {
		h ^= (uint8_t)*name;
		h *= 0x100000001b3ull;
	}
	for (int i = 0; i < 4; i++) {
		h ^= (uint8_t)(lu->lun >> (8 * i));
		h *= 0x100000001b3ull;
	}
	return h;
}

/* The LU whose identification a LUN without an LU borrows (LUN 0, or the first one), or NULL. */
static const struct scsi_lu *any_lu(const struct scsi_device *dev)
{
	const struct scsi_lu *first = scsi_device_lu(dev, 0);

	if (first)
		return first;
	SCSI_DEVICE_FOREACH_LU(dev, lu)
		if (!first || lu->lun < first->lun)
			first = lu;
	return first;
}

/*
 * The VERSION DESCRIPTORS (SPC-4 6.6.2, standard INQUIRY data: at most eight): the
 * architecture model, the transport protocol the command came through (as
 * its transport claims it: iSCSI 0960h; none for a transport that cannot
 * tell, such as TCMU behind whichever LIO fabric), the command sets, and
 * ZBC for zoned LUs.  SBC-3 is claimed beside SBC-4: everything SBC-3
 * requires is here, and libiscsi decides from it that the 64-byte Block
 * Limits page and READ CAPACITY(16) are in order.  Returns how many.
 */
static unsigned version_descriptors(const struct scsi_lu *lu, const struct scsi_transport_ops *transport,
				    uint16_t v[8])
{
	unsigned n = 0;

	v[n++] = SPC_VERSION_SAM_5;
	if (transport->version_descriptor)
		v[n++] = transport->version_descriptor;
	v[n++] = lu && lu->params.cdl_pages != SCSI_CDL_NONE ? SPC_VERSION_SPC_5 : SPC_VERSION_SPC_4;
	v[n++] = SPC_VERSION_SBC_3;
	v[n++] = SPC_VERSION_SBC_4;
	if (lu && (lu->kind == SCSI_LU_ZBC_HM || lu->kind == SCSI_LU_ZBC_HA))
		v[n++] = SPC_VERSION_ZBC;
	return n;
}

static void put_standard_inquiry(uint8_t *b, const struct scsi_cmd *cmd)
{
	const struct scsi_lu *lu = cmd->lu;
	const struct scsi_lu *id = lu ? lu : any_lu(cmd->nexus->dev);
	uint16_t versions[8];
	unsigned nversions = version_descriptors(lu, cmd->transport, versions);

	b[0] = spc_peripheral_byte(lu);
	/* SAM-5 4.7.4: the REPORT LUNS well-known LU is PERIPHERAL DEVICE TYPE 1Eh (well known logical unit). */
	if (!lu && cmd->lun == 0xc101000000000000ull)
		b[0] = 0x1e;
	/*
	 * RMB: the medium is removable (SBC-4 PREVENT ALLOW MEDIUM REMOVAL, START
	 * STOP UNIT LOEJ); LU_CONG (bit 6, SPC-5): the LU is in a conglomerate,
	 * and LUNs are read as administrative / subsidiary elements.
	 */
	b[1] = (lu && lu->params.removable ? 0x80 : 0x00) |
	       (lu && (lu->kind == SCSI_LU_ADMIN || (lu->lun >> 16)) ? 0x40 : 0x00);
	b[2] = lu && lu->params.cdl_pages != SCSI_CDL_NONE ? SPC_INQUIRY_VERSION_SPC_5 : SPC_INQUIRY_VERSION;
	/*
	 * NORMACA = 0 (ACA not supported), HISUP = 1 (hierarchical LUNs), RESPONSE
	 * DATA FORMAT = 2.  AERC (bit 7) and TRMTSK (bit 6) are obsolete: zero.
	 */
	b[3] = 0x10 | 0x02;
	b[4] = STD_INQUIRY_LEN - 5; /* ADDITIONAL LENGTH */
	/*
	 * SCCS 0, ACC 0, TPGS (spc_alua.c), 3PC: the LU's copy manager takes
	 * EXTENDED COPY (copy/extended_copy.c), PROTECT: the LU supports protection information.
	 */
	b[5] = (uint8_t)((lu ? (lu->params.alua_tpgs & 0x3) << 4 : 0) | (copy_manager_enabled(lu) ? 0x08 : 0x00) |
			 (lu && sbc_lu_pi_capable(lu) ? 0x01 : 0x00));
	b[6] = 0x00;
	/* CMDQUE = 1: the task set accepts SIMPLE, ORDERED and HEAD OF QUEUE (SAM-5 8.6). */
	b[7] = 0x02;
	spc_put_ascii(b + 8, id ? id->params.vendor : NULL, 8);
	spc_put_ascii(b + 16, id ? id->params.product : NULL, 16);
	spc_put_ascii(b + 32, id ? id->params.revision : NULL, 4);
	/* VERSION DESCRIPTORS: bytes 58-73. */
	for (unsigned i = 0; i < nversions; i++)
		put_be16(b + 58 + 2 * i, versions[i]);
}

enum scsi_result spc_inquiry_exec(struct scsi_cmd *cmd)
{
	const uint8_t *cdb = cmd->cdb;
	bool evpd = cdb[1] & 0x01;
	uint8_t page_code = cdb[2];
	uint8_t *b;

	cmd->allocation_length = get_be16(cdb + 3);
	if (evpd)
		return spc_inquiry_vpd(cmd, cmd->lu, page_code);
	/* SPC-4 6.6.1: EVPD = 0 with a non-zero PAGE CODE -> INVALID FIELD IN CDB on the PAGE CODE. */
	if (page_code != 0)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(2, -1));
	b = scsi_cmd_alloc_data_in(cmd, STD_INQUIRY_LEN);
	if (!b)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	put_standard_inquiry(b, cmd);
	scsi_cmd_limit_data_in(cmd, cmd->allocation_length);
	return SCSI_OK;
}
