/*
 * MODE SENSE(6) / MODE SENSE(10) and MODE SELECT(6) / MODE SELECT(10)
 * (SPC-4 6.11-6.14; mode parameter header and block descriptors SPC-4
 * 7.5.4-7.5.6, SBC-4 6.5.1-6.5.2).  The pages themselves are in
 * spc_mode_pages.c.
 *
 * MODE SENSE: PC 00b current, 01b changeable (the mask), 10b default, 11b
 * saved.  PAGE CODE 3Fh returns every page; SUBPAGE CODE FFh adds the
 * subpages.  An unsupported page -> INVALID FIELD IN CDB on the PAGE CODE
 * (byte 2), an unsupported subpage -> on the SUBPAGE CODE (byte 3).  DBD = 0
 * adds one block descriptor: short (8 bytes), or long (16 bytes, LONGLBA = 1)
 * when MODE SENSE(10) has LLBAA = 1.  The device-specific parameter carries
 * WP (write protected by configuration or by the Control page's SWP) and
 * DPOFUA.
 *
 * MODE SELECT: the whole parameter list is checked before anything
 * changes, so a rejected list changes nothing.  Rules (choices marked):
 *   - PARAMETER LIST LENGTH 0: nothing to do, GOOD;
 *   - a list shorter than the header, a block descriptor or a page that it
 *     cuts short -> 05/1A/00 PARAMETER LIST LENGTH ERROR;
 *   - PF = 0 with pages in the list (vendor-specific page format) -> 05/24/00
 *     on PF (choice: only the SPC page format is supported);
 *   - MEDIUM TYPE != 0, a BLOCK DESCRIPTOR LENGTH other than 0 or one
 *     descriptor of the header's kind, a block descriptor that would change
 *     the capacity or the block length, an unknown page, a PAGE LENGTH
 *     other than the page's (but zbd_control_alone), a changed bit that the changeable mask does not
 *     allow, or a value out of range -> 05/26/00 INVALID FIELD IN PARAMETER
 *     LIST with the field pointer (C/D = 0) at the byte and bit;
 *   - the PS bit, reserved in MODE SELECT, and the device-specific
 *     parameter (WP and DPOFUA are reserved for MODE SELECT) are ignored;
 *   - on success, if a current value changed, every other I_T nexus gets
 *     MODE PARAMETERS CHANGED (06/2A/01; SPC-4 7.5.1); SP = 1 then saves
 *     every page (the saved values become the current ones).
 */
#include <string.h>

#include "spc/spc.h"

#define PC_CURRENT 0
#define PC_CHANGEABLE 1
#define PC_DEFAULT 2
#define PC_SAVED 3

#define SUBPAGE_ALL 0xff

static bool write_protected(const struct scsi_lu *lu)
{
	return lu->params.write_protect || lu->mode_current.swp;
}

/* DEVICE-SPECIFIC PARAMETER for direct-access devices (SBC-4 6.5.1): WP bit 7, DPOFUA bit 4. */
static uint8_t device_specific_parameter(const struct scsi_lu *lu)
{
	return (uint8_t)((write_protected(lu) ? 0x80 : 0) | (lu->mode_current.dpofua ? 0x10 : 0));
}

/* Does the MODE SENSE request (page, subpage) select page i of the LU? */
static bool page_selected(const struct scsi_lu *lu, size_t i, uint8_t page, uint8_t subpage)
{
	const struct spc_mode_page_def *d = &spc_mode_pages[i];

	if (!spc_mode_page_present(lu, i))
		return false;
	if (page == MODE_PAGE_ALL)
		return subpage == SUBPAGE_ALL || d->subpage_code == 0;
	return d->page_code == page && (subpage == SUBPAGE_ALL || d->subpage_code == subpage);
}

