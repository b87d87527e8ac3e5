/*
 * tests/fuzz/fuzz_onnx_external.c - ONNX external data: a model and its folder
 * as vpa_onnx_load reads them.  The input is a folder packed as bytes: those
 * up to the first mark line are model.onnx; a mark line starts an entry that
 * holds the bytes up to the next mark line (the newline before a mark belongs
 * to the mark):
 *   %%FILE NAME     a regular file NAME with those bytes
 *   %%LINK NAME     a symbolic link NAME to the bytes (the target, e.g. ../secret.bin)
 *   %%FIFO NAME     a FIFO (no writer: it must not block the load)
 *   %%DIR NAME      a folder
 * NAME is '/'-separated components of [A-Za-z0-9._-] not starting with '.'
 * (others are skipped); missing parent folders are made.  The folder is
 * TOP/model/ and TOP/secret.bin (4 KiB) lies outside it.  An error must be one
 * non-empty line naming model.onnx; a loaded model must have read each
 * external tensor from a regular file reached from the folder without any
 * symbolic link (checked independently here with lstat on every component).
 * Nothing may crash, leak or hang.
 */
#include <errno.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "onnx/onnx.h"
#include "onnx/onnx.pb-c.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int name_ok(const char *s, size_t n)
{
	if (n == 0 || n > 100)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if ((i == 0 || s[i - 1] == '/') && (c == '.' || c == '/'))
			return 0; /* no empty, hidden, '.' or '..' component */
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-' || c == '/'))
			return 0;
	}
	return s[n - 1] != '/';
}

/* Start of the next mark line ("%%" at a line start) at or after p, or end. */
static const uint8_t *next_mark(const uint8_t *p, const uint8_t *start, const uint8_t *end)
{
	for (const uint8_t *q = p; q + 2 <= end; q++)
		if ((q == start || q[-1] == '\n') && q[0] == '%' && q[1] == '%')
			return q;
	return end;
}

/* mkdir -p of path's parent folders below top (path is inside top). */
static void make_parents(const char *path, size_t top_len)
{
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *s = buf + top_len + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(buf, 0700);
		*s = '/';
	}
}

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	remove(p);
	return 0;
}

/* Every component of dir/location below dir is not a link; the last is a regular file. */
static int inside(const char *dir, const char *location)
{
	char path[2048];
	struct stat st;
	size_t n = (size_t)snprintf(path, sizeof(path), "%s/%s", dir, location);
	if (n >= sizeof(path))
		return 0;
	for (size_t i = strlen(dir) + 1; i <= n; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		char c = path[i];
		path[i] = '\0';
		int r = lstat(path, &st);
		path[i] = c;
		if (r != 0 || S_ISLNK(st.st_mode))
			return 0;
	}
	return S_ISREG(st.st_mode);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char top[] = "/tmp/vpa-fuzz-onnx-XXXXXX", dir[64], path[1024];
	if (!mkdtemp(top))
		abort();
	snprintf(dir, sizeof(dir), "%s/model", top);
	snprintf(path, sizeof(path), "%s/secret.bin", top);
	FILE *f = fopen(path, "wb");
	for (int i = 0; f && i < 1024; i++)
		fwrite("SECRET!!", 1, 4, f);
	if (!f || fclose(f) || mkdir(dir, 0700))
		abort();
	const uint8_t *end = data + size, *p = next_mark(data, data, end);
	size_t mlen = (size_t)(p - data);
	if (p < end && mlen && data[mlen - 1] == '\n')
		mlen--;
	while (p < end) {
		const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break;
		const uint8_t *body = nl + 1, *q = next_mark(body, data, end);
		size_t blen = (size_t)(q - body);
		if (q < end && blen)
			blen--;
		const char *kinds[] = {"%%FILE ", "%%LINK ", "%%FIFO ", "%%DIR "};
		for (int k = 0; k < 4; k++) {
			size_t kl = strlen(kinds[k]);
			const char *nm = (const char *)p + kl;
			size_t nlen = (size_t)(nl - p) >= kl ? (size_t)(nl - p) - kl : 0;
			if ((size_t)(nl - p) < kl || memcmp(p, kinds[k], kl) || !name_ok(nm, nlen))
				continue;
			snprintf(path, sizeof(path), "%s/%.*s", dir, (int)nlen, nm);
			make_parents(path, strlen(dir));
			if (k == 0) {
				FILE *g = fopen(path, "wb");
				if (g) {
					if (blen)
						fwrite(body, 1, blen, g);
					fclose(g);
				}
			} else if (k == 1) {
				char target[1024];
				snprintf(target, sizeof(target), "%.*s", (int)(blen < 1000 ? blen : 1000),
					 (const char *)body);
				if (!memchr(body, '\0', blen < 1000 ? blen : 1000))
					(void)symlink(target, path);
			} else if (k == 2) {
				mkfifo(path, 0600);
			} else {
				mkdir(path, 0700);
			}
		}
		p = q;
	}
	snprintf(path, sizeof(path), "%s/model.onnx", dir);
	f = fopen(path, "wb");
	if (!f || (mlen && fwrite(data, 1, mlen, f) != mlen) || fclose(f))
		abort();
	struct vpa_onnx_model *m = NULL;
	struct vpa_err err;
	vpa_err_init(&err);
	if (vpa_onnx_load(path, NULL, &m, &err)) {
		if (m || !err.msg[0] || strchr(err.msg, '\n') || strncmp(err.msg, path, strlen(path)))
			abort();
	} else {
		/* depth <= 64 once loaded: unpacking again is safe */
		Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, mlen, data);
		if (!mp || !mp->graph)
			abort();
		for (size_t i = 0; i < mp->graph->n_initializer; i++) {
			const Onnx__TensorProto *tp = mp->graph->initializer[i];
			if (!tp->has_data_location ||
			    tp->data_location != ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
				continue;
			const char *loc = NULL;
			for (size_t k = 0; k < tp->n_external_data; k++)
				if (tp->external_data[k]->key && tp->external_data[k]->value &&
				    !strcmp(tp->external_data[k]->key, "location"))
					loc = tp->external_data[k]->value;
			if (!loc || !inside(dir, loc))
				abort(); /* read from outside the folder or through a link */
		}
		onnx__model_proto__free_unpacked(mp, NULL);
		vpa_onnx_free(m);
	}
	nftw(top, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}
