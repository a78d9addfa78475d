/*
 * Reservation state of a logical unit: persistent reservations (SPC-4
 * 5.13), the SPC-2 reservation of RESERVE(6)/(10) (lu->spc2_reservation_holder),
 * and the per-nexus medium removal prevention; the reservation conflict
 * rules every command passes through (spc_reservation_conflict); the APTPL
 * state file; the I_T nexus loss and LOGICAL UNIT RESET hooks.
 * PERSISTENT RESERVE IN / OUT are in spc_pr_in.c / spc_pr_out.c.
 *
 * Conflicts (SPC-4 5.13.1 table 52, reduced to the opcode table's
 * pr_class):
 *   - the reservation holder never conflicts;
 *   - under a registrants only or all registrants type, a registered I_T
 *     nexus never conflicts;
 *   - otherwise SCSI_PR_READ commands conflict with the Exclusive Access
 *     types, SCSI_PR_WRITE and SCSI_PR_CONFLICT ones with every type;
 *   - PREVENT ALLOW MEDIUM REMOVAL with PREVENT = 00b is allowed (table 52).
 * SPC-2 reservations (SPC-2 5.5.1): while one I_T nexus holds it, every
 * command from the others conflicts except INQUIRY, REPORT LUNS, REQUEST
 * SENSE, RELEASE (which then does nothing), PREVENT ALLOW MEDIUM REMOVAL
 * with PREVENT = 00b and the REPORT SUPPORTED OPERATION CODES / TASK
 * MANAGEMENT FUNCTIONS queries.  RESERVE/RELEASE under a persistent
 * reservation and PERSISTENT RESERVE IN/OUT under an SPC-2 reservation are
 * decided by their own handlers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "spc/spc.h"

#define PR_FILE_NAME "persistent_reservations"
#define PR_FILE_MAGIC "SBCEPR01"
#define PR_FILE_MAX (1u << 20)
#define PR_IMAGE_NOT_APTPL 0x02

bool spc_pr_type_valid(uint8_t type)
{
	switch (type) {
	case SPC_PR_WRITE_EXCLUSIVE:
	case SPC_PR_EXCLUSIVE_ACCESS:
	case SPC_PR_WRITE_EXCLUSIVE_REGISTRANTS_ONLY:
	case SPC_PR_EXCLUSIVE_ACCESS_REGISTRANTS_ONLY:
	case SPC_PR_WRITE_EXCLUSIVE_ALL_REGISTRANTS:
	case SPC_PR_EXCLUSIVE_ACCESS_ALL_REGISTRANTS:
		return true;
	default:
		return false;
	}
}

bool spc_pr_type_all_registrants(uint8_t type)
{
	return type == SPC_PR_WRITE_EXCLUSIVE_ALL_REGISTRANTS || type == SPC_PR_EXCLUSIVE_ACCESS_ALL_REGISTRANTS;
}

bool spc_pr_type_registrants_access(uint8_t type)
{
	return type == SPC_PR_WRITE_EXCLUSIVE_REGISTRANTS_ONLY || type == SPC_PR_EXCLUSIVE_ACCESS_REGISTRANTS_ONLY ||
	       spc_pr_type_all_registrants(type);
}

static bool type_exclusive_access(uint8_t type)
{
	return type == SPC_PR_EXCLUSIVE_ACCESS || type == SPC_PR_EXCLUSIVE_ACCESS_REGISTRANTS_ONLY ||
	       type == SPC_PR_EXCLUSIVE_ACCESS_ALL_REGISTRANTS;
}

bool spc_pr_reg_matches(const struct spc_pr_registration *reg, const struct scsi_nexus *n)
{
	/*
	 * SPC-4 5.13: a registration is for an I_T nexus, its initiator port
	 * by name as the transport gives it (scsi_nexus_create: in a form the
	 * core compares byte for byte) and its target port.
	 */
	return strcmp(reg->initiator_port_name, n->initiator_port_name) == 0 &&
	       (reg->all_tg_pt || reg->relative_target_port == n->relative_target_port);
}

