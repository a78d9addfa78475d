/*
 * LOG SENSE (SPC-4 6.6) and LOG SELECT (SPC-4 6.5), driven by one table of
 * pages (spc_log_pages[], spc_log_pages.c), as the opcode table drives
 * dispatch: a page exists for an LU when its row is there and present()
 * agrees, and the Supported Log Pages (00h), Supported Log Pages and
 * Subpages (00h/FFh) and Supported Subpages (xxh/FFh) pages are computed
 * from the same rows, so they always list exactly what is served.
 *
 * LOG SENSE CDB: byte 1 PPC (bit 1), SP (bit 0); byte 2 PC (bits 7:6) and
 * PAGE CODE; byte 3 SUBPAGE CODE; bytes 5-6 PARAMETER POINTER; bytes 7-8
 * ALLOCATION LENGTH.
 *   - a page or subpage the LU does not have -> 05/24/00 with the field
 *     pointer on the PAGE CODE (byte 2 bit 5) or SUBPAGE CODE (byte 3 bit 7);
 *     cdladm accepts only this answer for a page a device lacks;
 *   - parameters are returned in ascending parameter code order from the
 *     PARAMETER POINTER on; a pointer past the largest parameter code of the
 *     page -> 05/24/00 on byte 5 (SPC-4 6.6);
 *   - PPC = 1: only the parameters whose value changed since the last LOG
 *     SENSE of the page or LOG SELECT (SPC-4 6.6);
 *   - SP = 1: the log parameters are saved (the "log_pages" state file)
 *     once the page is built, and the command completes after the write;
 *   - PC: 01b current cumulative, 11b default cumulative (the values a
 *     reset gives), 00b / 10b current / default threshold values (no
 *     threshold is set: the counters' thresholds are their defaults, 0);
 *     list parameters read the same whatever PC asks;
 *   - the allocation length truncates (sg_logs and smartctl probe with 4);
 *   - a page whose values come from the backend (a gather step in its
 *     row: Logical Block Provisioning, 0Ch) asks it on a worker first.
 *
 * LOG SELECT CDB: byte 1 PCR (bit 1), SP (bit 0); byte 2 PC and PAGE CODE;
 * byte 3 SUBPAGE CODE; bytes 7-8 PARAMETER LIST LENGTH.
 *   - PCR = 1 with a parameter list -> 05/24/00 on byte 1 bit 1 (SPC-4 6.5);
 *   - a parameter list with PAGE CODE or SUBPAGE CODE not zero -> 05/24/00
 *     (SPC-4 6.5: the pages come from the parameter data);
 *   - a parameter list with PC other than 01b -> 05/24/00 on byte 2 bit 7:
 *     no threshold can be set and default values cannot be changed;
 *   - no parameter list: PAGE CODE / SUBPAGE CODE choose the pages (00h/00h
 *     every page, xxh/FFh every subpage of xxh, else one page; SPC-4 table
 *     147); PCR = 1, or PC = 01b, sets their cumulative values to the
 *     defaults; PC = 00b / 10b set thresholds to their defaults (nothing to
 *     do), 11b changes nothing;
 *   - a parameter list is checked whole before anything changes: a page
 *     the LU lacks or whose parameters cannot be set, a parameter code the
 *     page does not have or that is not a settable counter, parameters out
 *     of ascending order -> 05/26/00 with the field pointer on it; a page
 *     length that cuts a parameter -> 05/26/00 on the PAGE LENGTH; a
 *     parameter list length that cuts a page -> 05/1A/00 PARAMETER LIST
 *     LENGTH ERROR;
 *   - SP = 1: the result is saved.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sched/timer.h"
#include "spc/spc.h"

#define LOG_FILE_NAME "log_pages"
#define LOG_PAGE_MAX 8192 /* parameters of the longest page (00h/FFh of a full table is far less) */

#define LOG_SUPPORTED_SUBPAGES 0xff

/* ---- the table's views ---- */

bool spc_log_page_present(const struct scsi_lu *lu, size_t i)
{
	return !spc_log_pages[i].present || spc_log_pages[i].present(lu);
}

