/*
 * The mode pages of an SBC logical unit (SPC-4 7.5, SBC-4 6.5): their
 * default values, the mask of what MODE SELECT may change, and the saved
 * values, kept in "mode_pages" in the LU's state directory.
 *
 * Pages served:
 *   01h     Read-Write Error Recovery (SBC-4 6.5.8): AWRE = ARRE = 1, nothing changeable;
 *   08h     Caching (SBC-4 6.5.5): WCE (default 1) and RCD changeable;
 *   0Ah     Control (SPC-4 7.5.8): D_SENSE and SWP changeable; ATO 1 on LUs
 *           with protection information; TST 000b (one
 *           task set for all I_T nexuses), QUEUE ALGORITHM MODIFIER 1
 *           (SIMPLE commands run concurrently), QERR 00b, TAS 0 (the task
 *           set does not report TASK ABORTED to other nexuses), BUSY
 *           TIMEOUT PERIOD FFFFh (unlimited);
 *   0Ah/01h Control Extension (SPC-4 7.5.9): INITIAL COMMAND PRIORITY
 *           changeable (the priority of commands on an I_T_L nexus that SET
 *           PRIORITY did not set; spc_priority.c);
 *   0Ah/03h, 04h, 07h, 08h Command Duration Limit A, B, T2A, T2B
 *           (spc_mode_cdl.c), on LUs with command duration limits;
 *   0Ah/0Fh Zoned Block Device Control (ZBC-2; host-managed zoned LUs
 *           only), in the layout of libzbc (lib/zbc_scsi.c
 *           zbc_scsi_dev_control), the host library of zone domain
 *           devices: bytes 4-7 FSNOZ, the number of zones ZONE ACTIVATE and
 *           ZONE QUERY act on without ZSRC (default: a realm's zones);
 *           byte 10 bit 0 URSWRZ, the unrestricted reads of SWR and SOBR
 *           zones (B6h byte 4 bit 0; default: the urswrz config key);
 *           bytes 16-17 MAXIMUM ACTIVATION, the most realms one ZONE
 *           ACTIVATE may move (0, and FFFEh which libzbc sends for
 *           "unlimited": no limit).  All three changeable.  The standard is
 *           not public, so the PAGE LENGTH (0010h) is our choice; sdparm's
 *           older fields (zbc2r04a: URSWRZ_M byte 4 bit 0, U_UA_CTL byte 5
 *           bit 0) lie inside FSNOZ and are not served (docs/zbc.md);
 *   1Ch     Informational Exceptions Control (SPC-4 7.5.12): DEXCPT = 1;
 *           EWASC, DEXCPT, TEST, MRIE, INTERVAL TIMER and REPORT COUNT may
 *           be set; TEST = 1 with DEXCPT = 1 -> 05/26/00 (SPC-4 7.5.12);
 *           spc_ie.c reports the exceptions (predict-failure rules, the
 *           temperature, TEST) as they say.
 * The Read-Write Error Recovery page's PER may be set (MRIE 3h reports
 * only with PER = 1), and the Control page's EXTENDED SELF-TEST
 * COMPLETION TIME (bytes 10-11) is the extended self-test's 20 s
 * (spc_diag.c).
 *
 * An LU may be given other default values for the fields of enum
 * scsi_mode_field (scsi_lu_params.mode_defaults, config key mode_defaults,
 * the runtime control's lu-mode-defaults): mode_fields says where each is.
 *
 * The saved file holds only the changeable bits: a field the code makes
 * non-changeable in a later version takes its new default.  A missing,
 * short or otherwise corrupt file means default values (SPC-4: saved values
 * start as the defaults).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "spc/spc.h"

#define MODE_FILE_NAME "mode_pages"
#define MODE_FILE_MAGIC "SBCEMODE"
#define MODE_FILE_VERSION 1

static const uint8_t rw_error_recovery_default[12] = { 0x01, 0x0a, 0xc0 };
static const uint8_t rw_error_recovery_changeable[12] = { 0, 0, 0x04 }; /* PER */

