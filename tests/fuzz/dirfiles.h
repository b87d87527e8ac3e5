/*
 * tests/fuzz/dirfiles.h - for the fuzz targets that need a data directory on
 * disk (fuzz_datadir.c, fuzz_merge.c): the input is a set of files written
 * with "--- NAME" header lines,
 *
 *   --- wav.scp
 *   r1 @/a16.wav
 *   --- utt2spk
 *   r1 s1
 *
 * (text before the first header is wav.scp; NAME is one of the names a
 * target allows, an unknown one keeps the previous file going; '@' stands for
 * the scratch folder, so wav.scp can name the two WAV files written there: a
 * 16 kHz a16.wav and an 8 kHz b8.wav, 800 samples each).  The scratch folder is
 * made once per process under $TMPDIR and removed at exit.
 */
#ifndef VPA_FUZZ_DIRFILES_H
#define VPA_FUZZ_DIRFILES_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char df_root[256];

/* Remove a folder's files (one level deep; folders inside are emptied too). */
static void df_clear(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[1024];
	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (unlink(p) != 0) {
			df_clear(p);
			rmdir(p);
		}
	}
	if (d)
		closedir(d);
}

static void df_cleanup(void)
{
	if (df_root[0]) {
		df_clear(df_root);
		rmdir(df_root);
	}
}

static void df_wav(const char *name, uint32_t rate)
{
	enum { N = 800 };
	unsigned char h[44];
	uint32_t data = 2 * N, v;
	memcpy(h, "RIFF", 4), v = 36 + data, memcpy(h + 4, &v, 4);
	memcpy(h + 8, "WAVEfmt ", 8), v = 16, memcpy(h + 16, &v, 4);
	uint16_t fmt[2] = {1, 1};
	memcpy(h + 20, fmt, 4), memcpy(h + 24, &rate, 4), v = rate * 2, memcpy(h + 28, &v, 4);
	uint16_t ba[2] = {2, 16};
	memcpy(h + 32, ba, 4), memcpy(h + 36, "data", 4), memcpy(h + 40, &data, 4);
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", df_root, name);
	FILE *f = fopen(p, "wb");
	if (!f)
		abort();
	fwrite(h, 1, 44, f);
	for (int i = 0; i < N; i++) {
		int16_t s = (int16_t)((i * 37) % 2000 - 1000);
		fwrite(&s, 2, 1, f);
	}
	fclose(f);
}

/* The scratch folder (made on the first call). */
static const char *df_dir(void)
{
	if (!df_root[0]) {
		const char *t = getenv("TMPDIR");
		snprintf(df_root, sizeof(df_root), "%s/vpa_fuzzdir_XXXXXX", t && *t ? t : "/tmp");
		if (!mkdtemp(df_root))
			abort();
		atexit(df_cleanup);
	}
	return df_root;
}

/* Open (append) file NAME under the scratch folder, making its "D/" folder. */
static FILE *df_open(const char *name)
{
	char p[512];
	const char *slash = strchr(name, '/');
	if (slash) {
		snprintf(p, sizeof(p), "%s/%.*s", df_root, (int)(slash - name), name);
		mkdir(p, 0777);
	}
	snprintf(p, sizeof(p), "%s/%s", df_root, name);
	FILE *f = fopen(p, "ab");
	if (!f)
		abort();
	return f;
}

/*
 * Write the files of data[0..size) under df_dir() (emptied first): "--- NAME"
 * lines switch to file NAME when it is in allowed (NULL-terminated; entries
 * may hold a "D/" folder prefix); the lines before the first are allowed[0].
 */
static void df_write(const uint8_t *data, size_t size, const char *const *allowed)
{
	const char *root = df_dir();
	df_clear(root);
	df_wav("a16.wav", 16000);
	df_wav("b8.wav", 8000);
	FILE *f = df_open(allowed[0]);
	for (size_t pos = 0; pos < size;) {
		size_t e = pos;
		while (e < size && data[e] != '\n')
			e++;
		const char *name = NULL;
		if (e - pos > 4 && !memcmp(data + pos, "--- ", 4))
			for (const char *const *a = allowed; *a && !name; a++)
				if (strlen(*a) == e - pos - 4 && !memcmp(data + pos + 4, *a, e - pos - 4))
					name = *a;
		if (name) {
			fclose(f);
			f = df_open(name);
		} else {
			for (size_t k = pos; k < e; k++)
				if (data[k] == '@')
					fputs(root, f);
				else
					fputc(data[k], f);
			if (e < size)
				fputc('\n', f);
		}
		pos = e < size ? e + 1 : e;
	}
	fclose(f);
}

#endif
