/*
 * The persistent zone state of a zoned LU: lu->state_dir/zones.state.
 *
 * Format (all fields big-endian):
 *   header, 64 bytes:
 *     0-7    magic "SBCEZONE"
 *     8-11   version (1)
 *     12-15  record size (32)
 *     16-19  logical block size
 *     20-23  number of zones
 *     24-31  zone size (blocks)
 *     32-35  number of conventional zones
 *     36     zone type of the write pointer zones (2 SWR: host managed; 3 SWP: host aware)
 *     37-39  reserved
 *     40-47  capacity (blocks)
 *     48-63  reserved
 *   then one 32-byte record per zone, zone i at offset 64 + 32 * i:
 *     0      zone type
 *     1      zone condition, as REPORT ZONES encodes it; open conditions are
 *            recorded as CLOSED (EMPTY if the write pointer is at the zone
 *            start): open state is volatile, as on a real drive
 *     2      flags: bit 0 RESET (RWP RECOMMENDED), bit 1 NON_SEQ
 *     3-7    reserved
 *     8-15   zone start LBA (a check)
 *     16-23  write pointer LBA
 *     24-31  reserved
 *
 * A file written for another layout (block size, zone size, zone count,
 * conventional zones, capacity, LU kind) is refused with a message naming
 * both layouts; the zones are never silently reset.
 *
 * Who writes what: the loop thread encodes a zone's record into the shadow
 * table each time the zone changes (zbc_zone_changed, under shadow_lock for
 * the time of a memcpy).  Workers copy records from the shadow and pwrite
 * them; file_lock makes copy + pwrite one step, so a later pwrite always
 * carries a newer state and the file never goes back (an fdatasync for FUA
 * follows, outside the lock).  A 32-byte pwrite
 * inside one page is all or nothing for a killed process (the page cache
 * keeps it); power loss is covered by fdatasync on FUA / SYNCHRONIZE CACHE.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zbc/zbc.h"

#define ZBC_STATE_FILE "zones.state"
#define ZBC_STATE_BLOB "zones" /* its name where the state is kept with the medium */
#define ZBC_STATE_MAGIC "SBCEZONE"
#define ZBC_STATE_VERSION 1
#define ZBC_HEADER_LEN 64
#define ZBC_RECORD_LEN 32

#define ZBC_RECORD_RESET 0x01
#define ZBC_RECORD_NON_SEQ 0x02

_Static_assert(ZBC_HEADER_LEN % ZBC_RECORD_LEN == 0, "records stay aligned to their size");

static uint64_t record_offset(uint32_t index)
{
	return ZBC_HEADER_LEN + (uint64_t)index * ZBC_RECORD_LEN;
}

/* The condition a zone has after a restart. */
static enum zbc_zone_condition durable_condition(const struct zbc_zone *zone)
{
	switch (zone->condition) {
	case ZBC_ZC_IMPLICITLY_OPENED:
	case ZBC_ZC_EXPLICITLY_OPENED:
	case ZBC_ZC_CLOSED:
		return zone->wp == zone->start ? ZBC_ZC_EMPTY : ZBC_ZC_CLOSED;
	case ZBC_ZC_NOT_WRITE_POINTER:
	case ZBC_ZC_EMPTY:
	case ZBC_ZC_READ_ONLY:
	case ZBC_ZC_FULL:
	case ZBC_ZC_OFFLINE:
	case ZBC_ZC_INACTIVE:
		break;
	}
	return zone->condition;
}

static void encode_record(const struct zbc_zone *zone, uint8_t *rec)
{
	memset(rec, 0, ZBC_RECORD_LEN);
	rec[0] = (uint8_t)zone->type;
	rec[1] = (uint8_t)durable_condition(zone);
	rec[2] = (uint8_t)((zone->reset_recommended ? ZBC_RECORD_RESET : 0) | (zone->non_seq ? ZBC_RECORD_NON_SEQ : 0));
	put_be64(rec + 8, zone->start);
	put_be64(rec + 16, zone->wp);
}

