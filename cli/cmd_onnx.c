/*
 * cli/cmd_onnx.c - `vpaudit onnx info|run`: look into an ONNX model and run
 * it on .npy inputs (onnx/onnx.h).
 *
 *   vpaudit onnx info MODEL.onnx [--values [--length N] [--dim NAME=N ...]]
 *   vpaudit onnx run MODEL.onnx -i NAME=FILE.npy [-i ...] -o DIR [--outputs A,B]
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "formats/io.h"
#include "onnx/onnx.h"

static const char usage_text[] =
	"usage: vpaudit onnx info MODEL.onnx [--values [--length N] [--dim NAME=N ...]]\n"
	"       vpaudit onnx run MODEL.onnx -i NAME=FILE.npy [-i ...] -o DIR [--outputs A,B]\n"
	"\n"
	"ONNX models run by vpaudit's own engine (opsets 11-17 of the default domain;\n"
	"initializers may be in external data files next to the model).\n"
	"\n"
	"  info   inputs and outputs with element types and shapes (symbolic dimensions by\n"
	"         name, '?' when unknown), opset, producer, parameter count, the nodes\n"
	"         fused at load time (BatchNormalization folded into Conv/Gemm; a bias or\n"
	"         activation into the Conv/Gemm/MatMul before it), and every operator used\n"
	"         with its node count and whether vpaudit supports it; with --values every\n"
	"         value the graph computes (the names `onnx run --outputs`, `embed --output`\n"
	"         and a scenario's onnx_layers take) with its element type, shape and\n"
	"         operator, in execution order: the graph is run once on zeros of the\n"
	"         inputs' declared shapes, so the shapes are the engine's for that length\n"

	"  run    runs the graph on the given inputs and writes each requested value as\n"
	"         DIR/NAME.npy (characters other than A-Z a-z 0-9 . _ - in NAME become '_')\n"
	"\n"
	"info options:\n"
	"  --values                   list every computed value with its shape\n"
	"  --length N                 the size of every unknown input dimension but the\n"
	"                             first (the batch, 1): frames, or samples of a\n"
	"                             waveform input\n"
	"  --dim NAME=N               the size of the symbolic dimension NAME (repeatable)\n"
	"\n"
	"run options:\n"
	"  -i, --input NAME=FILE.npy  a graph input (every input without an initializer is\n"
	"                             needed); .npy '<f4' '<f8' '<i8' '<i4' '|b1' '|u1' '|i1'\n"
	"                             for float32 float64 int64 int32 bool uint8 int8\n"
	"                             (floats must be finite: NaN and inf are refused;\n"
	"                             float64 for a float32 input is converted, with a note)\n"
	"  -o, --outdir DIR           where the .npy files go (created if missing)\n"
	"  --outputs A,B              values to write: graph outputs or any intermediate\n"
	"                             value by its name, fused away or not (default: the\n"
	"                             graph outputs; a value holding NaN is an error and\n"
	"                             nothing is written; +-inf, as from a model's -inf\n"
	"                             attention mask, is written as it is)\n"
	"  -h, --help                 this text\n"
	"\n"
	"An unsupported operator, attribute or opset is reported at load time naming the\n"
	"node and operator.  Exit status: 0 ok, 1 bad input, 2 usage.\n";

static void dims_str(char *buf, size_t cap, const struct vpa_onnx_value_info *vi)
{
	if (!vi->has_shape) {
		snprintf(buf, cap, "(rank unknown)");
		return;
	}
	size_t off = (size_t)snprintf(buf, cap, "(");
	for (size_t i = 0; i < vi->ndim && off < cap; i++) {
		if (vi->dims[i] >= 0)
			off += (size_t)snprintf(buf + off, cap - off, "%s%lld", i ? ", " : "",
						(long long)vi->dims[i]);
		else
			off += (size_t)snprintf(buf + off, cap - off, "%s%s", i ? ", " : "",
						vi->dim_names[i] ? vi->dim_names[i] : "?");
	}
	if (off < cap)
		snprintf(buf + off, cap - off, "%s)", vi->ndim == 1 ? "," : "");
}

struct info_args {
	int values;
	long long length;   /* -1: not given */
	size_t n_dims;
	char **dim_names;   /* owned copies */
	long long *dim_sizes;
};

