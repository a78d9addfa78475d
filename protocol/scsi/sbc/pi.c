/* T10 protection information tuples and the guard CRC (pi.h). */
#include <isa-l/crc.h>

#include "sbc/pi.h"
#include "scsi_wire.h"

uint16_t pi_guard(const void *data, size_t len)
{
	return crc16_t10dif(0, data, len);
}

uint16_t pi_guard_copy(void *dst, const void *src, size_t len)
{
	return crc16_t10dif_copy(0, dst, (uint8_t *)(uintptr_t)src, len);
}

void pi_tuple_encode(uint8_t out[PI_TUPLE_LEN], struct pi_tuple t)
{
	put_be16(out, t.guard);
	put_be16(out + 2, t.app_tag);
	put_be32(out + 4, t.ref_tag);
}

struct pi_tuple pi_tuple_decode(const uint8_t in[PI_TUPLE_LEN])
{
	return (struct pi_tuple){ .guard = get_be16(in), .app_tag = get_be16(in + 2), .ref_tag = get_be32(in + 4) };
}

bool pi_tuple_is_escape(unsigned protection_type, struct pi_tuple t)
{
	if (t.app_tag != PI_APP_TAG_ESCAPE)
		return false;
	return protection_type != 3 || t.ref_tag == PI_REF_TAG_ESCAPE;
}
