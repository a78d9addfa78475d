/*
 * Vital product data pages (INQUIRY with EVPD = 1; SPC-4 7.8, SBC-4 6.6).
 *
 * One table lists the pages, each with the predicate that says whether the
 * LU serves it; the Supported VPD Pages page (00h) is built from the same
 * table, so it always lists exactly the pages served, in ascending order.
 * A page code not in the list is INVALID FIELD IN CDB on the PAGE CODE
 * (byte 2).
 *
 * Every page starts with the peripheral byte, the PAGE CODE and a 16-bit
 * PAGE LENGTH (bytes that follow byte 3).  The fields reported here must
 * agree with what the handlers do: Block Limits (B0h) with the limits the
 * SBC handlers enforce (params.*), Logical Block Provisioning (B2h) with
 * READ CAPACITY(16) LBPME/LBPRZ and UNMAP / WRITE SAME (UNMAP bit).
 */
#include <stdio.h>
#include <string.h>

#include "sbc/sbc_pi.h"
#include "copy/copy.h"
#include "spc/spc.h"
#include "zbc/zbc.h"

/* Weak until the zone engine (zbc_*.c) is linked into every build of the core. */

#define VPD_MAX_LEN 1024

/* SPC-4 7.8.6.1: CODE SET, ASSOCIATION and DESIGNATOR TYPE values. */
#define CODE_SET_BINARY 0x1
#define CODE_SET_ASCII 0x2
#define CODE_SET_UTF8 0x3
#define ASSOC_LU 0x0
#define ASSOC_TARGET_PORT 0x1
#define ASSOC_TARGET_DEVICE 0x2
#define DESIG_T10_VENDOR_ID 0x1
#define DESIG_NAA 0x3
#define DESIG_RELATIVE_TARGET_PORT 0x4
#define DESIG_TARGET_PORT_GROUP 0x5
#define DESIG_SCSI_NAME_STRING 0x8


struct vpd_page {
	uint8_t code;
	bool (*present)(const struct scsi_lu *lu);
	/* Writes the page from byte 4 on; returns the PAGE LENGTH. */
	size_t (*build)(const struct scsi_cmd *cmd, const struct scsi_lu *lu, uint8_t *b);
};

static bool always(const struct scsi_lu *lu)
{
	(void)lu;
	return true;
}

static bool is_zoned(const struct scsi_lu *lu)
{
	return zbc_lu_is_zoned(lu);
}

static size_t build_supported(const struct scsi_cmd *cmd, const struct scsi_lu *lu, uint8_t *b);

/* ---- 80h Unit Serial Number (SPC-4 7.8.15) ---- */

/* PRODUCT SERIAL NUMBER: the configured one, or 16 hex digits derived from the device name and LUN. */
static size_t serial_number(const struct scsi_lu *lu, char *out, size_t cap)
{
	size_t n = strnlen(lu->params.serial, sizeof(lu->params.serial));

	if (n > 0 && n < cap) {
		memcpy(out, lu->params.serial, n);
		out[n] = '\0';
		return n;
	}
	return (size_t)snprintf(out, cap, "%016llX", (unsigned long long)spc_lu_hash(lu));
}

static size_t build_serial(const struct scsi_cmd *cmd, const struct scsi_lu *lu, uint8_t *b)
{
	char serial[40];
	size_t n = serial_number(lu, serial, sizeof(serial));

	(void)cmd;
	spc_put_ascii(b + 4, serial, n);
	return n;
}

/* ---- 83h Device Identification (SPC-4 7.8.6) ---- */

/*
 * Appends one designation descriptor.  PIV and the PROTOCOL IDENTIFIER (of
 * the transport the command came through, SPC-4 7.6.1) are meaningful for
 * target port and device associations only (SPC-4 7.8.6.1).
 */