/*
 * The values' shapes for zero inputs of the declared shapes, unknown
 * dimensions from --dim/--length (the first one of an input: 1).  Returns
 * 0, 1 (error printed, exit 1) or 2 (usage error printed).
 */
static int info_values(const char *path, const struct vpa_onnx_model *m,
		       const struct info_args *ia, struct vpa_onnx_value_shape **vs, size_t *nv,
		       char *desc, size_t cap)
{
	struct vpa_err err;
	vpa_err_init(&err);
	size_t ni = vpa_onnx_n_inputs(m), off = 0;
	struct vpa_onnx_tensor *ins = xcalloc(ni + 1, sizeof(*ins));
	const char **names = xcalloc(ni + 1, sizeof(char *));
	int rc = 0;
	desc[0] = '\0';
	for (size_t i = 0; i < ni && !rc; i++) {
		const struct vpa_onnx_value_info *vi = vpa_onnx_input(m, i);
		names[i] = vi->name;
		if (!vi->has_shape) {
			vpa_fail(&err, VPA_EINPUT, NULL,
				 "%s: input '%s' declares no shape: --values needs one", path, vi->name);
			rc = cli_error(&err);
			break;
		}
		ins[i].dtype = vi->dtype ? vi->dtype : VPA_ONNX_FLOAT;
		if (!vpa_onnx_dtype_size(ins[i].dtype)) {
			vpa_fail(&err, VPA_EINPUT, NULL, "%s: input '%s' is %s: not computed here", path,
				 vi->name, vpa_onnx_dtype_name(ins[i].dtype));
			rc = cli_error(&err);
			break;
		}
		ins[i].ndim = vi->ndim;
		size_t numel = 1;
		for (size_t k = 0; k < vi->ndim; k++) {
			long long d = vi->dims[k];
			for (size_t j = 0; d < 0 && vi->dim_names[k] && j < ia->n_dims; j++)
				if (!strcmp(ia->dim_names[j], vi->dim_names[k]))
					d = ia->dim_sizes[j];
			if (d < 0 && k == 0)
				d = 1;
			if (d < 0 && ia->length >= 0)
				d = ia->length;
			if (d < 0) {
				rc = cli_usage_error("onnx",
						     "input '%s' has the unknown dimension %s%s%s: give "
						     "--length N%s%s%s",
						     vi->name, vi->dim_names[k] ? "'" : "",
						     vi->dim_names[k] ? vi->dim_names[k] : "?",
						     vi->dim_names[k] ? "'" : "",
						     vi->dim_names[k] ? " or --dim " : "",
						     vi->dim_names[k] ? vi->dim_names[k] : "",
						     vi->dim_names[k] ? "=N" : "");
				break;
			}
			ins[i].dims[k] = d;
			numel = xmul(numel, (size_t)d);
		}
		if (rc)
			break;
		if (numel > ((size_t)1 << 28)) {
			vpa_fail(&err, VPA_EINPUT, NULL,
				 "%s: input '%s' would have %zu elements: give a smaller --length", path,
				 vi->name, numel);
			rc = cli_error(&err);
			break;
		}
		ins[i].data = xcalloc(numel ? numel : 1, vpa_onnx_dtype_size(ins[i].dtype));
		char sh[256];
		vpa_onnx_shape_str(sh, sizeof(sh), ins[i].ndim, ins[i].dims);
		if (off < cap)
			off += (size_t)snprintf(desc + off, cap - off, "%s%s %s", i ? ", " : "",
						vi->name, sh);
	}
	if (!rc && vpa_onnx_value_shapes(m, ni, names, ins, vs, nv, &err))
		rc = cli_error(&err);
	for (size_t i = 0; i < ni; i++)
		free(ins[i].data);
	free(ins);
	free(names);
	return rc;
}

