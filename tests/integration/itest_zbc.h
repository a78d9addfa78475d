/*
 * Helpers shared by the zoned-LU integration tests (test_zbc*.c): REPORT
 * ZONES and ZBC OUT CDBs, zone descriptor decoding.  Header-only so that each
 * test program stays one file plus the itest library.
 */
#ifndef SBCEMU_ITEST_ZBC_H
#define SBCEMU_ITEST_ZBC_H

#include <stdlib.h>
#include <string.h>

#include "itest.h"

/* ZBC OUT service actions, REPORT ZONES descriptor fields (ZBC-2; sg3_utils sg_rep_zones.c, sg_zone.c). */
enum { ZBC_CLOSE = 0x01, ZBC_FINISH = 0x02, ZBC_OPEN = 0x03, ZBC_RESET = 0x04 };
enum { ZT_CONV = 1, ZT_SWR = 2, ZT_SWP = 3 };
enum {
	ZC_NWP = 0x0, ZC_EMPTY = 0x1, ZC_IOPEN = 0x2, ZC_EOPEN = 0x3, ZC_CLOSED = 0x4,
	ZC_RDONLY = 0xd, ZC_FULL = 0xe, ZC_OFFLINE = 0xf,
};

struct zinfo {
	int type, cond;
	bool non_seq, reset;
	uint64_t length, start, wp;
};

static inline void zinfo_decode(const uint8_t *d, struct zinfo *z)
{
	z->type = d[0] & 0x0f;
	z->cond = d[1] >> 4;
	z->non_seq = d[1] & 0x02;
	z->reset = d[1] & 0x01;
	z->length = itest_get_be64(d + 8);
	z->start = itest_get_be64(d + 16);
	z->wp = itest_get_be64(d + 24);
}

static inline void zbc_report_cdb(uint8_t *cdb, uint64_t start, uint32_t alloc, uint8_t ro, bool partial)
{
	memset(cdb, 0, 16);
	cdb[0] = 0x95;
	cdb[1] = 0x00;
	itest_put_be64(cdb + 2, start);
	itest_put_be32(cdb + 10, alloc);
	cdb[14] = (uint8_t)((partial ? 0x80 : 0) | (ro & 0x3f));
}

static inline void zbc_out_cdb(uint8_t *cdb, uint8_t sa, uint64_t zone_id, bool all)
{
	memset(cdb, 0, 16);
	cdb[0] = 0x94;
	cdb[1] = sa;
	itest_put_be64(cdb + 2, zone_id);
	cdb[14] = all ? 0x01 : 0x00;
}

/* REPORT ZONES from start with options ro; r holds the data. */
static inline void zbc_report(struct iscsi_context *s, int lun, uint64_t start, uint8_t ro, bool partial,
			      uint32_t alloc, struct itest_result *r)
{
	uint8_t cdb[16];

	zbc_report_cdb(cdb, start, alloc, ro, partial);
	itest_cmd(s, lun, cdb, 16, ITEST_IN, NULL, 0, alloc, r);
}

/* The zone that starts at (or holds) lba, by REPORT ZONES; false if the command failed. */
static inline bool zbc_zone_get(struct iscsi_context *s, int lun, uint64_t lba, struct zinfo *z)
{
	struct itest_result r;
	bool ok;

	zbc_report(s, lun, lba, 0, false, 128, &r);
	ok = r.transport_ok && r.status == 0 && r.data_len >= 128;
	if (ok)
		zinfo_decode(r.data + 64, z);
	else
		memset(z, 0xff, sizeof(*z));
	itest_result_free(&r);
	return ok;
}

/* ZBC OUT; returns the result (freed). */
static inline struct itest_result zbc_out(struct iscsi_context *s, int lun, uint8_t sa, uint64_t zone_id, bool all)
{
	uint8_t cdb[16];
	struct itest_result r;

	zbc_out_cdb(cdb, sa, zone_id, all);
	itest_cmd(s, lun, cdb, 16, ITEST_NONE, NULL, 0, 0, &r);
	return r;
}

/* WRITE(16) of n blocks of pattern seed; the result in r (data freed). */
static inline void zbc_write(struct iscsi_context *s, int lun, uint64_t lba, uint32_t n, uint32_t bs, uint32_t seed,
			     struct itest_result *r)
{
	uint8_t cdb[16] = { 0x8a };
	size_t len = (size_t)n * bs;
	uint8_t *buf = malloc(len ? len : 1);

	itest_pattern(buf, len, seed);
	itest_put_be64(cdb + 2, lba);
	itest_put_be32(cdb + 10, n);
	itest_cmd(s, lun, cdb, 16, ITEST_OUT, buf, len, 0, r);
	free(buf);
}

static inline void zbc_read(struct iscsi_context *s, int lun, uint64_t lba, uint32_t n, uint32_t bs,
			    struct itest_result *r)
{
	uint8_t cdb[16] = { 0x88 };

	itest_put_be64(cdb + 2, lba);
	itest_put_be32(cdb + 10, n);
	itest_cmd(s, lun, cdb, 16, ITEST_IN, NULL, 0, (size_t)n * bs, r);
}

/* WRITE(16) (pattern seed) / READ(16) recording a check named name that the outcome matches e. */
static inline bool zbc_expect_write(struct iscsi_context *s, int lun, uint64_t lba, uint32_t n, uint32_t bs,
				    uint32_t seed, struct itest_expect e, const char *name)
{
	struct itest_result r;
	bool ok;

	zbc_write(s, lun, lba, n, bs, seed, &r);
	ok = itest_ok(itest_result_matches(&r, e), name, "%s", itest_result_str(&r));
	itest_result_free(&r);
	return ok;
}

static inline bool zbc_expect_read(struct iscsi_context *s, int lun, uint64_t lba, uint32_t n, uint32_t bs,
				   struct itest_expect e, const char *name)
{
	struct itest_result r;
	bool ok;

	zbc_read(s, lun, lba, n, bs, &r);
	ok = itest_ok(itest_result_matches(&r, e), name, "%s", itest_result_str(&r));
	itest_result_free(&r);
	return ok;
}

static inline const char *zc_name(int c)
{
	switch (c) {
	case ZC_NWP: return "NOT WRITE POINTER";
	case ZC_EMPTY: return "EMPTY";
	case ZC_IOPEN: return "IMPLICITLY OPENED";
	case ZC_EOPEN: return "EXPLICITLY OPENED";
	case ZC_CLOSED: return "CLOSED";
	case ZC_RDONLY: return "READ ONLY";
	case ZC_FULL: return "FULL";
	case ZC_OFFLINE: return "OFFLINE";
	}
	return "?";
}

#endif