/* Copies the values of page i that PAGE CONTROL asks for to out. */
static void page_values(const struct scsi_lu *lu, size_t i, int pc, uint8_t *out)
{
	switch (pc) {
	case PC_CURRENT:
		memcpy(out, lu->mode->current[i], spc_mode_pages[i].len);
		break;
	case PC_CHANGEABLE:
		memcpy(out, spc_mode_pages[i].changeable, spc_mode_pages[i].len);
		break;
	case PC_DEFAULT:
		spc_mode_page_defaults(lu, i, out);
		break;
	default:
		memcpy(out, lu->mode->saved[i], spc_mode_pages[i].len);
		break;
	}
}

/* Writes the block descriptor of the LU (SBC-4 6.5.2): short or long LBA form. */
static void put_block_descriptor(uint8_t *b, const struct scsi_lu *lu, bool long_lba, int pc)
{
	if (pc == PC_CHANGEABLE)
		return; /* neither the capacity nor the block length can change through MODE SELECT */
	if (long_lba) {
		put_be64(b, lu->num_blocks);
		put_be32(b + 12, lu->block_size);
	} else {
		put_be32(b, lu->num_blocks > 0xffffffffull ? 0xffffffffu : (uint32_t)lu->num_blocks);
		put_be24(b + 5, lu->block_size);
	}
}

/*
 * The Zoned Block Device Control page as libzbc reads and writes it
 * (lib/zbc_scsi.c zbc_scsi_get_set_mode): MODE SENSE(10) with DBD = 0 and
 * LLBAA = 1, the page read at byte 12 (no block descriptor), and MODE
 * SELECT(10) with the MODE DATA LENGTH it was given as the PAGE LENGTH,
 * zeros past the page.  Asked for alone, the page comes with no block
 * descriptor (SPC-4 MODE SENSE: with DBD = 0 the device server may return zero
 * or more); check_page takes the longer PAGE LENGTH with zeros past ours.
 */
static bool zbd_control_alone(uint8_t page, uint8_t subpage)
{
	return page == MODE_PAGE_CONTROL && subpage == MODE_SUBPAGE_ZONED_BLOCK_DEVICE_CONTROL;
}

enum scsi_result spc_mode_sense_exec(struct scsi_cmd *cmd)
{
	const uint8_t *cdb = cmd->cdb;
	struct scsi_lu *lu = cmd->lu;
	bool ten = cdb[0] == SCSI_OP_MODE_SENSE_10;
	bool dbd = cdb[1] & 0x08;
	bool llbaa = ten && (cdb[1] & 0x10);
	int pc = cdb[2] >> 6;
	uint8_t page = cdb[2] & 0x3f, subpage = cdb[3];
	size_t header_len = ten ? 8 : 4, bd_len = dbd ? 0 : (llbaa ? 16 : 8), total, off;
	bool any = false, page_known = false;
	uint32_t chosen = 0;
	uint8_t *b;

	cmd->allocation_length = ten ? get_be16(cdb + 7) : cdb[4];
	if (zbd_control_alone(page, subpage))
		bd_len = 0;
	if (page == MODE_PAGE_ALL && subpage != 0 && subpage != SUBPAGE_ALL)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(3, -1));
	total = header_len + bd_len;
	for (size_t i = 0; i < spc_mode_pages_len; i++) {
		if (spc_mode_pages[i].page_code == page && spc_mode_page_present(lu, i))
			page_known = true;
		if (page_selected(lu, i, page, subpage)) {
			any = true;
			/* MODE SENSE(6) counts at most 255 bytes: the pages that would not fit are left out. */
			if (ten || total + spc_mode_pages[i].len <= 256) {
				total += spc_mode_pages[i].len;
				chosen |= 1u << i;
			}
		}
	}
	if (!any)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(page_known ? 3 : 2, -1));
	b = scsi_cmd_alloc_data_in(cmd, total);
	if (!b)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	/* Mode parameter header (SPC-4 7.5.4): MODE DATA LENGTH counts the bytes after itself. */
	if (ten) {
		put_be16(b, (uint16_t)(total - 2));
		b[3] = device_specific_parameter(lu);
		b[4] = llbaa && bd_len ? 0x01 : 0x00; /* LONGLBA */
		put_be16(b + 6, (uint16_t)bd_len);
	} else {
		b[0] = (uint8_t)(total - 1);
		b[2] = device_specific_parameter(lu);
		b[3] = (uint8_t)bd_len;
	}
	if (bd_len)
		put_block_descriptor(b + header_len, lu, bd_len == 16, pc);
	off = header_len + bd_len;
	for (size_t i = 0; i < spc_mode_pages_len; i++) {
		const struct spc_mode_page_def *d = &spc_mode_pages[i];
		if (!(chosen & (1u << i)))
			continue;
		page_values(lu, i, pc, b + off);
		/* The header bytes are the page's own whatever PC asks (the changeable mask has none). */
		memcpy(b + off, d->defaults, d->spf ? 4 : 2);
		b[off] |= 0x80; /* PS: every page can be saved */
		off += d->len;
	}
	scsi_cmd_limit_data_in(cmd, cmd->allocation_length);
	return SCSI_OK;
}

