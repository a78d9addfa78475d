/*
 * The only code that writes sense bytes (SPC-4 4.5).  Fixed format per
 * SPC-4 4.5.3, descriptor format per SPC-4 4.5.2 with the information (00h),
 * command-specific information (01h) and sense key specific (02h)
 * descriptors.
 */
#include <string.h>

#include "scsi_sense.h"
#include "scsi_wire.h"

struct scsi_sense_info sense_make(enum scsi_sense_key key, uint16_t asc_ascq)
{
	struct scsi_sense_info s = { .key = (uint8_t)key, .asc_ascq = asc_ascq };
	return s;
}

static struct scsi_sense_info field_pointer(uint16_t asc_ascq, bool cd, uint16_t byte, int bit)
{
	struct scsi_sense_info s = sense_make(SENSE_KEY_ILLEGAL_REQUEST, asc_ascq);
	s.sks_kind = SCSI_SKS_FIELD_POINTER;
	s.sks_cd = cd;
	s.sks_field = byte;
	if (bit >= 0) {
		s.sks_bpv = true;
		s.sks_bit = (uint8_t)(bit & 7);
	}
	return s;
}

struct scsi_sense_info sense_invalid_field_in_cdb(uint16_t byte, int bit)
{
	return field_pointer(ASC_INVALID_FIELD_IN_CDB, true, byte, bit);
}

struct scsi_sense_info sense_invalid_field_in_parameter_list(uint16_t byte, int bit)
{
	return field_pointer(ASC_INVALID_FIELD_IN_PARAMETER_LIST, false, byte, bit);
}

struct scsi_sense_info sense_in_parameter_list(uint16_t asc_ascq, uint16_t byte)
{
	return field_pointer(asc_ascq, false, byte, -1);
}

struct scsi_sense_info sense_parameter_list_length_error(void)
{
	return sense_make(SENSE_KEY_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
}

struct scsi_sense_info sense_invalid_command_operation_code(void)
{
	return sense_make(SENSE_KEY_ILLEGAL_REQUEST, ASC_INVALID_COMMAND_OPERATION_CODE);
}

struct scsi_sense_info sense_lba_out_of_range(void)
{
	return sense_make(SENSE_KEY_ILLEGAL_REQUEST, ASC_LOGICAL_BLOCK_ADDRESS_OUT_OF_RANGE);
}

struct scsi_sense_info sense_not_ready_in_progress(uint16_t asc_ascq, uint16_t progress)
{
	struct scsi_sense_info s = sense_make(SENSE_KEY_NOT_READY, asc_ascq);
	s.sks_kind = SCSI_SKS_PROGRESS;
	s.sks_field = progress;
	return s;
}

struct scsi_sense_info sense_with_information(struct scsi_sense_info s, uint64_t information)
{
	s.information_valid = true;
	s.information = information;
	return s;
}

/* SPC-4 4.5.2.4: the three sense-key-specific bytes, SKSV set. */
static void encode_sks(const struct scsi_sense_info *s, uint8_t out[3])
{
	memset(out, 0, 3);
	switch (s->sks_kind) {
	case SCSI_SKS_NONE:
		return;
	case SCSI_SKS_FIELD_POINTER:
		out[0] = 0x80 | (s->sks_cd ? 0x40 : 0) | (s->sks_bpv ? 0x08 | (s->sks_bit & 7) : 0);
		put_be16(out + 1, s->sks_field);
		return;
	case SCSI_SKS_PROGRESS:
		out[0] = 0x80;
		put_be16(out + 1, s->sks_field);
		return;
	}
}

static size_t encode_fixed(const struct scsi_sense_info *s, uint8_t *b)
{
	memset(b, 0, 18);
	b[0] = s->deferred ? 0x71 : 0x70;
	if (s->information_valid && s->information <= 0xffffffffull) {
		b[0] |= 0x80; /* VALID */
		put_be32(b + 3, (uint32_t)s->information);
	}
	b[2] = s->key & 0x0f;
	b[7] = 10; /* ADDITIONAL SENSE LENGTH */
	if (s->command_specific_valid)
		put_be32(b + 8, (uint32_t)s->command_specific);
	b[12] = (uint8_t)(s->asc_ascq >> 8);
	b[13] = (uint8_t)s->asc_ascq;
	encode_sks(s, b + 15);
	return 18;
}

static size_t encode_descriptor(const struct scsi_sense_info *s, uint8_t *b)
{
	size_t n = 8;

	memset(b, 0, 8);
	b[0] = s->deferred ? 0x73 : 0x72;
	b[1] = s->key & 0x0f;
	b[2] = (uint8_t)(s->asc_ascq >> 8);
	b[3] = (uint8_t)s->asc_ascq;
	if (s->information_valid) {
		/* Information descriptor: type 00h, length 0Ah, VALID. */
		memset(b + n, 0, 12);
		b[n] = 0x00;
		b[n + 1] = 0x0a;
		b[n + 2] = 0x80;
		put_be64(b + n + 4, s->information);
		n += 12;
	}
	if (s->command_specific_valid) {
		memset(b + n, 0, 12);
		b[n] = 0x01;
		b[n + 1] = 0x0a;
		put_be64(b + n + 4, s->command_specific);
		n += 12;
	}
	if (s->sks_kind != SCSI_SKS_NONE) {
		/* Sense key specific descriptor: type 02h, length 06h. */
		memset(b + n, 0, 8);
		b[n] = 0x02;
		b[n + 1] = 0x06;
		encode_sks(s, b + n + 4);
		n += 8;
	}
	b[7] = (uint8_t)(n - 8); /* ADDITIONAL SENSE LENGTH */
	return n;
}

size_t scsi_sense_encode(const struct scsi_sense_info *s, bool descriptor, uint8_t *buf, size_t max)
{
	uint8_t tmp[64];
	size_t n = descriptor ? encode_descriptor(s, tmp) : encode_fixed(s, tmp);

	if (n > max)
		n = max;
	memcpy(buf, tmp, n);
	return n;
}