static int find_page(const struct scsi_lu *lu, uint8_t page, uint8_t sub)
{
	for (size_t i = 0; i < spc_log_pages_len; i++)
		if (spc_log_pages[i].page_code == page && spc_log_pages[i].subpage_code == sub &&
		    spc_log_page_present(lu, i))
			return (int)i;
	return -1;
}

static bool page_code_present(const struct scsi_lu *lu, uint8_t page)
{
	for (size_t i = 0; i < spc_log_pages_len; i++)
		if (spc_log_pages[i].page_code == page && spc_log_page_present(lu, i))
			return true;
	return false;
}

size_t spc_log_param(uint8_t *out, uint16_t code, uint8_t control, uint8_t len)
{
	put_be16(out, code);
	out[2] = control;
	out[3] = len;
	return 4;
}

/* Supported Subpages (SPC-4 7.3.19): the (page, subpage) pairs of page code page, its own xxh/FFh included. */
static size_t build_subpages(const struct scsi_lu *lu, uint8_t page, uint8_t *out)
{
	size_t n = 0;

	for (size_t i = 0; i < spc_log_pages_len; i++) {
		if (spc_log_pages[i].page_code != page || !spc_log_page_present(lu, i))
			continue;
		out[n++] = page;
		out[n++] = spc_log_pages[i].subpage_code;
	}
	out[n++] = page;
	out[n++] = LOG_SUPPORTED_SUBPAGES;
	return n;
}

/* ---- LOG SENSE ---- */

/* The parameter at p (avail bytes left): its whole length, or 0 if it runs past the end. */
static size_t param_len(const uint8_t *p, size_t avail)
{
	if (avail < 4 || (size_t)p[3] + 4 > avail)
		return 0;
	return (size_t)p[3] + 4;
}

/* Whether parameter p (its whole bytes) appears unchanged in the page's last parameters. */
static bool param_unchanged(const struct spc_log_state *log, size_t i, const uint8_t *p, size_t len)
{
	const uint8_t *q = log->last[i];
	size_t left = log->last_len[i];

	while (q && left >= 4) {
		size_t n = param_len(q, left);

		if (!n)
			break;
		if (get_be16(q) == get_be16(p))
			return n == len && memcmp(q, p, n) == 0;
		q += n;
		left -= n;
	}
	return false;
}

static void remember_page(struct spc_log_state *log, size_t i, const uint8_t *params, size_t len)
{
	uint8_t *copy;

	if (i >= sizeof(log->last) / sizeof(log->last[0]))
		return;
	copy = malloc(len ? len : 1);
	if (!copy)
		return;
	memcpy(copy, params, len);
	free(log->last[i]);
	log->last[i] = copy;
	log->last_len[i] = (uint16_t)len;
}

static void forget_pages(struct spc_log_state *log)
{
	for (size_t i = 0; i < sizeof(log->last) / sizeof(log->last[0]); i++) {
		free(log->last[i]);
		log->last[i] = NULL;
		log->last_len[i] = 0;
	}
}

static enum scsi_result save_done(struct scsi_cmd *cmd)
{
	(void)cmd;
	return SCSI_OK;
}

/* SP = 1: the log parameters go to the state file; cmd completes after the write. */
static enum scsi_result save_log(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	size_t len;
	uint8_t *img = spc_log_save_image(lu, &len);

	if (!img)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	return spc_persist_cmd(cmd, &lu->log->file, img, len, save_done);
}

/*
 * Builds page idx (or, idx -1, the list page the CDB names) and returns it
 * as the CDB asks; g: what the page's gather step learned (NULL: none).
 * The CDB was checked by spc_log_sense_exec.
 */
static enum scsi_result log_sense_finish(struct scsi_cmd *cmd, int idx, const struct spc_log_gathered *g)
{
	struct scsi_lu *lu = cmd->lu;
	struct spc_log_state *log = lu->log;
	const uint8_t *cdb = cmd->cdb;
	bool ppc = cdb[1] & 0x02, sp = cdb[1] & 0x01;
	uint8_t pc = cdb[2] >> 6, page = cdb[2] & 0x3f, sub = cdb[3];
	uint16_t pointer = get_be16(cdb + 5);
	uint8_t *params, *b;
	size_t len = 0, out = 0;
	bool list_page = false;

