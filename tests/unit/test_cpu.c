/*
 * tests/unit/test_cpu.c - base/cpu.c: the machine fields of results.json and
 * portable mode (issue 25 item 2).
 *
 * The binary runs twice: first as started (the CPU's own arithmetic), then,
 * through vpa_portable_enter(), re-executed by itself with OPENBLAS_CORETYPE
 * and GLIBC_TUNABLES set; the first process passes its counts to the second
 * on the command line ("portable PASS FAIL"), which prints the suite line.
 */
#include "harness.h"

#include <stdint.h>
#include <stdlib.h>
#include <strings.h>

#include "base/cpu.h"
#include "base/la.h"
#include "onnx/conv.h"
#include "onnx/vmath.h"

static int cpu_has_avx2_fma(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
	return 0;
#endif
}

/* The CPU's own arithmetic: fields present, vpaudit's paths follow the CPU. */
static void test_machine_default(void)
{
	CHECK(!vpa_portable());
	CHECK(vpa_cpu_simd() == cpu_has_avx2_fma());
	CHECK_STR(ox_exp_path(), cpu_has_avx2_fma() ? "avx2+fma" : "generic");
	CHECK_STR(ox_conv_wino_path(), cpu_has_avx2_fma() ? "avx2+fma" : "generic");
	struct vpa_json *m = vpa_json_obj();
	vpa_machine_json(m);
	const char *blas = vpa_json_get_str(m, "blas"), *k = vpa_json_get_str(m, "blas_kernel");
	CHECK(blas && !strncmp(blas, "OpenBLAS 0.", 11) && !strchr(blas + 9, ' '));
	CHECK(k && *k);
	CHECK_STR(k, vpa_la_blas_kernel());
	CHECK_STR(vpa_json_get_str(m, "blas_config"), vpa_la_blas_config());
	CHECK(vpa_json_get(m, "cpu") != NULL);
	const struct vpa_json *p = vpa_json_get(m, "portable");
	CHECK(p && p->type == VPA_JSON_BOOL && !p->boolean);
	CHECK_STR(vpa_json_get_str(m, "simd"), cpu_has_avx2_fma() ? "avx2+fma" : "generic");
#ifdef __GLIBC__
	CHECK(vpa_json_get_str(m, "libc") && !strncmp(vpa_json_get_str(m, "libc"), "glibc 2.", 8));
#endif
	vpa_json_free(m);
}

/* /proc/cpuinfo's first "model name" line, as the test reads it itself */
static void test_cpu_model(void)
{
	char model[256], line[512], want[256] = "";
	vpa_cpu_model(model, sizeof(model));
	FILE *f = fopen("/proc/cpuinfo", "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "model name", 10)) {
			char *v = strchr(line, ':') + 2;
			v[strcspn(v, "\n")] = '\0';
			snprintf(want, sizeof(want), "%s", v);
			break;
		}
	if (f)
		fclose(f);
	CHECK_STR(model, want);
}

/*
 * In the re-executed process: OpenBLAS runs the Haswell kernel whatever the
 * caller forced, libm takes its generic variants, vpaudit its generic paths.
 * 0x1.e19c1f12060c4p+3 is an argument where glibc 2.36's FMA variant of exp
 * rounds up (0x1.a3a38b078c5d7p+21; found by comparing the two over 20,000
 * arguments on an AMD EPYC, Zen 4); the generic one gives ...d6p+21.
 */
static void test_portable(void)
{
	CHECK(vpa_portable());
	CHECK(!vpa_cpu_simd());
	CHECK_STR(ox_exp_path(), "generic");
	CHECK_STR(ox_conv_wino_path(), "generic");
	CHECK(strcasecmp(vpa_la_blas_kernel(), VPA_PORTABLE_KERNEL) == 0);
	CHECK_STR(getenv("OPENBLAS_CORETYPE"), VPA_PORTABLE_KERNEL);
	/* the caller's other tunables are kept, ours come last */
	CHECK_STR(getenv("GLIBC_TUNABLES"), "glibc.malloc.perturb=0:" VPA_PORTABLE_TUNABLE);
	volatile double x = 0x1.e19c1f12060c4p+3;
	double y = exp(x);
	CHECK(y == 0x1.a3a38b078c5d6p+21);
	struct vpa_json *m = vpa_json_obj();
	vpa_machine_json(m);
	const struct vpa_json *p = vpa_json_get(m, "portable"), *f = vpa_json_get(m, "libm_fma");
	CHECK(p && p->type == VPA_JSON_BOOL && p->boolean);
	CHECK(f && f->type == VPA_JSON_BOOL && !f->boolean);
	CHECK_STR(vpa_json_get_str(m, "simd"), "generic");
	CHECK(strcasecmp(vpa_json_get_str(m, "blas_kernel"), VPA_PORTABLE_KERNEL) == 0);
	vpa_json_free(m);
	/* a second call finds the arithmetic pinned: no re-execution */
	struct vpa_err err;
	vpa_err_init(&err);
	char *av[] = {"test_cpu", "should-not-run", NULL};
	CHECK(vpa_portable_enter(av, &err) == 0);
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "portable")) {
		h_pass = atoi(argv[2]);
		h_fail = atoi(argv[3]);
		/* as vpaudit does after its re-execution: the arithmetic is pinned now */
		struct vpa_err err;
		vpa_err_init(&err);
		if (vpa_portable_enter(argv, &err))
			printf("#   vpa_portable_enter after re-execution: %s\n", err.msg);
		RUN(test_portable);
		return DONE();
	}
	RUN(test_machine_default);
	RUN(test_cpu_model);
	if (!cpu_has_avx2_fma()) {
		printf("# skip - portable mode: this CPU has no AVX2/FMA for the Haswell kernel\n");
		return DONE();
	}
	/* what a caller might have set: OpenBLAS's choice is overridden, other
	 * tunables are kept */
	setenv("OPENBLAS_CORETYPE", "Sandybridge", 1);
	setenv("GLIBC_TUNABLES", "glibc.malloc.perturb=0", 1);
	char pass[32], fail[32];
	snprintf(pass, sizeof(pass), "%d", h_pass);
	snprintf(fail, sizeof(fail), "%d", h_fail);
	char *av[] = {argv[0], "portable", pass, fail, NULL};
	struct vpa_err err;
	vpa_err_init(&err);
	int rc = vpa_portable_enter(av, &err); /* returns only on failure */
	printf("#   vpa_portable_enter: %d %s\n", rc, err.msg);
	CHECK(0);
	h_fail++;
	return DONE();
}
