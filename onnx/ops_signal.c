/*
 * onnx/ops_signal.c - the signal operators of opset 17 that waveform-input
 * front-ends export to: DFT, STFT, MelWeightMatrix, HannWindow,
 * HammingWindow, BlackmanWindow.
 *
 * The transforms are computed in double as products with a table of
 * twiddle factors (vpa_dgemm, in blocks of 256 bins), whatever the element
 * type: a frame length is any positive integer (400-sample windows padded
 * to 512, but also 400 itself or a prime), so a matrix product serves every
 * length with the same code, and BLAS makes it fast enough for front-ends (an 8 s
 * utterance of 801 frames of 512 points: 0.2 GFLOP).  The twiddles are
 * cos/sin of 2 pi ((k n) mod N) / N: the reduction is exact in integers, so
 * no large angle loses bits.  Results are rounded to the output type once.
 *
 * Semantics are those of the ONNX operator definitions (opset 17) and of
 * the expected outputs of onnx's backend tests (numpy's fft, the
 * MelWeightMatrix reference loop), which test_onnx_conformance runs.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/la.h"
#include "onnx/internal.h"

static int is_int(const struct vpa_onnx_tensor *t)
{
	return t->dtype == VPA_ONNX_INT64 || t->dtype == VPA_ONNX_INT32;
}

static int is_real(const struct vpa_onnx_tensor *t)
{
	return t->dtype == VPA_ONNX_FLOAT || t->dtype == VPA_ONNX_DOUBLE;
}

/* A scalar (or one-element) integer input. */
static int scalar_int(struct ox_ctx *c, const struct vpa_onnx_tensor *t, const char *what,
		      int64_t *v)
{
	if (!is_int(t) || vpa_onnx_numel(t) != 1)
		return ox_fail(c, "'%s' must be an int32 or int64 scalar", what);
	*v = ox_geti(t, 0);
	return 0;
}

static int scalar_real(struct ox_ctx *c, const struct vpa_onnx_tensor *t, const char *what,
		       double *v)
{
	if ((!is_real(t) && !is_int(t)) || vpa_onnx_numel(t) != 1)
		return ox_fail(c, "'%s' must be a numeric scalar", what);
	*v = ox_getd(t, 0);
	return 0;
}

/* The largest transform length accepted (a 0.34 s frame at 48 kHz is 16384). */
#define MAX_DFT 16384
/* Bins per block of the twiddle table: (L x 256) doubles twice, at most 64 MB. */
#define BIN_BLOCK 256

/*
 * The DFT of `rows` signals: row r of xr (and xi, NULL for a real signal)
 * holds its first L samples (L <= N: the rest is zero padding), row
 * stride L.  Writes bins 0..nb-1 of the length-N transform into yr, yi
 * (row stride nb).  inverse: exponent +i and the factor 1/N.  The bins are
 * done in blocks so that the twiddle table stays small for any N.
 */
static void dft_rows(size_t rows, size_t L, size_t N, size_t nb, int inverse, const double *xr,
		     const double *xi, double *yr, double *yi)
{
	size_t kb_max = nb < BIN_BLOCK ? nb : BIN_BLOCK;
	double *cs = xmalloc(xmul(xmul(L, kb_max), sizeof(double)));
	double *sn = xmalloc(xmul(xmul(L, kb_max), sizeof(double)));
	/* forward: re = xr cos + xi sin, im = xi cos - xr sin; inverse: the sines' signs flip */
	double s = inverse ? -1.0 : 1.0;
	for (size_t k0 = 0; k0 < nb; k0 += kb_max) {
		size_t kb = nb - k0 < kb_max ? nb - k0 : kb_max;
		for (size_t n = 0; n < L; n++)
			for (size_t j = 0; j < kb; j++) {
				/* (k n) mod N in integers: an exact angle in [0, 2 pi) */
				double a = 2.0 * M_PI * (double)((uint64_t)(k0 + j) * n % N) / (double)N;
				cs[n * kb + j] = cos(a);
				sn[n * kb + j] = sin(a);
			}
		vpa_dgemm(0, 0, rows, kb, L, 1.0, xr, L, cs, kb, 0.0, yr + k0, nb);
		vpa_dgemm(0, 0, rows, kb, L, -s, xr, L, sn, kb, 0.0, yi + k0, nb);
		if (xi) {
			vpa_dgemm(0, 0, rows, kb, L, s, xi, L, sn, kb, 1.0, yr + k0, nb);
			vpa_dgemm(0, 0, rows, kb, L, 1.0, xi, L, cs, kb, 1.0, yi + k0, nb);
		}
	}
	if (inverse)
		for (size_t i = 0; i < rows * nb; i++) {
			yr[i] /= (double)N;
			yi[i] /= (double)N;
		}
	free(cs);
	free(sn);
}