	params = calloc(1, LOG_PAGE_MAX);
	if (!params)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	if (idx < 0) {
		/* 00h/FFh: every page and subpage; xxh/FFh: the subpages of xxh (SPC-4 7.3.18, 7.3.19). */
		for (unsigned p = 0; p < 0x40; p++)
			if ((page == 0 || p == page) && page_code_present(lu, (uint8_t)p))
				len += build_subpages(lu, (uint8_t)p, params + len);
		list_page = true;
	} else {
		const struct spc_log_page_def *d = &spc_log_pages[idx];

		len = d->gather ? d->build_gathered(lu, pc, g, params, LOG_PAGE_MAX) : d->build(lu, pc, params, LOG_PAGE_MAX);
		list_page = page == 0 && sub == 0;
	}

	b = scsi_cmd_alloc_data_in(cmd, 4 + len);
	if (!b) {
		free(params);
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	}
	b[0] = (uint8_t)(page | (sub ? 0x40 : 0) | (idx >= 0 && spc_log_pages[idx].ds ? 0x80 : 0));
	b[1] = sub;
	if (list_page) {
		/* The supported pages lists have no parameters: the pointer has nothing to point at. */
		if (pointer) {
			free(params);
			return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(5, 7));
		}
		memcpy(b + 4, params, len);
		out = len;
	} else {
		uint16_t largest = 0;
		bool any = false;

		for (size_t off = 0, n; off < len && (n = param_len(params + off, len - off)); off += n) {
			uint16_t code = get_be16(params + off);

			largest = code > largest ? code : largest;
			any = true;
			if (code < pointer || (ppc && param_unchanged(log, (size_t)idx, params + off, n)))
				continue;
			memcpy(b + 4 + out, params + off, n);
			out += n;
		}
		if (pointer && (!any || pointer > largest)) {
			free(params);
			return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(5, 7));
		}
		if (pc == 1)
			remember_page(log, (size_t)idx, params, len);
	}
	free(params);
	put_be16(b + 2, (uint16_t)out);
	cmd->data_in_len = (uint32_t)(4 + out);
	scsi_cmd_limit_data_in(cmd, cmd->allocation_length);
	return sp ? save_log(cmd) : SCSI_OK;
}

/* A page with a gather step: which page, and what the worker learned. */
struct log_sense_job {
	int idx;
	struct spc_log_gathered g;
};

/* On a worker: the page's backend calls.  A backend that cannot tell is no error (the page says so). */
static void log_sense_gather_work(struct scsi_cmd *cmd)
{
	struct log_sense_job *job = cmd->handler_state;

	spc_log_pages[job->idx].gather(cmd->lu, &job->g);
	if (job->g.allocated_rc < 0 && job->g.allocated_rc != -EOPNOTSUPP)
		scsi_cmd_fail_errno(cmd, job->g.allocated_rc, false);
}

/* Back on the loop thread.  (SP = 1 may replace handler_state: nothing of job is used after the build.) */
static enum scsi_result log_sense_gather_after(struct scsi_cmd *cmd)
{
	struct log_sense_job *job = cmd->handler_state;
	struct spc_log_gathered g = job->g;

	return log_sense_finish(cmd, job->idx, &g);
}

enum scsi_result spc_log_sense_exec(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	const uint8_t *cdb = cmd->cdb;
	uint8_t page = cdb[2] & 0x3f, sub = cdb[3];
	struct log_sense_job *job;
	int idx;

	cmd->allocation_length = get_be16(cdb + 7);
	if (!lu->log)
		return scsi_cmd_fail(cmd, sense_invalid_command_operation_code());
	if (sub == LOG_SUPPORTED_SUBPAGES) {
		if (page != 0 && !page_code_present(lu, page))
			return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(2, 5));
		return log_sense_finish(cmd, -1, NULL);
	}
	idx = find_page(lu, page, sub);
	if (idx < 0)
		return scsi_cmd_fail(cmd, page_code_present(lu, page) ? sense_invalid_field_in_cdb(3, 7)
								       : sense_invalid_field_in_cdb(2, 5));
	if (!spc_log_pages[idx].gather)
		return log_sense_finish(cmd, idx, NULL);
	/* The page's values come from the backend: asked on a worker, never on the loop thread. */
	job = calloc(1, sizeof(*job));
	if (!job)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	job->idx = idx;
	if (cmd->handler_state && cmd->handler_state_free)
		cmd->handler_state_free(cmd->handler_state);
	cmd->handler_state = job;
	cmd->handler_state_free = free;
	return scsi_cmd_run_io(cmd, log_sense_gather_work, log_sense_gather_after);
}

