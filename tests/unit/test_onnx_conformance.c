/*
 * tests/unit/test_onnx_conformance.c - the ONNX engine against the backend
 * tests of onnx (the PyTorch models, plans, threads and hostile files are
 * tests/unit/test_onnx.c).
 *
 * conformance: every backend test of Debian's libonnx-testdata (node/,
 * pytorch-converted/, pytorch-operator/, simple/) whose operators are all in
 * our table is loaded, run on each test_data_set_N and compared with the
 * expected outputs as onnx's own runner does (numpy assert_allclose with
 * rtol 1e-3, atol 1e-7; integers and bools exactly).  A test is skipped only
 * for a stated reason (opset outside 11-17, an element type or attribute
 * value we do not claim); any other load or run error or a wrong value is a
 * failure.  Prints "N of M node tests of supported operators pass; K
 * skipped: ..." and a per-operator count.
 */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/io.h"
#include "onnx/conv.h"
#include "onnx/onnx.h"
#include "tests/unit/harness.h"

#ifndef ONNX_TESTDATA
#define ONNX_TESTDATA "/usr/include/onnx/backend/test/data"
#endif

static int read_tensor(const char *path, struct vpa_onnx_tensor *t, char **name,
		       struct vpa_err *err)
{
	char *buf;
	size_t len;
	int rc = vpa_read_file(path, &buf, &len, err);
	if (rc)
		return rc;
	rc = vpa_onnx_tensor_parse(path, buf, len, t, name, err);
	free(buf);
	return rc;
}

/* numpy.testing.assert_allclose(actual, expected, rtol=1e-3, atol=1e-7). */
static int compare(const struct vpa_onnx_tensor *got, const struct vpa_onnx_tensor *want,
		   char *why, size_t cap)
{
	char a[128], b[128];
	vpa_onnx_shape_str(a, sizeof(a), got->ndim, got->dims);
	vpa_onnx_shape_str(b, sizeof(b), want->ndim, want->dims);
	if (got->dtype != want->dtype) {
		snprintf(why, cap, "type %s, expected %s", vpa_onnx_dtype_name(got->dtype),
			 vpa_onnx_dtype_name(want->dtype));
		return 0;
	}
	if (got->ndim != want->ndim || memcmp(got->dims, want->dims, got->ndim * sizeof(int64_t))) {
		snprintf(why, cap, "shape %s, expected %s", a, b);
		return 0;
	}
	size_t n = vpa_onnx_numel(got);
	for (size_t i = 0; i < n; i++) {
		double x, y;
		switch (got->dtype) {
		case VPA_ONNX_FLOAT: x = ((float *)got->data)[i], y = ((float *)want->data)[i]; break;
		case VPA_ONNX_DOUBLE: x = ((double *)got->data)[i], y = ((double *)want->data)[i]; break;
		case VPA_ONNX_INT64:
			if (((int64_t *)got->data)[i] != ((int64_t *)want->data)[i]) {
				snprintf(why, cap, "element %zu: %lld, expected %lld", i,
					 (long long)((int64_t *)got->data)[i],
					 (long long)((int64_t *)want->data)[i]);
				return 0;
			}
			continue;
		case VPA_ONNX_INT32: x = ((int32_t *)got->data)[i], y = ((int32_t *)want->data)[i]; break;
		case VPA_ONNX_INT8: x = ((int8_t *)got->data)[i], y = ((int8_t *)want->data)[i]; break;
		default: x = ((uint8_t *)got->data)[i], y = ((uint8_t *)want->data)[i]; break;
		}
		int fl = got->dtype == VPA_ONNX_FLOAT || got->dtype == VPA_ONNX_DOUBLE;
		int ok = fl ? (isnan(x) && isnan(y)) || x == y || fabs(x - y) <= 1e-7 + 1e-3 * fabs(y)
			    : x == y;
		if (!ok) {
			snprintf(why, cap, "element %zu of %s: %.9g, expected %.9g", i, a, x, y);
			return 0;
		}
	}
	return 1;
}

