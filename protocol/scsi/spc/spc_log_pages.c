/*
 * The log pages (SPC-4 7.3, SBC-4 6.4): one row each in spc_log_pages[],
 * which spc_log.c serves.  Every value is something the LU did or is:
 * the counters move in spc_ie_cmd_done() as commands complete, the
 * self-test log in spc_diag.c, the informational exception and the
 * temperature in spc_ie.c, the CDL statistics in the scheduler.
 *
 * Parameter control bytes (SPC-4 7.3.2.2.2): counters are bounded data
 * counters (DU 0, TSD 0, ETC 0, TMC 00b, FORMAT AND LINKING 00b: 00h), as
 * real drives report them; the parameters SPC-4 calls binary format lists
 * (temperature, self-test results, informational exceptions, the
 * start-stop counts, the background scan status, the general statistics,
 * the logical block provisioning resource counts)
 * are 03h, the ASCII dates of the start-stop page 01h (smartctl and sg_logs
 * check none of these bits; research: /tmp/research/log_pages.md E.3).
 *
 * Pages served:
 *   00h     Supported Log Pages
 *   02h     Write Error Counter    \
 *   03h     Read Error Counter      } parameters 0000h-0006h, 8 bytes each
 *   05h     Verify Error Counter   /
 *   06h     Non-Medium Error       0000h
 *   0Ch     Logical Block Provisioning (LUs with logical block provisioning):
 *           0001h available, 0002h used LBA mapping resources, 0003h percentage
 *   0Dh     Temperature            0000h temperature, 0001h reference temperature
 *   0Eh     Start-Stop Cycle Counter 0001h-0006h
 *   10h     Self-Test Results      0001h-0014h (page length 0190h, which smartctl requires)
 *   15h     Background Scan Results 0000h status (no background medium scan runs)
 *   19h     General Statistics and Performance 0001h-0003h
 *   19h/21h Command Duration Limits Statistics (LUs with command duration limits):
 *           0001h achievable latency target, 0021h-0027h (T2A), 0041h-0047h (T2B)
 *   2Fh     Informational Exceptions 0000h
 * and the computed lists 00h/FFh and xxh/FFh (spc_log.c).
 */
#include <errno.h>
#include <string.h>

#include "sbc/sbc_pi.h"
#include "spc/spc.h"

#define CTRL_COUNTER 0x00 /* bounded data counter */
#define CTRL_BINARY_LIST 0x03
#define CTRL_ASCII_LIST 0x01

/* The value a counter reads under page control pc: current cumulative only; thresholds and defaults are 0. */
static uint64_t counter(uint8_t pc, uint64_t v)
{
	return pc == 1 ? v : 0;
}

static size_t put_counter64(uint8_t *out, uint16_t code, uint64_t v)
{
	spc_log_param(out, code, CTRL_COUNTER, 8);
	put_be64(out + 4, v);
	return 12;
}

/* A counter parameter of a LOG SELECT list (1 to 8 bytes, big-endian): its value. */
static uint64_t param_value(const uint8_t *param)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < param[3]; i++)
		v = v << 8 | param[4 + i];
	return v;
}

/* ---- 00h Supported Log Pages (SPC-4 7.3.18) ---- */

static size_t build_supported(struct scsi_lu *lu, uint8_t pc, uint8_t *out, size_t max)
{
	size_t n = 0;
	int last = -1;

	(void)pc;
	(void)max;
	for (size_t i = 0; i < spc_log_pages_len; i++) {
		if (spc_log_pages[i].page_code == last || !spc_log_page_present(lu, i))
			continue;
		last = spc_log_pages[i].page_code;
		out[n++] = (uint8_t)last;
	}
	return n;
}

/* ---- 02h / 03h / 05h error counters (SPC-4 7.3.5, 7.3.16, 7.3.20) ---- */