struct spc_pr_registration *spc_pr_find(const struct spc_pr_state *pr, const struct scsi_nexus *n)
{
	for (struct spc_pr_registration *r = pr->regs; r; r = r->next)
		if (spc_pr_reg_matches(r, n))
			return r;
	return NULL;
}

bool spc_pr_is_holder(const struct spc_pr_state *pr, const struct scsi_nexus *n)
{
	if (!pr->reserved)
		return false;
	if (spc_pr_type_all_registrants(pr->type))
		return spc_pr_find(pr, n) != NULL;
	return pr->holder && spc_pr_reg_matches(pr->holder, n);
}

bool spc_pr_active(const struct scsi_lu *lu)
{
	return lu->pr && (lu->pr->reserved || lu->pr->regs);
}

bool spc_pr_crh_no_op(const struct scsi_lu *lu, const struct scsi_nexus *nexus)
{
	const struct spc_pr_state *pr = lu->pr;

	if (!pr || !pr->reserved)
		return false;
	if (spc_pr_is_holder(pr, nexus))
		return true;
	return spc_pr_type_registrants_access(pr->type) && spc_pr_find(pr, nexus) != NULL;
}

/* The I_T nexuses of other nodes that share the medium learn it too (spc_pr_peer.c). */
void spc_pr_ua_reg(struct scsi_lu *lu, const struct spc_pr_registration *reg, const struct scsi_nexus *except,
		   enum scsi_ua ua)
{
	for (struct scsi_nexus *n = lu->dev->nexuses; n; n = n->next)
		if (n != except && spc_pr_reg_matches(reg, n))
			scsi_ua_establish(n, lu->lun, ua);
	spc_pr_peer_note_ua(lu, reg, except, ua);
}

void spc_pr_ua_registrants(struct scsi_lu *lu, const struct scsi_nexus *except, enum scsi_ua ua)
{
	for (struct scsi_nexus *n = lu->dev->nexuses; n; n = n->next)
		if (n != except && spc_pr_find(lu->pr, n))
			scsi_ua_establish(n, lu->lun, ua);
	for (const struct spc_pr_registration *r = lu->pr->regs; r; r = r->next)
		spc_pr_peer_note_ua(lu, r, except, ua);
}

void spc_pr_unregister(struct scsi_lu *lu, struct spc_pr_registration *reg, const struct scsi_nexus *except)
{
	struct spc_pr_state *pr = lu->pr;
	struct spc_pr_registration **pp;

	for (pp = &pr->regs; *pp; pp = &(*pp)->next) {
		if (*pp == reg) {
			*pp = reg->next;
			break;
		}
	}
	if (pr->reserved) {
		if (spc_pr_type_all_registrants(pr->type)) {
			/* SPC-4 5.13: an all registrants reservation ends with its last registrant. */
			if (!pr->regs)
				pr->reserved = false;
		} else if (pr->holder == reg) {
			/*
			 * SPC-4 5.13: unregistering the holder releases the
			 * reservation; for a registrants only type the other
			 * registrants learn it (RESERVATIONS RELEASED).
			 */
			pr->reserved = false;
			pr->holder = NULL;
			if (spc_pr_type_registrants_access(pr->type))
				spc_pr_ua_registrants(lu, except, SCSI_UA_RESERVATIONS_RELEASED);
		}
	}
	if (pr->holder == reg)
		pr->holder = NULL;
	free(reg);
}

/* ---- conflicts ---- */

static bool spc2_allowed(const struct scsi_cmd *cmd)
{
	switch (cmd->cdb[0]) {
	case SCSI_OP_INQUIRY:
	case SCSI_OP_REPORT_LUNS:
	case SCSI_OP_REQUEST_SENSE:
	case SCSI_OP_RELEASE_6:
	case SCSI_OP_RELEASE_10:
	case SCSI_OP_MAINTENANCE_IN:
		return true;
	case SCSI_OP_PREVENT_ALLOW_MEDIUM_REMOVAL:
		return (cmd->cdb[4] & 0x03) == 0;
	default:
		return false;
	}
}

