/*
 * Conglomerates: an administrative LU and its subsidiary LUs (SPC-5 4.33
 * "Logical unit conglomerates", as sg3_utils restates it: src/sg_luns.c
 * decode_lun and doc/sg_luns.8 --select; SAM-5 4.7 for the two-level LUN).
 *
 * The administrative LU (kind SCSI_LU_ADMIN) owns a struct
 * scsi_conglomerate: its subsidiaries by element (1..SCSI_MAX_LUN; an array
 * of pointers, so lookup, create and destroy are O(1)), and per initiator
 * a bitmap of the elements bound to it (binding groups; "*" binds for every
 * initiator).  Bind and unbind flip one bit; REPORT LUNS walks the bitmap,
 * in element order, 2 KiB however many subsidiaries there are.
 *
 * A subsidiary has no scsi_lu until a bound initiator first sends it a
 * command: the device's subsidiary opener (the daemon: backing file,
 * template) makes it then, and it joins the device's LU map under LUN id
 * admin | element << 16 like any other LU.  Until then it costs its record.
 *
 * Unit attentions (SPC-5 has SUBSIDIARY BINDING CHANGED, 3F/1Ah, for this
 * and REPORTED LUNS DATA HAS CHANGED, 3F/0Eh, for any change of the
 * inventory): a bind or unbind establishes both on every I_T nexus of the
 * initiator concerned, 3F/1Ah on the administrative LU, 3F/0Eh on the nexus
 * (ua.c: reported on whichever LU comes first, LUICLR = 1).  Linux acts on
 * 3F/0Eh only (drivers/scsi/scsi_error.c scsi_report_sense).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/scsi_internal.h"

#define ELEMENTS (SCSI_MAX_LUN + 1)
#define WORDS (ELEMENTS / 64)

struct scsi_subsidiary {
	struct scsi_lu *lu;        /* NULL until first used */
	unsigned bindings;         /* binding groups holding it */
	int open_error;            /* the last open failed: commands get NOT READY until one succeeds */
};

struct binding_group {
	struct binding_group *next;
	uint32_t count;
	uint64_t bits[WORDS];
	char initiator[224];
};

struct scsi_conglomerate {
	struct scsi_subsidiary *sub[ELEMENTS];
	uint32_t count;
	struct binding_group *groups;
};

void scsi_device_set_subsidiary_opener(struct scsi_device *dev, scsi_subsidiary_open_fn open, void *arg)
{
	dev->subsidiary_open = open;
	dev->subsidiary_open_arg = arg;
}

int scsi_conglomerate_init(struct scsi_lu *admin)
{
	admin->conglomerate = calloc(1, sizeof(*admin->conglomerate));
	return admin->conglomerate ? 0 : -1;
}

void scsi_conglomerate_fini(struct scsi_lu *admin)
{
	struct scsi_conglomerate *c = admin->conglomerate;

	if (!c)
		return;
	for (unsigned e = 0; e < ELEMENTS; e++)
		free(c->sub[e]);
	while (c->groups) {
		struct binding_group *g = c->groups;

		c->groups = g->next;
		free(g);
	}
	free(c);
	admin->conglomerate = NULL;
}

/* The initiator name of a nexus: its initiator port name without the iSCSI ",i,0x<ISID>" (RFC 7143 4.2.7.1). */
static size_t initiator_len(const struct scsi_nexus *n)
{
	const char *cut = strstr(n->initiator_port_name, ",i,");

	return cut ? (size_t)(cut - n->initiator_port_name) : strlen(n->initiator_port_name);
}

static bool group_is(const struct binding_group *g, const char *name, size_t len)
{
	return strlen(g->initiator) == len && memcmp(g->initiator, name, len) == 0;
}

static struct binding_group *group_find(const struct scsi_conglomerate *c, const char *name, size_t len)
{
	for (struct binding_group *g = c->groups; g; g = g->next)
		if (group_is(g, name, len))
			return g;
	return NULL;
}

static bool bit(const struct binding_group *g, uint16_t e)
{
	return g && (g->bits[e / 64] >> (e % 64)) & 1;
}

static struct scsi_lu *admin_of(const struct scsi_device *dev, uint32_t lun)
{
	struct scsi_lu *admin = scsi_device_lu(dev, lun & 0xffff);

	return admin && admin->conglomerate ? admin : NULL;
}

bool scsi_conglomerate_visible(const struct scsi_nexus *nexus, const struct scsi_lu *admin, uint16_t element)
{
	const struct scsi_conglomerate *c = admin->conglomerate;

	return c && element && c->sub[element] &&
	       (bit(group_find(c, "*", 1), element) ||
		bit(group_find(c, nexus->initiator_port_name, initiator_len(nexus)), element));
}

struct scsi_lu *scsi_conglomerate_reach(struct scsi_nexus *nexus, uint32_t lun)
{
	struct scsi_device *dev = nexus->dev;
	struct scsi_lu *admin = admin_of(dev, lun);
	uint16_t e = (uint16_t)(lun >> 16);
	struct scsi_subsidiary *s;
	char err[256] = "";

