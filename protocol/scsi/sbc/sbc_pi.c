/*
 * Protection information on SBC logical units: checks, generation, the wire
 * and medium forms, and the LU's protection format (sbc_pi.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sbc/sbc.h"

#define FORMAT_STATE_FILE "format"

bool sbc_pi_type2_enabled(const struct scsi_lu *lu)
{
	/* SBC-4 4.22.2.4: READ(32), WRITE(32) and the other 32-byte CDBs exist for type 2. */
	return lu->protection_type == 2;
}

/* The checks of PROTECT on lu, whose command carries expected tags when cdb32 (a 32-byte CDB's; cmd may be NULL else). */
static void checks_init(const struct scsi_lu *lu, const struct scsi_cmd *cmd, bool cdb32, uint8_t protect,
			struct sbc_pi_checks *c)
{
	uint8_t type = lu->protection_type;
	bool all = protect == 0 || protect == 1 || protect == 5;
	bool tags = all || protect == 2;

	*c = (struct sbc_pi_checks){ .type = type };
	c->guard = all || protect == 4;
	c->ref_from_lba = type == 1 || (type == 2 && !cdb32);
	/* Type 2 refs are known only from a 32-byte CDB; type 3 refs are never checked. */
	c->ref = tags && (type == 1 || (type == 2 && cdb32));
	if (!cmd)
		return;
	c->ref_tag = cmd->pi_ref_tag;
	/* ATO = 1: the application tag is checked against the 32-byte CDB's expected tag under its mask. */
	c->app = tags && cdb32 && cmd->pi_app_mask != 0;
	c->app_tag = cmd->pi_app_tag;
	c->app_mask = cmd->pi_app_mask;
}

void sbc_pi_checks_init(const struct scsi_cmd *cmd, uint8_t protect, struct sbc_pi_checks *c)
{
	checks_init(cmd->lu, cmd, cmd->pi_cdb32, protect, c);
}

/* The expected reference tag of interval j of block lba + i; k is its command-relative index. */
static uint32_t expected_ref(bool from_lba, uint32_t first_ref, uint64_t lba, uint64_t i, unsigned j, uint64_t k)
{
	if (from_lba)
		return (uint32_t)(lba + i) + j;
	return first_ref + (uint32_t)k;
}

bool sbc_pi_verify(const struct scsi_lu *lu, const struct sbc_pi_checks *c, const uint8_t *data,
		   const uint8_t *tuples, uint64_t lba, uint32_t nblocks, uint64_t k0, struct scsi_sense_info *s)
{
	unsigned per = sbc_pi_intervals(lu);
	uint32_t il = lu->block_size >> lu->p_i_exponent;

	if (!c->guard && !c->app && !c->ref)
		return true;
	for (uint64_t i = 0; i < nblocks; i++) {
		for (unsigned j = 0; j < per; j++) {
			uint64_t k = k0 + i * per + j;
			struct pi_tuple t = pi_tuple_decode(tuples + (i * per + j) * PI_TUPLE_LEN);
			uint16_t asc = 0;

			if (pi_tuple_is_escape(c->type, t))
				continue;
			if (c->guard && t.guard != pi_guard(data + i * lu->block_size + (uint64_t)j * il, il))
				asc = ASC_LOGICAL_BLOCK_GUARD_CHECK_FAILED;
			else if (c->app && ((t.app_tag ^ c->app_tag) & c->app_mask))
				asc = ASC_LOGICAL_BLOCK_APPLICATION_TAG_CHECK_FAILED;
			else if (c->ref && t.ref_tag != expected_ref(c->ref_from_lba, c->ref_tag, lba, i, j, k))
				asc = ASC_LOGICAL_BLOCK_REFERENCE_TAG_CHECK_FAILED;
			if (asc) {
				/* SBC-4 4.22.4: ABORTED COMMAND, INFORMATION = the LBA of the failing block. */
				*s = sense_with_information(sense_make(SENSE_KEY_ABORTED_COMMAND, asc), lba + i);
				return false;
			}
		}
	}
	return true;
}