/* ------------------------------------------------------------ DFT */

static int check_dft(const char *file, const struct ox_node *n, int64_t opset,
		     struct vpa_err *err)
{
	if (ox_attr_i(n, "inverse", 0) && ox_attr_i(n, "onesided", 0))
		return ox_check_fail(file, n, opset, err,
				     "inverse=1 with onesided=1 is not defined at opset 17");
	return 0;
}

static int run_dft(struct ox_ctx *c, const struct ox_node *n, const struct vpa_onnx_tensor **in,
		   struct vpa_onnx_tensor *out)
{
	const struct vpa_onnx_tensor *x = in[0], *len_in = n->n_in > 1 ? in[1] : NULL;
	if (!is_real(x))
		return ox_fail(c, "input must be float32 or float64, got %s",
			       vpa_onnx_dtype_name(x->dtype));
	size_t r = x->ndim;
	if (r < 2 || (x->dims[r - 1] != 1 && x->dims[r - 1] != 2)) {
		char s[128];
		vpa_onnx_shape_str(s, sizeof(s), r, x->dims);
		return ox_fail(c, "input %s: the last dimension must be 1 (real) or 2 (complex)", s);
	}
	int64_t ax = ox_attr_i(n, "axis", 1);
	if (ax < 0)
		ax += (int64_t)r;
	if (ax < 0 || ax > (int64_t)r - 2)
		return ox_fail(c, "axis %lld is not a signal axis of a rank-%zu input",
			       (long long)ox_attr_i(n, "axis", 1), r);
	int inverse = (int)ox_attr_i(n, "inverse", 0), onesided = (int)ox_attr_i(n, "onesided", 0);
	int cplx = x->dims[r - 1] == 2;
	if (onesided && cplx)
		return ox_fail(c, "onesided=1 needs a real input (last dimension 1)");
	size_t A = (size_t)x->dims[ax], N = A;
	if (len_in) {
		int64_t v = 0;
		if (scalar_int(c, len_in, "dft_length", &v))
			return VPA_EINPUT;
		if (v < 1 || v > MAX_DFT)
			return ox_fail(c, "dft_length %lld is not in [1, %d]", (long long)v, MAX_DFT);
		N = (size_t)v;
	}
	if (N < 1)
		return ox_fail(c, "the signal axis is empty");
	if (N > MAX_DFT)
		return ox_fail(c, "a transform of %zu points (at most %d)", N, MAX_DFT);
	size_t L = A < N ? A : N, nb = onesided ? N / 2 + 1 : N;
	size_t outer = 1, inner = 1;
	for (size_t i = 0; i < (size_t)ax; i++)
		outer *= (size_t)x->dims[i];
	for (size_t i = (size_t)ax + 1; i < r - 1; i++)
		inner *= (size_t)x->dims[i];
	size_t rows = outer * inner, ch = cplx ? 2 : 1;
	int64_t od[VPA_ONNX_MAX_DIMS];
	memcpy(od, x->dims, r * sizeof(int64_t));
	od[ax] = (int64_t)nb;
	od[r - 1] = 2;
	ox_alloc_raw(&out[0], x->dtype, r, od);
	if (!rows || !L) {
		memset(out[0].data, 0, vpa_onnx_numel(&out[0]) * vpa_onnx_dtype_size(x->dtype));
		return 0;
	}
	double *xr = xmalloc(xmul(xmul(rows, L), sizeof(double)));
	double *xi = cplx ? xmalloc(xmul(xmul(rows, L), sizeof(double))) : NULL;
	double *yr = xmalloc(xmul(xmul(rows, nb), sizeof(double)));
	double *yi = xmalloc(xmul(xmul(rows, nb), sizeof(double)));
	/* element (o, a, i, c) of x is at ((o A + a) inner + i) ch + c */
	for (size_t o = 0; o < outer; o++)
		for (size_t i = 0; i < inner; i++)
			for (size_t a = 0; a < L; a++) {
				size_t src = ((o * A + a) * inner + i) * ch, row = o * inner + i;
				xr[row * L + a] = ox_getd(x, src);
				if (xi)
					xi[row * L + a] = ox_getd(x, src + 1);
			}
	dft_rows(rows, L, N, nb, inverse, xr, xi, yr, yi);
	for (size_t o = 0; o < outer; o++)
		for (size_t i = 0; i < inner; i++)
			for (size_t k = 0; k < nb; k++) {
				size_t dst = ((o * nb + k) * inner + i) * 2, row = o * inner + i;
				ox_setd(&out[0], dst, yr[row * nb + k]);
				ox_setd(&out[0], dst + 1, yi[row * nb + k]);
			}
	free(xr);
	free(xi);
	free(yr);
	free(yi);
	return 0;
}

