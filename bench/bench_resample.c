/*
 * bench/bench_resample.c - issue 31: the cost of resampling (libsoxr, HQ,
 * audio/resample.c) against the cost of the features it feeds, measured in
 * the same run: 600 s of synthetic audio (a 100 Hz - rate/2 sweep plus a
 * tone; the content does not change libsoxr's work) at 44.1, 48, 22.05 and
 * 8 kHz to 16 kHz, one thread; the baseline is fbank (80 mel bins, Kaldi's
 * defaults) of the 600 s at 16 kHz, one thread.  Prints seconds and the
 * ratio resampling / fbank.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "audio/audio.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void make(struct vpa_wave *w, double rate, double secs)
{
	w->rate = rate;
	w->n = (size_t)(rate * secs);
	w->x = xmalloc(xmul(w->n, sizeof(float)));
	double ph = 0;
	for (size_t i = 0; i < w->n; i++) {
		double t = fmod((double)i / rate, 10.0); /* a 10 s sweep, repeated */
		double f = 100 + (rate / 2 - 200) * t / 10;
		ph += 2 * M_PI * f / rate;
		w->x[i] = (float)(8000 * sin(ph) + 4000 * sin(2 * M_PI * 440 * (double)i / rate));
	}
}

int main(void)
{
	const double secs = 600;
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_feat_opts o;
	vpa_feat_opts_init(&o, VPA_FEAT_FBANK);
	o.num_mel_bins = 80;
	struct vpa_feat *fe = vpa_feat_new(&o, &err);
	struct vpa_wave w;
	make(&w, 16000, secs);
	double t0 = now();
	struct vpa_fmat m;
	if (!fe || vpa_feat_apply(fe, &w, "b", &m, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	double tf = now() - t0;
	printf("%-48s %8.2f s\n", "baseline: fbank 80 bins, 600 s at 16 kHz", tf);
	vpa_fmat_release(&m);
	vpa_wave_release(&w);
	const double rates[] = {44100, 48000, 22050, 8000};
	for (size_t k = 0; k < 4; k++) {
		make(&w, rates[k], secs);
		t0 = now();
		if (vpa_wave_resample(&w, 16000, "bench", &err)) {
			fprintf(stderr, "%s\n", err.msg);
			return 1;
		}
		double tr = now() - t0;
		char label[64];
		snprintf(label, sizeof(label), "resample 600 s %g kHz -> 16 kHz", rates[k] / 1000);
		printf("%-48s %8.2f s  %6.0fx real time  ratio resample/fbank = %.3f\n", label, tr,
		       secs / tr, tr / tf);
		vpa_wave_release(&w);
	}
	vpa_feat_free(fe);
	return 0;
}
