/*
 * tests/unit/test_pshift.c - the TD-PSOLA pitch-shifting anonymiser
 * (audio/pshift.c) on synthetic voiced signals of known F0: the F0 moves by
 * 2^(S/12) (YIN on the output), the duration and the voiced stretch stay
 * where they were, the formants (LPC envelope peaks) stay put while the F0
 * moves (what separates PSOLA from resampling), S = 0 / R = 1 gives the input
 * back, the sigma ratio scales the spread of log F0, and bad input is one
 * clear message.
 */
#include <math.h>
#include <stdlib.h>

#include "audio/anon.h"
#include "audio/audio.h"
#include "formats/io.h"
#include "harness.h"

#define RATE 16000.0

/* a two-pole resonator at f Hz, bandwidth bw Hz, unit gain at DC */
static void resonate(double *s, size_t n, double f, double bw)
{
	double r = exp(-M_PI * bw / RATE), c = 2 * r * cos(2 * M_PI * f / RATE), d = -r * r;
	double g = 1 - c - d, y1 = 0, y2 = 0;
	for (size_t i = 0; i < n; i++) {
		double v = g * s[i] + c * y1 + d * y2;
		y2 = y1;
		y1 = v;
		s[i] = v;
	}
}

typedef double (*f0fn)(double t);
static double f0_120(double t) { (void)t; return 120; }
static double f0_glide(double t) { return 100 + 40 * (t - 0.2) / 1.2; } /* 100 -> 140 Hz */

/*
 * A vowel-like signal: silence, then [t0, t1) s of a glottal pulse train (one
 * unit pulse per period, the phase of f0(t) integrated) through a glottal
 * low-pass (two real poles at 0.9) and formants 700/90, 1200/110, 2600/160
 * Hz, then silence; peak scaled to 10000.
 */
static float *vowel(size_t n, f0fn f0, double t0, double t1)
{
	double *s = calloc(n, sizeof(double));
	double ph = 0;
	for (size_t i = 0; i < n; i++) {
		double t = (double)i / RATE;
		if (t < t0 || t >= t1)
			continue;
		ph += f0(t) / RATE;
		if (ph >= 1) {
			ph -= 1;
			s[i] = 1;
		}
	}
	for (int k = 0; k < 2; k++) {
		double y = 0;
		for (size_t i = 0; i < n; i++)
			s[i] = y = s[i] + 0.9 * y;
	}
	resonate(s, n, 700, 90);
	resonate(s, n, 1200, 110);
	resonate(s, n, 2600, 160);
	double mx = 0;
	for (size_t i = 0; i < n; i++)
		mx = fmax(mx, fabs(s[i]));
	float *x = malloc(n * sizeof(float));
	for (size_t i = 0; i < n; i++)
		x[i] = (float)(s[i] / mx * 10000);
	free(s);
	return x;
}

static float *shift(const float *x, size_t n, double semi, double ratio)
{
	struct vpa_pshift_opts o;
	vpa_pshift_opts_init(&o);
	o.semitones = semi;
	o.sigma_ratio = ratio;
	float *y = NULL;
	struct vpa_err err;
	vpa_err_init(&err);
	int rc = vpa_pshift(x, n, RATE, &o, &y, &err);
	CHECK(rc == 0);
	if (rc)
		printf("#   %s\n", err.msg);
	return y;
}

static void track(const float *x, size_t n, struct vpa_pitch *p)
{
	struct vpa_pitch_opts o;
	vpa_pitch_opts_init(&o);
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_pitch_track(x, n, RATE, &o, p, &err) == 0);
}