static void encode_header(const struct scsi_lu *lu, const struct zbc_state *z, uint8_t *h)
{
	memset(h, 0, ZBC_HEADER_LEN);
	memcpy(h, ZBC_STATE_MAGIC, 8);
	put_be32(h + 8, ZBC_STATE_VERSION);
	put_be32(h + 12, ZBC_RECORD_LEN);
	put_be32(h + 16, lu->block_size);
	put_be32(h + 20, z->nr_zones);
	put_be64(h + 24, z->zone_size);
	put_be32(h + 32, z->nr_conventional);
	h[36] = z->host_aware ? ZBC_ZONE_TYPE_SEQUENTIAL_WRITE_PREFERRED : ZBC_ZONE_TYPE_SEQUENTIAL_WRITE_REQUIRED;
	put_be64(h + 40, lu->num_blocks);
}

void zbc_zone_changed(struct zbc_state *z, struct zbc_zone *zone)
{
	zone->seq++;
	if (!z->shadow)
		return;
	pthread_mutex_lock(&z->shadow_lock);
	encode_record(zone, z->shadow + (uint64_t)zbc_zone_index(z, zone) * ZBC_RECORD_LEN);
	z->shadow_gen++;
	pthread_mutex_unlock(&z->shadow_lock);
}

/* Exactly len bytes at offset (be_pread_all): 0, or a negative errno (-EIO when the file ends first). */
static int pread_all(int fd, uint8_t *buf, size_t len, uint64_t offset)
{
	ssize_t n = be_pread_all(fd, buf, len, offset);

	return n < 0 ? (int)n : (size_t)n < len ? -EIO : 0;
}

/* Whether the zone state is kept anywhere (a file, or with the medium). */
static bool persists(const struct zbc_state *z)
{
	return z->state_fd >= 0 || z->shared;
}

/*
 * Shared: the whole image (header and every record) replaces the blob, one
 * store at a time; a store that a later one already covered (it copied the
 * shadow after this caller's change) is skipped, so concurrent writers share
 * one round trip to the cluster.
 */
static int store_shared(struct zbc_state *z)
{
	size_t records_len = (size_t)z->nr_zones * ZBC_RECORD_LEN;
	uint64_t want, gen;
	int rc = 0;

	pthread_mutex_lock(&z->shadow_lock);
	want = z->shadow_gen;
	pthread_mutex_unlock(&z->shadow_lock);
	pthread_mutex_lock(&z->file_lock);
	if (z->stored_gen < want) {
		pthread_mutex_lock(&z->shadow_lock);
		memcpy(z->image + ZBC_HEADER_LEN, z->shadow, records_len);
		gen = z->shadow_gen;
		pthread_mutex_unlock(&z->shadow_lock);
		rc = z->shared->ops->state_store(z->shared, ZBC_STATE_BLOB, z->image, ZBC_HEADER_LEN + records_len);
		if (rc == 0)
			z->stored_gen = gen;
	}
	pthread_mutex_unlock(&z->file_lock);
	return rc;
}

/* Copies the shadow records [lo, hi] and writes them, as one step against other writers. */
static int write_records(struct zbc_state *z, uint32_t lo, uint32_t hi, unsigned flags)
{
	uint8_t small[8 * ZBC_RECORD_LEN];
	size_t len = (size_t)(hi - lo + 1) * ZBC_RECORD_LEN;
	uint8_t *buf;
	int rc;

	if (z->shared)
		return store_shared(z); /* durable when stored: flags ask nothing more */
	buf = len <= sizeof(small) ? small : malloc(len);
	if (!buf)
		return -ENOMEM;
	pthread_mutex_lock(&z->file_lock);
	pthread_mutex_lock(&z->shadow_lock);
	memcpy(buf, z->shadow + (uint64_t)lo * ZBC_RECORD_LEN, len);
	pthread_mutex_unlock(&z->shadow_lock);
	rc = be_pwrite_all(z->state_fd, buf, len, record_offset(lo), 0);
	pthread_mutex_unlock(&z->file_lock);
	/*
	 * Outside the lock: the records are in the page cache, and an fdatasync
	 * makes them durable whatever newer records other workers write
	 * meanwhile, while those writers need not wait for the device.
	 */
	if (rc == 0 && (flags & BE_WRITE_FUA))
		rc = be_fdatasync(z->state_fd);
	if (buf != small)
		free(buf);
	return rc;
}