/* ------------------------------------------------------------ bookkeeping */

#define MAX_OPS 160
static struct opstat {
	char name[48];
	int pass, fail, skip;
} ops[MAX_OPS];
static int n_ops;

static struct opstat *opstat(const char *name)
{
	for (int i = 0; i < n_ops; i++)
		if (!strcmp(ops[i].name, name))
			return &ops[i];
	if (n_ops == MAX_OPS)
		return &ops[MAX_OPS - 1];
	snprintf(ops[n_ops].name, sizeof(ops[n_ops].name), "%.47s", name);
	return &ops[n_ops++];
}

#define MAX_REASONS 64
static struct {
	char text[160];
	int n;
} reasons[MAX_REASONS];
static int n_reasons;

static void add_reason(const char *r)
{
	for (int i = 0; i < n_reasons; i++)
		if (!strcmp(reasons[i].text, r)) {
			reasons[i].n++;
			return;
		}
	if (n_reasons < MAX_REASONS) {
		snprintf(reasons[n_reasons].text, sizeof(reasons[0].text), "%s", r);
		reasons[n_reasons++].n = 1;
	}
}

/* A short reason from an error message that states a limit we do not claim. */
static int skip_reason(const char *msg, char *out, size_t cap)
{
	const char *p;
	if ((p = strstr(msg, "opset ")) && strstr(msg, "of the default domain is not supported")) {
		long v = strtol(p + 6, NULL, 10);
		snprintf(out, cap, "opset %ld outside 11-17", v);
		return 1;
	}
	if ((p = strstr(msg, " of opset ")) && strstr(msg, "vpaudit implements its definition")) {
		snprintf(out, cap, "an operator's definition older than vpaudit's");
		return 1;
	}
	if ((p = strstr(msg, "unsupported element type "))) {
		char t[32];
		sscanf(p + 25, "%31s", t);
		snprintf(out, cap, "element type %s", t);
		return 1;
	}
	if ((p = strstr(msg, "cast to "))) {
		char t[32];
		sscanf(p + 8, "%31s", t);
		snprintf(out, cap, "element type %s", t);
		return 1;
	}
	if ((p = strstr(msg, "unsupported attribute '"))) {
		char t[48];
		sscanf(p + 23, "%47[^']", t);
		snprintf(out, cap, "unsupported attribute %s", t);
		return 1;
	}
	if ((p = strstr(msg, "input type ")) && strstr(msg, "is not supported")) {
		char t[32];
		sscanf(p + 11, "%31s", t);
		snprintf(out, cap, "element type %s", t);
		return 1;
	}
	if (strstr(msg, "is not a tensor (sequence")) {
		snprintf(out, cap, "sequence/optional graph input or output");
		return 1;
	}
	if (strstr(msg, "training mode") || strstr(msg, "training_mode")) {
		snprintf(out, cap, "training mode");
		return 1;
	}
	if ((p = strstr(msg, "is not supported")) || (p = strstr(msg, "not supported"))) {
		const char *q = strstr(msg, "): ");
		snprintf(out, cap, "%.100s", q ? q + 3 : msg);
		return 1;
	}
	return 0;
}

static int total, passed, skipped, failed;