/* (a) a 120 Hz vowel shifted by +4 and -5 semitones: YIN measures 120 * 2^(S/12) */
static void test_pshift_f0(void)
{
	size_t n = (size_t)(1.6 * RATE);
	float *x = vowel(n, f0_120, 0.2, 1.4);
	const double semis[] = {4, -5, 12, -9};
	for (int k = 0; k < 4; k++) {
		float *y = shift(x, n, semis[k], 1);
		if (!y)
			continue;
		struct vpa_pitch p;
		track(y, n, &p);
		double want = 120 * pow(2, semis[k] / 12), sum = 0, worst = 0;
		size_t nv = 0;
		/* every voiced frame of the output (before the voicing dilation of the
		 * marks, the first 10-20 ms of the vowel kept their pitch: 50% off at
		 * +12 on the onset frame) */
		for (size_t t = 0; t < p.n; t++)
			if (p.voiced[t]) {
				double r = fabs(p.f0[t] / want - 1);
				sum += p.f0[t];
				worst = fmax(worst, r);
				nv++;
			}
		printf("#   %+g semitones: %zu voiced frames, mean F0 %.3f Hz (want %.3f), worst "
		       "frame %.3f%%\n", semis[k], nv, nv ? sum / (double)nv : 0, want, 100 * worst);
		CHECK(nv > 100); /* 1.2 s voiced: about 110 frames */
		CHECK(nv && fabs(sum / (double)nv / want - 1) < 0.01);
		CHECK(worst < 0.01);
		vpa_pitch_release(&p);
		free(y);
	}
	free(x);
}

/* (a') synthetic speech (tests/golden/audio/g16.wav, 0.5 s, F0 about 190-215
 * Hz): on every frame voiced in both, YIN's F0 ratio out/in is 2^(S/12)
 * within half a semitone.  With marks on the largest peak instead of the
 * best one-period correlation, the marks jumped between peaks of similar
 * height (+-7 samples of 78) and the output had period doubling: at -5
 * semitones one frame at 75 Hz instead of 150 (measured). */
static void test_pshift_speech(void)
{
	struct vpa_wave w;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_audio_read("tests/golden/audio/g16.wav", -1, &w, &err) == 0);
	if (!w.x)
		return;
	struct vpa_pitch px;
	track(w.x, w.n, &px);
	const double semis[] = {4, -5};
	for (int k = 0; k < 2; k++) {
		float *y = shift(w.x, w.n, semis[k], 1);
		if (!y)
			continue;
		struct vpa_pitch p;
		track(y, w.n, &p);
		size_t nv = 0, nx = 0, off = 0;
		double worst = 0;
		for (size_t t = 0; t < p.n; t++) {
			nx += px.voiced[t];
			if (!p.voiced[t] || !px.voiced[t])
				continue;
			nv++;
			double st = 12 * log2(p.f0[t] / px.f0[t]) - semis[k];
			worst = fmax(worst, fabs(st));
			off += fabs(st) > 0.5;
		}
		printf("#   g16.wav %+g semitones: %zu of %zu input voiced frames voiced in the "
		       "output, worst %.3f semitones off\n", semis[k], nv, nx, worst);
		CHECK(nv >= nx * 2 / 3);
		CHECK(off == 0);
		vpa_pitch_release(&p);
		free(y);
	}
	vpa_pitch_release(&px);
	vpa_wave_release(&w);
}

/* (b) the sample count and the voiced stretch are where they were */
static void test_pshift_duration(void)
{
	size_t n = (size_t)(1.6 * RATE) + 37;
	float *x = vowel(n, f0_120, 0.2, 1.4);
	const double semis[] = {4, -5};
	struct vpa_pitch px;
	track(x, n, &px);
	for (int k = 0; k < 2; k++) {
		float *y = shift(x, n, semis[k], 1);
		if (!y)
			continue;
		struct vpa_pitch p;
		track(y, n, &p);
		CHECK(p.n == px.n); /* same sample count (the API returns n samples) */
		size_t f0 = 0, f1 = 0, g0 = 0, g1 = 0;
		for (size_t t = 0; t < px.n; t++)
			if (px.voiced[t]) {
				f0 = f0 ? f0 : t;
				f1 = t;
			}
		for (size_t t = 0; t < p.n; t++)
			if (p.voiced[t]) {
				g0 = g0 ? g0 : t;
				g1 = t;
			}
		printf("#   %+g semitones: voiced frames %zu..%zu, input %zu..%zu\n", semis[k], g0, g1,
		       f0, f1);
		CHECK(labs((long)g0 - (long)f0) <= 1 && labs((long)g1 - (long)f1) <= 1);
		/* nothing is produced in the leading silence (exact zeros in), and the
		 * last 0.15 s (the formant filter's ring-down, < 1 in) stays below one
		 * 16-bit step */
		double e0 = 0, e1 = 0, x1 = 0;
		for (size_t i = 0; i < (size_t)(0.15 * RATE); i++) {
			e0 = fmax(e0, fabs(y[i]));
			e1 = fmax(e1, fabs(y[n - 1 - i]));
			x1 = fmax(x1, fabs(x[n - 1 - i]));
		}
		CHECK(e0 == 0);
		CHECK(x1 < 1 && e1 < 1);
		vpa_pitch_release(&p);
		free(y);
	}
	vpa_pitch_release(&px);
	free(x);
}

