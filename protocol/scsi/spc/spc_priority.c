/*
 * Command priority (SAM-5 8.7): REPORT PRIORITY (MAINTENANCE IN A3h, SA
 * 0Eh) and SET PRIORITY (MAINTENANCE OUT A4h, SA 0Eh), SPC-4 6.28 / 6.44;
 * the priority of an I_T_L nexus that SET PRIORITY did not set is the
 * Control Extension page's INITIAL COMMAND PRIORITY.  The scheduler ranks
 * commands by it (sched/duration_limits.c).  iSCSI carries no priority per
 * command, so these are how an initiator gets one.
 *
 * CDBs (12 bytes; opensea-transport scsi_Report_Priority / scsi_Set_Priority):
 * byte 2 bits 7:6 PRIORITY REPORTED / I_T_L NEXUS TO SET, bytes 6-9
 * ALLOCATION LENGTH / PARAMETER LIST LENGTH.  A priority descriptor, and
 * the SET PRIORITY parameter list: byte 0 bits 3:0 the priority, bytes 2-3
 * RELATIVE TARGET PORT IDENTIFIER, bytes 6-7 ADDITIONAL DESCRIPTOR LENGTH,
 * then the initiator port's TransportID.  No public source was found for
 * the parameter data; the layout is SPC-4's as we read it.
 *
 * PRIORITY REPORTED 00b: this I_T_L nexus; 01b: every I_T_L nexus of the LU
 * whose priority SET PRIORITY set.  I_T_L NEXUS TO SET 00b: this one; 01b:
 * the one the parameter list names.  Other values: 05/24/00.  A priority
 * another I_T_L nexus set, or a new INITIAL COMMAND PRIORITY, gives the
 * nexuses it changes a PRIORITY CHANGED unit attention (06/2A/08).  Setting
 * 0 returns the nexus to the initial priority.
 */
#include <string.h>

#include "spc/spc.h"

#define DESCRIPTOR_HEADER_LEN 8
/* A descriptor with the longest TransportID the transports make (scsi_nexus.transport_id). */
#define SET_PRIORITY_LIST_MAX (DESCRIPTOR_HEADER_LEN + 256)

static size_t descriptor_len(const struct scsi_nexus *n)
{
	return DESCRIPTOR_HEADER_LEN + n->transport_id_len;
}

/* The priority SET PRIORITY gave the I_T_L nexus of n and lu; 0: none. */
static uint8_t set_priority_of(const struct scsi_nexus *n, const struct scsi_lu *lu)
{
	const struct scsi_itl *t = scsi_itl_find(n, lu->lun);

	return t ? t->priority : 0;
}

static void put_descriptor(uint8_t *d, const struct scsi_nexus *n, uint8_t priority)
{
	d[0] = priority & 0x0f;                         /* CURRENT PRIORITY */
	put_be16(d + 2, n->relative_target_port);       /* RELATIVE TARGET PORT IDENTIFIER */
	put_be16(d + 6, (uint16_t)n->transport_id_len); /* ADDITIONAL DESCRIPTOR LENGTH */
	memcpy(d + 8, n->transport_id, n->transport_id_len);
}

enum scsi_result spc_report_priority_exec(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	uint8_t reported = cmd->cdb[2] >> 6;
	size_t n = 0, off = 4;
	uint8_t *b;

	cmd->allocation_length = get_be32(cmd->cdb + 6);
	if (reported > 1)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(2, 7));
	if (reported == 0) {
		n = descriptor_len(cmd->nexus);
	} else {
		for (const struct scsi_nexus *x = lu->dev->nexuses; x; x = x->next)
			if (set_priority_of(x, lu))
				n += descriptor_len(x);
	}
	b = scsi_cmd_alloc_data_in(cmd, 4 + n);
	if (!b)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	put_be32(b, (uint32_t)n); /* PRIORITY PARAMETER DATA LENGTH */
	if (reported == 0) {
		uint8_t p = set_priority_of(cmd->nexus, lu);

		put_descriptor(b + off, cmd->nexus, p ? p : lu->mode_current.initial_priority);
	} else {
		for (const struct scsi_nexus *x = lu->dev->nexuses; x; x = x->next) {
			if (!set_priority_of(x, lu))
				continue;
			put_descriptor(b + off, x, set_priority_of(x, lu));
			off += descriptor_len(x);
		}
	}
	scsi_cmd_limit_data_in(cmd, cmd->allocation_length);
	return SCSI_OK;
}

enum scsi_result spc_set_priority_parse(struct scsi_cmd *cmd)
{
	uint32_t len = get_be32(cmd->cdb + 6);

	if ((cmd->cdb[2] >> 6) > 1)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_cdb(2, 7));
	/* One descriptor at most: a longer list is refused before any buffer is set aside for it. */
	if (len > SET_PRIORITY_LIST_MAX)
		return scsi_cmd_fail(cmd, sense_parameter_list_length_error());
	cmd->data_length = len;
	return SCSI_OK;
}

/* The I_T nexus the parameter list names (its port's TransportID and relative target port), or NULL. */
static struct scsi_nexus *named_nexus(struct scsi_cmd *cmd, const uint8_t *p, size_t len, struct scsi_sense_info *s)
{
	size_t tid_len = get_be16(p + 6);
	char name[256];

	if (DESCRIPTOR_HEADER_LEN + tid_len > len) {
		*s = sense_parameter_list_length_error();
		return NULL;
	}
	if (!spc_transport_id_parse(cmd, p + 8, tid_len, name, sizeof(name))) {
		*s = sense_invalid_field_in_parameter_list(8, -1);
		return NULL;
	}
	for (struct scsi_nexus *n = cmd->lu->dev->nexuses; n; n = n->next)
		if (n->relative_target_port == get_be16(p + 2) && strcmp(n->initiator_port_name, name) == 0)
			return n;
	*s = sense_invalid_field_in_parameter_list(2, -1);
	return NULL;
}

enum scsi_result spc_set_priority_exec(struct scsi_cmd *cmd)
{
	struct scsi_lu *lu = cmd->lu;
	const uint8_t *p = cmd->data_out;
	size_t len = cmd->data_length;
	struct scsi_nexus *target = cmd->nexus;
	struct scsi_sense_info s;
	struct scsi_itl *itl;

	if (len == 0)
		return SCSI_OK; /* nothing to set */
	if (len < DESCRIPTOR_HEADER_LEN || !p)
		return scsi_cmd_fail(cmd, sense_parameter_list_length_error());
	if (p[0] & 0xf0)
		return scsi_cmd_fail(cmd, sense_invalid_field_in_parameter_list(0, 7));
	if ((cmd->cdb[2] >> 6) == 1 && !(target = named_nexus(cmd, p, len, &s)))
		return scsi_cmd_fail(cmd, s);
	itl = scsi_itl_get(target, lu->lun);
	if (!itl)
		return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
	if (itl->priority != (p[0] & 0x0f) && target != cmd->nexus)
		scsi_ua_establish(target, lu->lun, SCSI_UA_PRIORITY_CHANGED);
	itl->priority = p[0] & 0x0f;
	return SCSI_OK;
}

void spc_priority_initial_changed(struct scsi_lu *lu, uint8_t was, const struct scsi_nexus *by)
{
	if (lu->mode_current.initial_priority == was)
		return;
	for (struct scsi_nexus *n = lu->dev->nexuses; n; n = n->next)
		if (n != by && !set_priority_of(n, lu))
			scsi_ua_establish(n, lu->lun, SCSI_UA_PRIORITY_CHANGED);
}
