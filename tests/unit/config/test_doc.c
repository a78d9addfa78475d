/* doc.c: docs/config.md names every section and key and ends with the embedded default. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_internal.h"

START_TEST(doc_covers_schema)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	cfg_print_doc(out);
	fclose(out);
	for (int s = 0; s < CFG_SECTION_COUNT; s++) {
		char heading[128];

		snprintf(heading, sizeof(heading), "\n## [%s]\n", cfg_sections[s].syntax);
		ck_assert_msg(strstr(text, heading), "missing %s", heading);
	}
	for (size_t i = 0; i < cfg_schema_len; i++) {
		char row[128];

		snprintf(row, sizeof(row), "\n| `%s` | ", cfg_schema[i].name);
		ck_assert_msg(strstr(text, row), "missing %s", cfg_schema[i].name);
	}
	ck_assert_ptr_nonnull(strstr(text, "| `path` | path | required | 1..4095 characters |"));
	ck_assert_ptr_nonnull(strstr(text, "| `workers` | u32 | `4` | 1..64 |"));
	ck_assert_ptr_nonnull(strstr(text, cfg_default_ini));
	ck_assert_ptr_nonnull(strstr(text, "```ini\n"));
	free(text);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("config_doc");
	TCase *tc = tcase_create("doc");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, doc_covers_schema);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
