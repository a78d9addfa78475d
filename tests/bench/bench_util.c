#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_util.h"

double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

uint64_t bench_rnd(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 0x2545F4914F6CDD1DULL;
}

struct iscsi_context *bench_open_session(const char *program, const char *initiator, const char *portal,
					 const char *target, int lun, int timeout_s)
{
	struct iscsi_context *ctx = iscsi_create_context(initiator);

	if (!ctx) {
		fprintf(stderr, "%s: iscsi_create_context failed\n", program);
		return NULL;
	}
	iscsi_set_noautoreconnect(ctx, 1);
	iscsi_set_timeout(ctx, timeout_s);
	iscsi_set_session_type(ctx, ISCSI_SESSION_NORMAL);
	iscsi_set_header_digest(ctx, ISCSI_HEADER_DIGEST_NONE);
	if (iscsi_set_targetname(ctx, target) != 0 || iscsi_full_connect_sync(ctx, portal, lun) != 0) {
		fprintf(stderr, "%s: login of %s to %s %s LUN %d failed: %s\n", program, initiator, portal, target, lun,
			iscsi_get_error(ctx));
		iscsi_destroy_context(ctx);
		return NULL;
	}
	/* Consume any pending unit attention so that it does not show up as a status later. */
	for (int i = 0; i < 5; i++) {
		struct scsi_task *t = iscsi_testunitready_sync(ctx, lun);
		int good = t && t->status == SCSI_STATUS_GOOD;

		if (t)
			scsi_free_scsi_task(t);
		if (good)
			break;
	}
	return ctx;
}

int bench_parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v = strtoul(s, &end, 0);

	if (*s == '\0' || *end != '\0' || *s == '-' || v > max)
		return -1;
	*out = v;
	return 0;
}
