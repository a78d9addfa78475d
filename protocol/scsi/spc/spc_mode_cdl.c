/*
 * The Command Duration Limit mode pages, subpages of the Control mode page
 * (0Ah), present on an LU with command duration limits (config key
 * command_duration_limits; sched/duration_limits.c enforces them):
 *
 *   03h A, 04h B (SPC-5): PAGE LENGTH 0020h; seven 4-byte descriptors from
 *       byte 8: CDLUNIT byte 0 bits 7:5 (000b none, 100b 1 us, 101b 10 ms,
 *       110b 500 ms), COMMAND DURATION LIMIT bytes 2-3;
 *   07h T2A, 08h T2B (SPC-6): PAGE LENGTH 00E4h; T2A byte 7 bits 7:4 PERF
 *       VS DURATION GUIDELINE; seven 32-byte descriptors from byte 8:
 *       T2CDLUNITS byte 0 bits 3:0 (0h none, 6h 500 ns, 8h 1 us, Ah 10 ms,
 *       Eh 500 ms), MAX INACTIVE TIME bytes 2-3, MAX ACTIVE TIME bytes 4-5,
 *       MAX INACTIVE TIME POLICY byte 6 bits 7:4, MAX ACTIVE TIME POLICY
 *       byte 6 bits 3:0, COMMAND DURATION GUIDELINE bytes 10-11, COMMAND
 *       DURATION GUIDELINE POLICY byte 14 bits 3:0.
 *
 * Layouts and units as cdl-tools (src/cdl_scsi.c, src/cdl.c) and sdparm
 * (sdparm_data.c) read and write them; sdparm's help gives other A/B units,
 * cdl-tools' agree with the T2 units and are followed.  Policies (cdl-tools
 * cdl_parse_policy): max inactive time 0h, Dh, Fh; max active time 0h, Dh,
 * Eh, Fh; duration guideline 0h, 1h, 2h, Dh, Fh.  MODE SELECT with any
 * other value, or a reserved unit, gets 05/26/00 at the byte.  Every page
 * starts with no limits, and can be saved.
 */
#include "spc/spc.h"

#define T2_DESC_CHANGEABLE \
	0x0f, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0xff, 0xff, 0x00, 0x00, 0x0f, 0x00, \
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
#define AB_DESC_CHANGEABLE 0xe0, 0x00, 0xff, 0xff

const uint8_t spc_cdl_a_default[SPC_CDL_AB_LEN] = { 0x40 | MODE_PAGE_CONTROL, MODE_SUBPAGE_CDL_A, 0x00, 0x20 };
const uint8_t spc_cdl_b_default[SPC_CDL_AB_LEN] = { 0x40 | MODE_PAGE_CONTROL, MODE_SUBPAGE_CDL_B, 0x00, 0x20 };
const uint8_t spc_cdl_ab_changeable[SPC_CDL_AB_LEN] = {
	0, 0, 0, 0, 0, 0, 0, 0,
	AB_DESC_CHANGEABLE, AB_DESC_CHANGEABLE, AB_DESC_CHANGEABLE, AB_DESC_CHANGEABLE,
	AB_DESC_CHANGEABLE, AB_DESC_CHANGEABLE, AB_DESC_CHANGEABLE,
};
const uint8_t spc_cdl_t2a_default[SPC_CDL_T2_LEN] = { 0x40 | MODE_PAGE_CONTROL, MODE_SUBPAGE_CDL_T2A, 0x00, 0xe4 };
const uint8_t spc_cdl_t2b_default[SPC_CDL_T2_LEN] = { 0x40 | MODE_PAGE_CONTROL, MODE_SUBPAGE_CDL_T2B, 0x00, 0xe4 };
const uint8_t spc_cdl_t2a_changeable[SPC_CDL_T2_LEN] = {
	0, 0, 0, 0, 0, 0, 0, 0xf0,
	T2_DESC_CHANGEABLE, T2_DESC_CHANGEABLE, T2_DESC_CHANGEABLE, T2_DESC_CHANGEABLE,
	T2_DESC_CHANGEABLE, T2_DESC_CHANGEABLE, T2_DESC_CHANGEABLE,
};
const uint8_t spc_cdl_t2b_changeable[SPC_CDL_T2_LEN] = {
	0, 0, 0, 0, 0, 0, 0, 0,
	T2_DESC_CHANGEABLE, T2_DESC_CHANGEABLE, T2_DESC_CHANGEABLE, T2_DESC_CHANGEABLE,
	T2_DESC_CHANGEABLE, T2_DESC_CHANGEABLE, T2_DESC_CHANGEABLE,
};

bool spc_cdl_pages_present(const struct scsi_lu *lu)
{
	return lu->params.cdl_pages != SCSI_CDL_NONE;
}

/* The time units of the descriptors: code -> nanoseconds; code 0 is "no limit", the others reserved. */
struct cdl_unit {
	uint8_t code;
	uint64_t ns;
};