int zbc_persist_range(struct scsi_lu *lu, uint64_t lba, uint64_t nblocks, unsigned flags)
{
	struct zbc_state *z = lu->zbc;
	uint64_t lo, hi;

	if (!z || !persists(z) || nblocks == 0 || lba >= lu->num_blocks)
		return 0;
	if (nblocks > lu->num_blocks - lba)
		nblocks = lu->num_blocks - lba;
	lo = lba >> z->zone_shift;
	hi = (lba + nblocks - 1) >> z->zone_shift;
	/* Conventional zones (the first ones) have nothing a write changes. */
	if (lo < z->nr_conventional)
		lo = z->nr_conventional;
	if (lo > hi)
		return (flags & BE_WRITE_FUA) ? zbc_flush(lu) : 0;
	return write_records(z, (uint32_t)lo, (uint32_t)hi, flags);
}

int zbc_persist_all(struct scsi_lu *lu, unsigned flags)
{
	struct zbc_state *z = lu->zbc;

	if (!z || !persists(z))
		return 0;
	return write_records(z, 0, z->nr_zones - 1, flags);
}

int zbc_flush(struct scsi_lu *lu)
{
	struct zbc_state *z = lu->zbc;

	if (!z || z->state_fd < 0)
		return 0; /* none, or shared: every store was durable */
	return be_fdatasync(z->state_fd);
}

int zbc_state_write_now(struct zbc_state *z, uint32_t index)
{
	int rc;

	if (!persists(z))
		return 0;
	rc = write_records(z, index, index, BE_WRITE_FUA);
	if (rc < 0)
		errno = -rc;
	return rc;
}

/* ---- loading ---- */

static void describe(char *buf, size_t len, uint32_t block_size, uint32_t nr_zones, uint64_t zone_size,
		     uint32_t nr_conventional, uint8_t wp_type, uint64_t capacity)
{
	snprintf(buf, len, "%u zones of %llu blocks of %u bytes, %u conventional, %s, capacity %llu blocks",
		 nr_zones, (unsigned long long)zone_size, block_size, nr_conventional,
		 wp_type == ZBC_ZONE_TYPE_SEQUENTIAL_WRITE_PREFERRED ? "host aware" : "host managed",
		 (unsigned long long)capacity);
}

/* Applies one record to its zone.  False if the record cannot belong to it. */
static bool apply_record(struct zbc_zone *zone, const uint8_t *rec)
{
	uint64_t wp = get_be64(rec + 16), end = zone->start + zone->length;
	enum zbc_zone_condition condition = (enum zbc_zone_condition)rec[1];

	if (rec[0] != zone->type || get_be64(rec + 8) != zone->start)
		return false;
	switch (condition) {
	case ZBC_ZC_NOT_WRITE_POINTER:
		if (zbc_is_write_pointer_zone(zone))
			return false;
		break;
	case ZBC_ZC_EMPTY:
	case ZBC_ZC_IMPLICITLY_OPENED:
	case ZBC_ZC_EXPLICITLY_OPENED:
	case ZBC_ZC_CLOSED:
		if (!zbc_is_write_pointer_zone(zone) || wp < zone->start || wp > end)
			return false;
		/* Open zones come back closed (or empty): open state does not survive a restart. */
		condition = wp == zone->start ? ZBC_ZC_EMPTY : ZBC_ZC_CLOSED;
		if (wp == end)
			condition = ZBC_ZC_FULL;
		break;
	case ZBC_ZC_FULL:
		if (!zbc_is_write_pointer_zone(zone))
			return false;
		wp = end;
		break;
	case ZBC_ZC_READ_ONLY:
	case ZBC_ZC_OFFLINE:
		if (wp < zone->start || wp > end)
			wp = zone->start;
		break;
	case ZBC_ZC_INACTIVE:
		/* ZBC-2: a zone of the realm's other domain holds nothing. */
		wp = zone->start;
		break;
	default:
		return false;
	}
	zone->condition = condition;
	zone->wp = wp;
	zone->reset_recommended = rec[2] & ZBC_RECORD_RESET;
	zone->non_seq = rec[2] & ZBC_RECORD_NON_SEQ;
	return true;
}