static size_t put_designator(const struct scsi_cmd *cmd, uint8_t *d, uint8_t code_set, uint8_t association,
			     uint8_t type, const void *id, size_t len)
{
	bool piv = association == ASSOC_TARGET_PORT || association == ASSOC_TARGET_DEVICE;
	uint8_t protocol = cmd->nexus->transport ? cmd->nexus->transport->protocol_identifier : 0;

	d[0] = (uint8_t)((piv ? protocol << 4 : 0) | code_set);
	d[1] = (uint8_t)((piv ? 0x80 : 0) | association << 4 | type);
	d[2] = 0;
	d[3] = (uint8_t)len;
	memcpy(d + 4, id, len);
	return 4 + len;
}

/*
 * A SCSI name string designator (SPC-4 7.8.6.11): UTF-8, null terminated,
 * padded with nulls to a multiple of four bytes.
 */
static size_t put_name_designator(const struct scsi_cmd *cmd, uint8_t *d, uint8_t association, const char *name)
{
	uint8_t id[256] = { 0 };
	size_t n = strnlen(name, 223);

	memcpy(id, name, n);
	return put_designator(cmd, d, CODE_SET_UTF8, association, DESIG_SCSI_NAME_STRING, id, (n + 1 + 3) & ~(size_t)3);
}

/*
 * The logical unit name.  NAA IEEE Registered Extended (NAA 6, 16 bytes)
 * when the configuration gives the registered high half; else NAA Locally
 * Assigned (NAA 3, 8 bytes) from a hash of the device name and LUN, stable
 * across restarts.  Returns its length.
 */
size_t spc_lu_naa(const struct scsi_lu *lu, uint8_t id[16])
{
	uint64_t hash = spc_lu_hash(lu);

	if (lu->params.naa) {
		put_be64(id, (lu->params.naa & 0x0fffffffffffffffull) | 0x6000000000000000ull);
		put_be64(id + 8, hash);
		return 16;
	}
	put_be64(id, (hash & 0x0fffffffffffffffull) | 0x3000000000000000ull);
	return 8;
}

/*
 * A subsidiary LU's tie to its conglomerate (docs/conglomerate.md): a SCSI
 * name string designator of the addressed LU, "naa.<the administrative
 * LU's NAA in hex>,s,<subsidiary element in hex>" (an sbcemu convention:
 * SPC-5 defines no conglomerate designator).
 */
static size_t put_conglomerate_designator(const struct scsi_cmd *cmd, uint8_t *d, const struct scsi_lu *lu)
{
	const struct scsi_lu *admin = scsi_device_lu(lu->dev, lu->lun & 0xffff);
	char name[64] = "naa.";
	uint8_t naa[16];
	size_t n, len;

	if (!admin)
		return 0;
	n = spc_lu_naa(admin, naa);
	for (size_t i = 0; i < n; i++)
		snprintf(name + 4 + 2 * i, 3, "%02X", naa[i]);
	len = strlen(name);
	snprintf(name + len, sizeof(name) - len, ",s,%X", lu->lun >> 16);
	return put_name_designator(cmd, d, ASSOC_LU, name);
}

static size_t build_device_identification(const struct scsi_cmd *cmd, const struct scsi_lu *lu, uint8_t *b)
{
	uint8_t id[64];
	char serial[40];
	size_t off = 4, n;

	n = spc_lu_naa(lu, id);
	off += put_designator(cmd, b + off, CODE_SET_BINARY, ASSOC_LU, DESIG_NAA, id, n);
	if (lu->lun >> 16)
		off += put_conglomerate_designator(cmd, b + off, lu);
	/* T10 vendor ID based (SPC-4 7.8.6.4): T10 VENDOR IDENTIFICATION, then the serial number. */
	n = serial_number(lu, serial, sizeof(serial));
	spc_put_ascii(id, lu->params.vendor, 8);
	memcpy(id + 8, serial, n);
	off += put_designator(cmd, b + off, CODE_SET_ASCII, ASSOC_LU, DESIG_T10_VENDOR_ID, id, 8 + n);
	/* The target port this command came through: its relative identifier, group and name. */
	memset(id, 0, 4);
	put_be16(id + 2, cmd->nexus->relative_target_port);
	off += put_designator(cmd, b + off, CODE_SET_BINARY, ASSOC_TARGET_PORT, DESIG_RELATIVE_TARGET_PORT, id, 4);
	put_be16(id + 2, lu->params.target_port_group); /* spc_alua.c */
	off += put_designator(cmd, b + off, CODE_SET_BINARY, ASSOC_TARGET_PORT, DESIG_TARGET_PORT_GROUP, id, 4);
	if (cmd->nexus->target_port_name[0])
		off += put_name_designator(cmd, b + off, ASSOC_TARGET_PORT, cmd->nexus->target_port_name);
	/* The SCSI target device name: the device's (an iSCSI target's name, a TCMU backstore's). */
	if (lu->dev->name[0])
		off += put_name_designator(cmd, b + off, ASSOC_TARGET_DEVICE, lu->dev->name);
	return off - 4;
}

