/*
 * Text key negotiation (RFC 7143 6 and 13): one table row per key with its
 * result function; each negotiation writes the typed fields of struct
 * iscsi_negotiation once, so nothing compares value strings afterwards.
 * Security keys (AuthMethod, CHAP_*) are chap.c's and
 * login.c's; SendTargets is discovery.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "iscsi_internal.h"

/* RFC 7143 6.2.1/6.2.2: how a key's result is computed. */
enum iscsi_key_result {
	KEY_LIST_DIGEST,       /* list: first value of the offer we support */
	KEY_BOOL_AND,
	KEY_BOOL_OR,
	KEY_NUM_MIN,
	KEY_NUM_MAX,
	KEY_NUM_DECLARATIVE,   /* MaxRecvDataSegmentLength: each side declares its own */
	KEY_NAME_DECLARATIVE,  /* InitiatorName, TargetName, InitiatorAlias: stored, not answered */
	KEY_SESSION_TYPE,
	KEY_TARGET_DECLARED,   /* keys only the target sends: the initiator may not offer them */
	KEY_MARKER,            /* IFMarker/OFMarker (obsolete): always No */
	KEY_MARKER_INTERVAL,   /* IFMarkInt/OFMarkInt (obsolete): Irrelevant with markers off */
	KEY_TASK_REPORTING,    /* RFC 7144 TaskReporting: we do RFC3720 semantics */
};

/* Where a key may appear. */
#define KEY_LEADING_ONLY 0x01      /* session-wide, login of the leading connection only */
#define KEY_FFP_OK 0x02            /* may be renegotiated in full feature phase (Use: ALL) */
#define KEY_IRRELEVANT_DISCOVERY 0x04 /* answered Irrelevant in a discovery session */

/* Our offered value for a key. */
enum iscsi_key_ours {
	OURS_NONE,
	OURS_HEADER_DIGEST,
	OURS_DATA_DIGEST,
	OURS_MAX_CONNECTIONS,
	OURS_INITIAL_R2T,
	OURS_IMMEDIATE_DATA,
	OURS_MAX_RECV_DSL,
	OURS_MAX_BURST,
	OURS_FIRST_BURST,
	OURS_TIME2WAIT,
	OURS_TIME2RETAIN,
	OURS_MAX_OUTSTANDING_R2T,
	OURS_YES,
	OURS_ZERO,
	OURS_PROTOCOL_LEVEL,
};

enum iscsi_field_type {
	FIELD_NONE,
	FIELD_U32,
	FIELD_BOOL,
	FIELD_DIGEST,
	FIELD_STRING, /* char[ISCSI_NAME_MAX] or the alias buffer */
};

struct iscsi_key {
	const char *name;
	enum iscsi_key_result result;
	uint32_t min, max;
	enum iscsi_field_type type;
	size_t field;       /* offset in struct iscsi_negotiation */
	size_t field_size;  /* for strings */
	enum iscsi_key_ours ours;
	unsigned flags;
};

#define NEG(f) offsetof(struct iscsi_negotiation, f)
#define NEGSZ(f) sizeof(((struct iscsi_negotiation *)0)->f)

