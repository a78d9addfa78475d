/*
 * Value converters: text from the INI file (or the command line) to typed
 * fields, with range checks.  One setter per schema type, plus the few keys
 * whose values are lists or carry extra rules (listen, allowed_initiators,
 * naa).  A setter never prints: it returns -1 and says why.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config_internal.h"

#define FIELD(object, key) ((char *)(object) + (key)->offset)

static void store(const struct cfg_key *key, void *object, const void *value, size_t size)
{
	/* The schema test checks key->size against the field; this guards the copy itself. */
	if (size == key->size)
		memcpy(FIELD(object, key), value, size);
}

int cfg_set_bool(const struct cfg_key *key, void *object, const char *value, char *why, size_t whylen)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };
	bool b;

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcasecmp(value, yes[i]) == 0) {
			b = true;
			goto found;
		}
		if (strcasecmp(value, no[i]) == 0) {
			b = false;
			goto found;
		}
	}
	snprintf(why, whylen, "\"%s\" is not a boolean (true or false)", value);
	return -1;
found:
	store(key, object, &b, sizeof(b));
	return 0;
}

/*
 * Decimal digits with an optional binary multiple (K = 1024 ... P = 2^50) when
 * units are allowed, or 0x followed by hexadecimal digits.
 */
static int parse_number(const char *value, bool units, uint64_t *out)
{
	const char *p = value;
	uint64_t n = 0;
	int base = 10;

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	if (!isxdigit((unsigned char)*p) || (base == 10 && !isdigit((unsigned char)*p)))
		return -1;
	for (; *p; p++) {
		unsigned digit;

		if (isdigit((unsigned char)*p))
			digit = (unsigned)(*p - '0');
		else if (base == 16 && isxdigit((unsigned char)*p))
			digit = (unsigned)(tolower((unsigned char)*p) - 'a' + 10);
		else
			break;
		if (n > (UINT64_MAX - digit) / (unsigned)base)
			return -2;
		n = n * (unsigned)base + digit;
	}
	if (*p && base == 10 && units) {
		static const char suffixes[] = "KMGTP";
		const char *s = strchr(suffixes, toupper((unsigned char)*p));
		unsigned shift;

		if (!s || p[1] != '\0')
			return -1;
		shift = 10u * (unsigned)(s - suffixes + 1);
		if (n > (UINT64_MAX >> shift))
			return -2;
		n <<= shift;
		p++;
	}
	if (*p)
		return -1;
	*out = n;
	return 0;
}

static int set_number(const struct cfg_key *key, void *object, const char *value, bool units, char *why,
		      size_t whylen)
{
	uint64_t n;
	int rc = parse_number(value, units, &n);

	if (rc == -1) {
		if (units)
			snprintf(why, whylen,
				 "\"%s\" is not a size (a number with an optional K, M, G, T or P suffix)", value);
		else
			snprintf(why, whylen, "\"%s\" is not a number", value);
		return -1;
	}
	if (rc == -2 || n < key->min || n > key->max) {
		snprintf(why, whylen, "%s is out of range (%llu..%llu)", value, (unsigned long long)key->min,
			 (unsigned long long)key->max);
		return -1;
	}
	if (key->size == sizeof(uint32_t)) {
		uint32_t v = (uint32_t)n;

		store(key, object, &v, sizeof(v));
	} else {
		store(key, object, &n, sizeof(n));
	}
	return 0;
}

int cfg_set_u32(const struct cfg_key *key, void *object, const char *value, char *why, size_t whylen)
{
	return set_number(key, object, value, false, why, whylen);
}

int cfg_set_u64(const struct cfg_key *key, void *object, const char *value, char *why, size_t whylen)
{
	return set_number(key, object, value, true, why, whylen);
}

