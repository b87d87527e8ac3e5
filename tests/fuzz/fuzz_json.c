/*
 * tests/fuzz/fuzz_json.c - vpa_json_parse on arbitrary bytes; on success the
 * document must survive write -> parse -> write unchanged (compact and
 * pretty), and a clone must write the same bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *render(const struct vpa_json *v, int indent, size_t *len)
{
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_json_write(&b, v, indent);
	vpa_buf_str(&b);
	*len = b.len;
	return b.data;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size ? size : 1);
	if (size)
		memcpy(buf, data, size);
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_json *v = vpa_json_parse("fuzz.json", buf, size, &err);
	if (!v) {
		if (err.msg[0] == '\0' || strchr(err.msg, '\n'))
			abort();
		free(buf);
		return 0;
	}
	size_t n1, n2, n3, n4;
	char *s1 = render(v, 0, &n1);
	char *p1 = render(v, 2, &n3);
	vpa_err_init(&err);
	struct vpa_json *w = vpa_json_parse("again.json", s1, n1, &err);
	if (!w)
		abort(); /* our own output must parse */
	char *s2 = render(w, 0, &n2);
	if (n1 != n2 || memcmp(s1, s2, n1))
		abort();
	struct vpa_json *u = vpa_json_parse("pretty.json", p1, n3, &err);
	if (!u)
		abort();
	char *s3 = render(u, 0, &n4);
	if (n1 != n4 || memcmp(s1, s3, n1))
		abort();
	struct vpa_json *c = vpa_json_clone(v);
	char *s4 = render(c, 0, &n4);
	if (n1 != n4 || memcmp(s1, s4, n1))
		abort();
	free(s1);
	free(s2);
	free(s3);
	free(s4);
	free(p1);
	vpa_json_free(v);
	vpa_json_free(w);
	vpa_json_free(u);
	vpa_json_free(c);
	free(buf);
	return 0;
}