/* ------------------------------------------------------------ STFT */

static int run_stft(struct ox_ctx *c, const struct ox_node *n, const struct vpa_onnx_tensor **in,
		    struct vpa_onnx_tensor *out)
{
	/* the optional inputs: absent at the end of the list, or named "" (NULL) */
	const struct vpa_onnx_tensor *x = in[0], *win = n->n_in > 2 ? in[2] : NULL;
	const struct vpa_onnx_tensor *fl_in = n->n_in > 3 ? in[3] : NULL;
	if (!is_real(x))
		return ox_fail(c, "signal must be float32 or float64, got %s",
			       vpa_onnx_dtype_name(x->dtype));
	if (x->ndim != 3 || (x->dims[2] != 1 && x->dims[2] != 2)) {
		char s[128];
		vpa_onnx_shape_str(s, sizeof(s), x->ndim, x->dims);
		return ox_fail(c, "signal %s: expected (batch, length, 1) or (batch, length, 2)", s);
	}
	int64_t step = 0, fl = -1;
	if (scalar_int(c, in[1], "frame_step", &step))
		return VPA_EINPUT;
	if (step < 1)
		return ox_fail(c, "frame_step %lld must be at least 1", (long long)step);
	if (fl_in && scalar_int(c, fl_in, "frame_length", &fl))
		return VPA_EINPUT;
	if (win) {
		if (!is_real(win) || win->ndim != 1)
			return ox_fail(c, "window must be a 1-D float tensor");
		if (fl >= 0 && fl != win->dims[0])
			return ox_fail(c, "window has %lld values, frame_length is %lld",
				       (long long)win->dims[0], (long long)fl);
		fl = win->dims[0];
	}
	if (fl < 0)
		return ox_fail(c, "neither a window nor a frame_length gives the frame length");
	if (fl < 1 || fl > MAX_DFT)
		return ox_fail(c, "frame length %lld is not in [1, %d]", (long long)fl, MAX_DFT);
	int cplx = x->dims[2] == 2, onesided = (int)ox_attr_i(n, "onesided", 1);
	if (onesided && cplx)
		return ox_fail(c, "onesided=1 needs a real signal (last dimension 1)");
	int64_t B = x->dims[0], len = x->dims[1];
	if (len < fl)
		return ox_fail(c, "the signal has %lld samples, fewer than one frame of %lld",
			       (long long)len, (long long)fl);
	size_t L = (size_t)fl, nf = (size_t)((len - fl) / step + 1), nb = onesided ? L / 2 + 1 : L;
	size_t rows = (size_t)B * nf, ch = cplx ? 2 : 1;
	int64_t od[4] = {B, (int64_t)nf, (int64_t)nb, 2};
	ox_alloc_raw(&out[0], x->dtype, 4, od);
	if (!rows)
		return 0;
	double *w = xmalloc(L * sizeof(double));
	for (size_t j = 0; j < L; j++)
		w[j] = win ? ox_getd(win, j) : 1.0;
	double *xr = xmalloc(xmul(xmul(rows, L), sizeof(double)));
	double *xi = cplx ? xmalloc(xmul(xmul(rows, L), sizeof(double))) : NULL;
	double *yr = xmalloc(xmul(xmul(rows, nb), sizeof(double)));
	double *yi = xmalloc(xmul(xmul(rows, nb), sizeof(double)));
	for (int64_t b = 0; b < B; b++)
		for (size_t f = 0; f < nf; f++)
			for (size_t j = 0; j < L; j++) {
				size_t src = ((size_t)b * (size_t)len + f * (size_t)step + j) * ch;
				size_t row = (size_t)b * nf + f;
				xr[row * L + j] = ox_getd(x, src) * w[j];
				if (xi)
					xi[row * L + j] = ox_getd(x, src + 1) * w[j];
			}
	dft_rows(rows, L, L, nb, 0, xr, xi, yr, yi);
	for (size_t i = 0; i < rows * nb; i++) {
		ox_setd(&out[0], 2 * i, yr[i]);
		ox_setd(&out[0], 2 * i + 1, yi[i]);
	}
	free(w);
	free(xr);
	free(xi);
	free(yr);
	free(yi);
	return 0;
}

