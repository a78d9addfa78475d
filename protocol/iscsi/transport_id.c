/*
 * The iSCSI TransportID (SPC-4 7.6.4.6), the codec the SCSI core uses for
 * persistent reservations through the transport ops (scsi_cmd.c).
 *
 * FORMAT CODE 01b names an initiator port: byte 0 = 40h | PROTOCOL
 * IDENTIFIER 5h, bytes 2-3 ADDITIONAL LENGTH (a multiple of 4, at least 20),
 * then the null-terminated "<iSCSI name>,i,0x<ISID>" padded with nulls.
 * FORMAT CODE 00b (a device name, every port of it) is not taken.
 */
#include <string.h>

#include "iscsi_internal.h"

#define TID_FORMAT_PORT 0x40

size_t iscsi_transport_id_encode(const char *initiator_port_name, uint8_t *tid, size_t cap)
{
	size_t name_len = strlen(initiator_port_name) + 1;
	size_t padded = (name_len + 3) & ~(size_t)3;

	if (padded < 20)
		padded = 20;
	if (4 + padded > cap || padded > UINT16_MAX)
		return 0;
	memset(tid, 0, 4 + padded);
	tid[0] = TID_FORMAT_PORT | ISCSI_PROTOCOL_IDENTIFIER;
	put_be16(tid + 2, (uint16_t)padded);
	memcpy(tid + 4, initiator_port_name, name_len);
	return 4 + padded;
}

void iscsi_port_name_fold(char *name)
{
	for (; *name; name++)
		if (*name >= 'A' && *name <= 'Z')
			*name = (char)(*name - 'A' + 'a');
}

bool iscsi_transport_id_decode(const uint8_t *tid, size_t len, char *initiator_port_name, size_t cap)
{
	size_t add_len, n;

	if (len < 4 || (tid[0] & 0x0f) != ISCSI_PROTOCOL_IDENTIFIER || (tid[0] & 0xc0) != TID_FORMAT_PORT)
		return false;
	add_len = get_be16(tid + 2);
	if (4 + add_len > len)
		return false;
	n = strnlen((const char *)tid + 4, add_len);
	if (n == 0 || n == add_len || n >= cap || !memmem(tid + 4, n, ",i,0x", 5))
		return false;
	memcpy(initiator_port_name, tid + 4, n);
	initiator_port_name[n] = '\0';
	iscsi_port_name_fold(initiator_port_name);
	return true;
}