/* RFC 7143 13 (and RFC 7144 for iSCSIProtocolLevel/TaskReporting). */
static const struct iscsi_key iscsi_keys[] = {
	{ "HeaderDigest", KEY_LIST_DIGEST, 0, 0, FIELD_DIGEST, NEG(conn.header_digest), 0, OURS_HEADER_DIGEST, 0 },
	{ "DataDigest", KEY_LIST_DIGEST, 0, 0, FIELD_DIGEST, NEG(conn.data_digest), 0, OURS_DATA_DIGEST, 0 },
	{ "MaxConnections", KEY_NUM_MIN, 1, 65535, FIELD_U32, NEG(sess.max_connections), 0, OURS_MAX_CONNECTIONS,
	  KEY_LEADING_ONLY | KEY_IRRELEVANT_DISCOVERY },
	{ "TargetName", KEY_NAME_DECLARATIVE, 0, 0, FIELD_STRING, NEG(target_name), NEGSZ(target_name), OURS_NONE, 0 },
	{ "InitiatorName", KEY_NAME_DECLARATIVE, 0, 0, FIELD_STRING, NEG(initiator_name), NEGSZ(initiator_name),
	  OURS_NONE, 0 },
	{ "TargetAlias", KEY_TARGET_DECLARED, 0, 0, FIELD_NONE, 0, 0, OURS_NONE, 0 },
	{ "InitiatorAlias", KEY_NAME_DECLARATIVE, 0, 0, FIELD_STRING, NEG(initiator_alias), NEGSZ(initiator_alias),
	  OURS_NONE, KEY_FFP_OK },
	{ "TargetAddress", KEY_TARGET_DECLARED, 0, 0, FIELD_NONE, 0, 0, OURS_NONE, 0 },
	{ "TargetPortalGroupTag", KEY_TARGET_DECLARED, 0, 0, FIELD_NONE, 0, 0, OURS_NONE, 0 },
	{ "InitialR2T", KEY_BOOL_OR, 0, 0, FIELD_BOOL, NEG(sess.initial_r2t), 0, OURS_INITIAL_R2T,
	  KEY_LEADING_ONLY | KEY_IRRELEVANT_DISCOVERY },
	{ "ImmediateData", KEY_BOOL_AND, 0, 0, FIELD_BOOL, NEG(sess.immediate_data), 0, OURS_IMMEDIATE_DATA,
	  KEY_LEADING_ONLY | KEY_IRRELEVANT_DISCOVERY },
	{ "MaxRecvDataSegmentLength", KEY_NUM_DECLARATIVE, 512, 16777215, FIELD_U32,
	  NEG(conn.max_xmit_data_segment_length), 0, OURS_MAX_RECV_DSL, KEY_FFP_OK },
	{ "MaxBurstLength", KEY_NUM_MIN, 512, 16777215, FIELD_U32, NEG(sess.max_burst_length), 0, OURS_MAX_BURST,
	  KEY_LEADING_ONLY | KEY_IRRELEVANT_DISCOVERY },
	{ "FirstBurstLength", KEY_NUM_MIN, 512, 16777215, FIELD_U32, NEG(sess.first_burst_length), 0,
	  OURS_FIRST_BURST, KEY_LEADING_ONLY | KEY_IRRELEVANT_DISCOVERY },
	{ "DefaultTime2Wait", KEY_NUM_MAX, 0, 3600, FIELD_U32, NEG(sess.default_time2wait), 0, OURS_TIME2WAIT,
	  KEY_LEADING_ONLY },
	{ "DefaultTime2Retain", KEY_NUM_MIN, 0, 3600, FIELD_U32, NEG(sess.default_time2retain), 0,
	  OURS_TIME2RETAIN, KEY_LEADING_ONLY },
	{ "MaxOutstandingR2T", KEY_NUM_MIN, 1, 65535, FIELD_U32, NEG(sess.max_outstanding_r2t), 0,
	  OURS_MAX_OUTSTANDING_R2T, KEY_LEADING_ONLY | KEY_IRRELEVANT_DISCOVERY },
	{ "DataPDUInOrder", KEY_BOOL_OR, 0, 0, FIELD_BOOL, NEG(sess.data_pdu_in_order), 0, OURS_YES,
	  KEY_LEADING_ONLY | KEY_IRRELEVANT_DISCOVERY },
	{ "DataSequenceInOrder", KEY_BOOL_OR, 0, 0, FIELD_BOOL, NEG(sess.data_sequence_in_order), 0, OURS_YES,
	  KEY_LEADING_ONLY | KEY_IRRELEVANT_DISCOVERY },
	{ "ErrorRecoveryLevel", KEY_NUM_MIN, 0, 2, FIELD_U32, NEG(sess.error_recovery_level), 0, OURS_ZERO,
	  KEY_LEADING_ONLY },
	{ "SessionType", KEY_SESSION_TYPE, 0, 0, FIELD_NONE, 0, 0, OURS_NONE, KEY_LEADING_ONLY },
	{ "IFMarker", KEY_MARKER, 0, 0, FIELD_NONE, 0, 0, OURS_NONE, 0 },
	{ "OFMarker", KEY_MARKER, 0, 0, FIELD_NONE, 0, 0, OURS_NONE, 0 },
	{ "IFMarkInt", KEY_MARKER_INTERVAL, 0, 0, FIELD_NONE, 0, 0, OURS_NONE, 0 },
	{ "OFMarkInt", KEY_MARKER_INTERVAL, 0, 0, FIELD_NONE, 0, 0, OURS_NONE, 0 },
	{ "iSCSIProtocolLevel", KEY_NUM_MIN, 0, 31, FIELD_NONE, 0, 0, OURS_PROTOCOL_LEVEL, KEY_LEADING_ONLY },
	{ "TaskReporting", KEY_TASK_REPORTING, 0, 0, FIELD_NONE, 0, 0, OURS_NONE, KEY_LEADING_ONLY },
};