/* The tuples of lu's blocks lba.. holding data: guards computed, app_tag, reference tags as c expects them. */
static void generate(const struct scsi_lu *lu, const struct sbc_pi_checks *c, uint16_t app_tag, const uint8_t *data,
		     uint64_t lba, uint32_t nblocks, uint64_t k0, uint8_t *tuples)
{
	unsigned per = sbc_pi_intervals(lu);
	uint32_t il = lu->block_size >> lu->p_i_exponent;

	for (uint64_t i = 0; i < nblocks; i++) {
		for (unsigned j = 0; j < per; j++) {
			uint64_t k = k0 + i * per + j;
			struct pi_tuple t = {
				.guard = pi_guard(data + i * lu->block_size + (uint64_t)j * il, il),
				.app_tag = app_tag,
				.ref_tag = c->type == 3 ? 0 : expected_ref(c->ref_from_lba, c->ref_tag, lba, i, j, k),
			};
			pi_tuple_encode(tuples + (i * per + j) * PI_TUPLE_LEN, t);
		}
	}
}

void sbc_pi_generate(const struct scsi_cmd *cmd, const uint8_t *data, uint64_t lba, uint32_t nblocks, uint64_t k0,
		     uint8_t *tuples)
{
	struct sbc_pi_checks c;

	sbc_pi_checks_init(cmd, 0, &c);
	generate(cmd->lu, &c, cmd->pi_cdb32 ? cmd->pi_app_tag : 0, data, lba, nblocks, k0, tuples);
}

void sbc_pi_copy_checks(const struct scsi_lu *lu, struct sbc_pi_checks *c)
{
	checks_init(lu, NULL, false, 0, c);
}

void sbc_pi_copy_generate(const struct scsi_lu *lu, const uint8_t *data, uint64_t lba, uint32_t nblocks, uint8_t *tuples)
{
	struct sbc_pi_checks c;

	sbc_pi_copy_checks(lu, &c);
	generate(lu, &c, 0, data, lba, nblocks, 0, tuples);
}

void sbc_pi_replicate(const struct scsi_cmd *cmd, const uint8_t *first, uint64_t lba, uint32_t nblocks,
		      uint64_t k0, uint8_t *tuples)
{
	const struct scsi_lu *lu = cmd->lu;
	unsigned per = sbc_pi_intervals(lu);
	struct sbc_pi_checks c;
	uint32_t first_ref = pi_tuple_decode(first).ref_tag;

	sbc_pi_checks_init(cmd, cmd->protect, &c);
	for (uint64_t i = 0; i < nblocks; i++) {
		for (unsigned j = 0; j < per; j++) {
			uint64_t k = k0 + i * per + j;
			struct pi_tuple t = pi_tuple_decode(first + (uint64_t)j * PI_TUPLE_LEN);

			if (c.type != 3)
				t.ref_tag = expected_ref(c.ref_from_lba, first_ref, lba, i, j, k);
			pi_tuple_encode(tuples + (i * per + j) * PI_TUPLE_LEN, t);
		}
	}
}

void sbc_pi_split(const struct scsi_lu *lu, const uint8_t *wire, uint32_t nblocks, uint8_t *data, uint8_t *tuples)
{
	uint64_t n = (uint64_t)nblocks << lu->p_i_exponent;
	uint32_t il = lu->block_size >> lu->p_i_exponent;

	for (uint64_t k = 0; k < n; k++) {
		memcpy(data + k * il, wire, il);
		memcpy(tuples + k * PI_TUPLE_LEN, wire + il, PI_TUPLE_LEN);
		wire += il + PI_TUPLE_LEN;
	}
}

void sbc_pi_join(const struct scsi_lu *lu, const uint8_t *data, const uint8_t *tuples, uint32_t nblocks,
		 uint8_t *wire)
{
	uint64_t n = (uint64_t)nblocks << lu->p_i_exponent;
	uint32_t il = lu->block_size >> lu->p_i_exponent;

	for (uint64_t k = 0; k < n; k++) {
		memcpy(wire, data + k * il, il);
		memcpy(wire + il, tuples + k * PI_TUPLE_LEN, PI_TUPLE_LEN);
		wire += il + PI_TUPLE_LEN;
	}
}

void sbc_pi_medium_form(uint8_t *tuples, uint64_t len)
{
	for (uint64_t i = 0; i < len; i++)
		tuples[i] = (uint8_t)~tuples[i];
}

