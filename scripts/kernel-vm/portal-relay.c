/*
 * portal-relay: QEMU's guestfwd command for the kernel VM harness.  QEMU
 * (libslirp) runs it once per guest TCP connection to the forwarded portal,
 * with the connection on standard input and output; it connects to the
 * iSCSI target on the host's loopback and copies bytes both ways.
 *
 *   guestfwd=tcp:10.0.2.100:3260-cmd:portal-relay 127.0.0.1 PORT
 *
 * Why not `busybox nc`: libslirp hands the command a loopback TCP socket and
 * writes each guest segment to it as it arrives, so the tail of every iSCSI
 * PDU sits in Nagle's algorithm until the reader's delayed ACK (40 ms) frees
 * it.  This relay re-arms TCP_QUICKACK after every read, which takes 64 KiB
 * O_DIRECT writes from ~90 ms each to ~3 ms under TCG.
 *
 * Only loopback addresses are accepted (project rule: tests never leave the
 * host).  Built by scripts/kernel-vm/initramfs.sh with the host's cc; no
 * other dependency.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define BUF_SIZE (256 * 1024)

/* One direction: bytes read from `in` wait in buf until written to `out`. */
struct pipe_dir {
	int in, out;
	char buf[BUF_SIZE];
	size_t len, off;
	int eof;  /* `in` reached end of file */
	int done; /* eof seen and everything written; `out` shut down */
};

static void quickack(int fd)
{
	int one = 1;

	/* Not sticky in Linux: it has to be set again after each receive. */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof(one));
}

static void nodelay(int fd)
{
	int one = 1;

	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static int is_loopback(const struct addrinfo *ai)
{
	if (ai->ai_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)ai->ai_addr;
		return (ntohl(sin->sin_addr.s_addr) >> 24) == 127;
	}
	if (ai->ai_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ai->ai_addr;
		return IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr);
	}
	return 0;
}

static int connect_target(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV };
	struct addrinfo *res, *ai;
	int fd = -1;

	if (getaddrinfo(host, port, &hints, &res) != 0)
		return -1;
	for (ai = res; ai; ai = ai->ai_next) {
		if (!is_loopback(ai))
			continue;
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd;
}

/* Moves what it can without blocking; returns -1 on a hard error. */
static int pump(struct pipe_dir *d, short in_events, short out_events)
{
	ssize_t n;

	if (d->done)
		return 0;
	if ((in_events & (POLLIN | POLLHUP | POLLERR)) && d->len == 0 && !d->eof) {
		n = read(d->in, d->buf, sizeof(d->buf));
		if (n > 0) {
			d->len = (size_t)n;
			d->off = 0;
			quickack(d->in);
		} else if (n == 0) {
			d->eof = 1;
		} else if (errno != EAGAIN && errno != EINTR) {
			return -1;
		}
	}
	if (d->len > d->off && (out_events & POLLOUT || d->off == 0)) {
		n = write(d->out, d->buf + d->off, d->len - d->off);
		if (n > 0) {
			d->off += (size_t)n;
			if (d->off == d->len)
				d->len = d->off = 0;
		} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
			return -1;
		}
	}
	if (d->eof && d->len == 0) {
		(void)shutdown(d->out, SHUT_WR);
		d->done = 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct pipe_dir up, down; /* guest -> target, target -> guest */
	int target;

	if (argc != 3) {
		fprintf(stderr, "usage: portal-relay 127.0.0.1 PORT\n");
		return 2;
	}
	target = connect_target(argv[1], argv[2]);
	if (target < 0)
		return 1; /* the guest sees the connection close */
	nodelay(target);
	nodelay(0);
	(void)fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
	(void)fcntl(1, F_SETFL, fcntl(1, F_GETFL) | O_NONBLOCK);
	(void)fcntl(target, F_SETFL, fcntl(target, F_GETFL) | O_NONBLOCK);
	up.in = 0;
	up.out = target;
	down.in = target;
	down.out = 1;

	while (!(up.done && down.done)) {
		struct pollfd p[3] = {
			{ .fd = 0, .events = (!up.eof && up.len == 0) ? POLLIN : 0 },
			{ .fd = target,
			  .events = (short)(((!down.eof && down.len == 0) ? POLLIN : 0) | (up.len ? POLLOUT : 0)) },
			{ .fd = 1, .events = down.len ? POLLOUT : 0 },
		};

		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		if (pump(&up, p[0].revents, p[1].revents) < 0 || pump(&down, p[1].revents, p[2].revents) < 0)
			return 1;
		if ((p[0].revents | p[1].revents | p[2].revents) & POLLNVAL)
			return 1;
	}
	return 0;
}
