/* tests/unit/test_anon.c - audio/anon.h: McAdams against the NumPy goldens,
 * warping, YIN pitch and rho_F0 on synthetic signals, WER on hand-counted
 * alignments. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audio/anon.h"
#include "audio/anon_int.h"
#include "tests/unit/harness.h"

#define GOLD "tests/golden/anon/"

/* McAdams: every golden case of gen_mcadams.py, sample by sample.  The
 * int16 truncation of two float computations may differ by one step where a
 * value lies near an integer; the tolerance is 2 steps and nearly all must be
 * exact. */
static void test_mcadams_golden(void)
{
	FILE *f = fopen(GOLD "cases.txt", "r");
	CHECK(f != NULL);
	if (!f)
		return;
	char name[64], in[256];
	double alpha, win, sh;
	int order, ncase = 0;
	while (fscanf(f, "%63s %255s %lf %lf %lf %d", name, in, &alpha, &win, &sh, &order) == 6) {
		struct vpa_err err;
		vpa_err_init(&err);
		struct vpa_wave x, g;
		vpa_wave_init(&x);
		vpa_wave_init(&g);
		char gp[512];
		snprintf(gp, sizeof gp, GOLD "%s.wav", name);
		CHECK(vpa_audio_read(in, -1, &x, &err) == 0);
		CHECK(vpa_audio_read(gp, -1, &g, &err) == 0);
		struct vpa_mcadams_opts o;
		vpa_mcadams_opts_init(&o);
		o.alpha = alpha;
		o.win_ms = win;
		o.shift_ms = sh;
		o.lp_order = order;
		float *y = NULL;
		CHECK(vpa_mcadams(x.x, x.n, x.rate, &o, &y, &err) == 0);
		CHECK(g.n == x.n);
		if (y && g.n == x.n) {
			size_t off = 0;
			double md = 0;
			for (size_t i = 0; i < x.n; i++) {
				double d = fabs(y[i] - g.x[i]);
				if (d > md)
					md = d;
				off += d != 0;
			}
			printf("#   %s: max |diff| %g, %zu of %zu samples differ\n", name, md, off, x.n);
			CHECK(md <= 2);
			CHECK(off * 100 <= x.n);
		}
		free(y);
		vpa_wave_release(&x);
		vpa_wave_release(&g);
		ncase++;
	}
	fclose(f);
	CHECK(ncase == 4);
}