static size_t build_errors(struct scsi_lu *lu, enum spc_err_dir d, uint8_t pc, uint8_t *out)
{
	size_t n = 0;

	for (int k = 0; k < SPC_ERR_PARAMS; k++)
		n += put_counter64(out + n, (uint16_t)k, counter(pc, lu->log->errors[d][k]));
	return n;
}

static size_t build_write_errors(struct scsi_lu *lu, uint8_t pc, uint8_t *out, size_t max)
{
	(void)max;
	return build_errors(lu, SPC_ERR_WRITE, pc, out);
}

static size_t build_read_errors(struct scsi_lu *lu, uint8_t pc, uint8_t *out, size_t max)
{
	(void)max;
	return build_errors(lu, SPC_ERR_READ, pc, out);
}

static size_t build_verify_errors(struct scsi_lu *lu, uint8_t pc, uint8_t *out, size_t max)
{
	(void)max;
	return build_errors(lu, SPC_ERR_VERIFY, pc, out);
}

static void reset_write_errors(struct scsi_lu *lu)
{
	memset(lu->log->errors[SPC_ERR_WRITE], 0, sizeof(lu->log->errors[SPC_ERR_WRITE]));
}

static void reset_read_errors(struct scsi_lu *lu)
{
	memset(lu->log->errors[SPC_ERR_READ], 0, sizeof(lu->log->errors[SPC_ERR_READ]));
}

static void reset_verify_errors(struct scsi_lu *lu)
{
	memset(lu->log->errors[SPC_ERR_VERIFY], 0, sizeof(lu->log->errors[SPC_ERR_VERIFY]));
}

/* A counter of 1 to 8 bytes; 0 on the parameter code or 3 on the length when refused. */
static int set_error(struct scsi_lu *lu, enum spc_err_dir d, const uint8_t *param, bool apply)
{
	uint16_t code = get_be16(param);

	if (code >= SPC_ERR_PARAMS)
		return 0;
	if (param[3] < 1 || param[3] > 8)
		return 3;
	if (apply)
		lu->log->errors[d][code] = param_value(param);
	return -1;
}

static int set_write_error(struct scsi_lu *lu, const uint8_t *param, bool apply)
{
	return set_error(lu, SPC_ERR_WRITE, param, apply);
}

static int set_read_error(struct scsi_lu *lu, const uint8_t *param, bool apply)
{
	return set_error(lu, SPC_ERR_READ, param, apply);
}

static int set_verify_error(struct scsi_lu *lu, const uint8_t *param, bool apply)
{
	return set_error(lu, SPC_ERR_VERIFY, param, apply);
}

/* ---- 06h Non-Medium Error (SPC-4 7.3.12) ---- */

static size_t build_non_medium(struct scsi_lu *lu, uint8_t pc, uint8_t *out, size_t max)
{
	(void)max;
	return put_counter64(out, 0x0000, counter(pc, lu->log->non_medium_errors));
}

static void reset_non_medium(struct scsi_lu *lu)
{
	lu->log->non_medium_errors = 0;
}

static int set_non_medium(struct scsi_lu *lu, const uint8_t *param, bool apply)
{
	if (get_be16(param) != 0)
		return 0;
	if (param[3] < 1 || param[3] > 8)
		return 3;
	if (apply)
		lu->log->non_medium_errors = param_value(param);
	return -1;
}

/*
 * ---- 0Ch Logical Block Provisioning (SBC-4 6.4.5; SBC-5 6.4.5, tables
 * 196-202), on LUs with logical block provisioning ----
 *
 * Parameters 0001h Available and 0002h Used LBA Mapping Resource Count:
 * binary format list parameters (FORMAT AND LINKING 11b), PARAMETER LENGTH
 * 08h, bytes 4-7 RESOURCE COUNT in threshold sets of 2^(THRESHOLD EXPONENT)
 * LBAs, byte 8 bits 1:0 SCOPE; 0003h Available Provisioning Resource
 * Percentage, the same but bytes 4-5 a percentage (0 to 100).  All are
 * "Never" resettable or changeable (SBC-4 table "Logical Block Provisioning
 * log page parameters"): no reset, no set, and DS = 1 (nothing to save).
 *
 * Used is what the backing store has allocated (the backend's allocated(),
 * on a worker: a sparse file's blocks), in logical blocks rounded up and at
 * most the capacity; the store is dedicated to the LU and as big as its
 * capacity, so Available is capacity minus used, SCOPE 01b.  A backend
 * that cannot tell (a block device) counts every block used, as GET LBA
 * STATUS calls them all mapped ("mapped or unknown").
 */

