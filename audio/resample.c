/*
 * audio/resample.c - sample-rate conversion with libsoxr (Debian libsoxr0),
 * the library by the author of SoX's `rate` effect, so that a wav.scp line
 * `sox F -t wav -r 16000 - |` gives what sox itself would give.
 *
 * Why these settings (determinism is the point, not speed):
 * - Quality SOXR_HQ (20-bit precision, linear phase, passband to 0.913 of
 *   the lower Nyquist, stopband from 1), sox's default `rate -h`.  With
 *   precision <= 20 and no SOXR_DOUBLE_PRECISION libsoxr 0.1.3 takes its
 *   single-precision engine "cr32s", whose SIMD is SSE (pffft) and which it
 *   selects on every x86-64 CPU (cpu_has_simd32() is constant true there):
 *   the same instructions, so the same bits, with or without AVX/AVX2/FMA.
 *   The double-precision engine would be "cr64s" (AVX) or "cr64" (scalar)
 *   depending on the CPU: bits would depend on the machine.
 * - One thread (soxr_runtime_spec(1)): libsoxr's OpenMP splits channels only,
 *   and we resample one channel, but a pinned count keeps it out of question.
 * - Float in, float out (no int16 output): libsoxr's TPDF dither, seeded by
 *   time(0), applies to int16 output only.
 * - libsoxr reads SOXR_USE_SIMD, SOXR_USE_SIMD32/64, SOXR_COEF_INTERP, the DFT
 *   and coefficient sizes and SOXR_NUM_THREADS from the environment in
 *   soxr_create; several change the arithmetic.  We refuse to run when one is
 *   set rather than produce numbers that depend on it.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <soxr.h>

#include "audio/audio.h"

static const char *const soxr_env[] = {
	"SOXR_USE_SIMD", "SOXR_USE_SIMD32", "SOXR_USE_SIMD64", "SOXR_COEF_INTERP",
	"SOXR_MIN_DFT_SIZE", "SOXR_LARGE_DFT_SIZE", "SOXR_COEFS_SIZE", "SOXR_NUM_THREADS",
	"SOXR_STRICT_BUF", "SOXR_NOSMALLINTOPT", NULL,
};

static atomic_ulong n_resampled;

unsigned long vpa_resample_count(void)
{
	return atomic_load(&n_resampled);
}

const char *vpa_resample_about(void)
{
	/* the headers' version: Debian's libsoxr-dev and libsoxr0 come from one source */
	return "libsoxr " SOXR_THIS_VERSION_STR ", HQ (20-bit), linear phase, single precision";
}

size_t vpa_resample_len(size_t n, double rin, double rout)
{
	/* sox's length: the input's duration at the new rate, rounded */
	return (size_t)llround((double)n * rout / rin);
}

int vpa_wave_resample(struct vpa_wave *w, double rate, const char *name, struct vpa_err *err)
{
	if (w->rate == rate)
		return 0;
	if (!(rate > 0) || !isfinite(rate) || !(w->rate > 0))
		VPA_BUG("resampling from %g to %g Hz", w->rate, rate);
	for (int i = 0; soxr_env[i]; i++)
		if (getenv(soxr_env[i]))
			return vpa_fail(err, VPA_EINPUT, NULL,
					"%s: the environment variable %s is set: it changes libsoxr's "
					"resampling arithmetic; unset it for reproducible results",
					name, soxr_env[i]);
	size_t n = vpa_resample_len(w->n, w->rate, rate);
	if (n == 0)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"%s: %zu samples at %g Hz give no sample at %g Hz", name, w->n, w->rate,
				rate);
	float *y = xmalloc(xmul(n, sizeof(float)));
	soxr_io_spec_t io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I);
	soxr_quality_spec_t q = soxr_quality_spec(SOXR_HQ, 0);
	soxr_runtime_spec_t rt = soxr_runtime_spec(1);
	size_t done = 0;
	soxr_error_t e = soxr_oneshot(w->rate, rate, 1, w->x, w->n, NULL, y, n, &done, &io, &q, &rt);
	if (e) {
		free(y);
		return vpa_fail(err, VPA_EINPUT, NULL, "%s: resampling from %g to %g Hz failed: %s",
				name, w->rate, rate, e);
	}
	if (done != n) { /* oneshot flushes: never seen; refused rather than padded */
		free(y);
		return vpa_fail(err, VPA_EINPUT, NULL,
				"%s: resampling from %g to %g Hz gave %zu samples, expected %zu", name,
				w->rate, rate, done, n);
	}
	for (size_t i = 0; i < n; i++)
		if (!isfinite(y[i])) {
			free(y);
			return vpa_fail(err, VPA_EINPUT, NULL,
					"%s: resampled sample %zu is not finite (samples far beyond full scale?)",
					name, i + 1);
		}
	free(w->x);
	w->x = y;
	w->n = n;
	w->rate = rate;
	atomic_fetch_add(&n_resampled, 1);
	return 0;
}
