/*
 * The Zoned Block Device Characteristics VPD page (B6h; ZBC-2; sg3_utils sg_vpd_common.c),
 * built for spc_inquiry.c.  Linux sd_zbc reads it for host-managed and
 * host-aware disks: URSWRZ must be 1 on a host-managed LU or Linux will not
 * use it; MAXIMUM NUMBER OF OPEN SWR ZONES becomes the queue's max_open_zones
 * (FFFFFFFFh: no limit); the ZONE ALIGNMENT METHOD must be 0, 1 or 8.
 */
#include <string.h>

#include "zbc/zbc.h"

#define ZBC_NOT_REPORTED 0xffffffffu
/* ZONE ALIGNMENT METHOD 1: zone starts follow from the constant zone length. */
#define ZBC_ZONE_ALIGNMENT_CONSTANT_ZONE_LENGTH 0x1
/* ZONED BLOCK DEVICE EXTENSION (byte 4 bits 7:4): 1 = host-aware zoned block device model. */
#define ZBC_EXTENSION_HOST_AWARE 0x1
#define ZBC_EXTENSION_ZONE_DOMAINS 0x2

size_t zbc_vpd_b6(const struct scsi_lu *lu, uint8_t *buf)
{
	const struct zbc_state *z = lu->zbc;
	bool host_aware = lu->kind == SCSI_LU_ZBC_HA;

	memset(buf, 0, ZBC_VPD_B6_LEN);
	buf[0] = host_aware ? SCSI_PDT_DIRECT_ACCESS : SCSI_PDT_ZBC_HOST_MANAGED;
	buf[1] = VPD_ZONED_BLOCK_DEVICE_CHARACTERISTICS;
	put_be16(buf + 2, ZBC_VPD_B6_LEN - 4);
	if (host_aware)
		buf[4] = ZBC_EXTENSION_HOST_AWARE << 4;
	/* 2h: the ZBC-2 zone domains and realms model (kind zbc-zd, zbc_domains.c). */
	if (z && z->realm_zones)
		buf[4] = ZBC_EXTENSION_ZONE_DOMAINS << 4;
	/* URSWRZ (byte 4 bit 0): reads of SWR zones are not limited by the write pointer. */
	if (!z || zbc_urswrz(lu))
		buf[4] |= 0x01;
	/*
	 * Bytes 8-11 OPTIMAL NUMBER OF OPEN SWP ZONES and 12-15 OPTIMAL NUMBER
	 * OF NON-SEQUENTIALLY WRITTEN SWP ZONES (host aware only; Linux reads
	 * them for host-aware disks): not reported.
	 */
	put_be32(buf + 8, ZBC_NOT_REPORTED);
	put_be32(buf + 12, ZBC_NOT_REPORTED);
	/* Bytes 16-19 MAXIMUM NUMBER OF OPEN SEQUENTIAL WRITE REQUIRED ZONES: FFFFFFFFh = no limit. */
	put_be32(buf + 16, z && z->max_open ? z->max_open : ZBC_NOT_REPORTED);
	buf[23] = ZBC_ZONE_ALIGNMENT_CONSTANT_ZONE_LENGTH;
	/* bytes 24-31 ZONE STARTING LBA GRANULARITY: 0 (only used with alignment method 8h). */
	return ZBC_VPD_B6_LEN;
}
