/*
 * Logging to stderr with levels and UTC timestamps.  Each message is
 * formatted into one buffer and written with one write(2), so lines from the
 * loop and from workers never interleave.
 *
 * Under systemd, when stderr is the journal's stream ($JOURNAL_STREAM names
 * its device and inode, systemd.exec(5)), a line starts with its syslog
 * priority instead ("<3>" for an error, sd-daemon(3)) and carries no time
 * or pid, which the journal records itself.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "daemon.h"

static enum sbce_log_level log_level = SBCE_LOG_INFO;
static bool log_to_journal;

/* syslog(3) priorities: LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG. */
static const char level_priority[] = {
	[SBCE_LOG_ERROR] = '3',
	[SBCE_LOG_WARN] = '4',
	[SBCE_LOG_INFO] = '6',
	[SBCE_LOG_DEBUG] = '7',
};

static const char *const level_names[] = {
	[SBCE_LOG_ERROR] = "error",
	[SBCE_LOG_WARN] = "warn",
	[SBCE_LOG_INFO] = "info",
	[SBCE_LOG_DEBUG] = "debug",
};

void sbce_log_set_level(enum sbce_log_level level)
{
	__atomic_store_n(&log_level, level, __ATOMIC_RELAXED);
}

void sbce_log_detect_journal(void)
{
	const char *stream = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	log_to_journal = stream && sscanf(stream, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) == 0 &&
			 (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

bool sbce_log_enabled(enum sbce_log_level level)
{
	return level <= __atomic_load_n(&log_level, __ATOMIC_RELAXED);
}

static void log_write(enum sbce_log_level level, const char *fmt, va_list ap)
{
	char line[2048];
	struct timespec ts;
	struct tm tm;
	size_t n;
	int m;

	if (log_to_journal) {
		n = (size_t)snprintf(line, sizeof(line), "<%c>%s: ", level_priority[level], level_names[level]);
	} else {
		clock_gettime(CLOCK_REALTIME, &ts);
		gmtime_r(&ts.tv_sec, &tm);
		n = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%S", &tm);
		n += (size_t)snprintf(line + n, sizeof(line) - n, ".%03ldZ sbcemud[%ld] %s: ", ts.tv_nsec / 1000000,
				      (long)getpid(), level_names[level]);
	}
	m = vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	if (m < 0)
		m = 0;
	n += (size_t)m < sizeof(line) - n - 1 ? (size_t)m : sizeof(line) - n - 2;
	line[n++] = '\n';
	while (n > 0) {
		ssize_t w = write(STDERR_FILENO, line, n);

		if (w <= 0)
			break;
		memmove(line, line + w, n - (size_t)w);
		n -= (size_t)w;
	}
}

void sbce_log(enum sbce_log_level level, const char *fmt, ...)
{
	va_list ap;

	if (!sbce_log_enabled(level))
		return;
	va_start(ap, fmt);
	log_write(level, fmt, ap);
	va_end(ap);
}

void sbce_log_ratelimited(struct sbce_ratelimit *rl, enum sbce_log_level level, const char *fmt, ...)
{
	time_t now = time(NULL);
	va_list ap;

	if (!sbce_log_enabled(level))
		return;
	if (now - rl->window_start >= (time_t)rl->interval) {
		if (rl->suppressed)
			sbce_log(level, "(%u similar messages suppressed)", rl->suppressed);
		rl->window_start = now;
		rl->printed = 0;
		rl->suppressed = 0;
	}
	if (rl->printed >= rl->burst) {
		rl->suppressed++;
		return;
	}
	rl->printed++;
	va_start(ap, fmt);
	log_write(level, fmt, ap);
	va_end(ap);
}