	if (!admin || !scsi_conglomerate_visible(nexus, admin, e))
		return NULL;
	s = admin->conglomerate->sub[e];
	if (!s->lu && dev->subsidiary_open) {
		s->lu = dev->subsidiary_open(dev->subsidiary_open_arg, dev, admin->lun, e, err, sizeof(err));
		s->open_error = s->lu ? 0 : 1;
	}
	return s->lu;
}

struct scsi_sense_info scsi_no_lu_sense(const struct scsi_nexus *nexus, uint32_t lun)
{
	struct scsi_lu *admin = lun != UINT32_MAX && (lun >> 16) ? admin_of(nexus->dev, lun) : NULL;
	uint16_t e = (uint16_t)(lun >> 16);

	/* A subsidiary this nexus may use whose backing store would not open (the daemon logged why). */
	if (admin && scsi_conglomerate_visible(nexus, admin, e) && admin->conglomerate->sub[e]->open_error)
		return sense_make(SENSE_KEY_NOT_READY, ASC_LOGICAL_UNIT_NOT_READY_MANUAL_INTERVENTION_REQUIRED);
	/* SPC-5: a subsidiary LUN of an administrative LU that is not configured for this I_T nexus. */
	if (admin)
		return sense_make(SENSE_KEY_ILLEGAL_REQUEST, ASC_SUBSIDIARY_LOGICAL_UNIT_NOT_CONFIGURED);
	return sense_make(SENSE_KEY_ILLEGAL_REQUEST, ASC_LOGICAL_UNIT_NOT_SUPPORTED);
}

void scsi_conglomerate_forget(struct scsi_lu *lu)
{
	struct scsi_lu *admin = (lu->lun >> 16) ? admin_of(lu->dev, lu->lun) : NULL;
	struct scsi_subsidiary *s = admin ? admin->conglomerate->sub[lu->lun >> 16] : NULL;

	if (s && s->lu == lu)
		s->lu = NULL;
	scsi_conglomerate_fini(lu);
}

size_t scsi_conglomerate_bound_luns(const struct scsi_nexus *nexus, const struct scsi_lu *admin, uint32_t *ids)
{
	const struct scsi_conglomerate *c = admin->conglomerate;
	const struct binding_group *all, *mine;
	size_t n = 0;

	if (!c)
		return 0;
	all = group_find(c, "*", 1);
	mine = group_find(c, nexus->initiator_port_name, initiator_len(nexus));
	if (!(all && all->count) && !(mine && mine->count))
		return 0;
	for (unsigned w = 0; w < WORDS; w++) {
		uint64_t bits = (all ? all->bits[w] : 0) | (mine ? mine->bits[w] : 0);

		while (bits) {
			unsigned b = (unsigned)__builtin_ctzll(bits);

			bits &= bits - 1;
			ids[n++] = scsi_subsidiary_lun(admin->lun, (uint16_t)(w * 64 + b));
		}
	}
	return n;
}

static struct scsi_conglomerate *conglomerate_of(const struct scsi_lu *admin, uint16_t element, char *err,
						 size_t errlen)
{
	if (!admin->conglomerate) {
		snprintf(err, errlen, "LUN %u is not an administrative LU (kind conglomerate)", admin->lun);
		return NULL;
	}
	if (element == 0 || element > SCSI_MAX_LUN) {
		snprintf(err, errlen, "subsidiary element %u is out of range (1..%u)", element, SCSI_MAX_LUN);
		return NULL;
	}
	return admin->conglomerate;
}

