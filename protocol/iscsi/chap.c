/*
 * CHAP authentication in the login security stage (RFC 7143 12.1.3, RFC 1994):
 * CHAP_A=5 (MD5) only; one-way (the initiator proves it knows the secret)
 * and mutual (the initiator sends CHAP_I/CHAP_C and the target answers with
 * its own CHAP_N/CHAP_R).  Binary values are accepted in hex (0x) and base64
 * (0b) and sent in hex.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include <openssl/evp.h>

#include "iscsi_internal.h"

#define CHAP_BINARY_MAX 1024 /* RFC 7143 12.1.3: challenges and responses are at most 1024 bytes */

int iscsi_chap_md5(uint8_t id, const uint8_t *secret, size_t secret_len, const uint8_t *challenge,
		   size_t challenge_len, uint8_t out[ISCSI_MD5_LEN])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned int len = 0;
	int ok;

	if (!ctx)
		return -1;
	/* RFC 1994 4.1: Response = MD5(Identifier || secret || Challenge). */
	ok = EVP_DigestInit_ex(ctx, EVP_md5(), NULL) && EVP_DigestUpdate(ctx, &id, 1) &&
	     EVP_DigestUpdate(ctx, secret, secret_len) && EVP_DigestUpdate(ctx, challenge, challenge_len) &&
	     EVP_DigestFinal_ex(ctx, out, &len);
	EVP_MD_CTX_free(ctx);
	return ok && len == ISCSI_MD5_LEN ? 0 : -1;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int b64_digit(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* RFC 7143 5.1: binary values are "0x" hex or "0b" base64 strings. */
int iscsi_chap_decode_binary(const char *value, uint8_t *out, size_t cap)
{
	size_t n = 0;

	if (value[0] != '0')
		return -1;
	if (value[1] == 'x' || value[1] == 'X') {
		const char *p = value + 2;
		size_t len = strlen(p);
		size_t i = 0;
		if (len == 0)
			return -1;
		if (len % 2) {
			/* an odd number of digits: the first byte takes one digit */
			int d = hex_digit(p[0]);
			if (d < 0 || n >= cap)
				return -1;
			out[n++] = (uint8_t)d;
			i = 1;
		}
		for (; i < len; i += 2) {
			int hi = hex_digit(p[i]), lo = hex_digit(p[i + 1]);
			if (hi < 0 || lo < 0 || n >= cap)
				return -1;
			out[n++] = (uint8_t)(hi << 4 | lo);
		}
		return (int)n;
	}
	if (value[1] == 'b' || value[1] == 'B') {
		const char *p = value + 2;
		uint32_t acc = 0;
		int bits = 0;
		size_t len = strlen(p), pad = 0;
		if (len == 0 || len % 4)
			return -1;
		for (size_t i = 0; i < len; i++) {
			int d;
			if (p[i] == '=') {
				if (i < len - 2)
					return -1;
				pad++;
				continue;
			}
			if (pad)
				return -1;
			d = b64_digit(p[i]);
			if (d < 0)
				return -1;
			acc = acc << 6 | (uint32_t)d;
			bits += 6;
			if (bits >= 8) {
				bits -= 8;
				if (n >= cap)
					return -1;
				out[n++] = (uint8_t)(acc >> bits);
			}
		}
		return (int)n;
	}
	return -1;
}

static void encode_hex(const uint8_t *in, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";

	out[0] = '0';
	out[1] = 'x';
	for (size_t i = 0; i < len; i++) {
		out[2 + 2 * i] = digits[in[i] >> 4];
		out[3 + 2 * i] = digits[in[i] & 15];
	}
	out[2 + 2 * len] = '\0';
}

static const char *kv_get(struct iscsi_kv *kv, int nkv, const char *key)
{
	for (int i = 0; i < nkv; i++)
		if (strcmp(kv[i].key, key) == 0)
			return kv[i].value;
	return NULL;
}

static const struct iscsi_chap_credentials *credentials(const struct iscsi_conn *conn, const struct iscsi_login *login,
							 bool mutual)
{
	const struct iscsi_acl_entry *e = login->acl_entry;

	/* A discovery session authenticates with the server's discovery credentials (iscsi.discovery_chap_*). */
	if (login->neg.session_type == ISCSI_SESSION_DISCOVERY) {
		const struct iscsi_chap_credentials *c = mutual ? &conn->srv->discovery_mutual : &conn->srv->discovery_chap;

		return c->user ? c : NULL;
	}
	if (e && (mutual ? e->mutual.user : e->chap.user))
		return mutual ? &e->mutual : &e->chap;
	if (!login->target)
		return NULL;
	if (mutual ? login->target->mutual.user : login->target->chap.user)
		return mutual ? &login->target->mutual : &login->target->chap;
	return NULL;
}

/* CHAP_A is a list of algorithm numbers; 5 is MD5 (RFC 7143 12.1.3). */
static bool offers_md5(const char *value)
{
	const char *p = value;

	while (*p) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		if (len == 1 && p[0] == '5')
			return true;
		if (!comma)
			break;
		p = comma + 1;
	}
	return false;
}