/* ---- LOG SELECT ---- */

enum scsi_result spc_log_select_parse(struct scsi_cmd *cmd)
{
	const uint8_t *cdb = cmd->cdb;
	bool pcr = cdb[1] & 0x02;
	uint8_t pc = cdb[2] >> 6, page = cdb[2] & 0x3f, sub = cdb[3];
	uint16_t len = get_be16(cdb + 7);

	if (pcr && len)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(1, 1));
	if (len && page)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(2, 5));
	if (len && sub)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(3, 7));
	if (len && pc != 1)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(2, 7));
	/* No parameter list: the pages named must exist (00h/FFh, like 00h/00h, names them all). */
	if (!len && page && !page_code_present(cmd->lu, page))
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(2, 5));
	if (!len && sub && sub != LOG_SUPPORTED_SUBPAGES && find_page(cmd->lu, page, sub) < 0)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(3, 7));
	if (!len && page && !sub && find_page(cmd->lu, page, 0) < 0)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(3, 7));
	cmd->data_length = len;
	return SCSI_OK;
}

/* Resets the pages in the scope of a LOG SELECT without parameter list (SPC-4 table 147). */
static void reset_scope(struct scsi_lu *lu, uint8_t page, uint8_t sub)
{
	for (size_t i = 0; i < spc_log_pages_len; i++) {
		const struct spc_log_page_def *d = &spc_log_pages[i];

		if (!d->reset || !spc_log_page_present(lu, i))
			continue;
		if ((page || sub) &&
		    !(d->page_code == page && (sub == LOG_SUPPORTED_SUBPAGES || d->subpage_code == sub)))
			continue;
		d->reset(lu);
	}
}

/*
 * Walks the log pages of a parameter list: checks all of it (apply false)
 * or takes the values (apply true).  Returns true, or false with cmd failed.
 */
static bool walk_list(struct scsi_cmd *cmd, const uint8_t *p, size_t len, bool apply)
{
	struct scsi_lu *lu = cmd->lu;
	size_t off = 0;

	while (off < len) {
		uint8_t page, sub;
		size_t plen, poff;
		int idx;
		int last_code = -1;

		if (len - off < 4) {
			scsi_cmd_fail(cmd, sense_parameter_list_length_error());
			return false;
		}
		page = p[off] & 0x3f;
		sub = (p[off] & 0x40) ? p[off + 1] : 0;
		plen = get_be16(p + off + 2);
		idx = find_page(lu, page, sub);
		if (idx < 0 || !spc_log_pages[idx].set) {
			scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list((uint16_t)off, 5));
			return false;
		}
		if (4 + plen > len - off) {
			scsi_cmd_fail(cmd, sense_parameter_list_length_error());
			return false;
		}
		for (poff = off + 4; poff < off + 4 + plen;) {
			size_t n = param_len(p + poff, off + 4 + plen - poff);
			int bad;

			if (!n) {
				scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list((uint16_t)(off + 2), 7));
				return false;
			}
			/* SPC-4 6.5: parameters in ascending order of parameter code. */
			if ((int)get_be16(p + poff) <= last_code) {
				scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list((uint16_t)poff, 7));
				return false;
			}
			last_code = get_be16(p + poff);
			bad = spc_log_pages[idx].set(lu, p + poff, apply);
			if (bad >= 0) {
				scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list((uint16_t)(poff + (size_t)bad), 7));
				return false;
			}
			poff += n;
		}
		off += 4 + plen;
	}
	return true;
}

