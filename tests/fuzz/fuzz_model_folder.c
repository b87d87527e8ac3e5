/*
 * tests/fuzz/fuzz_model_folder.c - a model folder (model.yaml + one .npy per
 * tensor, learn/NN.md) as vpa_nn_load reads it.  The input is a folder packed
 * as text: the bytes up to the first line "%%FILE NAME" are model.yaml, and
 * each "%%FILE NAME" line starts a file NAME (letters, digits, '.', '_', '-';
 * other names are skipped) holding the bytes up to the next such line.  The
 * folder is written to a temporary directory and loaded: an error must be one
 * non-empty line naming a file of the folder; a loaded model must hold only
 * finite parameters.  Nothing may crash, leak or allocate more than the
 * tensor files can hold.
 */
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "learn/nn.h"

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
	char dir[] = "/tmp/vpa-fuzz-model-XXXXXX";
	if (!mkdtemp(dir))
		abort();
	const uint8_t *end = data + size, *p = next_mark(data, end);
	put(dir, "model.yaml", 10, data, (size_t)(p - data));
	while (p < end) {
		const uint8_t *nm = p + sizeof(MARK) - 1;
		const uint8_t *nl = memchr(nm, '\n', (size_t)(end - nm));
		if (!nl)
			break;
		const uint8_t *body = nl + 1, *q = next_mark(body, end);
		/* the newline before the next mark belongs to the mark */
		size_t blen = (size_t)(q - body);
		if (q < end && blen)
			blen--;
		if (name_ok((const char *)nm, (size_t)(nl - nm)))
			put(dir, (const char *)nm, (size_t)(nl - nm), body, blen);
		p = q;
	}
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_nn *net = NULL;
	if (vpa_nn_load(dir, &net, &err)) {
		if (net || !err.msg[0] || strchr(err.msg, '\n') || !strstr(err.msg, dir))
			abort();
	} else {
		for (size_t i = 0; i < vpa_nn_n_layers(net); i++)
			for (size_t k = 0; k < vpa_nn_n_tensors(net, i); k++) {
				struct vpa_nn_tensor t;
				vpa_nn_tensor(net, i, k, &t);
				size_t n = t.shape[0] * (t.ndim == 2 ? t.shape[1] : 1);
				for (size_t j = 0; j < n; j++)
					if (!isfinite(t.data[j]))
						abort();
			}
		vpa_nn_free(net);
	}
	rm_dir(dir);
	return 0;
}