static const struct cdl_unit ab_units[] = { { 0x4, 1000ull }, { 0x5, 10000000ull }, { 0x6, 500000000ull } };
static const struct cdl_unit t2_units[] = {
	{ 0x6, 500ull }, { 0x8, 1000ull }, { 0xa, 10000000ull }, { 0xe, 500000000ull },
};

/* Nanoseconds per unit; 0 for no limit, and for a reserved code (then *reserved). */
static uint64_t unit_ns(const struct cdl_unit *units, size_t n, uint8_t code, bool *reserved)
{
	*reserved = false;
	if (code == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (units[i].code == code)
			return units[i].ns;
	*reserved = true;
	return 0;
}

static uint64_t ab_unit_ns(uint8_t code, bool *reserved)
{
	return unit_ns(ab_units, sizeof(ab_units) / sizeof(ab_units[0]), code, reserved);
}

static uint64_t t2_unit_ns(uint8_t code, bool *reserved)
{
	return unit_ns(t2_units, sizeof(t2_units) / sizeof(t2_units[0]), code, reserved);
}

int spc_cdl_ab_check(const uint8_t *page)
{
	for (unsigned k = 0; k < 7; k++) {
		bool reserved;

		ab_unit_ns(page[8 + 4 * k] >> 5, &reserved);
		if (reserved)
			return (int)(8 + 4 * k);
	}
	return -1;
}

static bool policy_allowed(uint8_t policy, const uint8_t *allowed, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (allowed[i] == policy)
			return true;
	return false;
}

int spc_cdl_t2_check(const uint8_t *page)
{
	static const uint8_t inactive[] = { SPC_CDL_POLICY_COMPLETE_EARLIEST, SPC_CDL_POLICY_COMPLETE_UNAVAILABLE,
					    SPC_CDL_POLICY_ABORT };
	static const uint8_t active[] = { SPC_CDL_POLICY_COMPLETE_EARLIEST, SPC_CDL_POLICY_COMPLETE_UNAVAILABLE,
					  SPC_CDL_POLICY_ABORT_RECOVERY, SPC_CDL_POLICY_ABORT };
	static const uint8_t guideline[] = { SPC_CDL_POLICY_COMPLETE_EARLIEST, SPC_CDL_POLICY_CONTINUE_NEXT_LIMIT,
					     SPC_CDL_POLICY_CONTINUE_NO_LIMIT, SPC_CDL_POLICY_COMPLETE_UNAVAILABLE,
					     SPC_CDL_POLICY_ABORT };

	/* PERF VS DURATION GUIDELINE: 0h..Ch are defined (sdparm PVCDG). */
	if ((page[7] >> 4) > 0xc)
		return 7;
	for (unsigned k = 0; k < 7; k++) {
		const uint8_t *d = page + 8 + 32 * k;
		bool reserved;

		t2_unit_ns(d[0] & 0x0f, &reserved);
		if (reserved)
			return (int)(8 + 32 * k);
		if (!policy_allowed(d[6] >> 4, inactive, sizeof(inactive)) ||
		    !policy_allowed(d[6] & 0x0f, active, sizeof(active)))
			return (int)(8 + 32 * k + 6);
		if (!policy_allowed(d[14] & 0x0f, guideline, sizeof(guideline)))
			return (int)(8 + 32 * k + 14);
	}
	return -1;
}

bool spc_cdl_descriptor(const struct scsi_lu *lu, uint8_t subpage, uint8_t descriptor, struct scsi_cmd_limits *l)
{
	const uint8_t *page = spc_mode_current_page(lu, MODE_PAGE_CONTROL, subpage);
	bool reserved;

	*l = (struct scsi_cmd_limits){ .page = subpage, .descriptor = descriptor };
	if (!page || descriptor < 1 || descriptor > 7)
		return false;
	if (subpage == MODE_SUBPAGE_CDL_T2A || subpage == MODE_SUBPAGE_CDL_T2B) {
		const uint8_t *d = page + 8 + 32 * (descriptor - 1);
		uint64_t unit = t2_unit_ns(d[0] & 0x0f, &reserved);

		l->max_inactive_ns = get_be16(d + 2) * unit;
		l->max_active_ns = get_be16(d + 4) * unit;
		l->guideline_ns = get_be16(d + 10) * unit;
		l->max_inactive_policy = d[6] >> 4;
		l->max_active_policy = d[6] & 0x0f;
		l->guideline_policy = d[14] & 0x0f;
	} else {
		const uint8_t *d = page + 8 + 4 * (descriptor - 1);

		/*
		 * SPC-5's A and B pages name one limit and no policy; no public
		 * source says what a device does past it.  Ours: the command is
		 * aborted as by the T2 pages' abort policy (docs/latency.md).
		 */
		l->guideline_ns = get_be16(d + 2) * ab_unit_ns(d[0] >> 5, &reserved);
		l->guideline_policy = SPC_CDL_POLICY_ABORT;
	}
	return true;
}
