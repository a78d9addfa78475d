/*
 * sbcemuctl: the daemon's refusals in the command's own terms.
 * The daemon names request members ("sense_key" is missing) and lists the
 * words a member takes ("state" must be ready, ... or no-medium); a person
 * typed options and words.  A missing member becomes the option that sets
 * it; an unknown word is a usage error (exit 2) with the closest valid word
 * suggested, from the daemon's own list, so the two cannot drift apart.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbcemuctl.h"

/* Levenshtein distance of a and b (short words: a row of 64). */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[65];

	if (la > 64 || lb > 64)
		return (size_t)-1;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

/*
 * "\"state\" must be ready, becoming-ready, ... or no-medium": the closest
 * of the listed words to typed (into best), false when error is not such a
 * list for member.
 */
static bool closest_listed(const char *error, const char *member, const char *typed, char *best, size_t len)
{
	char prefix[64], *list, *word, *save = NULL;
	size_t best_d = (size_t)-1;

	snprintf(prefix, sizeof(prefix), "\"%s\" must be ", member);
	if (strncmp(error, prefix, strlen(prefix)) != 0)
		return false;
	list = oom_check(strdup(error + strlen(prefix)));
	for (word = strtok_r(list, ", ", &save); word; word = strtok_r(NULL, ", ", &save)) {
		size_t d;

		if (strcmp(word, "or") == 0)
			continue;
		d = distance(typed, word);
		if (d < best_d) {
			best_d = d;
			snprintf(best, len, "%.*s", (int)len - 1, word);
		}
	}
	free(list);
	return best_d != (size_t)-1;
}

/* The option of opts that sets member ("--sense KEY/ASC/ASCQ" for the sense fields), or NULL. */
static const char *option_of(const struct opt *opts, const char *member)
{
	static char text[80];

	if (strcmp(member, "sense_key") == 0)
		return "--sense KEY/ASC/ASCQ";
	for (const struct opt *o = opts; o && o->name; o++) {
		if (o->member && strcmp(o->member, member) == 0) {
			snprintf(text, sizeof(text), "--%s", o->name);
			return text;
		}
	}
	if (strcmp(member, "lba_first") == 0)
		return "--lba FIRST[-LAST]";
	return NULL;
}

int explain_refusal(const json_t *req, const struct opt *opts, const char *error)
{
	static const char *const words[] = { "state", "action" };
	char member[64], best[64];
	const char *opt;

	/* "\"sense_key\" is missing" -> "--sense KEY/ASC/ASCQ is required" */
	if (sscanf(error, "\"%63[^\"]\" is missing", member) == 1 && (opt = option_of(opts, member))) {
		fprintf(stderr, "sbcemuctl: %s is required (%s)\n", opt, error);
		return EXIT_REFUSED;
	}
	for (size_t i = 0; i < ARRAY_SIZE(words); i++) {
		const char *typed = json_string_value(json_object_get(req, words[i]));

		if (typed && closest_listed(error, words[i], typed, best, sizeof(best))) {
			fprintf(stderr, "sbcemuctl: unknown %s '%s' (did you mean '%s'?); %s\n", words[i], typed, best,
				error);
			return EXIT_USAGE;
		}
	}
	/* "medium-error needs lba_first and lba_last": the option that sets them. */
	if ((opt = strstr(error, "lba_first and lba_last"))) {
		fprintf(stderr, "sbcemuctl: %.*s--lba FIRST[-LAST]%s\n", (int)(opt - error), error,
			opt + strlen("lba_first and lba_last"));
		return EXIT_REFUSED;
	}
	fprintf(stderr, "sbcemuctl: %s\n", error);
	return EXIT_REFUSED;
}