_Static_assert(sizeof(iscsi_keys) / sizeof(iscsi_keys[0]) <= 64, "seen mask is 64 bits");

void iscsi_negotiation_init(struct iscsi_negotiation *neg, const struct iscsi_server_params *ours, bool leading)
{
	memset(neg, 0, sizeof(*neg));
	neg->ours = ours;
	neg->leading = leading;
	neg->session_type = ISCSI_SESSION_NORMAL;
	/* RFC 7143 13: the defaults that hold when a key is not negotiated. */
	neg->conn.header_digest = ISCSI_DIGEST_NONE;
	neg->conn.data_digest = ISCSI_DIGEST_NONE;
	neg->conn.max_recv_data_segment_length = ours->max_recv_data_segment_length;
	neg->conn.max_xmit_data_segment_length = 8192;
	neg->sess.max_connections = 1;
	neg->sess.initial_r2t = true;
	neg->sess.immediate_data = true;
	neg->sess.max_burst_length = 262144;
	neg->sess.first_burst_length = 65536;
	neg->sess.default_time2wait = 2;
	neg->sess.default_time2retain = 20;
	neg->sess.max_outstanding_r2t = 1;
	neg->sess.data_pdu_in_order = true;
	neg->sess.data_sequence_in_order = true;
	neg->sess.error_recovery_level = 0;
}

static uint32_t our_value(const struct iscsi_negotiation *neg, enum iscsi_key_ours ours)
{
	const struct iscsi_server_params *p = neg->ours;

	switch (ours) {
	case OURS_MAX_CONNECTIONS: return p->max_connections ? p->max_connections : 1;
	case OURS_INITIAL_R2T: return p->initial_r2t;
	case OURS_IMMEDIATE_DATA: return p->immediate_data;
	case OURS_MAX_RECV_DSL: return p->max_recv_data_segment_length;
	case OURS_MAX_BURST: return p->max_burst_length;
	case OURS_FIRST_BURST: return p->first_burst_length;
	case OURS_TIME2WAIT: return p->default_time2wait;
	case OURS_TIME2RETAIN: return p->default_time2retain;
	case OURS_MAX_OUTSTANDING_R2T: return p->max_outstanding_r2t;
	case OURS_YES: return 1;
	case OURS_ZERO: return 0;
	case OURS_PROTOCOL_LEVEL: return 1; /* RFC 7143 (iSCSIProtocolLevel 1) */
	case OURS_HEADER_DIGEST: return p->header_digest_crc32c_allowed;
	case OURS_DATA_DIGEST: return p->data_digest_crc32c_allowed;
	case OURS_NONE: break;
	}
	return 0;
}

/* ---- text buffers ---- */

static void text_reserve(struct iscsi_text *t, size_t more)
{
	if (t->failed)
		return;
	if (t->len + more > t->cap) {
		size_t cap = t->cap ? t->cap : 256;
		char *nb;
		while (cap < t->len + more)
			cap *= 2;
		nb = realloc(t->buf, cap);
		if (!nb) {
			t->failed = true;
			return;
		}
		t->buf = nb;
		t->cap = cap;
	}
}