/* ------------------------------------------------------------ windows */

static int check_out_type(const char *file, const struct ox_node *n, int64_t opset,
			  struct vpa_err *err)
{
	int64_t dt = ox_attr_i(n, "output_datatype", 1);
	if (!vpa_onnx_dtype_size((int)dt) || dt == VPA_ONNX_BOOL)
		return ox_check_fail(file, n, opset, err,
				     "output_datatype %lld is not a type computed here (1 float32, "
				     "11 float64, 6 int32, 7 int64, 2 uint8, 3 int8)",
				     (long long)dt);
	return 0;
}

/* The generalised cosine window a0 - a1 cos(2 pi n / M) + a2 cos(4 pi n / M), M = size
 * (periodic) or size - 1 (symmetric), as the operator definitions give it. */
static int cos_window(struct ox_ctx *c, const struct ox_node *n,
		      const struct vpa_onnx_tensor **in, struct vpa_onnx_tensor *out, double a0,
		      double a1, double a2)
{
	int64_t size;
	if (scalar_int(c, in[0], "size", &size))
		return VPA_EINPUT;
	if (size < 0 || size > 100000000)
		return ox_fail(c, "size %lld is not in [0, 100000000]", (long long)size);
	int periodic = (int)ox_attr_i(n, "periodic", 1);
	double M = periodic ? (double)size : (double)size - 1;
	ox_alloc_raw(&out[0], (int)ox_attr_i(n, "output_datatype", 1), 1, &size);
	for (int64_t i = 0; i < size; i++) {
		/* a symmetric window of one point: M = 0, the definition's 0/0; numpy's and
		 * PyTorch's windows give 1 there */
		double t = M > 0 ? 2.0 * M_PI * (double)i / M : 0.0;
		double v = M > 0 ? a0 - a1 * cos(t) + a2 * cos(2.0 * t) : 1.0;
		ox_setd(&out[0], (size_t)i, v);
	}
	return 0;
}

static int run_hann(struct ox_ctx *c, const struct ox_node *n, const struct vpa_onnx_tensor **in,
		    struct vpa_onnx_tensor *out)
{
	return cos_window(c, n, in, out, 0.5, 0.5, 0.0);
}

static int run_hamming(struct ox_ctx *c, const struct ox_node *n,
		       const struct vpa_onnx_tensor **in, struct vpa_onnx_tensor *out)
{
	/* the definition's alpha = 25/46, beta = 1 - alpha (not 0.54/0.46) */
	return cos_window(c, n, in, out, 25.0 / 46.0, 21.0 / 46.0, 0.0);
}

static int run_blackman(struct ox_ctx *c, const struct ox_node *n,
			const struct vpa_onnx_tensor **in, struct vpa_onnx_tensor *out)
{
	return cos_window(c, n, in, out, 0.42, 0.5, 0.08);
}

/* ------------------------------------------------------------ MelWeightMatrix */

