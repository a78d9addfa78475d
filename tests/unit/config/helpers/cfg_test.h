/* Helpers for the configuration tests: parse a text, get its messages. */
#ifndef SBCEMU_CFG_TEST_H
#define SBCEMU_CFG_TEST_H

#include <stdbool.h>

#include "config.h"

/* Parses text (named "t.ini") and, if finish, runs cfg_finish; asserts there is no message. */
struct cfg *cfg_test_parse_ok(const char *text, bool finish);

/*
 * Parses text (named "t.ini"), then runs cfg_finish if finish; returns every
 * message (malloc'ed, "" when none).
 */
char *cfg_test_messages(const char *text, bool finish);

/* Asserts that the messages for text are exactly `expected`. */
void cfg_test_expect(const char *text, bool finish, const char *expected);

/* A minimal valid configuration, to prepend to texts that test one section. */
#define CFG_TEST_MINIMAL                                \
	"[daemon]\n"                                    \
	"state_dir = /srv/sbcemu\n"                     \
	"[lun \"iqn.2026-12.org.example:t\" 0]\n"       \
	"path = lun0.img\n"

#endif