enum iscsi_login_status iscsi_chap_handle(struct iscsi_conn *conn, struct iscsi_login *login, struct iscsi_kv *kv,
					  int nkv, struct iscsi_text *out)
{
	const char *chap_a = kv_get(kv, nkv, "CHAP_A");
	const char *chap_n = kv_get(kv, nkv, "CHAP_N");
	const char *chap_r = kv_get(kv, nkv, "CHAP_R");
	const char *chap_i = kv_get(kv, nkv, "CHAP_I");
	const char *chap_c = kv_get(kv, nkv, "CHAP_C");
	const struct iscsi_chap_credentials *cred = credentials(conn, login, false);

	switch (login->chap_state) {
	case ISCSI_CHAP_STATE_START: {
		char hex[2 + 2 * ISCSI_CHAP_CHALLENGE_LEN + 1];

		if (!chap_a)
			return ISCSI_LOGIN_STATUS_SUCCESS; /* waiting for it */
		if (!offers_md5(chap_a) || !cred) {
			iscsi_text_append(out, "CHAP_A", "Reject");
			ISCSI_PEER_ERROR(conn->srv, "%s: CHAP_A=%s not acceptable", conn->peer, chap_a);
			return ISCSI_LOGIN_STATUS_AUTHENTICATION_FAILURE;
		}
		if (getrandom(&login->chap_id, 1, 0) != 1 ||
		    getrandom(login->chap_challenge, sizeof(login->chap_challenge), 0) !=
			    (ssize_t)sizeof(login->chap_challenge))
			return ISCSI_LOGIN_STATUS_TARGET_ERROR;
		encode_hex(login->chap_challenge, sizeof(login->chap_challenge), hex);
		iscsi_text_append(out, "CHAP_A", "5");
		iscsi_text_appendf(out, "CHAP_I", "%u", login->chap_id);
		iscsi_text_append(out, "CHAP_C", hex);
		login->chap_state = ISCSI_CHAP_STATE_CHALLENGED;
		return ISCSI_LOGIN_STATUS_SUCCESS;
	}
	case ISCSI_CHAP_STATE_CHALLENGED: {
		uint8_t response[CHAP_BINARY_MAX], expected[ISCSI_MD5_LEN];
		int rlen;

		if (chap_a)
			return ISCSI_LOGIN_STATUS_AUTHENTICATION_FAILURE;
		if (!chap_n || !chap_r)
			return ISCSI_LOGIN_STATUS_AUTHENTICATION_FAILURE;
		rlen = iscsi_chap_decode_binary(chap_r, response, sizeof(response));
		if (!cred || strcmp(chap_n, cred->user) != 0 || rlen != ISCSI_MD5_LEN ||
		    iscsi_chap_md5(login->chap_id, (const uint8_t *)cred->secret, strlen(cred->secret),
				   login->chap_challenge, sizeof(login->chap_challenge), expected) != 0 ||
		    memcmp(response, expected, ISCSI_MD5_LEN) != 0) {
			ISCSI_PEER_ERROR(conn->srv, "%s: CHAP authentication of '%s' failed", conn->peer, chap_n);
			return ISCSI_LOGIN_STATUS_AUTHENTICATION_FAILURE;
		}
		if (chap_i || chap_c) {
			/* Mutual CHAP: the initiator challenges the target (RFC 7143 12.1.3). */
			const struct iscsi_chap_credentials *mutual = credentials(conn, login, true);
			uint8_t challenge[CHAP_BINARY_MAX], answer[ISCSI_MD5_LEN];
			char hex[2 + 2 * ISCSI_MD5_LEN + 1];
			char *end;
			unsigned long id;
			int clen;

			if (!chap_i || !chap_c || !mutual)
				return ISCSI_LOGIN_STATUS_AUTHENTICATION_FAILURE;
			id = strtoul(chap_i, &end, 0);
			if (*chap_i == '\0' || *end || id > 255)
				return ISCSI_LOGIN_STATUS_AUTHENTICATION_FAILURE;
			clen = iscsi_chap_decode_binary(chap_c, challenge, sizeof(challenge));
			if (clen <= 0)
				return ISCSI_LOGIN_STATUS_AUTHENTICATION_FAILURE;
			/* RFC 7143 12.1.3: a target must refuse its own challenge reflected back. */
			if ((size_t)clen == sizeof(login->chap_challenge) &&
			    memcmp(challenge, login->chap_challenge, (size_t)clen) == 0)
				return ISCSI_LOGIN_STATUS_AUTHENTICATION_FAILURE;
			if (iscsi_chap_md5((uint8_t)id, (const uint8_t *)mutual->secret, strlen(mutual->secret), challenge,
					   (size_t)clen, answer) != 0)
				return ISCSI_LOGIN_STATUS_TARGET_ERROR;
			encode_hex(answer, sizeof(answer), hex);
			iscsi_text_append(out, "CHAP_N", mutual->user);
			iscsi_text_append(out, "CHAP_R", hex);
		}
		login->chap_state = ISCSI_CHAP_STATE_DONE;
		login->security_done = true;
		return ISCSI_LOGIN_STATUS_SUCCESS;
	}
	case ISCSI_CHAP_STATE_DONE:
		if (chap_a || chap_n || chap_r || chap_i || chap_c)
			return ISCSI_LOGIN_STATUS_AUTHENTICATION_FAILURE;
		return ISCSI_LOGIN_STATUS_SUCCESS;
	}
	return ISCSI_LOGIN_STATUS_AUTHENTICATION_FAILURE;
}