static void test_mcadams_bad(void)
{
	struct vpa_err err;
	struct vpa_mcadams_opts o;
	vpa_mcadams_opts_init(&o);
	float x[100] = {0};
	float *y = NULL;
	vpa_err_init(&err);
	CHECK(vpa_mcadams(x, 100, 16000, &o, &y, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "signal of 100 samples is shorter than one 320-sample frame");
	CHECK(y == NULL);
	o.alpha = 3;
	vpa_err_init(&err);
	CHECK(vpa_mcadams(x, 100, 16000, &o, &y, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "McAdams alpha must be in (0, 2], got 3");
}

/* ---------------------------------------------------------------- WER */

static void split(char *s, const char **w, size_t *n)
{
	*n = 0;
	for (char *t = strtok(s, " "); t; t = strtok(NULL, " "))
		w[(*n)++] = t;
}

/* Hand-counted alignments (the comment of each case gives one optimal path). */
static void test_wer_align(void)
{
	static const struct {
		const char *ref, *hyp;
		size_t ins, del, sub;
	} c[] = {
		{"a b c d", "a x c d", 0, 0, 1},                   /* b->x */
		{"a b c", "a b c d e", 2, 0, 0},                   /* +d +e */
		{"the cat sat on the mat", "cat sat on a mat", 0, 1, 1}, /* -the, the->a */
		{"a b", "", 0, 2, 0},
		{"", "a", 1, 0, 0},
		{"a b c", "c b a", 0, 0, 2},                       /* a->c, c->a */
		{"a b", "b c", 0, 0, 2},  /* tie: 2 sub or -a +c: Kaldi keeps the substitutions */
		{"x y z", "x y z", 0, 0, 0},
		{"a b c d e f", "a c d e f g", 1, 1, 0},           /* -b, +g */
	};
	for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
		char rb[128], hb[128];
		const char *rw[16], *hw[16];
		size_t nr, nh;
		strcpy(rb, c[k].ref);
		strcpy(hb, c[k].hyp);
		split(rb, rw, &nr);
		split(hb, hw, &nh);
		struct vpa_wer w;
		memset(&w, 0, sizeof w);
		vpa_wer_align(rw, nr, hw, nh, &w);
		CHECK(w.ins == c[k].ins);
		CHECK(w.del == c[k].del);
		CHECK(w.sub == c[k].sub);
		CHECK(w.ref_words == nr);
		if (w.ins != c[k].ins || w.del != c[k].del || w.sub != c[k].sub)
			printf("#   case %zu: ins %zu del %zu sub %zu\n", k, w.ins, w.del, w.sub);
	}
}

static void test_wer_text(void)
{
	const char *ref = "u1 the cat sat on the mat\nu2 a b c d\n\nu3 hello world\r\n";
	const char *hyp = "u3 hello  world\nu1 cat sat on a mat\nu2 a x c d e\n";
	struct vpa_wer w;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_wer_text("ref", ref, strlen(ref), "hyp", hyp, strlen(hyp), &w, &err) == 0);
	CHECK(w.ref_words == 12);
	CHECK(w.ins == 1 && w.del == 1 && w.sub == 2);
	CHECK(w.n_utt == 3 && w.n_utt_err == 2);
	CHECK_NEAR(w.wer, 100.0 * 4 / 12, 1e-12);
	const char *miss = "u1 cat\nu3 hello world\n";
	vpa_err_init(&err);
	CHECK(vpa_wer_text("ref", ref, strlen(ref), "hyp", miss, strlen(miss), &w, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "hyp: utterance 'u2' of ref:2 has no hypothesis");
	const char *extra = "u1 a\nu2 b\nu3 c\nu9 d\n";
	vpa_err_init(&err);
	CHECK(vpa_wer_text("ref", ref, strlen(ref), "hyp", extra, strlen(extra), &w, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "hyp:4: utterance 'u9' is not in ref");
	const char *dup = "u1 a\nu2 b\nu1 c\n";
	vpa_err_init(&err);
	CHECK(vpa_wer_text("ref", dup, strlen(dup), "hyp", hyp, strlen(hyp), &w, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "ref:3: duplicate utterance 'u1' (first on line 1)");
	const char *empty = "u1\nu2\n";
	vpa_err_init(&err);
	CHECK(vpa_wer_text("ref", empty, strlen(empty), "hyp", empty, strlen(empty), &w, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "ref: no reference words (WER undefined)");
	const char *bom = "\xEF\xBB\xBFu1 the cat sat on the mat\n";
	vpa_err_init(&err);
	CHECK(vpa_wer_text("ref", ref, strlen(ref), "hyp", bom, strlen(bom), &w, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "hyp:1: the file starts with a UTF-8 byte order mark (bytes EF BB BF), which would become part of the first id: save it without the mark");
}

/* -------------------------------------------------------------- pitch */

/* f0 of a synthetic signal at time t (s); phase integrated numerically. */
typedef double (*f0fn)(double t);
static double f0_glide(double t) { return 100 + 100 * t; }          /* 100 -> 250 Hz in 1.5 s */
static double f0_fall(double t) { return 250 - 100 * t; }

static float *harmonic(size_t n, double rate, f0fn f, const int *harm, int nh)
{
	float *x = malloc(n * sizeof(float));
	double ph = 0;
	for (size_t i = 0; i < n; i++) {
		double v = 0;
		for (int k = 0; k < nh; k++)
			v += sin(harm[k] * ph) / harm[k];
		x[i] = (float)(8000 * v);
		ph += 2 * M_PI * f((double)i / rate) / rate;
	}
	return x;
}

static double fixed_f0;
static double f0_fixed(double t) { (void)t; return fixed_f0; }

/* gross error rate (|error| > 20%) and mean relative fine error over voiced frames */
static void score(const struct vpa_pitch *p, const struct vpa_pitch_opts *o, double rate, f0fn f,
		  double *gross, double *fine, double *voiced)
{
	size_t W = (size_t)floor(o->win_ms * 0.001 * rate), tmax = (size_t)floor(rate / o->min_f0);
	size_t shift = (size_t)floor(o->shift_ms * 0.001 * rate);
	size_t ng = 0, nv = 0;
	double fe = 0;
	for (size_t t = 0; t < p->n; t++) {
		double c = ((double)(t * shift) + (double)(W + tmax + 1) / 2) / rate;
		if (!p->voiced[t])
			continue;
		nv++;
		double r = fabs(p->f0[t] - f(c)) / f(c);
		if (r > 0.2)
			ng++;
		else
			fe += r;
	}
	*voiced = p->n ? (double)nv / (double)p->n : 0;
	*gross = nv ? (double)ng / (double)nv : 1;
	*fine = nv > ng ? fe / (double)(nv - ng) : 1;
}

static void test_pitch_sines(void)
{
	const double f[] = {80, 100, 150, 220, 310};
	const int one[] = {1};
	for (int r = 0; r < 2; r++) {
		double rate = r ? 8000 : 16000;
		for (size_t k = 0; k < 5; k++) {
			fixed_f0 = f[k];
			size_t n = (size_t)rate;
			float *x = harmonic(n, rate, f0_fixed, one, 1);
			struct vpa_pitch_opts o;
			vpa_pitch_opts_init(&o);
			struct vpa_pitch p;
			struct vpa_err err;
			vpa_err_init(&err);
			CHECK(vpa_pitch_track(x, n, rate, &o, &p, &err) == 0);
			double g, fe, v;
			score(&p, &o, rate, f0_fixed, &g, &fe, &v);
			CHECK(p.n == 1 + (n - (size_t)(0.04 * rate) - (size_t)(rate / 60) - 1) / (size_t)(0.01 * rate));
			CHECK(v == 1);
			CHECK(g == 0);
			CHECK(fe < 0.002);
			if (!(fe < 0.002))
				printf("#   sine %g Hz at %g: fine %g\n", f[k], rate, fe);
			vpa_pitch_release(&p);
			free(x);
		}
	}
}

/* A harmonic complex without its fundamental (harmonics 2..6), and glides. */
static void test_pitch_complex_glide(void)
{
	const int miss[] = {2, 3, 4, 5, 6}, full[] = {1, 2, 3, 4, 5, 6, 7, 8};
	double rate = 16000;
	size_t n = 24000;
	struct { f0fn f; const int *h; int nh; } c[] = {
		{f0_fixed, miss, 5}, {f0_glide, full, 8}, {f0_fall, miss, 5},
	};
	fixed_f0 = 120;
	for (size_t k = 0; k < 3; k++) {
		float *x = harmonic(n, rate, c[k].f, c[k].h, c[k].nh);
		struct vpa_pitch_opts o;
		vpa_pitch_opts_init(&o);
		struct vpa_pitch p;
		struct vpa_err err;
		vpa_err_init(&err);
		CHECK(vpa_pitch_track(x, n, rate, &o, &p, &err) == 0);
		double g, fe, v;
		score(&p, &o, rate, c[k].f, &g, &fe, &v);
		printf("#   case %zu: voiced %.3f gross %.4f fine %.5f\n", k, v, g, fe);
		CHECK(v > 0.98);
		CHECK(g == 0);
		CHECK(fe < 0.01);
		vpa_pitch_release(&p);
		free(x);
	}
}

/* White noise and silence are unvoiced. */
static void test_pitch_unvoiced(void)
{
	size_t n = 16000;
	float *x = calloc(n, sizeof(float));
	struct vpa_rng r;
	vpa_rng_seed(&r, 7);
	for (size_t i = 8000; i < n; i++)
		x[i] = (float)(3000 * vpa_rng_normal(&r));
	struct vpa_pitch_opts o;
	vpa_pitch_opts_init(&o);
	struct vpa_pitch p;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_pitch_track(x, n, 16000, &o, &p, &err) == 0);
	size_t nv = 0;
	for (size_t t = 0; t < p.n; t++) {
		nv += p.voiced[t];
		CHECK(p.voiced[t] || p.f0[t] == 0);
	}
	CHECK(p.n > 80 && nv * 20 < p.n);
	vpa_pitch_release(&p);
	free(x);
}

static void test_rho_f0(void)
{
	const int full[] = {1, 2, 3, 4, 5};
	double rate = 16000;
	size_t n = 24000;
	float *a = harmonic(n, rate, f0_glide, full, 5);
	float *b = harmonic(n, rate, f0_fall, full, 5);
	struct vpa_pitch_opts o;
	vpa_pitch_opts_init(&o);
	struct vpa_pitch pa, pb;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_pitch_track(a, n, rate, &o, &pa, &err) == 0);
	CHECK(vpa_pitch_track(b, n, rate, &o, &pb, &err) == 0);
	double rho;
	size_t k;
	CHECK(vpa_rho_f0(&pa, &pa, &rho, &k, &err) == 0);
	CHECK_NEAR(rho, 1, 1e-12);
	CHECK(vpa_rho_f0(&pa, &pb, &rho, &k, &err) == 0);
	CHECK(rho < -0.999); /* rising vs falling linear glides */
	CHECK(k > 100);
	/* hand computation: f0 (100, 200, 300) vs (1, 2, 4) on three common frames */
	float fa[] = {100, 200, 0, 300}, fb[] = {1, 2, 3, 4};
	unsigned char va[] = {1, 1, 0, 1}, vb[] = {1, 1, 1, 1};
	struct vpa_pitch ha = {4, fa, va}, hb = {4, fb, vb};
	CHECK(vpa_rho_f0(&ha, &hb, &rho, &k, &err) == 0);
	CHECK(k == 3);
	/* x = (-1, 0, 1), y = (-4/3, -1/3, 5/3): sxy = 3, sxx = 2, syy = 42/9 */
	CHECK_NEAR(rho, 3 / sqrt(2 * 42.0 / 9), 1e-7);
	va[1] = 0;
	va[3] = 0;
	vpa_err_init(&err);
	CHECK(vpa_rho_f0(&ha, &hb, &rho, &k, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "rho_F0 undefined: 1 frame voiced in both");
	vpa_pitch_release(&pa);
	vpa_pitch_release(&pb);
	free(a);
	free(b);
}

/* ------------------------------------------------------------ warping */

/* frequency (Hz, 1 Hz grid) of the largest Hann-windowed DFT power of x[a..b) */
static double peak_hz(const float *x, size_t a, size_t b, double rate, double lo, double hi)
{
	double best = -1, bf = 0;
	for (double f = lo; f <= hi; f += 1) {
		double re = 0, im = 0, L = (double)(b - a);
		for (size_t i = a; i < b; i++) {
			double w = 0.5 - 0.5 * cos(2 * M_PI * (double)(i - a) / L);
			re += w * x[i] * cos(2 * M_PI * f * (double)i / rate);
			im += w * x[i] * sin(2 * M_PI * f * (double)i / rate);
		}
		if (re * re + im * im > best) {
			best = re * re + im * im;
			bf = f;
		}
	}
	return bf;
}

static void test_warp_identity(void)
{
	const int full[] = {1, 2, 3, 4, 5};
	size_t n = 8000;
	fixed_f0 = 130;
	float *x = harmonic(n, 16000, f0_fixed, full, 5);
	struct vpa_warp_opts o;
	vpa_warp_opts_init(&o);
	o.alpha = 0;
	float *y = NULL;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_warp(x, n, 16000, &o, &y, &err) == 0);
	double md = 0;
	for (size_t i = 0; y && i < n; i++)
		md = fmax(md, fabs(y[i] - x[i]));
	CHECK(md < 0.05); /* float FFT on values up to ~1.5e4 */
	free(y);
	free(x);
	CHECK_NEAR(vpa_warp_freq(1.0, 0), 1.0, 0);
	CHECK_NEAR(vpa_warp_freq(M_PI, 0.3), M_PI, 1e-12);
	CHECK_NEAR(vpa_warp_freq(vpa_warp_freq(0.7, 0.25), -0.25), 0.7, 1e-12); /* inverse */
}

/* A tone at f moves to the warping function's image of f (within a bin). */
static void test_warp_peak(void)
{
	const int one[] = {1};
	const double rate = 16000, freqs[] = {500, 1000, 2500}, alphas[] = {0.2, -0.15, 0.1};
	size_t n = 16000;
	for (size_t k = 0; k < 3; k++) {
		fixed_f0 = freqs[k];
		float *x = harmonic(n, rate, f0_fixed, one, 1);
		struct vpa_warp_opts o;
		vpa_warp_opts_init(&o);
		o.alpha = alphas[k];
		float *y = NULL;
		struct vpa_err err;
		vpa_err_init(&err);
		CHECK(vpa_warp(x, n, rate, &o, &y, &err) == 0);
		double want = vpa_warp_freq(2 * M_PI * freqs[k] / rate, o.alpha) * rate / (2 * M_PI);
		double got = y ? peak_hz(y, 4000, 12000, rate, 100, 4000) : 0;
		printf("#   %g Hz, alpha %g: peak %g Hz, predicted %.1f Hz\n", freqs[k], o.alpha, got, want);
		CHECK(fabs(got - want) < 5); /* the phase vocoder puts it on the 1 Hz grid point */
		CHECK(fabs(want - freqs[k]) > 100);     /* the displacement is real */
		free(y);
		free(x);
	}
}

/* ---------------------------------------------------------- resampling */

/* Tones keep their frequency and level through vpa_resample; a tone above
 * the new Nyquist is removed (anti-aliasing). */
static void test_resample(void)
{
	const struct { double rin, rout, f, gain; } c[] = {
		{22050, 16000, 1000, 1}, {22050, 16000, 3000, 1}, {8000, 16000, 440, 1},
		{22050, 16000, 10000, 0}, {48000, 16000, 6000, 1},
	};
	for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
		size_t n = (size_t)c[k].rin, m;
		float *x = malloc(n * sizeof(float));
		for (size_t i = 0; i < n; i++)
			x[i] = (float)(1000 * sin(2 * M_PI * c[k].f * (double)i / c[k].rin));
		float *y = vpa_resample(x, n, c[k].rin, c[k].rout, &m);
		CHECK(m == (size_t)c[k].rout);
		double md = 0;
		for (size_t i = m / 4; i < 3 * m / 4; i++) /* away from the edges */
			md = fmax(md, fabs(y[i] - c[k].gain * 1000 * sin(2 * M_PI * c[k].f * (double)i / c[k].rout)));
		printf("#   %g -> %g Hz, tone %g Hz: max deviation %.3g (of 1000)\n", c[k].rin, c[k].rout,
		       c[k].f, md);
		CHECK(md < 2); /* 0.2% */
		free(y);
		free(x);
	}
}

int main(void)
{
	RUN(test_resample);
	RUN(test_warp_identity);
	RUN(test_warp_peak);
	RUN(test_wer_align);
	RUN(test_wer_text);
	RUN(test_pitch_sines);
	RUN(test_pitch_complex_glide);
	RUN(test_pitch_unvoiced);
	RUN(test_rho_f0);
	RUN(test_mcadams_golden);
	RUN(test_mcadams_bad);
	return DONE();
}