int scsi_subsidiary_create(struct scsi_lu *admin, uint16_t element, char *err, size_t errlen)
{
	struct scsi_conglomerate *c = conglomerate_of(admin, element, err, errlen);

	if (!c)
		return -1;
	if (c->sub[element]) {
		snprintf(err, errlen, "LUN %u/%u already exists", admin->lun, element);
		return -1;
	}
	if (!(c->sub[element] = calloc(1, sizeof(*c->sub[element])))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	c->count++;
	return 0;
}

int scsi_subsidiary_destroy(struct scsi_lu *admin, uint16_t element, char *err, size_t errlen)
{
	struct scsi_conglomerate *c = conglomerate_of(admin, element, err, errlen);
	struct scsi_subsidiary *s = c ? c->sub[element] : NULL;

	if (!c)
		return -1;
	if (!s) {
		snprintf(err, errlen, "LUN %u/%u does not exist", admin->lun, element);
		return -1;
	}
	/* As vVols have it (VMware vSphere Storage, "Binding and Unbinding"): a bound subsidiary is not deleted. */
	if (s->bindings) {
		snprintf(err, errlen, "LUN %u/%u is bound to %u initiator(s); unbind it first", admin->lun, element,
			 s->bindings);
		return -1;
	}
	if (s->lu && scsi_lu_remove(admin->dev, s->lu->lun, err, errlen) != 0)
		return -1;
	free(s);
	c->sub[element] = NULL;
	c->count--;
	return 0;
}

/* The UAs of a binding change, on every nexus of initiator name (len bytes; "*": every nexus). */
static void binding_changed(struct scsi_lu *admin, const char *name, size_t len)
{
	bool all = len == 1 && name[0] == '*';

	for (struct scsi_nexus *n = admin->dev->nexuses; n; n = n->next) {
		if (!all && !(initiator_len(n) == len && memcmp(n->initiator_port_name, name, len) == 0))
			continue;
		scsi_ua_establish(n, admin->lun, SCSI_UA_REPORTED_LUNS_DATA_CHANGED);
		scsi_ua_establish(n, admin->lun, SCSI_UA_SUBSIDIARY_BINDING_CHANGED);
	}
}

int scsi_subsidiary_bind(struct scsi_lu *admin, uint16_t element, const char *initiator, char *err, size_t errlen)
{
	struct scsi_conglomerate *c = conglomerate_of(admin, element, err, errlen);
	size_t len = strlen(initiator);
	struct binding_group *g;

	if (!c)
		return -1;
	if (!c->sub[element]) {
		snprintf(err, errlen, "LUN %u/%u does not exist", admin->lun, element);
		return -1;
	}
	if (len == 0 || len >= sizeof(g->initiator) || strstr(initiator, ",i,")) {
		snprintf(err, errlen, "initiator name \"%s\" is not a name (nor *)", initiator);
		return -1;
	}
	g = group_find(c, initiator, len);
	if (!g) {
		if (!(g = calloc(1, sizeof(*g)))) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		memcpy(g->initiator, initiator, len + 1);
		g->next = c->groups;
		c->groups = g;
	}
	if (bit(g, element)) {
		snprintf(err, errlen, "LUN %u/%u is already bound to %s", admin->lun, element, initiator);
		return -1;
	}
	g->bits[element / 64] |= 1ull << (element % 64);
	g->count++;
	c->sub[element]->bindings++;
	binding_changed(admin, initiator, len);
	return 0;
}

int scsi_subsidiary_unbind(struct scsi_lu *admin, uint16_t element, const char *initiator, char *err,
			   size_t errlen)
{
	struct scsi_conglomerate *c = conglomerate_of(admin, element, err, errlen);
	struct binding_group *g = c ? group_find(c, initiator, strlen(initiator)) : NULL;

	if (!c)
		return -1;
	if (!bit(g, element)) {
		snprintf(err, errlen, "LUN %u/%u is not bound to %s", admin->lun, element, initiator);
		return -1;
	}
	g->bits[element / 64] &= ~(1ull << (element % 64));
	g->count--;
	c->sub[element]->bindings--;
	binding_changed(admin, initiator, strlen(initiator));
	if (!g->count) {
		struct binding_group **pp = &c->groups;

		while (*pp != g)
			pp = &(*pp)->next;
		*pp = g->next;
		free(g);
	}
	return 0;
}

size_t scsi_subsidiary_list(const struct scsi_lu *admin, uint16_t first, struct scsi_subsidiary_info *out,
			    size_t max)
{
	const struct scsi_conglomerate *c = admin->conglomerate;
	size_t n = 0;

	for (unsigned e = first ? first : 1; c && e < ELEMENTS && n < max; e++)
		if (c->sub[e])
			out[n++] = (struct scsi_subsidiary_info){ .element = (uint16_t)e, .lu = c->sub[e]->lu,
								  .binding_count = c->sub[e]->bindings };
	return n;
}

void scsi_subsidiary_bindings(const struct scsi_lu *admin, uint16_t element,
			      void (*each)(void *arg, const char *initiator), void *arg)
{
	const struct scsi_conglomerate *c = admin->conglomerate;

	if (!c || element == 0 || element > SCSI_MAX_LUN)
		return;
	for (const struct binding_group *g = c->groups; g; g = g->next)
		if (bit(g, element))
			each(arg, g->initiator);
}

uint32_t scsi_subsidiary_count(const struct scsi_lu *admin)
{
	return admin->conglomerate ? admin->conglomerate->count : 0;
}

int scsi_conglomerate_clear(struct scsi_lu *admin, char *err, size_t errlen)
{
	struct scsi_conglomerate *c = admin->conglomerate;

	while (c && c->groups) {
		struct binding_group *g = c->groups;
		unsigned w = 0;

		while (!g->bits[w])
			w++;
		if (scsi_subsidiary_unbind(admin, (uint16_t)(w * 64 + (unsigned)__builtin_ctzll(g->bits[w])),
					   g->initiator, err, errlen) != 0)
			return -1;
	}
	for (unsigned e = 1; c && e < ELEMENTS && c->count; e++)
		if (c->sub[e] && scsi_subsidiary_destroy(admin, (uint16_t)e, err, errlen) != 0)
			return -1;
	return 0;
}