static void run_case(const char *dir)
{
	char path[1400], why[512];
	struct vpa_err err;
	struct vpa_onnx_model *m = NULL;
	struct vpa_onnx_load_opts lenient = {.lenient = 1};
	snprintf(path, sizeof(path), "%.1000s/model.onnx", dir);
	struct stat st;
	if (stat(path, &st))
		return;
	/* Which operators does it use?  Only tests of supported ones count. */
	vpa_err_init(&err);
	if (vpa_onnx_load(path, &lenient, &m, &err)) {
		total++, failed++;
		printf("#   FAIL %s: %s\n", dir, err.msg);
		return;
	}
	const char *names[64];
	size_t nn = 0;
	for (size_t i = 0; i < vpa_onnx_n_nodes(m); i++) {
		const char *op = vpa_onnx_node_op(m, i);
		if (!vpa_onnx_op_supported(op)) {
			vpa_onnx_free(m);
			return; /* a test of an operator we do not claim */
		}
		size_t k;
		for (k = 0; k < nn; k++)
			if (!strcmp(names[k], op))
				break;
		if (k == nn && nn < 64)
			names[nn++] = op;
	}
	char opnames[64][48];
	for (size_t k = 0; k < nn; k++)
		snprintf(opnames[k], sizeof(opnames[k]), "%.47s", names[k]);
	vpa_onnx_free(m);
	m = NULL;
	total++;
	int outcome = 1; /* 1 pass, 0 fail, 2 skip */
	vpa_err_init(&err);
	if (vpa_onnx_load(path, NULL, &m, &err)) {
		if (skip_reason(err.msg, why, sizeof(why))) {
			outcome = 2;
			add_reason(why);
		} else {
			outcome = 0;
			printf("#   FAIL %s: %s\n", dir, err.msg);
		}
		goto done;
	}
	for (int set = 0; outcome == 1; set++) {
		char sdir[1300];
		snprintf(sdir, sizeof(sdir), "%.1000s/test_data_set_%d", dir, set);
		if (stat(sdir, &st))
			break;
		struct vpa_onnx_tensor in[16], want[16], got[16];
		char *in_names[16];
		const char *onames[16];
		size_t ni = 0, no = 0;
		memset(in, 0, sizeof(in));
		memset(want, 0, sizeof(want));
		for (; ni < vpa_onnx_n_inputs(m) && ni < 16; ni++) {
			snprintf(path, sizeof(path), "%.1200s/input_%zu.pb", sdir, ni);
			vpa_err_init(&err);
			in_names[ni] = NULL;
			if (read_tensor(path, &in[ni], &in_names[ni], &err))
				break;
			free(in_names[ni]);
			in_names[ni] = (char *)vpa_onnx_input(m, ni)->name; /* by position */
		}
		if (ni < vpa_onnx_n_inputs(m)) {
			if (skip_reason(err.msg, why, sizeof(why))) {
				outcome = 2;
				add_reason(why);
			} else {
				outcome = 0;
				printf("#   FAIL %s: %s\n", dir, err.msg);
			}
		}
		for (; outcome == 1 && no < vpa_onnx_n_outputs(m) && no < 16; no++) {
			snprintf(path, sizeof(path), "%.1200s/output_%zu.pb", sdir, no);
			vpa_err_init(&err);
			if (read_tensor(path, &want[no], NULL, &err)) {
				if (skip_reason(err.msg, why, sizeof(why))) {
					outcome = 2;
					add_reason(why);
				} else {
					outcome = 0;
					printf("#   FAIL %s: %s\n", dir, err.msg);
				}
				break;
			}
			onames[no] = vpa_onnx_output(m, no)->name;
		}
		if (outcome == 1) {
			vpa_err_init(&err);
			if (vpa_onnx_run(m, ni, (const char *const *)in_names, in, no, onames, got,
					 &err)) {
				if (skip_reason(err.msg, why, sizeof(why))) {
					outcome = 2;
					add_reason(why);
				} else {
					outcome = 0;
					printf("#   FAIL %s: %s\n", dir, err.msg);
				}
			} else {
				for (size_t j = 0; j < no; j++) {
					if (outcome == 1 && !compare(&got[j], &want[j], why, sizeof(why))) {
						outcome = 0;
						printf("#   FAIL %s: output '%s': %s\n", dir, onames[j], why);
					}
					vpa_onnx_tensor_release(&got[j]);
				}
			}
		}
		for (size_t j = 0; j < 16; j++) {
			vpa_onnx_tensor_release(&in[j]);
			vpa_onnx_tensor_release(&want[j]);
		}
	}
done:
	vpa_onnx_free(m);
	passed += outcome == 1;
	failed += outcome == 0;
	skipped += outcome == 2;
	for (size_t k = 0; k < nn; k++) {
		struct opstat *s = opstat(opnames[k]);
		s->pass += outcome == 1;
		s->fail += outcome == 0;
		s->skip += outcome == 2;
	}
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_op(const void *a, const void *b)
{
	return strcmp(((const struct opstat *)a)->name, ((const struct opstat *)b)->name);
}

static void test_conformance(void)
{
	static const char *suites[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};
	const char *root = getenv("VPA_ONNX_TESTDATA") ? getenv("VPA_ONNX_TESTDATA") : ONNX_TESTDATA;
	for (size_t s = 0; s < 4; s++) {
		char dir[512];
		snprintf(dir, sizeof(dir), "%s/%s", root, suites[s]);
		DIR *d = opendir(dir);
		if (!d) {
			printf("#   %s: missing (install libonnx-testdata: sh .ci/deps)\n", dir);
			CHECK(d != NULL);
			continue;
		}
		char **names = NULL;
		size_t n = 0;
		struct dirent *e;
		while ((e = readdir(d)))
			if (e->d_name[0] != '.') {
				names = realloc(names, (n + 1) * sizeof(char *));
				names[n++] = strdup(e->d_name);
			}
		closedir(d);
		qsort(names, n, sizeof(char *), cmp_name);
		for (size_t i = 0; i < n; i++) {
			char sub[1024];
			snprintf(sub, sizeof(sub), "%.500s/%.500s", dir, names[i]);
			run_case(sub);
			free(names[i]);
		}
		free(names);
	}
	printf("# %d of %d node tests of supported operators pass; %d skipped:", passed,
	       total - skipped, skipped);
	for (int i = 0; i < n_reasons; i++)
		printf("%s %s (%d)", i ? ";" : "", reasons[i].text, reasons[i].n);
	printf("\n");
	qsort(ops, (size_t)n_ops, sizeof(ops[0]), cmp_op);
	for (int i = 0; i < n_ops; i++)
		printf("#   %-22s %3d of %3d pass, %d skipped\n", ops[i].name, ops[i].pass,
		       ops[i].pass + ops[i].fail, ops[i].skip);
	CHECK(total > 300);
	CHECK(failed == 0);
}

/* The Conv node tests again with every 3x3 stride-1 convolution by Winograd
 * F(4x4,3x3), then F(2x2,3x3) (run after test_conformance: its counts). */
static void test_conformance_conv_winograd(void)
{
	static const char *suites[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};
	const char *root = getenv("VPA_ONNX_TESTDATA") ? getenv("VPA_ONNX_TESTDATA") : ONNX_TESTDATA;
	static const int methods[] = {OX_CONV_WINO4, OX_CONV_WINO2};
	for (int k = 0; k < 2; k++) {
		int t0 = total, f0 = failed;
		ox_conv_force(methods[k]);
		for (size_t s = 0; s < 4; s++) {
			char dir[512];
			snprintf(dir, sizeof(dir), "%s/%s", root, suites[s]);
			DIR *d = opendir(dir);
			if (!d)
				continue;
			struct dirent *e;
			while ((e = readdir(d)))
				if (e->d_name[0] != '.' && strcasestr(e->d_name, "conv") &&
				    !strcasestr(e->d_name, "transpose")) {
					char sub[1024];
					snprintf(sub, sizeof(sub), "%.500s/%.500s", dir, e->d_name);
					run_case(sub);
				}
			closedir(d);
		}
		ox_conv_force(0);
		printf("#   Conv node tests with %s: %d run, %d failed\n",
		       methods[k] == OX_CONV_WINO4 ? "F(4x4,3x3)" : "F(2x2,3x3)", total - t0,
		       failed - f0);
		CHECK(total - t0 >= 20);
		CHECK(failed == f0);
	}
}

int main(void)
{
	RUN(test_conformance);
	RUN(test_conformance_conv_winograd);
	return DONE();
}