int cfg_set_enum(const struct cfg_key *key, void *object, const char *value, char *why, size_t whylen)
{
	const struct cfg_enum_value *v;
	size_t n = 0;

	for (v = key->values; v->name; v++) {
		if (strcmp(v->name, value) != 0)
			continue;
		store(key, object, &v->value, sizeof(v->value));
		return 0;
	}
	n = (size_t)snprintf(why, whylen, "\"%s\" is not one of", value);
	for (v = key->values; v->name && n < whylen; v++)
		n += (size_t)snprintf(why + n, whylen - n, "%s %s", v == key->values ? "" : (v[1].name ? "," : " or"),
				      v->name);
	return -1;
}

static int check_length(const struct cfg_key *key, const char *value, char *why, size_t whylen)
{
	size_t len = strlen(value);

	if (len > key->max || len >= key->size) {
		snprintf(why, whylen, "is longer than %llu characters", (unsigned long long)key->max);
		return -1;
	}
	/* An empty value means "not set"; the minimum applies to real values. */
	if (len > 0 && len < key->min) {
		snprintf(why, whylen, "is shorter than %llu characters", (unsigned long long)key->min);
		return -1;
	}
	return 0;
}

int cfg_set_string(const struct cfg_key *key, void *object, const char *value, char *why, size_t whylen)
{
	if (check_length(key, value, why, whylen))
		return -1;
	/* SPC-4 4.3.1: ASCII data fields hold printable characters 20h..7Eh only. */
	for (const char *p = value; *p; p++) {
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e) {
			snprintf(why, whylen, "contains a character that is not printable ASCII");
			return -1;
		}
	}
	snprintf(FIELD(object, key), key->size, "%s", value);
	return 0;
}

int cfg_set_path(const struct cfg_key *key, void *object, const char *value, char *why, size_t whylen)
{
	if (key->min > 0 && value[0] == '\0') {
		snprintf(why, whylen, "must not be empty");
		return -1;
	}
	if (check_length(key, value, why, whylen))
		return -1;
	snprintf(FIELD(object, key), key->size, "%s", value);
	return 0;
}

/* Splits a list on spaces and commas; calls fn for each word.  Returns -1 as soon as fn fails. */
static int for_each_word(const char *value, int (*fn)(void *arg, const char *word, char *why, size_t whylen),
			 void *arg, char *why, size_t whylen)
{
	const char *p = value;

	while (*p) {
		char word[CFG_PATH_MAX];
		size_t n = strcspn(p, " \t,");

		if (n == 0) {
			p++;
			continue;
		}
		if (n >= sizeof(word)) {
			snprintf(why, whylen, "list item is too long");
			return -1;
		}
		memcpy(word, p, n);
		word[n] = '\0';
		if (fn(arg, word, why, whylen))
			return -1;
		p += n;
	}
	return 0;
}

/* "a.b.c.d[:port]" or "[ipv6][:port]" -> normalised "address:port" (port 3260 by default). */
static int parse_address(const char *word, char *out, size_t outlen, char *why, size_t whylen)
{
	char host[CFG_ADDRESS_MAX];
	const char *port_text = NULL;
	unsigned char addr[16];
	bool v6 = word[0] == '[';
	uint64_t port = 3260;
	size_t host_len;

	if (v6) {
		const char *close = strchr(word, ']');

		if (!close) {
			snprintf(why, whylen, "\"%s\": missing ']' after the IPv6 address", word);
			return -1;
		}
		host_len = (size_t)(close - word - 1);
		if (host_len >= sizeof(host))
			goto bad;
		memcpy(host, word + 1, host_len);
		host[host_len] = '\0';
		if (close[1] == ':')
			port_text = close + 2;
		else if (close[1] != '\0')
			goto bad;
	} else {
		const char *colon = strchr(word, ':');

		if (colon && strchr(colon + 1, ':')) {
			snprintf(why, whylen, "\"%s\": write IPv6 addresses in brackets, e.g. [::1]:3260", word);
			return -1;
		}
		host_len = colon ? (size_t)(colon - word) : strlen(word);
		if (host_len >= sizeof(host))
			goto bad;
		memcpy(host, word, host_len);
		host[host_len] = '\0';
		if (colon)
			port_text = colon + 1;
	}
	if (inet_pton(v6 ? AF_INET6 : AF_INET, host, addr) != 1) {
		snprintf(why, whylen, "\"%s\" is not a numeric IPv%c address", host, v6 ? '6' : '4');
		return -1;
	}
	if (port_text && (parse_number(port_text, false, &port) != 0 || port < 1 || port > 65535)) {
		snprintf(why, whylen, "\"%s\": the port must be a number 1..65535", word);
		return -1;
	}
	if ((size_t)snprintf(out, outlen, v6 ? "[%s]:%llu" : "%s:%llu", host, (unsigned long long)port) >= outlen)
		goto bad;
	return 0;
bad:
	snprintf(why, whylen, "\"%s\" is not an address (IPv4:port or [IPv6]:port)", word);
	return -1;
}