static int onnx_info(const char *path, const struct info_args *ia)
{
	struct vpa_err err;
	struct vpa_onnx_model *m;
	struct vpa_onnx_load_opts opts = {.lenient = 1};
	vpa_err_init(&err);
	if (vpa_onnx_load(path, &opts, &m, &err))
		return cli_error(&err);
	/* the values first: an error leaves no partial listing */
	struct vpa_onnx_value_shape *vs = NULL;
	size_t nvs = 0;
	char desc[1024];
	if (ia->values) {
		int r = info_values(path, m, ia, &vs, &nvs, desc, sizeof(desc));
		if (r) {
			vpa_onnx_free(m);
			return r;
		}
	}
	char buf[512];
	printf("model: %s\n", path);
	printf("producer: %s\n", *vpa_onnx_producer(m) ? vpa_onnx_producer(m) : "(not given)");
	if (vpa_onnx_opset(m) >= 0)
		printf("opset: %lld\n", (long long)vpa_onnx_opset(m));
	else
		printf("opset: (none for the default domain)\n");
	printf("inputs:\n");
	for (size_t i = 0; i < vpa_onnx_n_inputs(m); i++) {
		const struct vpa_onnx_value_info *vi = vpa_onnx_input(m, i);
		dims_str(buf, sizeof(buf), vi);
		printf("  %s  %s  %s\n", vi->name, vpa_onnx_dtype_name(vi->dtype), buf);
	}
	printf("outputs:\n");
	for (size_t i = 0; i < vpa_onnx_n_outputs(m); i++) {
		const struct vpa_onnx_value_info *vi = vpa_onnx_output(m, i);
		dims_str(buf, sizeof(buf), vi);
		printf("  %s  %s  %s\n", vi->name, vpa_onnx_dtype_name(vi->dtype), buf);
	}
	printf("parameters: %llu\n", (unsigned long long)vpa_onnx_n_params(m));
	printf("fused at load: %zu of %zu nodes (%zu BatchNormalization folded into Conv/Gemm, %zu "
	       "bias or activation into Conv/Gemm/MatMul)\n", vpa_onnx_n_fused(m), vpa_onnx_n_nodes(m),
	       vpa_onnx_n_bn_folded(m), vpa_onnx_n_fused(m) - vpa_onnx_n_bn_folded(m));
	/* Operators in order of first use, with counts. */
	size_t nn = vpa_onnx_n_nodes(m), nu = 0, n_bad = 0;
	const char **ops = xcalloc(nn + 1, sizeof(char *));
	const char **why = xcalloc(nn + 1, sizeof(char *));
	size_t *cnt = xcalloc(nn + 1, sizeof(size_t));
	for (size_t i = 0; i < nn; i++) {
		const char *op = vpa_onnx_node_op(m, i);
		size_t k;
		for (k = 0; k < nu; k++)
			if (!strcmp(ops[k], op))
				break;
		if (k == nu) {
			ops[nu] = op;
			why[nu] = NULL;
			nu++;
		}
		cnt[k]++;
		const char *u = vpa_onnx_node_unsupported(m, i);
		if (u && !why[k]) {
			why[k] = u;
			n_bad++;
		}
	}
	printf("operators: %zu in %zu nodes\n", nu, nn);
	for (size_t k = 0; k < nu; k++) {
		if (why[k]) {
			const char *cut = strstr(why[k], " (supported:");
			printf("  %-22s %5zu  not supported: %.*s\n", ops[k], cnt[k],
			       cut ? (int)(cut - why[k]) : (int)strlen(why[k]), why[k]);
		}
		else
			printf("  %-22s %5zu  supported\n", ops[k], cnt[k]);
	}
	if (n_bad)
		printf("vpaudit cannot run this model (%zu operator%s not supported)\n", n_bad,
		       n_bad == 1 ? "" : "s");
	if (ia->values) {
		printf("values: %zu computed, shapes for %s\n", nvs, desc);
		for (size_t i = 0; i < nvs; i++) {
			vpa_onnx_shape_str(buf, sizeof(buf), vs[i].ndim, vs[i].dims);
			printf("  %s  %s  %s  %s\n", vs[i].name, vpa_onnx_dtype_name(vs[i].dtype), buf,
			       vs[i].op);
		}
	}
	free(vs);
	free(ops);
	free(why);
	free(cnt);
	vpa_onnx_free(m);
	return 0;
}

static int npy_dtype(const struct vpa_npy_nd *a)
{
	switch (a->kind) {
	case 'f': return a->itemsize == 4 ? VPA_ONNX_FLOAT : VPA_ONNX_DOUBLE;
	case 'i': return a->itemsize == 8 ? VPA_ONNX_INT64 : a->itemsize == 4 ? VPA_ONNX_INT32
									  : VPA_ONNX_INT8;
	case 'u': return VPA_ONNX_UINT8;
	default: return VPA_ONNX_BOOL;
	}
}