void iscsi_text_append(struct iscsi_text *t, const char *key, const char *value)
{
	size_t kl = strlen(key), vl = strlen(value);

	text_reserve(t, kl + vl + 2);
	if (t->failed)
		return;
	memcpy(t->buf + t->len, key, kl);
	t->buf[t->len + kl] = '=';
	memcpy(t->buf + t->len + kl + 1, value, vl);
	t->buf[t->len + kl + 1 + vl] = '\0';
	t->len += kl + vl + 2;
}

void iscsi_text_appendf(struct iscsi_text *t, const char *key, const char *fmt, ...)
{
	char value[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(value, sizeof(value), fmt, ap);
	va_end(ap);
	iscsi_text_append(t, key, value);
}

void iscsi_text_free(struct iscsi_text *t)
{
	free(t->buf);
	memset(t, 0, sizeof(*t));
}

/*
 * RFC 7143 6.1: the data segment is a sequence of key=value pairs, each
 * ended by a NUL.  text must have one writable byte past len (set to NUL).
 * Key names are at most 63 bytes; an entry without '=' is malformed.
 */
int iscsi_text_parse(char *text, size_t len, struct iscsi_kv *kv, int max)
{
	size_t pos = 0;
	int n = 0;

	text[len] = '\0';
	while (pos < len) {
		char *entry = text + pos;
		size_t elen = strlen(entry);
		char *eq;

		pos += elen + 1;
		if (elen == 0)
			continue;
		eq = strchr(entry, '=');
		if (!eq || eq == entry || eq - entry > 63)
			return -1;
		if (n == max)
			return -1;
		*eq = '\0';
		kv[n].key = entry;
		kv[n].value = eq + 1;
		n++;
	}
	return n;
}

/* ---- value parsing ---- */

/* RFC 7143 5.1: numbers in decimal or hexadecimal (0x...). */
static bool parse_number(const char *s, uint32_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return false;
	errno = 0;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		v = strtoull(s + 2, &end, 16);
	else
		v = strtoull(s, &end, 10);
	if (errno || *end || v > 0xffffffffull)
		return false;
	*out = (uint32_t)v;
	return true;
}

static bool parse_bool(const char *s, bool *out)
{
	if (strcmp(s, "Yes") == 0) {
		*out = true;
		return true;
	}
	if (strcmp(s, "No") == 0) {
		*out = false;
		return true;
	}
	return false;
}

bool iscsi_name_valid(const char *name)
{
	size_t len = strlen(name);

	/* RFC 7143 4.2.7: iqn., eui. (16 hex digits) or naa. (16 or 32 hex digits); at most 223 bytes. */
	if (len == 0 || len > 223)
		return false;
	if (strncasecmp(name, "iqn.", 4) == 0)
		return len > 4;
	if (strncasecmp(name, "eui.", 4) == 0 || strncasecmp(name, "naa.", 4) == 0) {
		size_t hex = len - 4;
		if (strncasecmp(name, "eui.", 4) == 0 ? hex != 16 : (hex != 16 && hex != 32))
			return false;
		for (size_t i = 4; i < len; i++)
			if (!strchr("0123456789abcdefABCDEF", name[i]))
				return false;
		return true;
	}
	return false;
}

bool iscsi_param_is_operational(const char *key)
{
	return strcmp(key, "AuthMethod") != 0 && strncmp(key, "CHAP_", 5) != 0 && strcmp(key, "SendTargets") != 0;
}

static const struct iscsi_key *find_key(const char *name, unsigned *index)
{
	for (unsigned i = 0; i < sizeof(iscsi_keys) / sizeof(iscsi_keys[0]); i++) {
		if (strcmp(iscsi_keys[i].name, name) == 0) {
			*index = i;
			return &iscsi_keys[i];
		}
	}
	return NULL;
}

static void *field_ptr(struct iscsi_negotiation *neg, const struct iscsi_key *k)
{
	return (char *)neg + k->field;
}

static void negotiate_digest(struct iscsi_negotiation *neg, const struct iscsi_key *k, const char *value,
			     struct iscsi_text *out)
{
	bool crc_ok = our_value(neg, k->ours) != 0;
	char buf[256];
	char *save = NULL;

	snprintf(buf, sizeof(buf), "%s", value);
	/* RFC 7143 6.2.1 (list): the first value of the offer we support. */
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (strcmp(tok, "None") == 0) {
			*(enum iscsi_digest *)field_ptr(neg, k) = ISCSI_DIGEST_NONE;
			iscsi_text_append(out, k->name, "None");
			return;
		}
		if (strcmp(tok, "CRC32C") == 0 && crc_ok) {
			*(enum iscsi_digest *)field_ptr(neg, k) = ISCSI_DIGEST_CRC32C;
			iscsi_text_append(out, k->name, "CRC32C");
			return;
		}
	}
	iscsi_text_append(out, k->name, "Reject");
}