/* ---- 86h Extended INQUIRY Data (SPC-4 7.8.7) ---- */

static size_t build_extended_inquiry(const struct scsi_cmd *cmd, const struct scsi_lu *lu, uint8_t *b)
{
	(void)cmd;
	/*
	 * byte 4: ACTIVATE MICROCODE 0; an LU with PI support can be formatted
	 * with any type (SPT 111b) and checks every field it may (GRD_CHK,
	 * APP_CHK, REF_CHK: the "may" checks of the PROTECT tables are done).
	 */
	if (lu && sbc_lu_pi_capable(lu))
		b[4] = (7 << 3) | 0x04 | 0x02 | 0x01;
	/*
	 * byte 5: PRIOR_SUP (command priority: SET PRIORITY, INITIAL COMMAND
	 * PRIORITY, spc_priority.c); HEADSUP, ORDSUP, SIMPSUP: every task
	 * attribute but ACA (SAM-5 8.6).
	 */
	b[5] = 0x08 | 0x04 | 0x02 | 0x01;
	/* byte 6: V_SUP: writes may sit in a volatile cache (Caching WCE; SYNCHRONIZE CACHE flushes it). */
	b[6] = 0x01;
	/* byte 7: LUICLR: REPORTED LUNS DATA HAS CHANGED, once reported, is cleared on every LU of the nexus (ua.c). */
	b[7] = 0x01;
	/* byte 8 bits 7:5: LU_COLL_TYPE 001b, the LU is in a conglomerate (SPC-5; sg3_utils sg_vpd_common.c). */
	if (lu && (lu->kind == SCSI_LU_ADMIN || (lu->lun >> 16)))
		b[8] = 0x20;
	return 0x3c;
}

/* ---- B0h Block Limits (SBC-4 6.6.4) ---- */

static size_t build_block_limits(const struct scsi_cmd *cmd, const struct scsi_lu *lu, uint8_t *b)
{
	const struct scsi_lu_params *p = &lu->params;
	uint32_t per_physical = 1u << (p->lbppbe & 0x0f);

	(void)cmd;
	/* byte 4 WSNZ = 0: WRITE SAME with NUMBER OF LOGICAL BLOCKS 0 writes to the end (sbc_write_same.c). */
	b[5] = (uint8_t)(p->max_compare_and_write > 255 ? 255 : p->max_compare_and_write);
	put_be16(b + 6, (uint16_t)per_physical);    /* OPTIMAL TRANSFER LENGTH GRANULARITY */
	put_be32(b + 8, p->max_transfer_length);    /* MAXIMUM TRANSFER LENGTH (0: not reported) */
	put_be32(b + 12, p->optimal_transfer_length);
	/* MAXIMUM PREFETCH LENGTH: 0, no limit reported (bytes 16-19). */
	if (p->thin_provisioning) {
		/* UNMAP limits, only with logical block provisioning (LBPU = 1); 0 in params means no limit. */
		put_be32(b + 20, p->max_unmap_lba_count ? p->max_unmap_lba_count : 0xffffffff);
		put_be32(b + 24, p->max_unmap_descriptors ? p->max_unmap_descriptors : 0xffffffff);
		put_be32(b + 28, per_physical);         /* OPTIMAL UNMAP GRANULARITY */
	}
	put_be64(b + 36, p->max_write_same_length); /* MAXIMUM WRITE SAME LENGTH (0: not reported) */
	/*
	 * Atomic write fields (sbc_write_atomic.c): 0 (not reported, SBC-4
	 * 6.6.4) unless WRITE ATOMIC is supported, which needs a backend that
	 * can keep the promise.
	 */
	if (sbc_write_atomic_enabled(lu)) {
		put_be32(b + 44, p->max_atomic_transfer_length);
		put_be32(b + 48, p->atomic_alignment);
		put_be32(b + 52, p->atomic_transfer_length_granularity);
		put_be32(b + 56, p->max_atomic_transfer_length_with_boundary);
		put_be32(b + 60, p->max_atomic_boundary_size);
	}
	return 0x3c;
}