struct listen_state {
	struct cfg_daemon *daemon;
	char list[CFG_LISTEN_MAX][CFG_ADDRESS_MAX];
	unsigned count;
};

static int add_listen(void *arg, const char *word, char *why, size_t whylen)
{
	struct listen_state *ls = arg;
	char addr[CFG_ADDRESS_MAX];

	if (parse_address(word, addr, sizeof(addr), why, whylen))
		return -1;
	for (unsigned i = 0; i < ls->count; i++) {
		if (strcmp(ls->list[i], addr) == 0) {
			snprintf(why, whylen, "%s is listed twice", addr);
			return -1;
		}
	}
	if (ls->count == CFG_LISTEN_MAX) {
		snprintf(why, whylen, "more than %d addresses", CFG_LISTEN_MAX);
		return -1;
	}
	memcpy(ls->list[ls->count++], addr, sizeof(addr));
	return 0;
}

int cfg_set_listen(const struct cfg_key *key, void *object, const char *value, char *why, size_t whylen)
{
	struct listen_state ls = { .daemon = object };

	if (for_each_word(value, add_listen, &ls, why, whylen))
		return -1;
	if (ls.count == 0) {
		snprintf(why, whylen, "needs at least one address");
		return -1;
	}
	memcpy(ls.daemon->listen, ls.list, sizeof(ls.list));
	ls.daemon->listen_count = ls.count;
	return 0;
}

static bool all_hex(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)p[i]))
			return false;
	return p[n] == '\0';
}

/*
 * RFC 7143 4.2.7 (iSCSI names) and RFC 3722 (string profile: names are
 * compared after mapping to lower case, so upper case in an iqn. name is
 * a mistake waiting to happen).  eui. and naa. names carry hexadecimal digits.
 */
int cfg_check_iscsi_name(const char *name, char *why, size_t whylen)
{
	size_t len = strlen(name);

	if (len == 0) {
		snprintf(why, whylen, "an iSCSI name must not be empty");
		return -1;
	}
	if (len > CFG_NAME_MAX - 1) {
		snprintf(why, whylen, "an iSCSI name is at most %d bytes (RFC 7143 4.2.7)", CFG_NAME_MAX - 1);
		return -1;
	}
	if (strncmp(name, "eui.", 4) == 0) {
		if (!all_hex(name + 4, 16)) {
			snprintf(why, whylen, "\"%s\": an eui. name has 16 hexadecimal digits", name);
			return -1;
		}
		return 0;
	}
	if (strncmp(name, "naa.", 4) == 0) {
		if (!all_hex(name + 4, 16) && !all_hex(name + 4, 32)) {
			snprintf(why, whylen, "\"%s\": a naa. name has 16 or 32 hexadecimal digits", name);
			return -1;
		}
		return 0;
	}
	if (strncmp(name, "iqn.", 4) != 0) {
		snprintf(why, whylen, "\"%s\" is not an iSCSI name (iqn.YYYY-MM.reversed.domain[:id], eui. or naa.)",
			 name);
		return -1;
	}
	for (const char *p = name; *p; p++) {
		if (isupper((unsigned char)*p)) {
			snprintf(why, whylen, "\"%s\": iSCSI names are lower case (RFC 3722)", name);
			return -1;
		}
		if (!islower((unsigned char)*p) && !isdigit((unsigned char)*p) && *p != '-' && *p != '.' && *p != ':') {
			snprintf(why, whylen, "\"%s\": iSCSI names use only a-z, 0-9, '-', '.' and ':'", name);
			return -1;
		}
	}
	/* iqn.YYYY-MM.naming-authority: a date, then a reversed domain name. */
	if (len < 13 || !isdigit((unsigned char)name[4]) || !isdigit((unsigned char)name[5]) ||
	    !isdigit((unsigned char)name[6]) || !isdigit((unsigned char)name[7]) || name[8] != '-' ||
	    !isdigit((unsigned char)name[9]) || !isdigit((unsigned char)name[10]) || name[11] != '.' ||
	    (name[9] - '0') * 10 + (name[10] - '0') < 1 || (name[9] - '0') * 10 + (name[10] - '0') > 12 ||
	    name[12] == '.' || name[12] == ':') {
		snprintf(why, whylen, "\"%s\": an iqn. name is iqn.YYYY-MM.reversed.domain[:identifier]", name);
		return -1;
	}
	return 0;
}

