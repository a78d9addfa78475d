/*
 * journal.c: the intent log behind WRITE ATOMIC (docs/atomic.md).  Records
 * are written by hand in every state a crash can leave them in, and
 * journal_open must replay the complete ones and discard the rest: a valid
 * record is applied; a record with a bad header crc32, a bad data crc32,
 * missing data or a range outside the data file is discarded and the old
 * data stands; an invalidated (zeroed) header means nothing to do.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "journal.h"

#define DATA_SIZE 65536u

static char dir[256], data_path[300], journal_path[320];
static int data_fd;

static void setup(void)
{
	const char *tmp = getenv("TMPDIR");
	uint8_t old[DATA_SIZE];

	snprintf(dir, sizeof(dir), "%s/journal_test.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(data_path, sizeof(data_path), "%s/data", dir);
	snprintf(journal_path, sizeof(journal_path), "%s/data.journal", dir);
	data_fd = open(data_path, O_RDWR | O_CREAT, 0600);
	ck_assert_int_ge(data_fd, 0);
	memset(old, 0x11, sizeof(old));
	ck_assert_int_eq(pwrite(data_fd, old, sizeof(old), 0), (ssize_t)sizeof(old));
}

static void teardown(void)
{
	close(data_fd);
	unlink(journal_path);
	unlink(data_path);
	rmdir(dir);
}

static void put_le(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Writes a one-range record as journal.c lays it out (journal.c's header comment), then lets the caller spoil it. */
static void write_record(uint64_t offset, uint32_t len, uint8_t fill, void (*spoil)(uint8_t *h, uint8_t *data))
{
	uint8_t h[64] = { 'S', 'B', 'C', 'E', 'J', 'N', 'L', '2' };
	uint8_t *body = malloc(16 + len);
	int fd = open(journal_path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	put_le(body, offset, 8);
	put_le(body + 8, len, 8);
	memset(body + 16, fill, len);
	put_le(h + 8, 1, 4);
	put_le(h + 16, len, 8);
	put_le(h + 24, crc32(0, body, 16 + len), 4);
	put_le(h + 60, crc32(0, h, 60), 4);
	if (spoil)
		spoil(h, body + 16);
	ck_assert_int_eq(pwrite(fd, h, 64, 0), 64);
	ck_assert_int_eq(pwrite(fd, body, 16 + len, 64), (ssize_t)(16 + len));
	close(fd);
	free(body);
}

/* Opens the journal; returns the note; checks that data bytes [offset, offset+len) all equal want. */
static void open_and_check(uint64_t offset, uint32_t len, uint8_t want, char *note, size_t notelen)
{
	char err[256] = "";
	struct journal *j = journal_open(journal_path, data_fd, DATA_SIZE, note, notelen, err, sizeof(err));
	uint8_t *got = malloc(len);

	ck_assert_msg(j != NULL, "journal_open: %s", err);
	ck_assert_int_eq(pread(data_fd, got, len, (off_t)offset), (ssize_t)len);
	for (uint32_t i = 0; i < len; i++)
		ck_assert_uint_eq(got[i], want);
	journal_close(j);
	free(got);
}

START_TEST(valid_record_is_replayed)
{
	char note[200];

	write_record(4096, 8192, 0xab, NULL);
	open_and_check(4096, 8192, 0xab, note, sizeof(note));
	ck_assert_ptr_nonnull(strstr(note, "replayed"));
	/* Invalidated: a second open does nothing. */
	open_and_check(4096, 8192, 0xab, note, sizeof(note));
	ck_assert_str_eq(note, "");
}
END_TEST

static void bad_header_crc(uint8_t *h, uint8_t *data)
{
	(void)data;
	h[60] ^= 1;
}

static void bad_data(uint8_t *h, uint8_t *data)
{
	(void)h;
	data[100] ^= 0xff; /* the data on disk is not what the record's crc32 covers: torn */
}

static void bad_magic(uint8_t *h, uint8_t *data)
{
	(void)data;
	h[0] = 'X';
}

START_TEST(torn_records_are_discarded)
{
	char note[200];

	write_record(0, 4096, 0xcd, bad_header_crc);
	open_and_check(0, 4096, 0x11, note, sizeof(note));
	ck_assert_ptr_nonnull(strstr(note, "discarded"));
	write_record(0, 4096, 0xcd, bad_data);
	open_and_check(0, 4096, 0x11, note, sizeof(note));
	ck_assert_ptr_nonnull(strstr(note, "discarded"));
	write_record(0, 4096, 0xcd, bad_magic);
	open_and_check(0, 4096, 0x11, note, sizeof(note));
	ck_assert_ptr_nonnull(strstr(note, "discarded"));
	/* A range outside the data file. */
	write_record(DATA_SIZE - 512, 4096, 0xcd, NULL);
	open_and_check(DATA_SIZE - 4096, 4096, 0x11, note, sizeof(note));
	ck_assert_ptr_nonnull(strstr(note, "discarded"));
}
END_TEST

START_TEST(missing_data_is_discarded)
{
	char note[200];
	int fd;

	write_record(0, 4096, 0xcd, NULL);
	fd = open(journal_path, O_RDWR);
	ck_assert_int_eq(ftruncate(fd, 64 + 16 + 1000), 0); /* the header made it, the data did not */
	close(fd);
	open_and_check(0, 4096, 0x11, note, sizeof(note));
	ck_assert_ptr_nonnull(strstr(note, "discarded"));
}
END_TEST

START_TEST(journal_write_round_trip)
{
	char note[200], err[256];
	uint8_t buf[2048], h[64], zero[64] = { 0 };
	struct journal *j = journal_open(journal_path, data_fd, DATA_SIZE, note, sizeof(note), err, sizeof(err));
	int fd;

	ck_assert_ptr_nonnull(j);
	ck_assert_str_eq(note, ""); /* a new journal: nothing to recover */
	memset(buf, 0x77, sizeof(buf));
	ck_assert_int_eq(journal_write(j, buf, sizeof(buf), 8192), 0);
	journal_close(j);
	/* Applied in place, and the record invalidated once it was. */
	open_and_check(8192, sizeof(buf), 0x77, note, sizeof(note));
	fd = open(journal_path, O_RDONLY);
	ck_assert_int_eq(pread(fd, h, 64, 0), 64);
	close(fd);
	ck_assert_mem_eq(h, zero, 64);
}
END_TEST

START_TEST(ranges_all_or_nothing)
{
	char note[200], err[256];
	uint8_t data[3 * 1024];
	struct be_range r[3] = { { 40960, 1024 }, { 0, 1024 }, { 20480, 1024 } };
	struct journal *j = journal_open(journal_path, data_fd, DATA_SIZE, note, sizeof(note), err, sizeof(err));

	ck_assert_ptr_nonnull(j);
	memset(data, 0x21, 1024);
	memset(data + 1024, 0x22, 1024);
	memset(data + 2048, 0x23, 1024);
	ck_assert_int_eq(journal_write_ranges(j, r, 3, data), 0);
	journal_close(j);
	open_and_check(40960, 1024, 0x21, note, sizeof(note));
	open_and_check(0, 1024, 0x22, note, sizeof(note));
	open_and_check(20480, 1024, 0x23, note, sizeof(note));
	/* A record needs at least one range. */
	j = journal_open(journal_path, data_fd, DATA_SIZE, note, sizeof(note), err, sizeof(err));
	ck_assert_int_eq(journal_write_ranges(j, r, 0, data), -22);
	journal_close(j);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("journal");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, valid_record_is_replayed);
	tcase_add_test(tc, torn_records_are_discarded);
	tcase_add_test(tc, missing_data_is_discarded);
	tcase_add_test(tc, journal_write_round_trip);
	tcase_add_test(tc, ranges_all_or_nothing);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