int sbc_write_data_prepare(const struct scsi_cmd *cmd, const uint8_t *wire, uint64_t lba, uint32_t nblocks,
			   uint64_t k0, struct sbc_write_data *w, struct scsi_sense_info *s)
{
	const struct scsi_lu *lu = cmd->lu;
	uint64_t data_len = (uint64_t)nblocks * lu->block_size;
	uint64_t tuple_len = sbc_pi_bytes(lu, nblocks);
	struct sbc_pi_checks c;

	*w = (struct sbc_write_data){ .data = wire };
	if (!sbc_lu_has_pi(lu))
		return 0;
	if (cmd->protect == 0) {
		w->owned = malloc(tuple_len ? tuple_len : 1);
		if (!w->owned)
			return -ENOMEM;
		w->tuples = w->owned;
		sbc_pi_generate(cmd, wire, lba, nblocks, k0, w->tuples);
		return 0;
	}
	w->owned = malloc(data_len + tuple_len + 1);
	if (!w->owned)
		return -ENOMEM;
	w->tuples = w->owned + data_len;
	w->data = w->owned;
	sbc_pi_split(lu, wire, nblocks, w->owned, w->tuples);
	/* SBC-4's WRPROTECT table: the received PI is checked before anything is written. */
	sbc_pi_checks_init(cmd, cmd->protect, &c);
	return sbc_pi_verify(lu, &c, w->data, w->tuples, lba, nblocks, k0, s) ? 0 : 1;
}

void sbc_write_data_free(struct sbc_write_data *w)
{
	free(w->owned);
	*w = (struct sbc_write_data){ 0 };
}

int sbc_pi_store(struct scsi_lu *lu, uint8_t *tuples, uint64_t lba, uint32_t nblocks, unsigned flags)
{
	struct backend *be = lu->backend;
	uint64_t len = sbc_pi_bytes(lu, nblocks);

	sbc_pi_medium_form(tuples, len);
	return be->ops->write(be, tuples, (size_t)len, sbc_pi_offset(lu, lba), flags);
}

int sbc_medium_write_pi(struct scsi_lu *lu, const uint8_t *data, uint8_t *tuples, uint64_t lba, uint32_t nblocks,
			unsigned flags)
{
	struct backend *be = lu->backend;
	int rc;

	rc = be->ops->write(be, data, (size_t)nblocks * lu->block_size, scsi_lu_offset(lu, lba), flags);
	if (rc >= 0 && tuples)
		rc = sbc_pi_store(lu, tuples, lba, nblocks, flags);
	return rc < 0 ? rc : 0;
}

struct pi_corruption {
	const struct scsi_lu *lu;
	uint8_t *tuples;
	uint64_t lba;
	uint32_t nblocks;
};

/* One corrupt-pi rule: flips the lowest bit of its field in the tuples of its blocks in [lba, lba + nblocks). */
static void corrupt_pi(void *arg, enum scsi_pi_field field, uint64_t first_lba, uint64_t last_lba)
{
	const struct pi_corruption *c = arg;
	unsigned per = sbc_pi_intervals(c->lu);
	uint64_t first = first_lba > c->lba ? first_lba : c->lba;
	uint64_t last = last_lba < c->lba + c->nblocks - 1 ? last_lba : c->lba + c->nblocks - 1;

	for (uint64_t b = first; b <= last && first <= last; b++) {
		for (unsigned j = 0; j < per; j++) {
			uint8_t *p = c->tuples + ((b - c->lba) * per + j) * PI_TUPLE_LEN;
			struct pi_tuple t = pi_tuple_decode(p);

			if (pi_tuple_is_escape(c->lu->protection_type, t))
				continue;
			if (field == SCSI_PI_GUARD)
				t.guard ^= 1;
			else if (field == SCSI_PI_APP_TAG)
				t.app_tag ^= 1;
			else
				t.ref_tag ^= 1;
			pi_tuple_encode(p, t);
		}
	}
}

/* One read, as sbc_medium_read_pi's flags say. */
static int medium_read(struct backend *be, void *buf, size_t len, uint64_t offset, unsigned flags)
{
	struct iovec v = { .iov_base = buf, .iov_len = len };

	if (!flags)
		return be->ops->read(be, buf, len, offset);
	return be->ops->readv ? be->ops->readv(be, &v, 1, offset, flags) : -EAGAIN;
}

