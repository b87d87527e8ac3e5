/*
 * tests/fuzz/fuzz_extractor_folder.c - a saved extractor folder
 * (audio/xvector_io.h: extractor.yaml and net0/, a learn/nn model folder) as
 * vpa_xvec_load reads it when a scenario says `extractor: {from: DIR}`.  The
 * input is the folder packed as text, as fuzz_model_folder.c packs one: the
 * bytes up to the first line "%%FILE NAME" are extractor.yaml, and each
 * "%%FILE NAME" line starts a file net0/NAME (letters, digits, '.', '_', '-';
 * other names are skipped) holding the bytes up to the next such line.  An
 * error must be one non-empty line naming the folder, with nothing loaded; a
 * loaded extractor must hold a network with only finite parameters.  Nothing
 * may crash or leak.
 */
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audio/xvector_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char MARK[] = "%%FILE ";

static int name_ok(const char *s, size_t n)
{
	if (n == 0 || n > 100 || s[0] == '.')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == '_' || s[i] == '-'))
			return 0;
	return 1;
}

static void put(const char *dir, const char *name, size_t nlen, const uint8_t *p, size_t n)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%.*s", dir, (int)nlen, name);
	FILE *f = fopen(path, "wb");
	if (!f)
		abort();
	if (n && fwrite(p, 1, n, f) != n)
		abort();
	fclose(f);
}

/* Start of the next "%%FILE " line at or after p (or end). */
static const uint8_t *next_mark(const uint8_t *p, const uint8_t *end)
{
	for (const uint8_t *q = p; q + sizeof(MARK) - 1 <= end; q++)
		if ((q == p || q[-1] == '\n') && !memcmp(q, MARK, sizeof(MARK) - 1))
			return q;
	return end;
}

static void rm_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[512];
	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char dir[] = "/tmp/vpa-fuzz-extractor-XXXXXX";
	if (!mkdtemp(dir))
		abort();
	char net[600];
	snprintf(net, sizeof(net), "%s/net0", dir);
	if (mkdir(net, 0700))
		abort();
	const uint8_t *end = data + size, *p = next_mark(data, end);
	put(dir, "extractor.yaml", 14, data, (size_t)(p - data));
	while (p < end) {
		const uint8_t *nm = p + sizeof(MARK) - 1;
		const uint8_t *nl = memchr(nm, '\n', (size_t)(end - nm));
		if (!nl)
			break;
		const uint8_t *body = nl + 1, *q = next_mark(body, end);
		size_t blen = (size_t)(q - body);
		if (q < end && blen)
			blen--;
		if (name_ok((const char *)nm, (size_t)(nl - nm)))
			put(net, (const char *)nm, (size_t)(nl - nm), body, blen);
		p = q;
	}
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_xvec x;
	struct vpa_xvec_meta m;
	if (vpa_xvec_load(dir, &x, &m, &err)) {
		if (vpa_xvec_trained(&x) || !err.msg[0] || strchr(err.msg, '\n') ||
		    !strstr(err.msg, dir))
			abort();
	} else {
		if (!vpa_xvec_trained(&x) || !x.net)
			abort();
		size_t n;
		const float *w = vpa_nn_params(x.net, &n);
		for (size_t j = 0; j < n; j++)
			if (!isfinite(w[j]))
				abort();
		vpa_xvec_release(&x);
	}
	rm_dir(net);
	rm_dir(dir);
	return 0;
}