/* A value name as a file name: [A-Za-z0-9._-] kept, others '_', no leading '.'. */
static char *file_name(const char *name)
{
	size_t n = strlen(name);
	char *s = xmalloc(n + 2), *p = s;
	if (name[0] == '.' || n == 0)
		*p++ = '_';
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			 c == '.' || c == '_' || c == '-';
		*p++ = ok ? c : '_';
	}
	*p = '\0';
	return s;
}

enum { O_OUTPUTS = 256 };

static int onnx_run(int argc, char **argv)
{
	static const struct option lo[] = {
		{"input", required_argument, NULL, 'i'},
		{"outdir", required_argument, NULL, 'o'},
		{"outputs", required_argument, NULL, O_OUTPUTS},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *outdir = NULL, *outputs = NULL;
	char **in_specs = xcalloc((size_t)argc + 1, sizeof(char *));
	size_t n_in = 0;
	int c, rc = 0;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hi:o:", lo, NULL)) != -1) {
		switch (c) {
		case 'i': in_specs[n_in++] = optarg; break;
		case 'o': outdir = optarg; break;
		case O_OUTPUTS: outputs = optarg; break;
		case 'h':
			free(in_specs);
			fputs(usage_text, stdout);
			return 0;
		case ':':
			free(in_specs);
			return cli_usage_error("onnx", "option '%s' needs a value", argv[optind - 1]);
		default:
			free(in_specs);
			return cli_usage_error("onnx", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc || !outdir) {
		free(in_specs);
		return cli_usage_error("onnx", optind >= argc ? "run: missing MODEL.onnx"
							 : "run: missing -o DIR");
	}
	if (optind + 1 < argc) {
		free(in_specs);
		return cli_usage_error("onnx", "unexpected argument '%s'", argv[optind + 1]);
	}
	for (size_t i = 0; i < n_in; i++)
		if (!strchr(in_specs[i], '=') || in_specs[i][0] == '=') {
			int r = cli_usage_error("onnx", "-i wants NAME=FILE.npy, got '%s'", in_specs[i]);
			free(in_specs);
			return r;
		}
	const char *path = argv[optind];
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_onnx_model *m = NULL;
	struct vpa_npy_nd *arrs = xcalloc(n_in + 1, sizeof(*arrs));
	struct vpa_onnx_tensor *ins = xcalloc(n_in + 1, sizeof(*ins));
	char **names = xcalloc(n_in + 1, sizeof(char *));
	char **want = NULL, **files = NULL, *list = NULL;
	size_t n_out = 0, n_written = 0;
	struct vpa_onnx_tensor *outs = NULL;
	if (vpa_onnx_load(path, NULL, &m, &err))
		goto fail;
	for (size_t i = 0; i < n_in; i++) {
		char *eq = strchr(in_specs[i], '=');
		names[i] = xmalloc((size_t)(eq - in_specs[i]) + 1);
		memcpy(names[i], in_specs[i], (size_t)(eq - in_specs[i]));
		names[i][eq - in_specs[i]] = '\0';
		if (vpa_npy_read_nd(eq + 1, &arrs[i], &err))
			goto fail;
		if (arrs[i].kind == 'f' &&
		    vpa_check_finite_nd(eq + 1, NULL, arrs[i].data, arrs[i].itemsize, arrs[i].ndim,
					arrs[i].shape, &err))
			goto fail;
		ins[i].dtype = npy_dtype(&arrs[i]);
		/* float64 for a float32 input (numpy's default, or `features` .npy output):
		 * converted with a note, so that the suite's own files chain */
		const struct vpa_onnx_value_info *vi = NULL;
		for (size_t k = 0; k < vpa_onnx_n_inputs(m); k++)
			if (!strcmp(vpa_onnx_input(m, k)->name, names[i]))
				vi = vpa_onnx_input(m, k);
		if (vi && vi->dtype == VPA_ONNX_FLOAT && ins[i].dtype == VPA_ONNX_DOUBLE) {
			size_t k = 1;
			for (size_t a = 0; a < arrs[i].ndim; a++)
				k = xmul(k, arrs[i].shape[a]);
			const double *src = arrs[i].data;
			float *dst = xmalloc(xmul(k ? k : 1, sizeof(float)));
			for (size_t j = 0; j < k; j++) {
				if (fabs(src[j]) > 3.4028234663852886e38) {
					free(dst);
					vpa_fail(&err, VPA_EINPUT, NULL,
						 "%s: element %zu (0-based, row-major) is %g, beyond float32 "
						 "for input '%s'", eq + 1, j, src[j], names[i]);
					goto fail;
				}
				dst[j] = (float)src[j];
			}
			free(arrs[i].data);
			arrs[i].data = dst;
			arrs[i].itemsize = 4;
			ins[i].dtype = VPA_ONNX_FLOAT;
			fprintf(stderr, "vpaudit onnx: note: %s is float64, input '%s' float32: "
				"converted (rounded to float32)\n", eq + 1, names[i]);
		}
		ins[i].ndim = arrs[i].ndim;
		for (size_t k = 0; k < arrs[i].ndim; k++)
			ins[i].dims[k] = (int64_t)arrs[i].shape[k];
		ins[i].data = arrs[i].data; /* borrowed */
	}
	if (outputs) {
		list = xstrdup(outputs);
		want = xcalloc(strlen(list) + 2, sizeof(char *));
		char *save = NULL;
		for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save))
			want[n_out++] = t;
		if (!n_out) {
			rc = cli_usage_error("onnx", "--outputs names no value");
			goto out;
		}
	} else {
		want = xcalloc(vpa_onnx_n_outputs(m) + 1, sizeof(char *));
		for (size_t j = 0; j < vpa_onnx_n_outputs(m); j++)
			want[n_out++] = (char *)vpa_onnx_output(m, j)->name;
	}
	files = xcalloc(n_out + 1, sizeof(char *));
	for (size_t j = 0; j < n_out; j++) {
		if (!vpa_onnx_has_value(m, want[j])) {
			char near[600];
			vpa_fail(&err, VPA_EINPUT, NULL, "%s: the graph has no value '%s'%s", path, want[j],
				 vpa_onnx_nearest_values(m, want[j], near, sizeof(near)));
			goto fail;
		}
		files[j] = file_name(want[j]);
		for (size_t k = 0; k < j; k++)
			if (!strcmp(files[k], files[j])) {
				vpa_fail(&err, VPA_EINPUT, NULL,
					 "values '%s' and '%s' would both be written to %s.npy", want[k],
					 want[j], files[j]);
				goto fail;
			}
	}
	outs = xcalloc(n_out + 1, sizeof(*outs));
	if (vpa_onnx_run(m, n_in, (const char *const *)names, ins, n_out,
			 (const char *const *)want, outs, &err))
		goto fail;
	/* a NaN computed (from an infinite constant: inf - inf, 0 * inf) is no number to
	 * write: an error naming the value, nothing written */
	for (size_t j = 0; j < n_out; j++) {
		int dt = outs[j].dtype;
		if (dt != VPA_ONNX_FLOAT && dt != VPA_ONNX_DOUBLE)
			continue;
		size_t shape[VPA_ONNX_MAX_DIMS];
		for (size_t k = 0; k < outs[j].ndim; k++)
			shape[k] = (size_t)outs[j].dims[k];
		char what[300];
		snprintf(what, sizeof(what), "value '%.200s'", want[j]);
		if (vpa_check_nan_nd(path, what, outs[j].data, (int)vpa_onnx_dtype_size(dt),
				     outs[j].ndim, shape, &err))
			goto fail;
	}
	if (vpa_mkdirs(outdir, &err))
		goto fail;
	for (size_t j = 0; j < n_out; j++) {
		struct vpa_buf p;
		vpa_buf_init(&p);
		vpa_buf_printf(&p, "%s/%s.npy", outdir, files[j]);
		vpa_tmp_clean_stale(p.data);
		size_t shape[VPA_ONNX_MAX_DIMS];
		for (size_t k = 0; k < outs[j].ndim; k++)
			shape[k] = (size_t)outs[j].dims[k];
		int dt = outs[j].dtype;
		char kind = dt == VPA_ONNX_FLOAT || dt == VPA_ONNX_DOUBLE ? 'f'
			    : dt == VPA_ONNX_BOOL ? 'b' : dt == VPA_ONNX_UINT8 ? 'u' : 'i';
		int r = vpa_npy_write_nd(p.data, kind, (int)vpa_onnx_dtype_size(dt), outs[j].data,
					 outs[j].ndim, shape, &err);
		vpa_buf_release(&p);
		if (r)
			goto fail;
		n_written++;
	}
	goto out;
fail:
	rc = cli_error(&err);
	/* No partial output: remove what this run wrote. */
	for (size_t j = 0; j < n_written; j++) {
		struct vpa_buf p;
		vpa_buf_init(&p);
		vpa_buf_printf(&p, "%s/%s.npy", outdir, files[j]);
		unlink(p.data);
		vpa_buf_release(&p);
	}
out:
	for (size_t j = 0; outs && j < n_out; j++)
		vpa_onnx_tensor_release(&outs[j]);
	free(outs);
	for (size_t j = 0; files && j < n_out; j++)
		free(files[j]);
	free(files);
	free(want);
	free(list);
	for (size_t i = 0; i < n_in; i++) {
		free(names[i]);
		vpa_npy_nd_release(&arrs[i]);
	}
	free(names);
	free(arrs);
	free(ins);
	free(in_specs);
	vpa_onnx_free(m);
	return rc;
}