bool spc_reservation_conflict(const struct scsi_cmd *cmd)
{
	const struct scsi_lu *lu = cmd->lu;
	const struct spc_pr_state *pr = lu ? lu->pr : NULL;
	enum scsi_pr_class pr_class;

	if (!lu || !cmd->op)
		return false;
	/* RESERVE and RELEASE: their handlers apply SPC-2 5.5.1 and the CRH rules of SPC-4 5.13. */
	switch (cmd->cdb[0]) {
	case SCSI_OP_RESERVE_6:
	case SCSI_OP_RESERVE_10:
	case SCSI_OP_RELEASE_6:
	case SCSI_OP_RELEASE_10:
		return false;
	default:
		break;
	}
	if (lu->spc2_reservation_holder && lu->spc2_reservation_holder != cmd->nexus)
		return !spc2_allowed(cmd);
	if (!pr || !pr->reserved || spc_pr_is_holder(pr, cmd->nexus))
		return false;
	pr_class = cmd->op->pr_class;
	if (cmd->cdb[0] == SCSI_OP_PREVENT_ALLOW_MEDIUM_REMOVAL && (cmd->cdb[4] & 0x03) == 0)
		pr_class = SCSI_PR_ALLOWED;
	switch (pr_class) {
	case SCSI_PR_ALLOWED:
		return false;
	case SCSI_PR_READ:
	case SCSI_PR_WRITE:
	case SCSI_PR_CONFLICT:
		break;
	}
	if (spc_pr_type_registrants_access(pr->type) && spc_pr_find(pr, cmd->nexus))
		return false;
	if (pr_class == SCSI_PR_READ)
		return type_exclusive_access(pr->type);
	return true;
}

/* ---- medium removal ---- */

void spc_prevent_set(struct scsi_lu *lu, const struct scsi_nexus *nexus, bool prevent)
{
	struct spc_pr_state *pr = lu->pr;
	unsigned i;

	for (i = 0; i < pr->prevent_len; i++)
		if (pr->prevent[i] == nexus)
			break;
	if (prevent && i == pr->prevent_len) {
		if (pr->prevent_len == pr->prevent_cap) {
			unsigned cap = pr->prevent_cap ? 2 * pr->prevent_cap : 4;
			const struct scsi_nexus **p = realloc(pr->prevent, cap * sizeof(*p));
			if (!p)
				return;
			pr->prevent = p;
			pr->prevent_cap = cap;
		}
		pr->prevent[pr->prevent_len++] = nexus;
	} else if (!prevent && i < pr->prevent_len) {
		pr->prevent[i] = pr->prevent[--pr->prevent_len];
	}
	lu->prevent_count = pr->prevent_len;
}

/* ---- hooks from lu.c and task_set.c ---- */

void spc_pr_nexus_lost(struct scsi_lu *lu, const struct scsi_nexus *nexus)
{
	/* SPC-2 5.5.1: a reservation ends with its I_T nexus; SBC-4 5.14: so does a prevent. */
	if (lu->spc2_reservation_holder == nexus)
		lu->spc2_reservation_holder = NULL;
	if (lu->pr)
		spc_prevent_set(lu, nexus, false);
	/* Persistent reservations and registrations survive I_T nexus loss (SPC-4 5.13.1). */
}

void spc_pr_lu_reset(struct scsi_lu *lu)
{
	/* SPC-2 5.5.1 / SAM-5 6.3.3: a logical unit reset releases SPC-2 reservations and prevents. */
	lu->spc2_reservation_holder = NULL;
	if (lu->pr)
		lu->pr->prevent_len = 0;
	lu->prevent_count = 0;
}

/* ---- APTPL state file ---- */

/*
 * Image: "SBCEPR01", u32 PRGENERATION, u8 flags (bit 0 reserved, bit 1 not
 * APTPL: kept only where the state is shared, spc_pr_changed), u8 type, u16 holder
 * index (FFFFh: none), u32 registration count; per registration: u64 key,
 * u16 relative target port, u8 ALL_TG_PT, u8 port name length, the name,
 * u16 TransportID length, the TransportID.
 */
