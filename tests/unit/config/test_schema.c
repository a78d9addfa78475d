/*
 * schema.c: the table's own invariants (style.md 4.7: one row per key,
 * every row with a type, a valid default, a range and a doc line).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "config_internal.h"

static size_t object_size(enum cfg_section_kind section)
{
	switch (section) {
	case CFG_SECTION_DAEMON:
		return sizeof(struct cfg_daemon);
	case CFG_SECTION_ISCSI:
		return sizeof(struct cfg_iscsi);
	case CFG_SECTION_TARGET:
		return sizeof(struct cfg_target);
	case CFG_SECTION_ACL:
		return sizeof(struct cfg_acl);
	case CFG_SECTION_LUN:
	case CFG_SECTION_LU:
		return sizeof(struct cfg_lun);
	case CFG_SECTION_TCMU:
		return sizeof(struct cfg_tcmu);
	case CFG_SECTION_COUNT:
		break;
	}
	return 0;
}

/* Every row: a name unique in its section, a setter, a doc line, a field of the right size. */
START_TEST(rows_well_formed)
{
	unsigned per_section[CFG_SECTION_COUNT] = { 0 };

	for (size_t i = 0; i < cfg_schema_len; i++) {
		const struct cfg_key *k = &cfg_schema[i];
		unsigned index;

		ck_assert_msg(k->set != NULL, "%s has no setter", k->name);
		ck_assert_msg(k->doc && strlen(k->doc) > 10, "%s has no doc line", k->name);
		ck_assert_msg(strchr(k->doc, '\n') == NULL, "%s: doc is one line", k->name);
		ck_assert_ptr_eq(cfg_schema_find(k->section, k->name, &index), k);
		ck_assert_uint_eq(index, cfg_schema_index(k));
		ck_assert_uint_le(k->offset + k->size, object_size(k->section));
		ck_assert_uint_le(k->min, k->max);
		switch (k->type) {
		case CFG_TYPE_BOOL:
			ck_assert_uint_eq(k->size, sizeof(bool));
			break;
		case CFG_TYPE_U32:
		case CFG_TYPE_ENUM:
			ck_assert_uint_eq(k->size, sizeof(uint32_t));
			ck_assert(k->type != CFG_TYPE_ENUM || k->values != NULL);
			break;
		case CFG_TYPE_U64:
			ck_assert_uint_eq(k->size, sizeof(uint64_t));
			break;
		case CFG_TYPE_STRING:
		case CFG_TYPE_PATH:
		case CFG_TYPE_NAME:
			ck_assert_uint_lt(k->max, k->size); /* room for the NUL */
			break;
		case CFG_TYPE_FLAGS:
			ck_assert_uint_eq(k->size, sizeof(uint32_t));
			ck_assert_ptr_nonnull(k->values);
			break;
		case CFG_TYPE_ADDRESS:
		case CFG_TYPE_NAME_LIST:
			break;
		}
		per_section[k->section]++;
	}
	for (int s = 0; s < CFG_SECTION_COUNT; s++) {
		ck_assert_uint_le(per_section[s], CFG_SECTION_KEYS_MAX);
		ck_assert_int_eq(cfg_sections[s].kind, s);
		ck_assert_ptr_nonnull(cfg_sections[s].doc);
	}
}
END_TEST

/* Every default goes through its own setter without complaint. */
START_TEST(defaults_valid)
{
	for (size_t i = 0; i < cfg_schema_len; i++) {
		const struct cfg_key *k = &cfg_schema[i];
		void *object = calloc(1, object_size(k->section));
		char why[512] = "";

		if (k->default_value)
			ck_assert_msg(k->set(k, object, k->default_value, why, sizeof(why)) == 0,
				      "default of %s: %s", k->name, why);
		if (k->section == CFG_SECTION_TARGET) {
			struct cfg_target *t = object;

			for (size_t j = 0; j < t->acl_count; j++)
				free(t->acls[j]);
			free(t->acls);
		}
		free(object);
	}
}
END_TEST

/* The only required key is the backing path of a LUN. */
START_TEST(required_keys)
{
	for (size_t i = 0; i < cfg_schema_len; i++)
		if (!cfg_schema[i].default_value)
			ck_assert(cfg_schema[i].section == CFG_SECTION_LUN && strcmp(cfg_schema[i].name, "path") == 0);
}
END_TEST

/* cfg_create() holds the schema defaults. */
START_TEST(create_applies_defaults)
{
	struct cfg *cfg = cfg_create();

	ck_assert_uint_eq(cfg->daemon.workers, 4);
	ck_assert_int_eq(cfg->daemon.log_level, CFG_LOG_INFO);
	ck_assert_str_eq(cfg->daemon.listen[0], "127.0.0.1:3260");
	ck_assert_uint_eq(cfg->iscsi.max_recv_data_segment_length, 262144);
	ck_assert_uint_eq(cfg->iscsi.max_burst_length, 1048576);
	ck_assert_uint_eq(cfg->iscsi.first_burst_length, 262144);
	ck_assert(cfg->iscsi.immediate_data);
	ck_assert(!cfg->iscsi.initial_r2t);
	ck_assert_uint_eq(cfg->iscsi.cmd_window, 128);
	ck_assert_uint_eq(cfg->target_count, 0);
	cfg_free(cfg);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("config_schema");
	TCase *tc = tcase_create("schema");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, rows_well_formed);
	tcase_add_test(tc, defaults_valid);
	tcase_add_test(tc, required_keys);
	tcase_add_test(tc, create_applies_defaults);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