/* The Logical Block Provisioning VPD page's THRESHOLD EXPONENT (B2h byte 4, spc_vpd.c): 0, no thresholds. */
#define LBP_THRESHOLD_EXPONENT 0
#define LBP_SCOPE_DEDICATED 0x01 /* SCOPE 01b: dedicated to the LU */

static bool lbp_present(const struct scsi_lu *lu)
{
	return sbc_thin_provisioning_enabled(lu);
}

static void gather_lbp(struct scsi_lu *lu, struct spc_log_gathered *g)
{
	struct backend *be = lu->backend;

	g->allocated_rc = be->ops->allocated ? be->ops->allocated(be, &g->allocated_bytes) : -EOPNOTSUPP;
}

/* A resource count parameter: RESOURCE COUNT (value, field_len bytes at byte 4), SCOPE dedicated. */
static size_t put_lbp_resource(uint8_t *out, uint16_t code, uint32_t value, bool percentage)
{
	spc_log_param(out, code, CTRL_BINARY_LIST, 8);
	memset(out + 4, 0, 8);
	if (percentage)
		put_be16(out + 4, (uint16_t)value);
	else
		put_be32(out + 4, value);
	out[8] = LBP_SCOPE_DEDICATED;
	return 12;
}

/* LBAs in threshold sets of 2^(threshold exponent), clamped to the 32-bit field. */
static uint32_t threshold_sets(uint64_t lbas)
{
	uint64_t sets = lbas >> LBP_THRESHOLD_EXPONENT;

	return sets > UINT32_MAX ? UINT32_MAX : (uint32_t)sets;
}

static size_t build_lbp(struct scsi_lu *lu, uint8_t pc, const struct spc_log_gathered *g, uint8_t *out, size_t max)
{
	/* The backing store's bytes per logical block: the block, and its PI tuple where the LU has PI. */
	uint64_t per_block = lu->block_size + (sbc_lu_has_pi(lu) ? lu->block_size / 64 : 0);
	uint64_t capacity = lu->num_blocks, used = capacity, available;
	uint32_t percent;
	size_t n = 0;

	(void)pc; /* list parameters: the same under every PC */
	(void)max;
	if (g && g->allocated_rc == 0)
		used = g->allocated_bytes / per_block + (g->allocated_bytes % per_block != 0);
	if (used > capacity)
		used = capacity;
	available = capacity - used;
	if (capacity == 0)
		percent = 0;
	else if (available <= UINT64_MAX / 100)
		percent = (uint32_t)(available * 100 / capacity);
	else
		percent = (uint32_t)(available / (capacity / 100));
	n += put_lbp_resource(out + n, 0x0001, threshold_sets(available), false);
	n += put_lbp_resource(out + n, 0x0002, threshold_sets(used), false);
	n += put_lbp_resource(out + n, 0x0003, percent > 100 ? 100 : percent, true);
	return n;
}

/* ---- 0Dh Temperature (SPC-4 7.3.21): smartctl reads bytes 9 and 15, so 0000h then 0001h, 2 bytes each ---- */

