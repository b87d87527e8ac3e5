/*
 * tests/fuzz/fuzz_gate.c - `vpaudit gate NEW --baseline OLD` on two
 * arbitrary files (issue 26 item 12).  The input is split in two at its first
 * line "%%" (NEW before, OLD after; without such a line, in the middle), each
 * half is parsed and checked as `gate` reads a results file
 * (vpa_json_parse, vpa_results_check), then:
 *   - NEW's stored gates evaluated (vpa_gates_evaluate);
 *   - the baseline comparison of NEW against OLD with the defaults, with
 *     --significant, with --strict, and with --tolerance 0 --metrics eer,
 *     linkability, and NEW's own tolerances;
 *   - junit.xml of NEW with the comparison (vpa_report_junit).
 * Invariants (abort when broken): every error is one non-empty line; an error
 * leaves no summary; a failure count equals the regressions plus the failing
 * unmatched records, a record only in the baseline always fails, the status
 * agrees; --strict is an error exactly when the audits differ
 * (vpa_baseline_provenance) and the comparison is otherwise possible; a file
 * compared with itself has no regression and no difference; the JUnit
 * document is complete.  Nothing may crash or leak.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "reports/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one_line(const struct vpa_err *err)
{
	if (err->msg[0] == '\0' || strchr(err->msg, '\n'))
		abort();
}

/* Parse and check one half as cli_read_results does; NULL when `gate` refuses it. */
static struct vpa_json *read_half(const char *name, const char *p, size_t n)
{
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_json *r = vpa_json_parse(name, p, n, &err);
	if (!r) {
		one_line(&err);
		return NULL;
	}
	if (vpa_results_check(r, name, &err)) {
		one_line(&err);
		if (err.status != VPA_EINPUT)
			abort();
		vpa_json_free(r);
		return NULL;
	}
	return r;
}

static double num(const struct vpa_json *o, const char *k)
{
	return vpa_json_get_num(o, k, -1);
}

/* The summary agrees with itself. */
static void check_summary(const struct vpa_json *s, int rc)
{
	const struct vpa_json *comps = vpa_json_get(s, "comparisons");
	const struct vpa_json *unm = vpa_json_get(s, "unmatched");
	if (!comps || !unm || comps->type != VPA_JSON_ARR || unm->type != VPA_JSON_ARR)
		abort();
	size_t regs = 0, fails = 0;
	for (size_t i = 0; i < comps->n; i++) {
		const char *st = vpa_json_get_str(comps->items[i], "status");
		if (!st || (strcmp(st, "regression") && strcmp(st, "stable")))
			abort();
		regs += !strcmp(st, "regression");
		if (!vpa_json_get_str(comps->items[i], "unit"))
			abort();
	}
	for (size_t i = 0; i < unm->n; i++) {
		const struct vpa_json *f = vpa_json_get(unm->items[i], "fail");
		const char *side = vpa_json_get_str(unm->items[i], "side");
		if (!f || f->type != VPA_JSON_BOOL || !side)
			abort();
		if (!strcmp(side, "baseline") && !f->boolean)
			abort(); /* a record only in the baseline always fails */
		fails += f->boolean;
	}
	if (num(s, "regressions") != (double)regs || num(s, "failures") != (double)(regs + fails))
		abort();
	const char *st = vpa_json_get_str(s, "status");
	int failed = regs + fails > 0;
	if (!st || strcmp(st, failed ? "fail" : "pass") || (rc == VPA_EGATE) != failed)
		abort();
}

/* One comparison; returns its status and, when ok, the summary (caller frees). */
static int compare(const struct vpa_json *nw, const struct vpa_json *old,
		   const struct vpa_baseline_opts *o, struct vpa_json **sum)
{
	struct vpa_err err;
	vpa_err_init(&err);
	*sum = NULL;
	int rc = vpa_gates_baseline(nw, old, o, sum, &err);
	if (rc && rc != VPA_EGATE) {
		one_line(&err);
		if (rc != VPA_EINPUT || *sum)
			abort();
		return rc;
	}
	if (!*sum)
		abort();
	check_summary(*sum, rc);
	return rc;
}