/* ---- B1h Block Device Characteristics (SBC-4 6.6.2) ---- */

static size_t build_block_device_characteristics(const struct scsi_cmd *cmd, const struct scsi_lu *lu, uint8_t *b)
{
	(void)cmd;
	put_be16(b + 4, 0x0001); /* MEDIUM ROTATION RATE: non-rotating medium */
	b[6] = lu->params.product_type; /* PRODUCT TYPE: 00h not indicated, 05h Secure Digital card, ... */
	/*
	 * byte 7: WABEREQ = WACEREQ = 01b (reads after a block or
	 * cryptographic erase SANITIZE succeed, sbc_sanitize.c); NOMINAL FORM
	 * FACTOR 0h (not reported).
	 */
	b[7] = 0x40 | 0x10;
	/*
	 * byte 8: ZONED = 01b on host-aware LUs (host-managed ones say PDT
	 * 14h instead); FUAB = 1 (FUA writes are durable when GOOD is
	 * returned); VBULS = 1 (VERIFY of unmapped blocks compares zeros).
	 */
	b[8] = (uint8_t)((lu->kind == SCSI_LU_ZBC_HA ? 0x10 : 0x00) | 0x02 | 0x01);
	return 0x3c;
}

/* ---- B2h Logical Block Provisioning (SBC-4 6.6.5) ---- */

static size_t build_logical_block_provisioning(const struct scsi_cmd *cmd, const struct scsi_lu *lu, uint8_t *b)
{
	(void)cmd;
	if (lu->params.thin_provisioning) {
		/* LBPU, LBPWS, LBPWS10; LBPRZ = 001b (unmapped blocks read as zeros); ANC_SUP 0; DP 0. */
		b[5] = 0x80 | 0x40 | 0x20 | 0x04;
		b[6] = 0x02; /* PROVISIONING TYPE: thin provisioned */
	}
	return 4;
}

/* ---- B6h Zoned Block Device Characteristics (ZBC; zbc.h) ---- */

static size_t build_zoned_characteristics(const struct scsi_cmd *cmd, const struct scsi_lu *lu, uint8_t *b)
{
	uint8_t page[ZBC_VPD_B6_LEN];

	(void)cmd;
	memset(page, 0, sizeof(page));
	zbc_vpd_b6(lu, page);
	memcpy(b + 4, page + 4, sizeof(page) - 4);
	return sizeof(page) - 4;
}

/* ---- B7h Block Limits Extension (SBC-4 6.6.5) ---- */

static bool has_write_scattered(const struct scsi_lu *lu)
{
	return lu->params.write_scattered;
}

static size_t build_block_limits_extension(const struct scsi_cmd *cmd, const struct scsi_lu *lu, uint8_t *b)
{
	const struct scsi_lu_params *p = &lu->params;

	(void)cmd;
	/* bytes 5-13: no stream control (RSCS 0, MAXIMUM NUMBER OF STREAMS 0). */
	put_be32(b + 16, p->max_scattered_lba_range_transfer_length);
	put_be16(b + 22, p->max_scattered_lba_range_descriptors);
	put_be32(b + 24, p->max_scattered_transfer_length);
	return 0x1c;
}

/* ---- 8Fh Third-party Copy: the copy manager's descriptors (copy/) ---- */

