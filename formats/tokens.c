/*
 * formats/tokens.c - CTC tokens files (formats/tokens.h).
 */
#include <stdlib.h>
#include <string.h>

#include "formats/tokens.h"

void vpa_tokens_free(char **tok, size_t n)
{
	for (size_t i = 0; tok && i < n; i++)
		free(tok[i]);
	free(tok);
}

int vpa_tokens_parse(const char *name, const char *data, size_t len, char ***tok, size_t *n,
		     struct vpa_err *err)
{
	*tok = NULL;
	*n = 0;
	char **t = NULL;
	size_t k = 0, cap = 0, pos = 0;
	long line = 0;
	int rc = 0;
	while (pos < len) {
		line++;
		const char *nl = memchr(data + pos, '\n', len - pos);
		size_t e = nl ? (size_t)(nl - data) : len;
		size_t l = e - pos;
		if (l && data[pos + l - 1] == '\r')
			l--;
		struct vpa_loc loc = {name, line, 0};
		if (memchr(data + pos, '\0', l)) {
			rc = vpa_fail(err, VPA_EINPUT, &loc, "a NUL byte in a token");
			break;
		}
		if (l == 0) {
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "empty line: expected one token per line (line k is output index k)");
			break;
		}
		if (k == cap) {
			cap = cap ? 2 * cap : 64;
			t = xrealloc(t, xmul(cap, sizeof(*t)));
		}
		t[k] = xmalloc(l + 1);
		memcpy(t[k], data + pos, l);
		t[k][l] = '\0';
		k++;
		pos = e + 1;
	}
	if (!rc && k == 0) {
		struct vpa_loc loc = {name, 0, 0};
		rc = vpa_fail(err, VPA_EINPUT, &loc, "no token: expected one token per line");
	}
	if (rc) {
		vpa_tokens_free(t, k);
		return rc;
	}
	*tok = t;
	*n = k;
	return 0;
}

int vpa_tokens_read(const char *path, char ***tok, size_t *n, struct vpa_err *err)
{
	char *data;
	size_t len;
	*tok = NULL;
	*n = 0;
	int rc = vpa_read_file(path, &data, &len, err);
	if (rc)
		return rc;
	rc = vpa_tokens_parse(path, data, len, tok, n, err);
	free(data);
	return rc;
}