enum scsi_result spc_log_select_exec(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	const uint8_t *cdb = cmd->cdb;
	bool pcr = cdb[1] & 0x02, sp = cdb[1] & 0x01;
	uint8_t pc = cdb[2] >> 6, page = cdb[2] & 0x3f, sub = cdb[3];

	if (!lu->log)
		return scsi_cmd_fail(cmd, sense_invalid_command_operation_code());
	if (cmd->data_length) {
		const uint8_t *p = scsi_cmd_data_out_contig(cmd);
		size_t len = cmd->data_out_len < cmd->data_length ? cmd->data_out_len : cmd->data_length;

		if (!p)
			return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
		if (!walk_list(cmd, p, len, false))
			return SCSI_FAILED;
		walk_list(cmd, p, len, true);
	} else if (pcr || pc == 1) {
		reset_scope(lu, page, sub);
	}
	lu->log->changes++;
	forget_pages(lu->log);
	return sp ? save_log(cmd) : SCSI_OK;
}

/* ---- state: set-up, the saved parameters ---- */

/*
 * File image: "SBCELOGP", u32 version, then the counters as big-endian u64
 * in the order below, then the self-test log entries (20 x 16 bytes).
 */
#define LOG_FILE_MAGIC "SBCELOGP"
#define LOG_FILE_VERSION 1
#define LOG_FILE_COUNTERS (SPC_ERR_DIRS * SPC_ERR_PARAMS + 10 + 2 * 7 * 4)
#define LOG_FILE_LEN (12 + 8 * LOG_FILE_COUNTERS + 16 * SPC_SELF_TEST_LOG_ENTRIES)

/* Calls fn on each saved counter in file order (u64 or u32 behind it). */
static void counters_walk(struct scsi_lu *lu, uint64_t power_on_minutes, void (*fn)(void *arg, uint64_t *v64, uint32_t *v32),
			  void *arg)
{
	struct spc_log_state *log = lu->log;

	for (int d = 0; d < SPC_ERR_DIRS; d++)
		for (int k = 0; k < SPC_ERR_PARAMS; k++)
			fn(arg, &log->errors[d][k], NULL);
	fn(arg, &log->non_medium_errors, NULL);
	fn(arg, NULL, &log->start_stop_cycles);
	fn(arg, NULL, &log->load_unload_cycles);
	fn(arg, &log->read_commands, NULL);
	fn(arg, &log->write_commands, NULL);
	fn(arg, &log->blocks_read, NULL);
	fn(arg, &log->blocks_written, NULL);
	fn(arg, &log->read_ms, NULL);
	fn(arg, &log->write_ms, NULL);
	(void)power_on_minutes;
	fn(arg, &log->power_on_minutes_base, NULL);
	for (int t = 0; t < 2; t++)
		for (int i = 0; i < 7; i++) {
			fn(arg, NULL, &lu->cdl_stats[t][i].inactive_miss);
			fn(arg, NULL, &lu->cdl_stats[t][i].active_miss);
			fn(arg, NULL, &lu->cdl_stats[t][i].both_miss);
			fn(arg, NULL, &lu->cdl_stats[t][i].commands);
		}
}

struct image_cursor {
	uint8_t *p;
	uint64_t power_on_minutes;
	bool first_power_on;
};

static void put_counter(void *arg, uint64_t *v64, uint32_t *v32)
{
	struct image_cursor *c = arg;

	put_be64(c->p, v64 ? *v64 : *v32);
	c->p += 8;
}

static void get_counter(void *arg, uint64_t *v64, uint32_t *v32)
{
	struct image_cursor *c = arg;
	uint64_t v = get_be64(c->p);

	if (v64)
		*v64 = v;
	else
		*v32 = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
	c->p += 8;
}

uint64_t spc_log_power_on_minutes(const struct scsi_lu *lu)
{
	const struct spc_log_state *log = lu->log;
	uint64_t now = scsi_device_now(lu->dev);

	return log->power_on_minutes_base + (now > log->power_on_ns ? now - log->power_on_ns : 0) / 60000000000ull;
}

