/*
 * Big-endian field accessors for CDBs, parameter data and PDUs.  Wire
 * formats are read and written only through these (no bit-field overlays,
 * no unaligned casts).
 */
#ifndef SBCEMU_SCSI_WIRE_H
#define SBCEMU_SCSI_WIRE_H

/* Layering (docs/architecture.md): a backend knows nothing of SCSI. */
#ifdef SBCE_BUILDING_BACKENDS
#error "sbcemu layering: a backend knows nothing of SCSI (backends/ may not include the SCSI core)"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static inline uint16_t get_be16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

static inline uint32_t get_be24(const uint8_t *p)
{
	return ((uint32_t)p[0] << 16) | ((uint32_t)p[1] << 8) | p[2];
}

static inline uint32_t get_be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static inline uint64_t get_be64(const uint8_t *p)
{
	return ((uint64_t)get_be32(p) << 32) | get_be32(p + 4);
}

static inline uint64_t get_be48(const uint8_t *p)
{
	return ((uint64_t)get_be16(p) << 32) | get_be32(p + 2);
}

static inline void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void put_be24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

static inline void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void put_be64(uint8_t *p, uint64_t v)
{
	put_be32(p, (uint32_t)(v >> 32));
	put_be32(p + 4, (uint32_t)v);
}

static inline void put_be48(uint8_t *p, uint64_t v)
{
	put_be16(p, (uint16_t)(v >> 32));
	put_be32(p + 2, (uint32_t)v);
}

/* True if the n bytes at p are all zero. */
static inline bool bytes_all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

#endif