/* ---- MODE SELECT ---- */

enum scsi_result spc_mode_select_parse(struct scsi_cmd *cmd)
{
	const uint8_t *cdb = cmd->cdb;

	cmd->data_length = cdb[0] == SCSI_OP_MODE_SELECT_10 ? get_be16(cdb + 7) : cdb[4];
	return SCSI_OK;
}

/* Checks the mode parameter block descriptor at p (SBC-4 6.5.2); off is its offset in the list. */
static bool check_block_descriptor(struct scsi_cmd *cmd, const uint8_t *p, size_t off, bool long_lba)
{
	const struct scsi_lu *lu = cmd->lu;
	uint64_t blocks = long_lba ? get_be64(p) : get_be32(p);
	uint32_t block_length = long_lba ? get_be32(p + 12) : get_be24(p + 5);
	uint64_t reported = long_lba || lu->num_blocks <= 0xffffffffull ? lu->num_blocks : 0xffffffffull;

	/* NUMBER OF LOGICAL BLOCKS: zero (no change) or the present capacity. */
	if (blocks != 0 && blocks != reported) {
		scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list((uint16_t)off, -1));
		return false;
	}
	/* LOGICAL BLOCK LENGTH: only the present one (a new block length needs FORMAT UNIT). */
	if (block_length != lu->block_size) {
		scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list((uint16_t)(off + (long_lba ? 12 : 5)), -1));
		return false;
	}
	return true;
}

/*
 * Checks one page at p (avail bytes left in the list, at offset off) and
 * merges it into pages[].  Returns its length, or 0 with the sense stored.
 */
static size_t check_page(struct scsi_cmd *cmd, const uint8_t *p, size_t avail, size_t off,
			 uint8_t pages[][SPC_MODE_PAGE_MAX])
{
	bool spf = p[0] & 0x40;
	uint8_t page_code = p[0] & 0x3f, subpage_code = 0;
	size_t page_len;
	const struct spc_mode_page_def *d = NULL;
	size_t idx = 0;

	if (avail < (spf ? 4u : 2u)) {
		scsi_cmd_fail(cmd, sense_parameter_list_length_error());
		return 0;
	}
	if (spf) {
		subpage_code = p[1];
		page_len = 4 + (size_t)get_be16(p + 2);
	} else {
		page_len = 2 + (size_t)p[1];
	}
	for (size_t i = 0; i < spc_mode_pages_len; i++) {
		if (spc_mode_pages[i].page_code == page_code && spc_mode_pages[i].subpage_code == subpage_code &&
		    spc_mode_pages[i].spf == spf && spc_mode_page_present(cmd->lu, i)) {
			d = &spc_mode_pages[i];
			idx = i;
		}
	}
	if (!d) {
		scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list((uint16_t)(off + (spf ? 1 : 0)), spf ? -1 : 5));
		return 0;
	}
	if (page_len != d->len && !(zbd_control_alone(page_code, subpage_code) && page_len > d->len &&
				    page_len <= avail && bytes_all_zero(p + d->len, page_len - d->len))) {
		scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list((uint16_t)(off + (spf ? 2 : 1)), -1));
		return 0;
	}
	if (page_len > avail) {
		scsi_cmd_fail(cmd, sense_parameter_list_length_error());
		return 0;
	}
	for (size_t i = spf ? 4 : 2; i < d->len; i++) {
		uint8_t bad = (uint8_t)((p[i] ^ pages[idx][i]) & ~d->changeable[i]);
		if (bad) {
			int bit = 7;
			while (!(bad & (1u << bit)))
				bit--;
			scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list((uint16_t)(off + i), bit));
			return 0;
		}
	}
	if (d->check) {
		int bad_byte = d->check(p);
		if (bad_byte >= 0) {
			scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list((uint16_t)(off + (size_t)bad_byte), -1));
			return 0;
		}
	}
	memcpy(pages[idx] + (spf ? 4 : 2), p + (spf ? 4 : 2), d->len - (spf ? 4u : 2u));
	return page_len;
}