/* Restores the zones from an image of the state (z->path names where it came from). */
static int load_image(struct scsi_lu *lu, struct zbc_state *z, const uint8_t *img, size_t len, char *err,
		      size_t errlen)
{
	uint8_t want[ZBC_HEADER_LEN];
	char have_text[200], want_text[200];

	if (len < ZBC_HEADER_LEN || memcmp(img, ZBC_STATE_MAGIC, 8) != 0 || get_be32(img + 8) != ZBC_STATE_VERSION ||
	    get_be32(img + 12) != ZBC_RECORD_LEN) {
		snprintf(err, errlen, "%s is not a zone state file of this version", z->path);
		return -1;
	}
	encode_header(lu, z, want);
	if (memcmp(img + 16, want + 16, ZBC_HEADER_LEN - 16) != 0) {
		describe(have_text, sizeof(have_text), get_be32(img + 16), get_be32(img + 20), get_be64(img + 24),
			 get_be32(img + 32), img[36], get_be64(img + 40));
		describe(want_text, sizeof(want_text), get_be32(want + 16), get_be32(want + 20),
			 get_be64(want + 24), get_be32(want + 32), want[36], get_be64(want + 40));
		snprintf(err, errlen, "%s was written for %s; this LU has %s (remove the file to start with empty zones)",
			 z->path, have_text, want_text);
		return -1;
	}
	if (len != record_offset(z->nr_zones)) {
		snprintf(err, errlen, "%s has %llu bytes, expected %llu (truncated?)", z->path, (unsigned long long)len,
			 (unsigned long long)record_offset(z->nr_zones));
		return -1;
	}
	for (uint32_t i = 0; i < z->nr_zones; i++) {
		if (!apply_record(&z->zones[i], img + record_offset(i))) {
			snprintf(err, errlen, "%s: the record of zone %u (start LBA %llu) is corrupt", z->path, i,
				 (unsigned long long)z->zones[i].start);
			return -1;
		}
	}
	return 0;
}

static int load(struct scsi_lu *lu, struct zbc_state *z, uint64_t file_size, char *err, size_t errlen)
{
	uint8_t *img;
	int rc;

	if (file_size > record_offset(z->nr_zones) + ZBC_HEADER_LEN)
		file_size = record_offset(z->nr_zones) + ZBC_HEADER_LEN; /* too long: load_image says so */
	img = malloc(file_size ? file_size : 1);
	if (!img) {
		snprintf(err, errlen, "out of memory reading %s", z->path);
		return -1;
	}
	rc = pread_all(z->state_fd, img, file_size, 0);
	if (rc != 0) {
		snprintf(err, errlen, "cannot read %s: %s", z->path, strerror(-rc));
		free(img);
		return -1;
	}
	rc = load_image(lu, z, img, file_size, err, errlen);
	free(img);
	return rc;
}

static int create(struct scsi_lu *lu, struct zbc_state *z, char *err, size_t errlen)
{
	uint8_t header[ZBC_HEADER_LEN];
	int rc;

	encode_header(lu, z, header);
	rc = be_pwrite_all(z->state_fd, header, sizeof(header), 0, 0);
	if (rc == 0)
		rc = be_pwrite_all(z->state_fd, z->shadow, (size_t)z->nr_zones * ZBC_RECORD_LEN, ZBC_HEADER_LEN, 0);
	if (rc == 0)
		rc = be_fdatasync(z->state_fd);
	if (rc != 0) {
		snprintf(err, errlen, "cannot write %s: %s", z->path, strerror(-rc));
		return -1;
	}
	return 0;
}