static size_t build_third_party_copy(const struct scsi_cmd *cmd, const struct scsi_lu *lu, uint8_t *b)
{
	(void)cmd;
	(void)lu;
	return copy_manager_vpd(b + 4);
}

static const struct vpd_page vpd_pages[] = {
	{ VPD_SUPPORTED_VPD_PAGES, always, build_supported },
	{ VPD_UNIT_SERIAL_NUMBER, always, build_serial },
	{ VPD_DEVICE_IDENTIFICATION, always, build_device_identification },
	{ VPD_EXTENDED_INQUIRY_DATA, always, build_extended_inquiry },
	{ VPD_THIRD_PARTY_COPY, copy_manager_enabled, build_third_party_copy },
	{ VPD_BLOCK_LIMITS, always, build_block_limits },
	{ VPD_BLOCK_DEVICE_CHARACTERISTICS, always, build_block_device_characteristics },
	{ VPD_LOGICAL_BLOCK_PROVISIONING, always, build_logical_block_provisioning },
	{ VPD_ZONED_BLOCK_DEVICE_CHARACTERISTICS, is_zoned, build_zoned_characteristics },
	{ VPD_BLOCK_LIMITS_EXTENSION, has_write_scattered, build_block_limits_extension },
};

#define NUM_VPD_PAGES (sizeof(vpd_pages) / sizeof(vpd_pages[0]))

/* Served: the page exists for the LU and its device profile does not take it away (lu_profile.c). */
static bool vpd_present(const struct vpd_page *page, const struct scsi_lu *lu)
{
	return page->present(lu) && !scsi_lu_profile_hides_vpd(lu, page->code);
}

/* 00h Supported VPD Pages (SPC-4 7.8.14): the table above, ascending. */
static size_t build_supported(const struct scsi_cmd *cmd, const struct scsi_lu *lu, uint8_t *b)
{
	size_t n = 0;

	(void)cmd;
	for (size_t i = 0; i < NUM_VPD_PAGES; i++)
		if (vpd_present(&vpd_pages[i], lu))
			b[4 + n++] = vpd_pages[i].code;
	return n;
}

enum scsi_result spc_inquiry_vpd(struct scsi_cmd *cmd, struct scsi_lu *lu, uint8_t page_code)
{
	const struct vpd_page *page = NULL;
	uint8_t *b;
	size_t len;

	/*
	 * A LUN without a logical unit: only the Supported VPD Pages page,
	 * listing itself, with PERIPHERAL QUALIFIER 011b (SPC-4 6.6.2).
	 */
	if (!lu) {
		if (page_code != VPD_SUPPORTED_VPD_PAGES)
			return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(2, -1));
		b = scsi_cmd_alloc_data_in(cmd, 5);
		if (!b)
			return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
		b[0] = spc_peripheral_byte(NULL);
		put_be16(b + 2, 1);
		b[4] = VPD_SUPPORTED_VPD_PAGES;
		scsi_cmd_limit_data_in(cmd, cmd->allocation_length);
		return SCSI_OK;
	}
	for (size_t i = 0; i < NUM_VPD_PAGES; i++)
		if (vpd_pages[i].code == page_code && vpd_present(&vpd_pages[i], lu))
			page = &vpd_pages[i];
	/* SPC-4 6.6.1: a VPD page the device server does not support -> INVALID FIELD IN CDB. */
	if (!page)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(2, -1));
	b = scsi_cmd_alloc_data_in(cmd, VPD_MAX_LEN);
	if (!b)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	b[0] = spc_peripheral_byte(lu);
	b[1] = page_code;
	len = page->build(cmd, lu, b);
	put_be16(b + 2, (uint16_t)len);
	cmd->data_in_len = (uint32_t)(4 + len);
	/* usb-bridge profile: the page stops after 8 bytes, its PAGE LENGTH still the whole page's. */
	if ((lu->params.quirks & SCSI_QUIRK_VPD_TRUNCATED) && cmd->data_in_len > 8)
		cmd->data_in_len = 8;
	scsi_cmd_limit_data_in(cmd, cmd->allocation_length);
	return SCSI_OK;
}