static size_t build_temperature(struct scsi_lu *lu, uint8_t pc, uint8_t *out, size_t max)
{
	(void)pc;
	(void)max;
	spc_log_param(out, 0x0000, CTRL_BINARY_LIST, 2);
	out[4] = 0;
	out[5] = spc_ie_temperature(lu);
	spc_log_param(out + 6, 0x0001, CTRL_BINARY_LIST, 2);
	out[10] = 0;
	out[11] = spc_ie_threshold(lu);
	return 12;
}

/* ---- 0Eh Start-Stop Cycle Counter (SPC-4 7.3.19; sg_logs wants 0001h/0002h 6 bytes long) ---- */

#define SPECIFIED_START_STOP_CYCLES 50000u
#define SPECIFIED_LOAD_UNLOAD_CYCLES 600000u

static size_t build_start_stop(struct scsi_lu *lu, uint8_t pc, uint8_t *out, size_t max)
{
	size_t n = 0;

	(void)pc;
	(void)max;
	/* DATE OF MANUFACTURE: year and week, ASCII; the emulator has no factory, so the year of SPC-4's publication. */
	n += spc_log_param(out + n, 0x0001, CTRL_ASCII_LIST, 6);
	memcpy(out + n, "201501", 6);
	n += 6;
	/* ACCOUNTING DATE: not set, six spaces (SPC-4 7.3.19). */
	n += spc_log_param(out + n, 0x0002, CTRL_ASCII_LIST, 6);
	memcpy(out + n, "      ", 6);
	n += 6;
	n += spc_log_param(out + n, 0x0003, CTRL_BINARY_LIST, 4);
	put_be32(out + n, SPECIFIED_START_STOP_CYCLES);
	n += 4;
	n += spc_log_param(out + n, 0x0004, CTRL_BINARY_LIST, 4);
	put_be32(out + n, lu->log->start_stop_cycles);
	n += 4;
	n += spc_log_param(out + n, 0x0005, CTRL_BINARY_LIST, 4);
	put_be32(out + n, SPECIFIED_LOAD_UNLOAD_CYCLES);
	n += 4;
	n += spc_log_param(out + n, 0x0006, CTRL_BINARY_LIST, 4);
	put_be32(out + n, lu->log->load_unload_cycles);
	n += 4;
	return n;
}

/* ---- 10h Self-Test Results (SPC-4 7.3.17) ---- */

static size_t build_self_tests(struct scsi_lu *lu, uint8_t pc, uint8_t *out, size_t max)
{
	size_t n = 0;

	(void)pc;
	(void)max;
	for (int i = 0; i < SPC_SELF_TEST_LOG_ENTRIES; i++) {
		const struct spc_self_test_entry *e = &lu->log->self_tests[i];
		uint8_t *p = out + n;

		n += spc_log_param(p, (uint16_t)(i + 1), CTRL_BINARY_LIST, 0x10);
		/* Unused entries are zero-filled (SPC-4 7.3.17). */
		if (e->code || e->result || e->hours || e->number || e->sense_key) {
			p[4] = (uint8_t)(e->code << 5 | (e->result & 0x0f));
			p[5] = e->number;
			put_be16(p + 6, e->hours);
			put_be64(p + 8, e->first_failure);
			p[16] = e->sense_key & 0x0f;
			p[17] = e->asc;
			p[18] = e->ascq;
		}
		n += 0x10;
	}
	return n;
}

/* ---- 15h Background Scan Results (SBC-4 6.4.2): the status parameter ---- */

static size_t build_background_scan(struct scsi_lu *lu, uint8_t pc, uint8_t *out, size_t max)
{
	uint64_t minutes = spc_log_power_on_minutes(lu);

	(void)pc;
	(void)max;
	spc_log_param(out, 0x0000, CTRL_BINARY_LIST, 0x0c);
	put_be32(out + 4, minutes > UINT32_MAX ? UINT32_MAX : (uint32_t)minutes);
	out[8] = 0;
	out[9] = 0x00;  /* BACKGROUND SCAN STATUS: no background scans active */
	put_be16(out + 10, 0); /* NUMBER OF BACKGROUND SCANS PERFORMED */
	put_be16(out + 12, 0); /* BACKGROUND SCAN PROGRESS */
	put_be16(out + 14, 0); /* NUMBER OF BACKGROUND MEDIUM SCANS PERFORMED */
	return 16;
}