static uint8_t *pr_image(const struct spc_pr_state *pr, size_t *len)
{
	size_t n = 20, off;
	uint32_t count = 0;
	uint16_t holder = 0xffff;
	uint8_t *img;

	for (const struct spc_pr_registration *r = pr->regs; r; r = r->next) {
		if (r == pr->holder)
			holder = (uint16_t)count;
		count++;
		n += 14 + strlen(r->initiator_port_name) + r->transport_id_len;
	}
	img = calloc(1, n);
	if (!img)
		return NULL;
	memcpy(img, PR_FILE_MAGIC, 8);
	put_be32(img + 8, pr->generation);
	img[12] = (uint8_t)(pr->reserved | (pr->aptpl ? 0 : PR_IMAGE_NOT_APTPL));
	img[13] = pr->type;
	put_be16(img + 14, holder);
	put_be32(img + 16, count);
	off = 20;
	for (const struct spc_pr_registration *r = pr->regs; r; r = r->next) {
		size_t name_len = strlen(r->initiator_port_name);
		put_be64(img + off, r->key);
		put_be16(img + off + 8, r->relative_target_port);
		img[off + 10] = r->all_tg_pt;
		img[off + 11] = (uint8_t)name_len;
		memcpy(img + off + 12, r->initiator_port_name, name_len);
		off += 12 + name_len;
		put_be16(img + off, r->transport_id_len);
		memcpy(img + off + 2, r->transport_id, r->transport_id_len);
		off += 2 + r->transport_id_len;
	}
	*len = n;
	return img;
}

static void free_regs(struct spc_pr_state *pr)
{
	while (pr->regs) {
		struct spc_pr_registration *r = pr->regs;
		pr->regs = r->next;
		free(r);
	}
	pr->holder = NULL;
	pr->reserved = false;
}

void spc_pr_power_on(struct scsi_lu *lu)
{
	struct spc_pr_state *pr = lu->pr;

	spc_pr_lu_reset(lu);
	/* SPC-4 5.13.5: registrations and the reservation persist through a power loss only with APTPL. */
	if (pr && !pr->aptpl)
		free_regs(pr);
}

/* Restores the state from an image; false (state left empty) if it is corrupt. */
static bool pr_load(struct spc_pr_state *pr, const uint8_t *img, size_t len)
{
	struct spc_pr_registration **tail = &pr->regs;
	uint32_t count;
	uint16_t holder;
	size_t off = 20;

	if (len < 20 || memcmp(img, PR_FILE_MAGIC, 8) != 0)
		return false;
	pr->generation = get_be32(img + 8);
	pr->reserved = (img[12] & 0x01) != 0;
	pr->aptpl = !(img[12] & PR_IMAGE_NOT_APTPL);
	pr->type = img[13];
	holder = get_be16(img + 14);
	count = get_be32(img + 16);
	for (uint32_t i = 0; i < count; i++) {
		struct spc_pr_registration *r;
		size_t name_len;
		uint16_t tid_len;

		if (off + 12 > len)
			goto corrupt;
		name_len = img[off + 11];
		if (off + 12 + name_len + 2 > len)
			goto corrupt;
		tid_len = get_be16(img + off + 12 + name_len);
		if (tid_len > sizeof(r->transport_id) || off + 14 + name_len + tid_len > len)
			goto corrupt;
		r = calloc(1, sizeof(*r));
		if (!r)
			goto corrupt;
		r->key = get_be64(img + off);
		r->relative_target_port = get_be16(img + off + 8);
		r->all_tg_pt = img[off + 10] != 0;
		memcpy(r->initiator_port_name, img + off + 12, name_len);
		r->transport_id_len = tid_len;
		memcpy(r->transport_id, img + off + 14 + name_len, tid_len);
		off += 14 + name_len + tid_len;
		if (holder == i)
			pr->holder = r;
		*tail = r;
		tail = &r->next;
	}
	if (pr->reserved && (!spc_pr_type_valid(pr->type) || !pr->regs ||
			     (!spc_pr_type_all_registrants(pr->type) && !pr->holder)))
		goto corrupt;
	return true;
corrupt:
	free_regs(pr);
	pr->generation = 0;
	return false;
}