static const uint8_t caching_default[20] = { 0x08, 0x12, 0x04 };
static const uint8_t caching_changeable[20] = { 0, 0, 0x05 };

static const uint8_t control_default[12] = { 0x0a, 0x0a, 0x00, 0x10, 0x00, 0x00, 0, 0, 0xff, 0xff, 0, 20 };
static const uint8_t control_changeable[12] = { 0, 0, 0x04, 0x00, 0x08, 0x00 };

static const uint8_t control_extension_default[32] = { 0x40 | 0x0a, 0x01, 0x00, 0x1c };
/* INITIAL COMMAND PRIORITY, byte 5 bits 3:0 (SPC-4 7.5.9; the priority commands get without SET PRIORITY). */
static const uint8_t control_extension_changeable[32] = { 0, 0, 0, 0, 0x00, 0x0f };

static const uint8_t zbd_control_default[20] = { 0x40 | 0x0a, MODE_SUBPAGE_ZONED_BLOCK_DEVICE_CONTROL, 0x00, 0x10 };
static const uint8_t zbd_control_changeable[20] = { [4] = 0xff, 0xff, 0xff, 0xff, [10] = 0x01, [16] = 0xff, 0xff };

static const uint8_t iec_default[12] = { 0x1c, 0x0a, 0x08, 0x00 };
static const uint8_t iec_changeable[12] = { 0, 0, 0x1c, 0x0f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

/* SPC-4 7.5.12: METHOD OF REPORTING INFORMATIONAL EXCEPTIONS 0h-6h are defined, 7h-Bh reserved. */
static int iec_check(const uint8_t *page)
{
	uint8_t mrie = page[3] & 0x0f;

	/* SPC-4 7.5.12: TEST = 1 with DEXCPT = 1 -> INVALID FIELD IN PARAMETER LIST. */
	if ((page[2] & 0x04) && (page[2] & 0x08))
		return 2;
	return mrie > 6 && mrie < 0xc ? 3 : -1;
}

/* Control ATO = 1 on an LU with PI: the application client owns the application tags (sbc_pi.h). */
static void control_lu_defaults(const struct scsi_lu *lu, uint8_t *page)
{
	if (lu->params.protection_type)
		page[5] |= 0x80;
}

static bool zbd_control_present(const struct scsi_lu *lu)
{
	return lu->kind == SCSI_LU_ZBC_HM;
}

static void zbd_control_lu_defaults(const struct scsi_lu *lu, uint8_t *page)
{
	put_be32(page + 4, lu->params.realm_zones);
	if (lu->params.urswrz)
		page[10] |= 0x01;
}

/* Where each field of enum scsi_mode_field lives: page, subpage, byte, mask (its lowest set bit is bit 0 of the value). */
static const struct {
	uint8_t page_code, subpage_code, byte, mask;
} mode_fields[SCSI_MODE_FIELD_COUNT] = {
	[SCSI_MODE_WCE] = { MODE_PAGE_CACHING, 0, 2, 0x04 },
	[SCSI_MODE_RCD] = { MODE_PAGE_CACHING, 0, 2, 0x01 },
	[SCSI_MODE_D_SENSE] = { MODE_PAGE_CONTROL, 0, 2, 0x04 },
	[SCSI_MODE_SWP] = { MODE_PAGE_CONTROL, 0, 4, 0x08 },
	[SCSI_MODE_DEXCPT] = { MODE_PAGE_INFORMATIONAL_EXCEPTIONS_CONTROL, 0, 2, 0x08 },
	[SCSI_MODE_MRIE] = { MODE_PAGE_INFORMATIONAL_EXCEPTIONS_CONTROL, 0, 3, 0x0f },
};
_Static_assert(sizeof(((struct scsi_mode_defaults *)0)->value) == SCSI_MODE_FIELD_COUNT,
	       "struct scsi_mode_defaults holds every field");

#define PAGE(nm, code, sub, length, def, chg) \
	.name = nm, .page_code = code, .subpage_code = sub, .spf = (sub) != 0, .len = length, .defaults = def, \
	.changeable = chg

const struct spc_mode_page_def spc_mode_pages[] = {
	{ PAGE("Read-Write Error Recovery", MODE_PAGE_READ_WRITE_ERROR_RECOVERY, 0, 12, rw_error_recovery_default,
	       rw_error_recovery_changeable) },
	{ PAGE("Caching", MODE_PAGE_CACHING, 0, 20, caching_default, caching_changeable) },
	{ PAGE("Control", MODE_PAGE_CONTROL, 0, 12, control_default, control_changeable),
	  .lu_defaults = control_lu_defaults },
	{ PAGE("Control Extension", MODE_PAGE_CONTROL, MODE_SUBPAGE_CONTROL_EXTENSION, 32, control_extension_default,
	       control_extension_changeable) },
	{ PAGE("Command Duration Limit A", MODE_PAGE_CONTROL, MODE_SUBPAGE_CDL_A, SPC_CDL_AB_LEN, spc_cdl_a_default,
	       spc_cdl_ab_changeable),
	  .check = spc_cdl_ab_check, .present = spc_cdl_pages_present },
	{ PAGE("Command Duration Limit B", MODE_PAGE_CONTROL, MODE_SUBPAGE_CDL_B, SPC_CDL_AB_LEN, spc_cdl_b_default,
	       spc_cdl_ab_changeable),
	  .check = spc_cdl_ab_check, .present = spc_cdl_pages_present },
	{ PAGE("Command Duration Limit T2A", MODE_PAGE_CONTROL, MODE_SUBPAGE_CDL_T2A, SPC_CDL_T2_LEN,
	       spc_cdl_t2a_default, spc_cdl_t2a_changeable),
	  .check = spc_cdl_t2_check, .present = spc_cdl_pages_present },
	{ PAGE("Command Duration Limit T2B", MODE_PAGE_CONTROL, MODE_SUBPAGE_CDL_T2B, SPC_CDL_T2_LEN,
	       spc_cdl_t2b_default, spc_cdl_t2b_changeable),
	  .check = spc_cdl_t2_check, .present = spc_cdl_pages_present },
	{ PAGE("Zoned Block Device Control", MODE_PAGE_CONTROL, MODE_SUBPAGE_ZONED_BLOCK_DEVICE_CONTROL, 20,
	       zbd_control_default, zbd_control_changeable),
	  .present = zbd_control_present, .lu_defaults = zbd_control_lu_defaults },
	{ PAGE("Informational Exceptions Control", MODE_PAGE_INFORMATIONAL_EXCEPTIONS_CONTROL, 0, 12, iec_default,
	       iec_changeable),
	  .check = iec_check },
};

const size_t spc_mode_pages_len = sizeof(spc_mode_pages) / sizeof(spc_mode_pages[0]);

_Static_assert(sizeof(spc_mode_pages) / sizeof(spc_mode_pages[0]) <= SPC_MODE_PAGES_MAX,
	       "struct spc_mode_state holds SPC_MODE_PAGES_MAX pages");

/* Sets field f of page (whose def is d) to v, if the field is on that page. */
static void field_put(const struct spc_mode_page_def *d, int f, uint8_t *page, uint8_t v)
{
	uint8_t mask = mode_fields[f].mask, shift = (uint8_t)__builtin_ctz(mask);

	if (d->page_code == mode_fields[f].page_code && d->subpage_code == mode_fields[f].subpage_code)
		page[mode_fields[f].byte] = (uint8_t)((page[mode_fields[f].byte] & ~mask) | ((v << shift) & mask));
}

void spc_mode_page_defaults(const struct scsi_lu *lu, size_t i, uint8_t *page)
{
	const struct scsi_mode_defaults *md = &lu->params.mode_defaults;

	memcpy(page, spc_mode_pages[i].defaults, spc_mode_pages[i].len);
	if (spc_mode_pages[i].lu_defaults)
		spc_mode_pages[i].lu_defaults(lu, page);
	for (int f = 0; f < SCSI_MODE_FIELD_COUNT; f++)
		if (md->set & (1u << f))
			field_put(&spc_mode_pages[i], f, page, md->value[f]);
}

bool scsi_lu_set_mode_defaults(struct scsi_lu *lu, const struct scsi_mode_defaults *md)
{
	struct spc_mode_state *m = lu->mode;
	uint8_t before[SPC_MODE_PAGES_MAX][SPC_MODE_PAGE_MAX], after[SPC_MODE_PAGE_MAX];
	bool changed = false;

	for (size_t i = 0; i < spc_mode_pages_len; i++)
		spc_mode_page_defaults(lu, i, before[i]);
	lu->params.mode_defaults = *md;
	/* The bits whose default moved take the new default in the current (and unsaved) values. */
	for (size_t i = 0; i < spc_mode_pages_len; i++) {
		spc_mode_page_defaults(lu, i, after);
		for (unsigned b = 2; b < spc_mode_pages[i].len; b++) {
			uint8_t moved = before[i][b] ^ after[b];
			uint8_t cur = (uint8_t)((m->current[i][b] & ~moved) | (after[b] & moved));

			changed |= cur != m->current[i][b];
			m->current[i][b] = cur;
			if (!m->saved_by_select)
				m->saved[i][b] = (uint8_t)((m->saved[i][b] & ~moved) | (after[b] & moved));
		}
	}
	if (changed) {
		spc_mode_sync_current(lu);
		scsi_ua_establish_all(lu, SCSI_UA_MODE_PARAMETERS_CHANGED, NULL);
	}
	return changed;
}

const uint8_t *spc_mode_current_page(const struct scsi_lu *lu, uint8_t page_code, uint8_t subpage_code)
{
	for (size_t i = 0; i < spc_mode_pages_len; i++)
		if (spc_mode_pages[i].page_code == page_code && spc_mode_pages[i].subpage_code == subpage_code)
			return spc_mode_page_present(lu, i) ? lu->mode->current[i] : NULL;
	return NULL;
}

bool spc_mode_page_present(const struct scsi_lu *lu, size_t i)
{
	return !spc_mode_pages[i].present || spc_mode_pages[i].present(lu);
}

static int find_def(uint8_t page_code, uint8_t subpage_code)
{
	for (size_t i = 0; i < spc_mode_pages_len; i++)
		if (spc_mode_pages[i].page_code == page_code && spc_mode_pages[i].subpage_code == subpage_code)
			return (int)i;
	return -1;
}

void spc_mode_sync_current(struct scsi_lu *lu)
{
	const struct spc_mode_state *m = lu->mode;
	const uint8_t *control = m->current[find_def(MODE_PAGE_CONTROL, 0)];
	const uint8_t *caching = m->current[find_def(MODE_PAGE_CACHING, 0)];
	const uint8_t *zbd_control = m->current[find_def(MODE_PAGE_CONTROL, MODE_SUBPAGE_ZONED_BLOCK_DEVICE_CONTROL)];

	lu->mode_current.d_sense = control[2] & 0x04;
	lu->mode_current.qerr = (control[3] >> 1) & 0x03;
	lu->mode_current.swp = control[4] & 0x08;
	lu->mode_current.tas = control[5] & 0x40;
	lu->mode_current.wce = caching[2] & 0x04;
	lu->mode_current.urswrz = zbd_control[10] & 0x01;
	lu->mode_current.fsnoz = get_be32(zbd_control + 4);
	lu->mode_current.max_activation = get_be16(zbd_control + 16);
	lu->mode_current.rcd = caching[2] & 0x01;
	lu->mode_current.initial_priority = m->current[find_def(MODE_PAGE_CONTROL, MODE_SUBPAGE_CONTROL_EXTENSION)][5] & 0x0f;
	/* DPOFUA: DPO and FUA are always honoured (the backend writes FUA through). */
	lu->mode_current.dpofua = true;
	/* The informational exceptions follow their page (TEST, MRIE, DEXCPT ...). */
	spc_ie_mode_changed(lu);
}

/*
 * File image: "SBCEMODE", u32 version, u32 page count, then per page: page
 * code, subpage code, u16 length, the page bytes.
 */
uint8_t *spc_mode_save_image(const struct spc_mode_state *m, size_t *len)
{
	size_t n = 16;
	uint8_t *img, *p;

	for (size_t i = 0; i < spc_mode_pages_len; i++)
		n += 4 + spc_mode_pages[i].len;
	img = calloc(1, n);
	if (!img)
		return NULL;
	memcpy(img, MODE_FILE_MAGIC, 8);
	put_be32(img + 8, MODE_FILE_VERSION);
	put_be32(img + 12, (uint32_t)spc_mode_pages_len);
	p = img + 16;
	for (size_t i = 0; i < spc_mode_pages_len; i++) {
		const struct spc_mode_page_def *d = &spc_mode_pages[i];
		p[0] = d->page_code;
		p[1] = d->subpage_code;
		put_be16(p + 2, d->len);
		memcpy(p + 4, m->current[i], d->len);
		p += 4 + d->len;
	}
	*len = n;
	return img;
}

/* Takes the changeable bits of the saved pages from a file image; false if the image is corrupt. */
static bool load_image(const struct scsi_lu *lu, struct spc_mode_state *m, const uint8_t *img, size_t len)
{
	uint8_t saved[SPC_MODE_PAGES_MAX][SPC_MODE_PAGE_MAX], defaults[SPC_MODE_PAGE_MAX];
	size_t off = 16;
	uint32_t count;

	if (len < 16 || memcmp(img, MODE_FILE_MAGIC, 8) != 0 || get_be32(img + 8) != MODE_FILE_VERSION)
		return false;
	count = get_be32(img + 12);
	memcpy(saved, m->saved, sizeof(saved));
	for (uint32_t k = 0; k < count; k++) {
		int i;
		uint16_t plen;

		if (off + 4 > len)
			return false;
		plen = get_be16(img + off + 2);
		if (off + 4 + plen > len)
			return false;
		i = find_def(img[off], img[off + 1]);
		if (i >= 0 && plen == spc_mode_pages[i].len) {
			const struct spc_mode_page_def *d = &spc_mode_pages[i];

			spc_mode_page_defaults(lu, (size_t)i, defaults);
			for (unsigned b = 2; b < d->len; b++)
				saved[i][b] = (uint8_t)((defaults[b] & ~d->changeable[b]) |
							(img[off + 4 + b] & d->changeable[b]));
			if (d->check && d->check(saved[i]) >= 0)
				return false;
		}
		off += 4 + plen;
	}
	memcpy(m->saved, saved, sizeof(saved));
	return true;
}

int spc_mode_init(struct scsi_lu *lu)
{
	struct spc_mode_state *m = calloc(1, sizeof(*m));
	uint8_t *img;
	size_t len;
	int rc;

	if (!m)
		return -1;
	for (size_t i = 0; i < spc_mode_pages_len; i++)
		spc_mode_page_defaults(lu, i, m->saved[i]);
	spc_persist_init(&m->file, lu, MODE_FILE_NAME);
	rc = spc_persist_load(&m->file, &img, &len, 4096);
	if (rc == -ELOOP) { /* a symbolic link in its place: refused, not ignored */
		spc_persist_fini(&m->file);
		free(m);
		return -1;
	}
	if (rc == 0) {
		/* A corrupt file is ignored: the defaults stand (SPC-4 6.11: saved values start as defaults). */
		m->saved_by_select = load_image(lu, m, img, len);
		free(img);
	}
	memcpy(m->current, m->saved, sizeof(m->current));
	lu->mode = m;
	spc_mode_sync_current(lu);
	return 0;
}

void spc_mode_reload(struct scsi_lu *lu)
{
	struct spc_mode_state *m = lu->mode;
	uint8_t *img;
	size_t len;

	if (!m || !m->file.shared || spc_persist_load(&m->file, &img, &len, 4096) != 0)
		return;
	if (load_image(lu, m, img, len)) {
		m->saved_by_select = true;
		memcpy(m->current, m->saved, sizeof(m->current));
		spc_mode_sync_current(lu);
	}
	free(img);
}

void spc_mode_fini(struct scsi_lu *lu)
{
	if (!lu->mode)
		return;
	spc_persist_fini(&lu->mode->file);
	free(lu->mode);
	lu->mode = NULL;
}