/* ---- 19h General Statistics and Performance (SPC-4 7.3.9) ---- */

static size_t build_general_stats(struct scsi_lu *lu, uint8_t pc, uint8_t *out, size_t max)
{
	const struct spc_log_state *log = lu->log;
	size_t n = 0;

	(void)max;
	/* 0001h General Access Statistics and Performance: the interval unit is 0003h's, 1 ms. */
	n += spc_log_param(out + n, 0x0001, 0x02, 0x40);
	put_be64(out + n, counter(pc, log->read_commands));
	put_be64(out + n + 8, counter(pc, log->write_commands));
	put_be64(out + n + 16, counter(pc, log->blocks_written));  /* LOGICAL BLOCKS RECEIVED */
	put_be64(out + n + 24, counter(pc, log->blocks_read));     /* LOGICAL BLOCKS TRANSMITTED */
	put_be64(out + n + 32, counter(pc, log->read_ms));         /* READ COMMAND PROCESSING INTERVALS */
	put_be64(out + n + 40, counter(pc, log->write_ms));        /* WRITE COMMAND PROCESSING INTERVALS */
	put_be64(out + n + 48, 0);                                 /* WEIGHTED NUMBER OF READ COMMANDS PLUS WRITE COMMANDS */
	put_be64(out + n + 56, 0);                                 /* WEIGHTED READ COMMANDS PLUS WRITE COMMANDS PROCESSING */
	n += 0x40;
	/* 0002h Idle Time: not measured. */
	n += spc_log_param(out + n, 0x0002, 0x02, 0x08);
	put_be64(out + n, 0);
	n += 8;
	/* 0003h Time Interval: EXPONENT 3, INTEGER 1 (10^-3 s). */
	n += spc_log_param(out + n, 0x0003, CTRL_BINARY_LIST, 0x08);
	put_be32(out + n, 3);
	put_be32(out + n + 4, 1);
	n += 8;
	return n;
}

static void reset_general_stats(struct scsi_lu *lu)
{
	struct spc_log_state *log = lu->log;

	log->read_commands = log->write_commands = 0;
	log->blocks_read = log->blocks_written = 0;
	log->read_ms = log->write_ms = 0;
}

/*
 * ---- 19h/21h Command Duration Limits Statistics (SPC-6; the layout sg3_utils
 * sg_logs decodes, show_cmd_dur_limits_page(); /tmp/research/cdl_prio.md 2) ----
 */

static bool cdl_present(const struct scsi_lu *lu)
{
	return lu->params.cdl_pages != SCSI_CDL_NONE;
}

static size_t build_cdl_stats(struct scsi_lu *lu, uint8_t pc, uint8_t *out, size_t max)
{
	size_t n = 0;

	(void)max;
	/* 0001h ACHIEVABLE LATENCY TARGET (microseconds): none promised. */
	n += spc_log_param(out + n, 0x0001, CTRL_BINARY_LIST, 4);
	put_be32(out + n, 0);
	n += 4;
	for (int t = 0; t < 2; t++) {
		for (int i = 0; i < 7; i++) {
			const struct scsi_cdl_descriptor_stats *s = &lu->cdl_stats[t][i];

			n += spc_log_param(out + n, (uint16_t)((t ? 0x41 : 0x21) + i), 0x02, 0x10);
			put_be32(out + n, (uint32_t)counter(pc, s->inactive_miss));
			put_be32(out + n + 4, (uint32_t)counter(pc, s->active_miss));
			put_be32(out + n + 8, (uint32_t)counter(pc, s->both_miss));
			put_be32(out + n + 12, (uint32_t)counter(pc, s->commands));
			n += 0x10;
		}
	}
	return n;
}