static int encode_shadow(struct zbc_state *z, char *err, size_t errlen)
{
	z->shadow = malloc((size_t)z->nr_zones * ZBC_RECORD_LEN);
	if (!z->shadow) {
		snprintf(err, errlen, "out of memory for the zone records");
		return -1;
	}
	for (uint32_t i = 0; i < z->nr_zones; i++)
		encode_record(&z->zones[i], z->shadow + (uint64_t)i * ZBC_RECORD_LEN);
	return 0;
}

/*
 * The state kept with the medium: loaded if the backend has it, stored
 * first if the backend is open and has none; a backend still being opened
 * has nothing to give yet (zbc_reload then).
 */
static int open_shared(struct scsi_lu *lu, struct zbc_state *z, char *err, size_t errlen)
{
	size_t len = record_offset(z->nr_zones);
	uint8_t *img;
	size_t have;
	int rc;

	z->shared = lu->backend;
	snprintf(z->path, sizeof(z->path), "the zone state kept with the medium (%s)", ZBC_STATE_BLOB);
	z->image = malloc(len);
	if (!z->image) {
		snprintf(err, errlen, "out of memory for the zone records");
		return -1;
	}
	encode_header(lu, z, z->image);
	rc = z->shared->ops->state_load(z->shared, ZBC_STATE_BLOB, &img, &have, len + ZBC_HEADER_LEN);
	if (rc == 0) {
		rc = load_image(lu, z, img, have, err, errlen);
		free(img);
		if (rc != 0)
			return -1;
	} else if (rc != -ENOENT && rc != -ESHUTDOWN) {
		snprintf(err, errlen, "cannot read %s: %s", z->path, strerror(-rc));
		return -1;
	}
	if (encode_shadow(z, err, errlen) != 0)
		return -1;
	if (rc == -ENOENT) {
		z->shadow_gen = 1;
		rc = store_shared(z);
		if (rc != 0) {
			snprintf(err, errlen, "cannot write %s: %s", z->path, strerror(-rc));
			return -1;
		}
	}
	return 0;
}

void zbc_reload(struct scsi_lu *lu)
{
	struct zbc_state *z = lu->zbc;
	char err[300];
	uint8_t *img;
	size_t have;

	if (!z || !z->shared ||
	    z->shared->ops->state_load(z->shared, ZBC_STATE_BLOB, &img, &have, record_offset(z->nr_zones) + ZBC_HEADER_LEN) != 0)
		return;
	if (load_image(lu, z, img, have, err, sizeof(err)) == 0) {
		/* Loaded zones are never open (apply_record). */
		z->nr_implicit_open = 0;
		z->nr_explicit_open = 0;
		for (uint32_t i = 0; i < z->nr_zones; i++)
			zbc_zone_changed(z, &z->zones[i]);
	}
	free(img);
}

int zbc_state_open(struct scsi_lu *lu, char *err, size_t errlen)
{
	struct zbc_state *z = lu->zbc;
	struct stat st;

	if (lu->backend && lu->backend->ops->state_load && lu->backend->ops->state_store)
		return open_shared(lu, z, err, errlen);

	snprintf(z->path, sizeof(z->path), "%s/%s", lu->state_dir, ZBC_STATE_FILE);
	z->state_fd = be_state_open(z->path, O_RDWR | O_CREAT);
	if (z->state_fd < 0 || fstat(z->state_fd, &st) != 0) {
		snprintf(err, errlen, "cannot open %s: %s", z->path, be_state_strerror(errno));
		return -1;
	}
	if (st.st_size > 0 && load(lu, z, (uint64_t)st.st_size, err, errlen) != 0)
		return -1;
	if (encode_shadow(z, err, errlen) != 0)
		return -1;
	if (st.st_size == 0)
		return create(lu, z, err, errlen);
	return 0;
}

void zbc_state_close(struct zbc_state *z)
{
	if (z->state_fd >= 0)
		close(z->state_fd);
	z->state_fd = -1;
	free(z->shadow);
	z->shadow = NULL;
	free(z->image);
	z->image = NULL;
}