enum scsi_result spc_pr_changed(struct scsi_cmd *cmd)
{
	struct spc_pr_state *pr = cmd->lu->pr;
	uint8_t *img = NULL, *notice;
	size_t len = 0, notice_len;

	/*
	 * Kept: with APTPL (SPC-4 5.13.5); and always where the backend shares
	 * the state with the nodes that may take the medium over (docs/rbd.md):
	 * a failover is not a power loss, so they take every registration.
	 */
	notice = spc_pr_peer_take_notice(cmd->lu, &notice_len);
	if ((pr->aptpl || pr->file.shared) && pr->regs) {
		img = pr_image(pr, &len);
		if (!img) {
			free(notice);
			return scsi_cmd_fail(cmd, sense_make(SENSE_KEY_ABORTED_COMMAND, ASC_INSUFFICIENT_RESOURCES));
		}
		pr->file_present = true;
	} else if (pr->file_present) {
		pr->file_present = false; /* APTPL cleared, or nothing left to keep: remove the file */
	} else {
		free(notice); /* nothing was registered, so nobody had a unit attention to learn */
		return SCSI_OK;
	}
	/* The other nodes learn their unit attentions once the state they follow from is stored. */
	return spc_persist_cmd_notice(cmd, &pr->file, img, len, NULL, notice, notice_len);
}

int spc_pr_init(struct scsi_lu *lu)
{
	struct spc_pr_state *pr = calloc(1, sizeof(*pr));
	uint8_t *img;
	size_t len;
	int rc;

	if (!pr)
		return -1;
	spc_persist_init(&pr->file, lu, PR_FILE_NAME);
	rc = spc_persist_load(&pr->file, &img, &len, PR_FILE_MAX);
	if (rc == -ELOOP) { /* a symbolic link in its place: refused, not ignored */
		spc_persist_fini(&pr->file);
		free(pr);
		return -1;
	}
	if (rc == 0) {
		/* A corrupt file is ignored (no reservations), as if APTPL had been 0. */
		(void)pr_load(pr, img, len);
		free(img);
		pr->file_present = true;
		/* Shared state (spc_pr_changed) at a power on: what APTPL did not keep goes, there too. */
		if (!pr->aptpl) {
			free_regs(pr);
			if (spc_persist_write_now(&pr->file, NULL, 0) == 0)
				pr->file_present = false;
		}
	}
	lu->pr = pr;
	return 0;
}

int spc_pr_peek(const struct scsi_lu *lu, struct spc_pr_state *pr)
{
	uint8_t *img;
	size_t len;
	int rc = spc_persist_peek(&lu->pr->file, &img, &len, PR_FILE_MAX);

	if (rc == -ENOENT) /* no registration kept: spc_pr_changed removed the blob */
		return 0;
	if (rc == 0) {
		/* A corrupt image reads as no reservations, as spc_pr_reload takes it. */
		(void)pr_load(pr, img, len);
		free(img);
	}
	return rc;
}

void spc_pr_state_clear(struct spc_pr_state *pr)
{
	free_regs(pr);
}

void spc_pr_reload(struct scsi_lu *lu)
{
	struct spc_pr_state *pr = lu->pr;
	uint8_t *img;
	size_t len;

	if (!pr || !pr->file.shared || spc_persist_load(&pr->file, &img, &len, PR_FILE_MAX) != 0)
		return;
	free_regs(pr);
	(void)pr_load(pr, img, len);
	free(img);
	pr->file_present = true;
}

void spc_pr_fini(struct scsi_lu *lu)
{
	struct spc_pr_state *pr = lu->pr;

	if (!pr)
		return;
	free_regs(pr);
	free(pr->prevent);
	spc_persist_fini(&pr->file);
	free(pr);
	lu->pr = NULL;
}