static void reset_cdl_stats(struct scsi_lu *lu)
{
	memset(lu->cdl_stats, 0, sizeof(lu->cdl_stats));
}

static int set_cdl_stats(struct scsi_lu *lu, const uint8_t *param, bool apply)
{
	uint16_t code = get_be16(param);
	struct scsi_cdl_descriptor_stats *s;

	if (code >= 0x21 && code <= 0x27)
		s = &lu->cdl_stats[0][code - 0x21];
	else if (code >= 0x41 && code <= 0x47)
		s = &lu->cdl_stats[1][code - 0x41];
	else
		return 0;
	if (param[3] != 0x10)
		return 3;
	if (apply) {
		s->inactive_miss = get_be32(param + 4);
		s->active_miss = get_be32(param + 8);
		s->both_miss = get_be32(param + 12);
		s->commands = get_be32(param + 16);
	}
	return -1;
}

/* ---- 2Fh Informational Exceptions (SPC-4 7.3.8) ---- */

static size_t build_ie(struct scsi_lu *lu, uint8_t pc, uint8_t *out, size_t max)
{
	uint16_t ie = spc_ie_current(lu);

	(void)pc;
	(void)max;
	/* Length 4 (SPC-4 says at least 3): ASC, ASCQ, MOST RECENT TEMPERATURE READING, and the trip temperature
	 * in the vendor byte, where smartctl looks for it when 0Dh is absent. */
	spc_log_param(out, 0x0000, CTRL_BINARY_LIST, 4);
	out[4] = (uint8_t)(ie >> 8);
	out[5] = (uint8_t)ie;
	out[6] = spc_ie_temperature(lu);
	out[7] = spc_ie_threshold(lu);
	return 8;
}

#define LOG_PAGE(nm, code, sub) .name = nm, .page_code = code, .subpage_code = sub

const struct spc_log_page_def spc_log_pages[] = {
	{ LOG_PAGE("Supported Log Pages", 0x00, 0x00), .build = build_supported },
	{ LOG_PAGE("Write Error Counter", 0x02, 0x00), .build = build_write_errors, .reset = reset_write_errors,
	  .set = set_write_error },
	{ LOG_PAGE("Read Error Counter", 0x03, 0x00), .build = build_read_errors, .reset = reset_read_errors,
	  .set = set_read_error },
	{ LOG_PAGE("Verify Error Counter", 0x05, 0x00), .build = build_verify_errors, .reset = reset_verify_errors,
	  .set = set_verify_error },
	{ LOG_PAGE("Non-Medium Error", 0x06, 0x00), .build = build_non_medium, .reset = reset_non_medium,
	  .set = set_non_medium },
	{ LOG_PAGE("Logical Block Provisioning", 0x0c, 0x00), .ds = true, .present = lbp_present, .gather = gather_lbp,
	  .build_gathered = build_lbp },
	{ LOG_PAGE("Temperature", 0x0d, 0x00), .ds = true, .build = build_temperature },
	{ LOG_PAGE("Start-Stop Cycle Counter", 0x0e, 0x00), .build = build_start_stop },
	{ LOG_PAGE("Self-Test Results", 0x10, 0x00), .build = build_self_tests },
	{ LOG_PAGE("Background Scan Results", 0x15, 0x00), .build = build_background_scan },
	{ LOG_PAGE("General Statistics and Performance", 0x19, 0x00), .build = build_general_stats,
	  .reset = reset_general_stats },
	{ LOG_PAGE("Command Duration Limits Statistics", 0x19, 0x21), .present = cdl_present, .build = build_cdl_stats,
	  .reset = reset_cdl_stats, .set = set_cdl_stats },
	{ LOG_PAGE("Informational Exceptions", 0x2f, 0x00), .ds = true, .build = build_ie },
};

const size_t spc_log_pages_len = sizeof(spc_log_pages) / sizeof(spc_log_pages[0]);
