/*
 * The runtime control (docs/control.md): a Unix socket on which sbcemuctl
 * and scripts send one JSON request per connection and read one JSON reply.
 * This is all the daemon sees of it; control_internal.h is the inside.
 */
#ifndef SBCEMU_CONTROL_H
#define SBCEMU_CONTROL_H

#include <jansson.h>
#include <stddef.h>

struct sbce_daemon;

/* Longest request line (without its newline) and most clients served at once. */
#define SBCE_CONTROL_REQUEST_MAX 65536
#define SBCE_CONTROL_CLIENTS_MAX 16
/*
 * Seconds a client may take to send its request, and may stay silent
 * meanwhile: an idle client gives its place back soon, so that one stuck
 * script does not hold the others up for long.
 */
#define SBCE_CONTROL_CLIENT_TIMEOUT 5.0
#define SBCE_CONTROL_CLIENT_IDLE 1.0

/* Listens on daemon.control_socket (nothing when it is empty).  0, or -1 after logging why. */
int sbce_control_start(struct sbce_daemon *d);
/* Closes the socket and every client's connection. */
void sbce_control_stop(struct sbce_daemon *d);

/*
 * Runs one request line (len bytes, no newline): the reply object, {"ok":
 * true, "result": ...} or {"ok": false, "error": ...}; NULL when out of
 * memory.  The socket runs every request through it; so does the fuzz
 * harness fuzz_control.
 */
json_t *sbce_control_run(struct sbce_daemon *d, const char *line, size_t len);

#endif