/* A numerical value within the key's range (RFC 7143 13): false for an offer to reject. */
static bool parse_number_in_range(const struct iscsi_key *k, const char *value, uint32_t *num)
{
	return parse_number(value, num) && *num >= k->min && *num <= k->max;
}

static void negotiate_bool(struct iscsi_negotiation *neg, const struct iscsi_key *k, const char *value,
			   struct iscsi_text *out)
{
	uint32_t ours;
	bool b;

	if (!parse_bool(value, &b)) {
		iscsi_text_append(out, k->name, "Reject");
		return;
	}
	ours = our_value(neg, k->ours);
	/* RFC 7143 6.2.2: Boolean AND / OR of the offer and our value. */
	b = k->result == KEY_BOOL_AND ? (b && ours) : (b || ours);
	*(bool *)field_ptr(neg, k) = b;
	iscsi_text_append(out, k->name, b ? "Yes" : "No");
}

static void negotiate_number(struct iscsi_negotiation *neg, const struct iscsi_key *k, const char *value,
			     struct iscsi_text *out)
{
	uint32_t num, ours;

	if (!parse_number_in_range(k, value, &num)) {
		iscsi_text_append(out, k->name, "Reject");
		return;
	}
	ours = our_value(neg, k->ours);
	/* RFC 7143 6.2.2: numerical minimum / maximum of the offer and our value. */
	num = k->result == KEY_NUM_MIN ? (num < ours ? num : ours) : (num > ours ? num : ours);
	if (k->type == FIELD_U32)
		*(uint32_t *)field_ptr(neg, k) = num;
	iscsi_text_appendf(out, k->name, "%u", num);
}

static void negotiate_declared_number(struct iscsi_negotiation *neg, const struct iscsi_key *k, const char *value,
				      struct iscsi_text *out)
{
	uint32_t num;

	if (!parse_number_in_range(k, value, &num)) {
		iscsi_text_append(out, k->name, "Reject");
		return;
	}
	*(uint32_t *)field_ptr(neg, k) = num;
	/* RFC 7143 13.12: our own MaxRecvDataSegmentLength is declared in iscsi_param_declare(). */
}

static void negotiate_declared_name(struct iscsi_negotiation *neg, const struct iscsi_key *k, const char *value,
				    struct iscsi_text *out)
{
	if (strlen(value) >= k->field_size) {
		iscsi_text_append(out, k->name, "Reject");
		return;
	}
	snprintf(field_ptr(neg, k), k->field_size, "%s", value);
}

static void negotiate_session_type(struct iscsi_negotiation *neg, const struct iscsi_key *k, const char *value,
				   struct iscsi_text *out)
{
	if (strcmp(value, "Discovery") == 0)
		neg->session_type = ISCSI_SESSION_DISCOVERY;
	else if (strcmp(value, "Normal") == 0)
		neg->session_type = ISCSI_SESSION_NORMAL;
	else
		iscsi_text_append(out, k->name, "Reject");
}

/* A key offered for the first time in this negotiation: its result into neg, our answer (if any) into out. */
static void negotiate_key(struct iscsi_negotiation *neg, const struct iscsi_key *k, const char *value,
			  struct iscsi_text *out)
{
	bool b;