/* LPC (autocorrelation method, order 14) of x[a..b) under a Hann window; the
 * frequency (5 Hz grid) of the largest envelope 1/|A| in [lo, hi] Hz */
static double lpc_peak(const float *x, size_t a, size_t b, double lo, double hi)
{
	enum { P = 14 };
	size_t L = b - a;
	double *w = malloc(L * sizeof(double)), r[P + 1], A[P + 1] = {1}, tmp[P + 1];
	for (size_t i = 0; i < L; i++)
		w[i] = x[a + i] * (0.5 - 0.5 * cos(2 * M_PI * (double)i / (double)(L - 1)));
	for (int k = 0; k <= P; k++) {
		r[k] = 0;
		for (size_t i = (size_t)k; i < L; i++)
			r[k] += w[i] * w[i - (size_t)k];
	}
	double e = r[0];
	for (int i = 1; i <= P; i++) { /* Levinson-Durbin */
		double acc = r[i];
		for (int j = 1; j < i; j++)
			acc += A[j] * r[i - j];
		double kk = -acc / e;
		for (int j = 0; j <= i; j++)
			tmp[j] = A[j];
		for (int j = 1; j < i; j++)
			A[j] = tmp[j] + kk * tmp[i - j];
		A[i] = kk;
		e *= 1 - kk * kk;
	}
	double best = -1, bf = 0;
	for (double f = lo; f <= hi; f += 5) {
		double re = 0, im = 0;
		for (int j = 0; j <= P; j++) {
			re += A[j] * cos(2 * M_PI * f * j / RATE);
			im -= A[j] * sin(2 * M_PI * f * j / RATE);
		}
		double g = 1 / (re * re + im * im);
		if (g > best) {
			best = g;
			bf = f;
		}
	}
	free(w);
	return bf;
}

/* (c) formants stay while the F0 moves; resampling (the same F0 change by
 * playing faster) would move them by the same 26% / -25% */
static void test_pshift_formants(void)
{
	size_t n = (size_t)(1.6 * RATE);
	float *x = vowel(n, f0_120, 0.2, 1.4);
	size_t a = (size_t)(0.4 * RATE), b = (size_t)(1.2 * RATE);
	double F1 = lpc_peak(x, a, b, 400, 950), F2 = lpc_peak(x, a, b, 950, 1800);
	printf("#   input LPC peaks %g Hz, %g Hz (formants 700, 1200)\n", F1, F2);
	CHECK(fabs(F1 - 700) < 50 && fabs(F2 - 1200) < 60);
	const double semis[] = {4, -5};
	for (int k = 0; k < 2; k++) {
		float *y = shift(x, n, semis[k], 1);
		if (!y)
			continue;
		double G1 = lpc_peak(y, a, b, 400, 950), G2 = lpc_peak(y, a, b, 950, 1800);
		printf("#   %+g semitones: LPC peaks %g Hz, %g Hz (resampling: %.0f, %.0f)\n",
		       semis[k], G1, G2, F1 * pow(2, semis[k] / 12), F2 * pow(2, semis[k] / 12));
		CHECK(fabs(G1 / F1 - 1) < 0.06);
		CHECK(fabs(G2 / F2 - 1) < 0.06);
		free(y);
	}
	free(x);
}