int sbc_medium_read_pi(struct scsi_lu *lu, uint8_t *data, uint8_t *tuples, uint64_t lba, uint32_t nblocks,
		       unsigned flags)
{
	struct backend *be = lu->backend;
	uint64_t len = sbc_pi_bytes(lu, nblocks);
	int rc = medium_read(be, data, (size_t)nblocks * lu->block_size, scsi_lu_offset(lu, lba), flags);

	if (rc < 0 || !tuples || nblocks == 0)
		return rc < 0 ? rc : 0;
	rc = medium_read(be, tuples, (size_t)len, sbc_pi_offset(lu, lba), flags);
	if (rc < 0)
		return rc;
	sbc_pi_medium_form(tuples, len);
	scsi_fault_corrupt_pi_foreach(lu, corrupt_pi, &(struct pi_corruption){ lu, tuples, lba, nblocks });
	return 0;
}

int sbc_medium_read_checked(struct scsi_lu *lu, const struct sbc_pi_checks *c, uint64_t lba, uint32_t nblocks,
			    uint64_t k0, uint8_t *data, uint8_t *tuples, struct scsi_sense_info *s, unsigned flags)
{
	int rc = sbc_medium_read_pi(lu, data, tuples, lba, nblocks, flags);

	/*
	 * No write of these blocks runs meanwhile (the command holds their LBA
	 * lock), so data and tuples are of one write: a failure is real.
	 */
	if (rc < 0 || !tuples || sbc_pi_verify(lu, c, data, tuples, lba, nblocks, k0, s))
		return rc;
	return 1;
}

int sbc_pi_discard(struct scsi_lu *lu, uint64_t lba, uint64_t nblocks)
{
	struct backend *be = lu->backend;

	if (!sbc_lu_pi_capable(lu) || nblocks == 0)
		return 0;
	/* Zeros in stored form are all-FFh tuples: the escape. */
	return be->ops->write_zeroes(be, sbc_pi_offset(lu, lba), sbc_pi_bytes(lu, nblocks), BE_ZERO_MAY_DISCARD);
}

/* ---- the protection format and its persistence ---- */

static void format_state_path(const struct scsi_lu *lu, char *path, size_t len)
{
	snprintf(path, len, "%s/" FORMAT_STATE_FILE, lu->state_dir);
}

void sbc_pi_set_format(struct scsi_lu *lu, uint8_t protection_type, uint8_t p_i_exponent)
{
	lu->protection_type = protection_type;
	lu->p_i_exponent = p_i_exponent;
	lu->generation++;
}

int sbc_pi_save_format(struct scsi_lu *lu)
{
	char path[PATH_MAX + 16], tmp[PATH_MAX + 32];
	FILE *f;
	int fd, rc = 0;

	format_state_path(lu, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = be_state_open(tmp, O_WRONLY | O_CREAT | O_TRUNC);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		rc = -errno;
		if (fd >= 0)
			close(fd);
		return rc;
	}
	/* The configured format it replaces, then the current one. */
	fprintf(f, "configured %u %u\ncurrent %u %u\n", lu->params.protection_type, lu->params.p_i_exponent,
		lu->protection_type, lu->p_i_exponent);
	if (fflush(f) != 0 || fsync(fileno(f)) != 0)
		rc = -errno;
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -errno;
	return rc;
}

int sbc_pi_init(struct scsi_lu *lu, char *err, size_t errlen)
{
	char path[PATH_MAX + 16];
	unsigned ct, ce, t, e;
	FILE *f;
	int fd;

	lu->protection_type = lu->params.protection_type;
	lu->p_i_exponent = lu->params.p_i_exponent;
	lu->pi_offset = lu->num_blocks * lu->block_size;
	if (!sbc_lu_pi_capable(lu))
		return 0;
	if (lu->backend->size < scsi_lu_backing_bytes(lu->block_size, lu->num_blocks, true)) {
		snprintf(err, errlen, "the backing store has no room for the protection information of %llu blocks",
			 (unsigned long long)lu->num_blocks);
		return -1;
	}
	/* A FORMAT UNIT's choice stands while the configuration asks for what it replaced. */
	format_state_path(lu, path, sizeof(path));
	fd = be_state_open(path, O_RDONLY);
	f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!f) {
		if (fd < 0 && errno == ENOENT)
			return 0; /* never formatted here: the configured format stands */
		snprintf(err, errlen, "cannot read %s: %s", path, be_state_strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (fscanf(f, "configured %u %u current %u %u", &ct, &ce, &t, &e) == 4 && ct == lu->params.protection_type &&
	    ce == lu->params.p_i_exponent && t <= 3 && (lu->block_size >> e) >= 512) {
		lu->protection_type = (uint8_t)t;
		lu->p_i_exponent = (uint8_t)e;
	}
	fclose(f);
	return 0;
}