static void self_compare(const struct vpa_json *r)
{
	struct vpa_json *sum = NULL;
	struct vpa_baseline_opts bo = {"self.json", 0, NULL, NULL, 0, 1, 1};
	int rc = compare(r, r, &bo, &sum);
	if (rc == VPA_EGATE)
		abort(); /* nothing can have moved */
	if (!rc && vpa_json_get(sum, "mismatches")->n)
		abort(); /* nor be another audit */
	vpa_json_free(sum);
}

static void gate_pair(struct vpa_json *nw, const struct vpa_json *old)
{
	/* the stored gates of NEW, as `gate` evaluates them before the comparison */
	const struct vpa_json *g = vpa_json_get(nw, "gates");
	struct vpa_json *gates = g ? vpa_json_clone(g) : vpa_json_arr();
	struct vpa_err err;
	vpa_err_init(&err);
	int rc = vpa_gates_evaluate(nw, gates, &err);
	vpa_json_free(gates);
	if (rc && rc != VPA_EGATE) {
		one_line(&err);
		return; /* `gate` stops here */
	}

	struct vpa_json *sum = NULL;
	int base_rc = compare(nw, old, NULL, &sum); /* the defaults */
	size_t n_mism = 0;
	if (sum)
		n_mism = vpa_json_get(sum, "mismatches")->n;
	/* the provenance the comparison stored is vpa_baseline_provenance's */
	struct vpa_json *m = vpa_json_arr();
	vpa_baseline_provenance(nw, old, NULL, m);
	if (sum && m->n != n_mism)
		abort();
	vpa_json_free(m);

	struct vpa_json *s2 = NULL;
	struct vpa_baseline_opts strict = {"old.json", NAN, NULL, NULL, 0, 0, 1};
	rc = compare(nw, old, &strict, &s2);
	if (base_rc == VPA_EINPUT && rc != VPA_EINPUT)
		abort();
	if (base_rc != VPA_EINPUT && (rc == VPA_EINPUT) != (n_mism > 0))
		abort(); /* --strict: an error exactly when the audits differ */
	vpa_json_free(s2);

	const struct vpa_json *tj = vpa_json_get(nw, "tolerances");
	struct vpa_baseline_opts sig = {"old.json", vpa_json_get_num(nw, "tolerance", NAN),
					tj && tj->type == VPA_JSON_OBJ ? tj : NULL, NULL, 0, 1, 0};
	rc = compare(nw, old, &sig, &s2);
	vpa_json_free(s2);
	static const char *const only[] = {"eer", "linkability"};
	struct vpa_baseline_opts exact = {"old.json", 0, NULL, only, 2, 0, 0};
	rc = compare(nw, old, &exact, &s2);
	vpa_json_free(s2);
	(void)rc;

	/* junit.xml of NEW with the comparison, as `gate --junit` writes it */
	if (sum) {
		vpa_json_set(nw, "baseline", sum);
		sum = NULL;
	}
	struct vpa_buf x;
	vpa_buf_init(&x);
	vpa_report_junit(nw, &x);
	static const char tail[] = "</testsuites>\n";
	if (x.len < sizeof(tail) || strncmp(x.data, "<?xml", 5) ||
	    memcmp(x.data + x.len - (sizeof(tail) - 1), tail, sizeof(tail) - 1))
		abort();
	vpa_buf_release(&x);
	vpa_json_free(sum);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data;
	size_t cut = size / 2, rest = cut;
	for (size_t i = 0; i + 2 <= size; i++) /* the first line "%%" */
		if ((i == 0 || p[i - 1] == '\n') && p[i] == '%' && p[i + 1] == '%' &&
		    (i + 2 == size || p[i + 2] == '\n')) {
			cut = i;
			rest = i + 2 < size ? i + 3 : size;
			break;
		}
	struct vpa_json *nw = read_half("new.json", p, cut);
	struct vpa_json *old = read_half("old.json", p + rest, size - rest);
	if (nw)
		self_compare(nw);
	if (old)
		self_compare(old);
	if (nw && old)
		gate_pair(nw, old);
	vpa_json_free(nw);
	vpa_json_free(old);
	return 0;
}