/* (d) S = 0, R = 1: the grains go back to their own marks */
static void test_pshift_identity(void)
{
	size_t n = (size_t)(1.6 * RATE);
	float *x = vowel(n, f0_glide, 0.2, 1.4);
	float *y = shift(x, n, 0, 1);
	double sx = 0, se = 0;
	for (size_t i = 0; y && i < n; i++) {
		sx += (double)x[i] * x[i];
		se += ((double)y[i] - x[i]) * ((double)y[i] - x[i]);
	}
	double snr = se > 0 ? 10 * log10(sx / se) : INFINITY;
	printf("#   identity SNR %.1f dB\n", snr);
	CHECK(snr > 120); /* float rounding of the window sum only */
	free(y);
	/* noise (no voiced frame) comes back unchanged whatever the shift */
	uint64_t st = 12345;
	for (size_t i = 0; i < n; i++) {
		st = st * 6364136223846793005ULL + 1442695040888963407ULL;
		x[i] = (float)((double)(st >> 11) / 9007199254740992.0 * 2000 - 1000);
	}
	y = shift(x, n, 7, 1);
	size_t diff = 0;
	for (size_t i = 0; y && i < n; i++)
		diff += y[i] != x[i];
	CHECK(y && diff == 0);
	free(y);
	free(x);
}

/* mean and std of log F0 of p on the frames voiced in both p and q */
static void logf0_stats(const struct vpa_pitch *p, const struct vpa_pitch *q, double *mean,
			double *sd)
{
	double m = 0, s = 0;
	size_t k = 0;
	for (size_t t = 0; t < p->n; t++)
		if (p->voiced[t] && q->voiced[t]) {
			m += log(p->f0[t]);
			k++;
		}
	m /= (double)k;
	for (size_t t = 0; t < p->n; t++)
		if (p->voiced[t] && q->voiced[t])
			s += (log(p->f0[t]) - m) * (log(p->f0[t]) - m);
	*mean = m;
	*sd = sqrt(s / (double)k);
}

/* (e) a 100 -> 140 Hz glide: the std of log F0 scales by R, the mean moves by S */
static void test_pshift_sigma(void)
{
	size_t n = (size_t)(1.6 * RATE);
	float *x = vowel(n, f0_glide, 0.2, 1.4);
	struct vpa_pitch px;
	track(x, n, &px);
	const double R[] = {0.5, 2, 0}, S[] = {0, 0, 3};
	for (int k = 0; k < 3; k++) {
		float *y = shift(x, n, S[k], R[k]);
		if (!y)
			continue;
		struct vpa_pitch p;
		track(y, n, &p);
		/* on the frames voiced in both (rho_F0's convention); voicing
		 * itself is kept but for a frame or two at the edges */
		double m0, sd0, m, sd;
		logf0_stats(&px, &p, &m0, &sd0);
		logf0_stats(&p, &px, &m, &sd);
		size_t only = 0;
		for (size_t t = 0; t < p.n; t++)
			only += p.voiced[t] != px.voiced[t];
		double dmu = m - m0;
		printf("#   R %g, S %g: std log F0 %.4f (input %.4f, ratio %.3f), mean moved %.4f "
		       "(want %.4f), %zu frames voiced in one only\n", R[k], S[k], sd, sd0, sd / sd0,
		       dmu, S[k] * M_LN2 / 12, only);
		CHECK(only <= 3);
		if (R[k] > 0)
			CHECK(fabs(sd / sd0 / R[k] - 1) < 0.05);
		else
			CHECK(sd / sd0 < 0.05); /* flattened to a monotone */
		CHECK(fabs(dmu - S[k] * M_LN2 / 12) < 0.01);
		vpa_pitch_release(&p);
		free(y);
	}
	vpa_pitch_release(&px);
	free(x);
}

