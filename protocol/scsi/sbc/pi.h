/*
 * T10 protection information: the 8-byte tuple of SBC-4 4.22 and its guard
 * CRC (SBC-4 4.22.4; Linux include/linux/t10-pi.h): the building blocks of
 * protected logical units.  The guard is ISA-L's CRC-16/T10-DIF (polynomial 8BB7h,
 * initial value 0, no reflection), not a hand-written one.
 *
 *   bytes 0-1  LOGICAL BLOCK GUARD            CRC-16 of the block's data
 *   bytes 2-3  LOGICAL BLOCK APPLICATION TAG
 *   bytes 4-7  LOGICAL BLOCK REFERENCE TAG    type 1: the LBA's low 32 bits
 */
#ifndef SBCEMU_PI_H
#define SBCEMU_PI_H

#ifndef SBCE_BUILDING_SCSI
#error "sbcemu layering: pi.h is internal to the SCSI core (protocol/scsi/): use its public headers"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PI_TUPLE_LEN 8
#define PI_APP_TAG_ESCAPE 0xffff
#define PI_REF_TAG_ESCAPE 0xffffffffu

struct pi_tuple {
	uint16_t guard;
	uint16_t app_tag;
	uint32_t ref_tag;
};

/* The LOGICAL BLOCK GUARD of len bytes of data. */
uint16_t pi_guard(const void *data, size_t len);
/* The same while copying the data from src to dst (one pass over the data). */
uint16_t pi_guard_copy(void *dst, const void *src, size_t len);

/* Big-endian wire and medium form. */
void pi_tuple_encode(uint8_t out[PI_TUPLE_LEN], struct pi_tuple t);
struct pi_tuple pi_tuple_decode(const uint8_t in[PI_TUPLE_LEN]);

/*
 * The escape (SBC-4 4.22.4, Linux t10_pi_verify): no check applies to a
 * block whose application tag is FFFFh (types 1 and 2), or whose application
 * tag is FFFFh and reference tag FFFFFFFFh (type 3).
 */
bool pi_tuple_is_escape(unsigned protection_type, struct pi_tuple t);

#endif
