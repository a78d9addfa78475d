#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "cfg_test.h"

char *cfg_test_messages(const char *text, bool finish)
{
	struct cfg_diag diag = { 0 };
	struct cfg *cfg = cfg_create();
	char *out;

	ck_assert_ptr_nonnull(cfg);
	cfg_parse_string(cfg, "t.ini", text, &diag);
	if (finish)
		cfg_finish(cfg, &diag);
	out = strdup(diag.text ? diag.text : "");
	cfg_diag_free(&diag);
	cfg_free(cfg);
	return out;
}

struct cfg *cfg_test_parse_ok(const char *text, bool finish)
{
	struct cfg_diag diag = { 0 };
	struct cfg *cfg = cfg_create();

	ck_assert_ptr_nonnull(cfg);
	cfg_parse_string(cfg, "t.ini", text, &diag);
	if (finish)
		cfg_finish(cfg, &diag);
	ck_assert_msg(diag.count == 0, "unexpected messages:\n%s", diag.text);
	cfg_diag_free(&diag);
	return cfg;
}

void cfg_test_expect(const char *text, bool finish, const char *expected)
{
	char *got = cfg_test_messages(text, finish);

	ck_assert_str_eq(got, expected);
	free(got);
}