/* (f) bad input: one message, no output */
static void test_pshift_bad(void)
{
	float x[1000] = {0};
	struct vpa_pshift_opts o;
	vpa_pshift_opts_init(&o);
	float *y = (float *)1;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_pshift(x, 900, RATE, &o, &y, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "signal of 900 samples is shorter than the pitch tracker's frame of 907 "
			   "samples");
	CHECK(y == NULL);
	o.semitones = 24.5;
	vpa_err_init(&err);
	CHECK(vpa_pshift(x, 1000, RATE, &o, &y, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "semitones must be in [-24, 24], got 24.5");
	o.semitones = NAN;
	vpa_err_init(&err);
	CHECK(vpa_pshift(x, 1000, RATE, &o, &y, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "semitones must be in [-24, 24], got nan");
	o.semitones = -3;
	o.sigma_ratio = -1;
	vpa_err_init(&err);
	CHECK(vpa_pshift(x, 1000, RATE, &o, &y, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "sigma ratio must be in [0, 4], got -1");
	o.sigma_ratio = 1;
	o.dilate = 11;
	vpa_err_init(&err);
	CHECK(vpa_pshift(x, 1000, RATE, &o, &y, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "voicing dilation must be in [0, 10] frames, got 11");
	CHECK(y == NULL);
}

/*
 * The NumPy transcription of the definition (tests/golden/pshift/gen_pshift.py,
 * its own F0 track): vpa_pshift_track sample for sample.  Measured: the same
 * pitch marks, largest difference below 0.01 (of 10^4: float rounding).
 */
static void test_pshift_golden(void)
{
	const char *dir = "tests/golden/pshift/";
	char path[256];
	struct vpa_npy x, f0, g;
	struct vpa_err err;
	vpa_err_init(&err);
	snprintf(path, sizeof path, "%sx.npy", dir);
	CHECK(vpa_npy_read(path, &x, &err) == 0);
	snprintf(path, sizeof path, "%sf0.npy", dir);
	CHECK(vpa_npy_read(path, &f0, &err) == 0);
	snprintf(path, sizeof path, "%scases.txt", dir);
	FILE *f = fopen(path, "r");
	CHECK(f != NULL);
	if (!f || !x.data || !f0.data)
		return;
	size_t n = x.shape[0];
	float *xf = malloc(n * sizeof(float));
	for (size_t i = 0; i < n; i++)
		xf[i] = (float)x.data[i];
	struct vpa_pitch p;
	p.n = f0.shape[0];
	p.f0 = malloc(p.n * sizeof(float));
	p.voiced = malloc(p.n);
	for (size_t t = 0; t < p.n; t++) {
		p.f0[t] = (float)f0.data[t];
		p.voiced[t] = f0.data[t] > 0;
	}
	char name[64];
	double S, R;
	int cases = 0;
	while (fscanf(f, "%63s %lf %lf", name, &S, &R) == 3) {
		cases++;
		snprintf(path, sizeof path, "%s%s.npy", dir, name);
		CHECK(vpa_npy_read(path, &g, &err) == 0);
		struct vpa_pshift_opts o;
		vpa_pshift_opts_init(&o);
		o.semitones = S;
		o.sigma_ratio = R;
		float *y = NULL;
		CHECK(vpa_pshift_track(xf, n, RATE, &o, &p, &y, &err) == 0);
		double md = 0, mx = 0;
		for (size_t i = 0; y && g.data && i < n; i++) {
			md = fmax(md, fabs(y[i] - g.data[i]));
			mx = fmax(mx, fabs(g.data[i]));
		}
		printf("#   golden %s (S %g, R %g): max |C - NumPy| %.3g (max |y| %.0f)\n", name, S,
		       R, md, mx);
		CHECK(y && g.data && g.shape[0] == n);
		CHECK(md < 0.01);
		CHECK(mx > 5000);
		free(y);
		vpa_npy_release(&g);
	}
	CHECK(cases == 4);
	fclose(f);
	/* a track of the wrong length */
	p.n--;
	float *y = NULL;
	vpa_err_init(&err);
	struct vpa_pshift_opts o;
	vpa_pshift_opts_init(&o);
	CHECK(vpa_pshift_track(xf, n, RATE, &o, &p, &y, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "pitch track of 44 frames for a signal of 45 frames");
	free(p.voiced);
	free(p.f0);
	free(xf);
	vpa_npy_release(&f0);
	vpa_npy_release(&x);
}

int main(void)
{
	RUN(test_pshift_golden);
	RUN(test_pshift_f0);
	RUN(test_pshift_speech);
	RUN(test_pshift_duration);
	RUN(test_pshift_formants);
	RUN(test_pshift_identity);
	RUN(test_pshift_sigma);
	RUN(test_pshift_bad);
	return DONE();
}