/*
 * The definition's loop (onnx's backend test and reference implementation):
 * num_mel_bins + 2 points equally spaced in mel between the edges with the
 * step (high - low) / (num_mel_bins + 2), each mapped to the bin
 * floor((dft_length + 1) f / sample_rate); triangle i rises from point i to
 * point i + 1 (a one at the centre when they coincide) and falls to point
 * i + 2.  Shape (dft_length / 2 + 1, num_mel_bins).
 */
static int run_mel(struct ox_ctx *c, const struct ox_node *n, const struct vpa_onnx_tensor **in,
		   struct vpa_onnx_tensor *out)
{
	int64_t nm = 0, dl = 0, sr = 0;
	double lo = 0, hi = 0;
	if (scalar_int(c, in[0], "num_mel_bins", &nm) || scalar_int(c, in[1], "dft_length", &dl) ||
	    scalar_int(c, in[2], "sample_rate", &sr) ||
	    scalar_real(c, in[3], "lower_edge_hertz", &lo) ||
	    scalar_real(c, in[4], "upper_edge_hertz", &hi))
		return VPA_EINPUT;
	if (nm < 1 || nm > 100000)
		return ox_fail(c, "num_mel_bins %lld is not in [1, 100000]", (long long)nm);
	if (dl < 1 || dl > 10 * MAX_DFT)
		return ox_fail(c, "dft_length %lld is not in [1, %d]", (long long)dl, 10 * MAX_DFT);
	if (sr < 1)
		return ox_fail(c, "sample_rate %lld must be positive", (long long)sr);
	if (!(lo >= 0) || !(hi > lo) || !(hi <= (double)sr / 2))
		return ox_fail(c, "the edges %g and %g Hz must satisfy 0 <= lower < upper <= "
			       "sample_rate / 2 = %g", lo, hi, (double)sr / 2);
	size_t nbins = (size_t)dl / 2 + 1, m = (size_t)nm;
	int64_t od[2] = {(int64_t)nbins, nm};
	ox_alloc(&out[0], (int)ox_attr_i(n, "output_datatype", 1), 2, od);
	int64_t *pt = xmalloc((m + 2) * sizeof(int64_t));
	double lmel = 2595.0 * log10(1.0 + lo / 700.0), hmel = 2595.0 * log10(1.0 + hi / 700.0);
	double step = (hmel - lmel) / (double)(m + 2);
	for (size_t i = 0; i < m + 2; i++) {
		double f = 700.0 * (pow(10.0, ((double)i * step + lmel) / 2595.0) - 1.0);
		pt[i] = (int64_t)floor((double)(dl + 1) * f / (double)sr);
		if (pt[i] < 0)
			pt[i] = 0;
		if (pt[i] > (int64_t)nbins - 1)
			pt[i] = (int64_t)nbins - 1;
	}
	for (size_t i = 0; i < m; i++) {
		int64_t l = pt[i], ce = pt[i + 1], h = pt[i + 2];
		if (ce == l)
			ox_setd(&out[0], (size_t)ce * m + i, 1.0);
		else
			for (int64_t j = l; j <= ce; j++)
				ox_setd(&out[0], (size_t)j * m + i,
					(double)(j - l) / (double)(ce - l));
		if (h > ce)
			for (int64_t j = ce; j < h; j++)
				ox_setd(&out[0], (size_t)j * m + i,
					(double)(h - j) / (double)(h - ce));
	}
	free(pt);
	return 0;
}

static const char *const a_dft[] = {"axis", "inverse", "onesided", NULL};
static const char *const a_stft[] = {"onesided", NULL};
static const char *const a_window[] = {"output_datatype", "periodic", NULL};
static const char *const a_mel[] = {"output_datatype", NULL};

const struct ox_op ox_ops_signal[] = {
	{"DFT", a_dft, check_dft, run_dft, 1, 2, 1, 1},
	{"STFT", a_stft, NULL, run_stft, 2, 4, 1, 1},
	{"HannWindow", a_window, check_out_type, run_hann, 1, 1, 1, 1},
	{"HammingWindow", a_window, check_out_type, run_hamming, 1, 1, 1, 1},
	{"BlackmanWindow", a_window, check_out_type, run_blackman, 1, 1, 1, 1},
	{"MelWeightMatrix", a_mel, check_out_type, run_mel, 5, 5, 1, 1},
	{NULL, NULL, NULL, NULL, 0, 0, 0, 0},
};