static int add_initiator(void *arg, const char *word, char *why, size_t whylen)
{
	struct cfg_target *target = arg;
	bool created;

	if (cfg_check_iscsi_name(word, why, whylen))
		return -1;
	if (!cfg_target_acl(target, word, &created)) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	if (!created) {
		snprintf(why, whylen, "%s is listed twice", word);
		return -1;
	}
	return 0;
}

int cfg_set_allowed_initiators(const struct cfg_key *key, void *object, const char *value, char *why,
			       size_t whylen)
{
	return for_each_word(value, add_initiator, object, why, whylen);
}

/* SPC-4 7.8.6.6: the designator's NAA field (bits 63:60 of the high half) is 6, IEEE Registered Extended. */
int cfg_set_naa(const struct cfg_key *key, void *object, const char *value, char *why, size_t whylen)
{
	const char *hex = strncmp(value, "0x", 2) == 0 ? value + 2 : value;
	uint64_t naa = 0;

	if (strcmp(value, "0") != 0) {
		if (!all_hex(hex, 16)) {
			snprintf(why, whylen, "\"%s\" is not 16 hexadecimal digits", value);
			return -1;
		}
		for (const char *p = hex; *p; p++)
			naa = naa << 4 | (uint64_t)(isdigit((unsigned char)*p) ? *p - '0'
							   : tolower((unsigned char)*p) - 'a' + 10);
		if (naa >> 60 != 6) {
			snprintf(why, whylen, "\"%s\" does not start with 6 (NAA IEEE Registered Extended)", value);
			return -1;
		}
	}
	store(key, object, &naa, sizeof(naa));
	return 0;
}

int cfg_set_flags(const struct cfg_key *key, void *object, const char *value, char *why, size_t whylen)
{
	uint32_t bits = 0;
	const char *p = value;

	if (strcmp(value, "all") == 0) {
		for (const struct cfg_enum_value *v = key->values; v->name; v++)
			bits |= v->value;
		p = "";
	} else if (strcmp(value, "none") == 0) {
		p = "";
	}
	while (*p) {
		const struct cfg_enum_value *v;
		size_t n;

		p += strspn(p, " \t,");
		n = strcspn(p, " \t,");
		if (n == 0)
			break;
		for (v = key->values; v->name; v++)
			if (strlen(v->name) == n && strncmp(p, v->name, n) == 0)
				break;
		if (!v->name) {
			snprintf(why, whylen, "unknown name \"%.*s\" (all, none, or names listed in docs/config.md)",
				 (int)(n > 64 ? 64 : n), p);
			return -1;
		}
		bits |= v->value;
		p += n;
	}
	memcpy((char *)object + key->offset, &bits, sizeof(bits));
	return 0;
}