/* `info MODEL [--values] [--length N] [--dim NAME=N ...]` (argv[0] is "info"). */
static int info_cmd(int argc, char **argv)
{
	struct info_args ia = {0, -1, 0, NULL, NULL};
	const char *model = NULL;
	int rc = 0;
	ia.dim_names = xcalloc((size_t)argc + 1, sizeof(char *));
	ia.dim_sizes = xcalloc((size_t)argc + 1, sizeof(long long));
	for (int i = 1; i < argc && !rc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage_text, stdout);
			model = NULL;
			rc = -1;
			break;
		}
		if (!strcmp(a, "--values")) {
			ia.values = 1;
		} else if (!strcmp(a, "--length") || !strncmp(a, "--length=", 9) ||
			   !strcmp(a, "--dim") || !strncmp(a, "--dim=", 6)) {
			int is_len = !strncmp(a, "--length", 8);
			const char *eq = strchr(a, '=');
			const char *v = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
			const char *opt = is_len ? "--length" : "--dim";
			if (!v) {
				rc = cli_usage_error("onnx", "option '%s' needs a value", opt);
				break;
			}
			char *name = NULL;
			const char *num = v;
			if (!is_len) {
				const char *e2 = strchr(v, '=');
				if (!e2 || e2 == v) {
					rc = cli_usage_error("onnx", "--dim wants NAME=N, got '%s'", v);
					break;
				}
				name = xmalloc((size_t)(e2 - v) + 1);
				memcpy(name, v, (size_t)(e2 - v));
				name[e2 - v] = '\0';
				num = e2 + 1;
			}
			unsigned long n;
			char what[80];
			snprintf(what, sizeof(what), "%s", opt);
			if (cli_ulong(what, num, 1, 100000000, &n)) {
				free(name);
				rc = 2;
				break;
			}
			if (is_len) {
				ia.length = (long long)n;
			} else {
				ia.dim_names[ia.n_dims] = name;
				ia.dim_sizes[ia.n_dims++] = (long long)n;
			}
		} else if (a[0] == '-') {
			rc = cli_usage_error("onnx", "unknown option '%s'", a);
		} else if (model) {
			rc = cli_usage_error("onnx", "info takes one MODEL.onnx");
		} else {
			model = a;
		}
	}
	if (!rc && !model)
		rc = cli_usage_error("onnx", "info takes one MODEL.onnx");
	if (!rc && !ia.values && (ia.length >= 0 || ia.n_dims))
		rc = cli_usage_error("onnx", "--length and --dim go with --values");
	if (!rc)
		rc = onnx_info(model, &ia);
	for (size_t j = 0; j < ia.n_dims; j++)
		free(ia.dim_names[j]);
	free(ia.dim_names);
	free(ia.dim_sizes);
	return rc < 0 ? 0 : rc;
}

int cmd_onnx(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		if (argc < 2)
			return cli_usage_error("onnx", "missing subcommand (info or run)");
		fputs(usage_text, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "info"))
		return info_cmd(argc - 1, argv + 1);
	if (!strcmp(argv[1], "run"))
		return onnx_run(argc - 1, argv + 1);
	return cli_usage_error("onnx", "unknown subcommand '%s' (info or run)", argv[1]);
}
