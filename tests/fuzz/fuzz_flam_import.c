/*
 * tests/fuzz/fuzz_flam_import.c - the imports of the `fl_acoustic_models`
 * target: activation folders (models.txt + acts/MODEL/layerH/UTT.npy) and
 * model folders with Indicator features (models.txt + models/MODEL/ with
 * model.yaml and tensors + indicator/UTT.npy), read by a one-attack scenario
 * (A1) run in memory.  The input is a folder packed as text: each line
 * "%%FILE PATH" starts the file PATH (letters, digits, '.', '_', '-' and '/',
 * no "..", no leading '/'), holding the bytes up to the next such line;
 * bytes before the first one are ignored.  When PATH "indicator/..." exists
 * the scenario imports model_dir + indicator, else activations.  An error
 * must be one non-empty line; nothing may crash or leak.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/json.h"
#include "scenarios/scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char MARK[] = "%%FILE ";

static int path_ok(const char *s, size_t n)
{
	if (n == 0 || n > 200 || s[0] == '/' || s[n - 1] == '/')
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-' || c == '/'))
			return 0;
		if (c == '.' && (i == 0 || s[i - 1] == '/') && i + 1 < n && s[i + 1] == '.')
			return 0;
	}
	return 1;
}

static void put(const char *dir, const char *name, size_t nlen, const uint8_t *p, size_t n)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%.*s", dir, (int)nlen, name);
	for (char *s = path + strlen(dir) + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			mkdir(path, 0700);
			*s = '/';
		}
	FILE *f = fopen(path, "wb");
	if (!f)
		return; /* e.g. a file where a folder was made */
	if (n)
		fwrite(p, 1, n, f);
	fclose(f);
}

static const uint8_t *next_mark(const uint8_t *p, const uint8_t *end)
{
	for (const uint8_t *q = p; q + sizeof(MARK) - 1 <= end; q++)
		if ((q == p || q[-1] == '\n') && !memcmp(q, MARK, sizeof(MARK) - 1))
			return q;
	return end;
}

static void rm_tree(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char path[1024];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		struct stat st;
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
			rm_tree(path);
		else
			unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char dir[] = "/tmp/vpa-fuzz-flam-XXXXXX";
	if (!mkdtemp(dir))
		abort();
	const uint8_t *end = data + size, *p = next_mark(data, end);
	int models = 0;
	while (p < end) {
		const uint8_t *nm = p + sizeof(MARK) - 1;
		const uint8_t *nl = memchr(nm, '\n', (size_t)(end - nm));
		if (!nl)
			break;
		const uint8_t *body = nl + 1, *q = next_mark(body, end);
		size_t blen = (size_t)(q - body), nlen = (size_t)(nl - nm);
		if (q < end && blen)
			blen--;
		if (path_ok((const char *)nm, nlen)) {
			put(dir, (const char *)nm, nlen, body, blen);
			models |= nlen > 10 && !memcmp(nm, "indicator/", 10);
		}
		p = q;
	}
	char yaml[1024];
	snprintf(yaml, sizeof(yaml),
		 "name: fz\nreport: [json]\ntargets:\n  - id: fl\n    kind: fl_acoustic_models\n"
		 "    source: import\n    import: {models: models.txt, %s}\n"
		 "attacks:\n  - {id: a1, kind: a1_footprint, target: fl}\n",
		 models ? "model_dir: models, indicator: indicator" : "activations: acts");
	put(dir, "s.yaml", 6, (const uint8_t *)yaml, strlen(yaml));
	char spath[600];
	snprintf(spath, sizeof(spath), "%s/s.yaml", dir);
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_scenario *s = NULL;
	struct vpa_json *results = NULL;
	struct vpa_run_opts ro = {1, 1, 1, 1};
	int saved_quiet = vpa_quiet;
	vpa_quiet = 1;
	if (vpa_scenario_load(spath, &s, &err) || vpa_scenario_run(s, &ro, &results, &err)) {
		if (!err.msg[0] || strchr(err.msg, '\n'))
			abort();
	}
	if (getenv("VPA_FUZZ_VERBOSE")) /* what each input gave, for corpus work */
		fprintf(stderr, "%s\n", err.msg[0] ? err.msg : "ok");
	vpa_quiet = saved_quiet;
	vpa_json_free(results);
	vpa_scenario_free(s);
	rm_tree(dir);
	return 0;
}
