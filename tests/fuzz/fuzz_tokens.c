/*
 * tests/fuzz/fuzz_tokens.c - vpa_tokens_parse (CTC tokens files) on arbitrary
 * bytes: no crash, no leak; on success every token is non-empty with no
 * newline or NUL, and there are no more tokens than lines; on error one line.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/tokens.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size ? size : 1);
	if (size)
		memcpy(buf, data, size);
	char **tok;
	size_t n;
	struct vpa_err err;
	vpa_err_init(&err);
	if (vpa_tokens_parse("fuzz.txt", buf, size, &tok, &n, &err) == 0) {
		size_t lines = 1;
		for (size_t i = 0; i < size; i++)
			lines += buf[i] == '\n';
		if (n == 0 || n > lines)
			abort();
		for (size_t i = 0; i < n; i++)
			if (!tok[i][0] || strchr(tok[i], '\n'))
				abort();
		vpa_tokens_free(tok, n);
	} else if (err.msg[0] == '\0' || strchr(err.msg, '\n') || tok) {
		abort();
	}
	free(buf);
	return 0;
}