enum scsi_result spc_mode_select_exec(struct scsi_cmd *cmd)
{
	const uint8_t *cdb = cmd->cdb;
	struct scsi_lu *lu = cmd->lu;
	struct spc_mode_state *m = lu->mode;
	bool ten = cdb[0] == SCSI_OP_MODE_SELECT_10;
	bool pf = cdb[1] & 0x10, sp = cdb[1] & 0x01;
	const uint8_t *p = cmd->data_out;
	size_t len = cmd->data_length, header_len = ten ? 8 : 4, bd_len, off;
	uint8_t pages[SPC_MODE_PAGES_MAX][SPC_MODE_PAGE_MAX];
	uint8_t priority_before = lu->mode_current.initial_priority;
	bool long_lba;

	if (len == 0)
		return SCSI_OK;
	if (len < header_len || !p)
		return scsi_cmd_fail(cmd, sense_parameter_list_length_error());
	/* Mode parameter header: MODE DATA LENGTH is reserved in MODE SELECT; MEDIUM TYPE 00h only. */
	if (p[ten ? 2 : 1] != 0)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list(ten ? 2 : 1, -1));
	long_lba = ten && (p[4] & 0x01);
	bd_len = ten ? get_be16(p + 6) : p[3];
	if (bd_len != 0 && bd_len != (long_lba ? 16u : 8u))
		return scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list(ten ? 6 : 3, -1));
	if (header_len + bd_len > len)
		return scsi_cmd_fail(cmd, sense_parameter_list_length_error());
	if (bd_len && !check_block_descriptor(cmd, p + header_len, header_len, long_lba))
		return SCSI_FAILED;
	off = header_len + bd_len;
	/* SPC-4 6.11: PF = 0 means vendor-specific pages; only the SPC page format is supported here. */
	if (!pf && off < len)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(1, 4));
	memcpy(pages, m->current, sizeof(pages));
	while (off < len) {
		size_t n = check_page(cmd, p + off, len - off, off, pages);
		if (n == 0)
			return SCSI_FAILED;
		off += n;
	}
	if (memcmp(pages, m->current, sizeof(pages)) != 0) {
		memcpy(m->current, pages, sizeof(pages));
		spc_mode_sync_current(lu);
		scsi_ua_establish_all(lu, SCSI_UA_MODE_PARAMETERS_CHANGED, cmd->nexus);
		spc_priority_initial_changed(lu, priority_before, cmd->nexus);
	}
	if (sp) {
		size_t img_len = 0;
		uint8_t *img = spc_mode_save_image(m, &img_len);
		if (!img)
			return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
		memcpy(m->saved, m->current, sizeof(m->saved));
		m->saved_by_select = true;
		return spc_persist_cmd(cmd, &m->file, img, img_len, NULL);
	}
	return SCSI_OK;
}

void spc_mode_power_on(struct scsi_lu *lu)
{
	struct spc_mode_state *m = lu->mode;

	/* SPC-4 7.5.1 (mode parameters): after a power on the current values are the saved ones. */
	if (!m)
		return;
	memcpy(m->current, m->saved, sizeof(m->current));
	spc_mode_sync_current(lu);
}
