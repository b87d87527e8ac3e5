/*
 * reports/machine.c - the arithmetic a results file was computed with
 * (results["machine"], written by base/cpu.c): whether a baseline and the
 * results share it (the WARNING line of the baseline comparison) and its
 * sentence in the provenance.  See report.h.
 */
#include "reports/report.h"

#include <string.h>

/* the fields that decide the arithmetic (base/cpu.h); "cpu" is added
 * unless both runs are portable */
static const struct {
	const char *key, *what;
} fields[] = {
	{"blas", "BLAS"}, {"blas_kernel", "OpenBLAS kernel"}, {"libm_fma", "libm FMA variants"},
	{"simd", "vpaudit's own paths"}, {"cpu", "CPU"},
};

static int is_true(const struct vpa_json *o, const char *key)
{
	const struct vpa_json *v = vpa_json_get(o, key);
	return v && v->type == VPA_JSON_BOOL && v->boolean;
}

/* the field as text: a string, true/false, or "unknown" */
static void put_field(struct vpa_buf *b, const struct vpa_json *v)
{
	if (v && v->type == VPA_JSON_STR)
		vpa_buf_printf(b, "%s", v->str);
	else if (v && v->type == VPA_JSON_BOOL)
		vpa_buf_puts(b, v->boolean ? "yes" : "no");
	else
		vpa_buf_puts(b, "unknown");
}

int vpa_machine_mismatch(const struct vpa_json *results, const struct vpa_json *baseline,
			 struct vpa_buf *out)
{
	const struct vpa_json *nm = vpa_json_get(results, "machine");
	const struct vpa_json *om = vpa_json_get(baseline, "machine");
	int n_has = vpa_json_get_str(nm, "blas_kernel") != NULL;
	int o_has = vpa_json_get_str(om, "blas_kernel") != NULL;
	if (!n_has && !o_has)
		return 0; /* two files of an older vpaudit: nothing to compare */
	if (!n_has || !o_has) {
		vpa_buf_printf(out, "the %s does not record its CPU and BLAS kernel (an older vpaudit "
			       "wrote it): it may have been computed with other arithmetic, and "
			       "metrics can move with nothing else changed",
			       o_has ? "results file" : "baseline");
		return 1;
	}
	int portable = is_true(nm, "portable") && is_true(om, "portable");
	size_t n_diff = 0;
	struct vpa_buf d;
	vpa_buf_init(&d);
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		if (portable && !strcmp(fields[i].key, "cpu"))
			continue;
		const struct vpa_json *a = vpa_json_get(om, fields[i].key);
		const struct vpa_json *b = vpa_json_get(nm, fields[i].key);
		if (vpa_json_same(a, b))
			continue;
		vpa_buf_printf(&d, "%s%s ", n_diff++ ? ", " : "", fields[i].what);
		put_field(&d, a);
		vpa_buf_puts(&d, " -> ");
		put_field(&d, b);
	}
	if (is_true(nm, "portable") != is_true(om, "portable"))
		vpa_buf_printf(&d, "%sportable mode %s -> %s", n_diff++ ? ", " : "",
			       is_true(om, "portable") ? "yes" : "no", is_true(nm, "portable") ? "yes" : "no");
	if (n_diff)
		vpa_buf_printf(out, "baseline and results were computed with different arithmetic "
			       "(%s): metrics can move with nothing else changed; run both with "
			       "`vpaudit run --portable` to compare them exactly", d.data);
	vpa_buf_release(&d);
	return n_diff != 0;
}

void vpa_machine_describe(struct vpa_buf *b, const struct vpa_json *m)
{
	const char *blas = vpa_json_get_str(m, "blas"), *k = vpa_json_get_str(m, "blas_kernel");
	const char *libc = vpa_json_get_str(m, "libc"), *simd = vpa_json_get_str(m, "simd");
	const struct vpa_json *fma = vpa_json_get(m, "libm_fma");
	if (!k) {
		vpa_buf_puts(b, "not recorded (an older vpaudit wrote these results)");
		return;
	}
	vpa_buf_printf(b, "%s, kernel %s", blas ? blas : "BLAS", k);
	if (libc)
		vpa_buf_printf(b, "; %s", libc);
	if (fma && fma->type == VPA_JSON_BOOL)
		vpa_buf_printf(b, ", libm %s FMA variants", fma->boolean ? "with its" : "without");
	if (simd)
		vpa_buf_printf(b, "; vpaudit's %s paths", simd);
	if (is_true(m, "portable"))
		vpa_buf_puts(b, "; portable mode (the same numbers on any x86-64 CPU with AVX2 and FMA)");
	else
		vpa_buf_puts(b, "; chosen for this CPU (another CPU or OpenBLAS kernel can give other "
				"last digits; `run --portable` pins them)");
}