	if (neg->full_feature && !(k->flags & KEY_FFP_OK)) {
		/* RFC 7143 13: a login-only key in a Text negotiation. */
		iscsi_text_append(out, k->name, "Reject");
		return;
	}
	if (neg->session_type == ISCSI_SESSION_DISCOVERY && (k->flags & KEY_IRRELEVANT_DISCOVERY)) {
		iscsi_text_append(out, k->name, "Irrelevant");
		return;
	}
	switch (k->result) {
	case KEY_LIST_DIGEST:
		negotiate_digest(neg, k, value, out);
		break;
	case KEY_BOOL_AND:
	case KEY_BOOL_OR:
		negotiate_bool(neg, k, value, out);
		break;
	case KEY_NUM_MIN:
	case KEY_NUM_MAX:
		negotiate_number(neg, k, value, out);
		break;
	case KEY_NUM_DECLARATIVE:
		negotiate_declared_number(neg, k, value, out);
		break;
	case KEY_NAME_DECLARATIVE:
		negotiate_declared_name(neg, k, value, out);
		break;
	case KEY_SESSION_TYPE:
		negotiate_session_type(neg, k, value, out);
		break;
	case KEY_TARGET_DECLARED:
		iscsi_text_append(out, k->name, "Irrelevant");
		break;
	case KEY_MARKER:
		/* RFC 7143 13.25 (obsolete keys): markers are not used; AND with our No. */
		iscsi_text_append(out, k->name, parse_bool(value, &b) ? "No" : "Reject");
		break;
	case KEY_MARKER_INTERVAL:
		iscsi_text_append(out, k->name, "Irrelevant");
		break;
	case KEY_TASK_REPORTING:
		/* RFC 7144 13.23: a list; RFC3720 semantics are always acceptable. */
		iscsi_text_append(out, k->name, "RFC3720");
		break;
	}
}

/*
 * A key offered again.  Some initiators (libiscsi after AuthMethod=None)
 * repeat their declarations unchanged in the next stage: the same value
 * again changes nothing and is accepted.
 */
static bool offer_repeats_declaration(struct iscsi_negotiation *neg, const struct iscsi_key *k, const char *value)
{
	if (k->result == KEY_NAME_DECLARATIVE)
		return strcmp((const char *)field_ptr(neg, k), value) == 0;
	if (k->result == KEY_SESSION_TYPE)
		return strcmp(value, neg->session_type == ISCSI_SESSION_DISCOVERY ? "Discovery" : "Normal") == 0;
	return false;
}

enum iscsi_negotiate_result iscsi_param_negotiate(struct iscsi_negotiation *neg, const char *key, const char *value,
						  struct iscsi_text *out)
{
	unsigned index;
	const struct iscsi_key *k = find_key(key, &index);

	if (!k) {
		/* RFC 7143 6.2: unknown keys (including X- and X# extensions we do not implement). */
		iscsi_text_append(out, key, "NotUnderstood");
	} else if (neg->seen & (1ull << index)) {
		/* RFC 7143 6.1/6.2: a key may be offered once per negotiation; a second offer fails the login. */
		return offer_repeats_declaration(neg, k, value) ? ISCSI_NEGOTIATE_OK : ISCSI_NEGOTIATE_REPEATED_KEY;
	} else {
		neg->seen |= 1ull << index;
		negotiate_key(neg, k, value, out);
	}
	return out->failed ? ISCSI_NEGOTIATE_NO_MEMORY : ISCSI_NEGOTIATE_OK;
}

void iscsi_param_declare(struct iscsi_negotiation *neg, struct iscsi_text *out)
{
	iscsi_text_appendf(out, "MaxRecvDataSegmentLength", "%u", neg->conn.max_recv_data_segment_length);
}

void iscsi_param_finish(struct iscsi_negotiation *neg)
{
	/* RFC 7143 13.14: FirstBurstLength must not exceed MaxBurstLength. */
	if (neg->sess.first_burst_length > neg->sess.max_burst_length)
		neg->sess.first_burst_length = neg->sess.max_burst_length;
	/* We never offer more than we can track. */
	if (neg->sess.max_outstanding_r2t > ISCSI_MAX_R2T)
		neg->sess.max_outstanding_r2t = ISCSI_MAX_R2T;
}