uint8_t *spc_log_save_image(const struct scsi_lu *lu, size_t *len)
{
	struct scsi_lu *mlu = (struct scsi_lu *)lu;
	uint8_t *img = calloc(1, LOG_FILE_LEN);
	struct image_cursor c;
	uint64_t base = lu->log->power_on_minutes_base;

	if (!img)
		return NULL;
	memcpy(img, LOG_FILE_MAGIC, 8);
	put_be32(img + 8, LOG_FILE_VERSION);
	c.p = img + 12;
	/* The power-on time saved is all of it so far. */
	mlu->log->power_on_minutes_base = spc_log_power_on_minutes(lu);
	counters_walk(mlu, 0, put_counter, &c);
	mlu->log->power_on_minutes_base = base;
	for (int i = 0; i < SPC_SELF_TEST_LOG_ENTRIES; i++) {
		const struct spc_self_test_entry *e = &lu->log->self_tests[i];

		c.p[0] = e->code;
		c.p[1] = e->result;
		c.p[2] = e->number;
		c.p[3] = e->sense_key;
		put_be16(c.p + 4, e->hours);
		c.p[6] = e->asc;
		c.p[7] = e->ascq;
		put_be64(c.p + 8, e->first_failure);
		c.p += 16;
	}
	*len = LOG_FILE_LEN;
	return img;
}

static void load_image(struct scsi_lu *lu, const uint8_t *img, size_t len)
{
	struct image_cursor c;

	if (len != LOG_FILE_LEN || memcmp(img, LOG_FILE_MAGIC, 8) != 0 || get_be32(img + 8) != LOG_FILE_VERSION)
		return; /* corrupt or from another version: the defaults stand */
	c.p = (uint8_t *)img + 12;
	counters_walk(lu, 0, get_counter, &c);
	for (int i = 0; i < SPC_SELF_TEST_LOG_ENTRIES; i++) {
		struct spc_self_test_entry *e = &lu->log->self_tests[i];

		e->code = c.p[0];
		e->result = c.p[1];
		e->number = c.p[2];
		e->sense_key = c.p[3];
		e->hours = get_be16(c.p + 4);
		e->asc = c.p[6];
		e->ascq = c.p[7];
		e->first_failure = get_be64(c.p + 8);
		/* A test in progress when the power went never finished (SPC-4 7.3.17: aborted otherwise). */
		if (e->result == 0xf)
			e->result = 0x2;
		c.p += 16;
	}
}

int spc_log_init(struct scsi_lu *lu)
{
	struct spc_log_state *log = calloc(1, sizeof(*log));
	uint8_t *img;
	size_t len;
	int rc;

	if (!log)
		return -1;
	lu->log = log;
	log->power_on_ns = scsi_device_now(lu->dev);
	log->st.lu = lu;
	log->ie.lu = lu;
	spc_persist_init(&log->file, lu, LOG_FILE_NAME);
	rc = spc_persist_load(&log->file, &img, &len, 2 * LOG_FILE_LEN);
	if (rc == -ELOOP) { /* a symbolic link in its place: refused, not ignored (nor written over) */
		spc_persist_fini(&log->file);
		free(log);
		lu->log = NULL;
		return -1;
	}
	if (rc == 0) {
		load_image(lu, img, len);
		free(img);
	}
	spc_ie_mode_changed(lu);
	return 0;
}

void spc_log_reload(struct scsi_lu *lu)
{
	struct spc_log_state *log = lu->log;
	uint8_t *img;
	size_t len;

	if (!log || !log->file.shared || spc_persist_load(&log->file, &img, &len, 2 * LOG_FILE_LEN) != 0)
		return;
	load_image(lu, img, len);
	free(img);
	log->changes = 0; /* what is in memory now is what is saved */
}

void spc_log_fini(struct scsi_lu *lu)
{
	struct spc_log_state *log = lu->log;

	if (!log)
		return;
	scsi_timer_cancel(lu->dev, &log->st.timer);
	scsi_timer_cancel(lu->dev, &log->ie.timer);
	/*
	 * GLTSD = 0 (Control mode page): the log parameters are saved at
	 * vendor-specific times; ours are SP = 1, a self-test's end, and here,
	 * when the LU goes (shutdown, LU removal), on the loop thread.
	 */
	if (log->changes) {
		size_t len;
		uint8_t *img = spc_log_save_image(lu, &len);

		if (img) {
			(void)spc_persist_write_now(&log->file, img, len);
			free(img);
		}
	}
	forget_pages(log);
	spc_persist_fini(&log->file);
	free(log);
	lu->log = NULL;
}
