/*
 * bench_crc16: throughput of the protection information guard (pi_guard:
 * ISA-L crc16_t10dif; pi_guard_copy: CRC while copying) against memcpy of
 * the same buffer, in one run, as a ratio (these machines are shared and
 * noisy: absolute figures vary, ratios much less).  scripts/bench-crc16.sh
 * builds and runs it; not a test (ctest does not run it).
 *
 *   bench_crc16 [BLOCK_SIZE [TOTAL_MIB]]    (defaults 4096 and 2048)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sbc/pi.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	size_t bs = argc > 1 ? strtoul(argv[1], NULL, 0) : 4096;
	size_t total = (argc > 2 ? strtoul(argv[2], NULL, 0) : 2048) << 20;
	size_t buf_len = 8u << 20; /* 8 MiB: beyond L2, like real I/O buffers */
	uint8_t *src = malloc(buf_len), *dst = malloc(buf_len);
	volatile uint16_t sink = 0;
	double t, gbs_crc, gbs_copy, gbs_memcpy;

	if (!src || !dst || bs == 0 || buf_len % bs) {
		fprintf(stderr, "bench_crc16: bad block size or out of memory\n");
		return 2;
	}
	for (size_t i = 0; i < buf_len; i++)
		src[i] = (uint8_t)(i * 2654435761u >> 24);
	memcpy(dst, src, buf_len); /* fault the pages in */

	t = now();
	for (size_t done = 0; done < total; done += buf_len)
		for (size_t off = 0; off < buf_len; off += bs)
			sink = (uint16_t)(sink + pi_guard(src + off, bs));
	gbs_crc = (double)total / (now() - t) / 1e9;

	t = now();
	for (size_t done = 0; done < total; done += buf_len)
		for (size_t off = 0; off < buf_len; off += bs)
			sink = (uint16_t)(sink + pi_guard_copy(dst + off, src + off, bs));
	gbs_copy = (double)total / (now() - t) / 1e9;

	t = now();
	for (size_t done = 0; done < total; done += buf_len) {
		for (size_t off = 0; off < buf_len; off += bs)
			memcpy(dst + off, src + off, bs);
		sink = (uint16_t)(sink + dst[done % buf_len]);
	}
	gbs_memcpy = (double)total / (now() - t) / 1e9;

	printf("block size %zu bytes, %zu MiB per measurement\n", bs, total >> 20);
	printf("pi_guard (crc16_t10dif):       %6.2f GB/s  = %.2f x memcpy\n", gbs_crc, gbs_crc / gbs_memcpy);
	printf("pi_guard_copy (crc + copy):    %6.2f GB/s  = %.2f x memcpy\n", gbs_copy, gbs_copy / gbs_memcpy);
	printf("memcpy of the same buffer:     %6.2f GB/s\n", gbs_memcpy);
	printf("(sum of all guards, so none is optimised away: %04x)\n", (unsigned)sink);
	free(src);
	free(dst);
	return 0;
}
