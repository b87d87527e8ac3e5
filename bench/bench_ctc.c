/*
 * bench/bench_ctc.c - the vpaudit side of bench/ctc.sh (issue 30): the ONNX
 * CTC recogniser (asr/ctc.c) on the wav2vec2-base-architecture export that
 * bench/ctc_torch.py writes into DIR.
 *
 *   build/bench/bench_ctc DIR THREADS ROUNDS [features]
 *
 * features: the model takes vpaudit's fbank (80 bins) as (1, T, 80) (the
 * Conformer of ctc_torch.py --arch conformer) instead of the waveform.
 * First checks the export against PyTorch: every utterance's logits (max
 * |difference| printed) and the greedy transcripts (equal or not, and how
 * many frames have a winner closer to the runner-up than that difference,
 * where rounding may flip a token).  Then times ROUNDS passes of
 * vpa_ctc_transcribe_datadir_with over DIR/data (utterances shared over
 * THREADS threads, each in one pass, as `vpaudit asr --onnx` runs) and
 * prints "vpaudit THREADS RTF" (wall seconds / audio seconds, the best
 * round).  Exit 1 when the logits differ by more than 1e-3 or a transcript
 * differs where no frame is ambiguous.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "asr/ctc.h"
#include "base/la.h"
#include "formats/io.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static char *slurp(const char *path)
{
	char *d = NULL;
	size_t n;
	struct vpa_err err;
	vpa_err_init(&err);
	return vpa_read_file(path, &d, &n, &err) ? NULL : d;
}

int main(int argc, char **argv)
{
	if (argc != 4 && !(argc == 5 && !strcmp(argv[4], "features"))) {
		fprintf(stderr, "usage: bench_ctc DIR THREADS ROUNDS [features] (run by bench/ctc.sh)\n");
		return 2;
	}
	const char *dir = argv[1];
	int threads = atoi(argv[2]), rounds = atoi(argv[3]);
	char model[512], tokens[512], data[512], out[512], ref[512];
	snprintf(model, sizeof(model), "%s/w2v_base.onnx", dir);
	snprintf(tokens, sizeof(tokens), "%s/tokens.txt", dir);
	snprintf(data, sizeof(data), "%s/data", dir);
	snprintf(out, sizeof(out), "%s/hyp_vpaudit.txt", dir);
	snprintf(ref, sizeof(ref), "%s/hyp.txt", dir);
	struct vpa_ctc_opts o;
	vpa_ctc_opts_init(&o);
	o.model = model;
	o.tokens = tokens;
	o.threads = threads;
	struct vpa_err err;
	vpa_err_init(&err);
	if (argc == 5) {
		o.input = VPA_CTC_FEATURES;
		vpa_feat_opts_set(&o.feat, "num-mel-bins", "80", &err);
	}
	struct vpa_ctc *c;
	double t0 = now();
	if (vpa_ctc_new(&o, &c, &err)) {
		fprintf(stderr, "bench_ctc: %s\n", err.msg);
		return 1;
	}
	double t_load = now() - t0;
	struct vpa_datadir d;
	vpa_datadir_init(&d);
	if (vpa_datadir_open(&d, data, -1, &err)) {
		fprintf(stderr, "bench_ctc: %s\n", err.msg);
		return 1;
	}
	double worst = 0, audio = 0;
	size_t ambiguous = 0, frames = 0;
	int bad = 0;
	for (size_t i = 0; i < d.n_utt; i++) {
		struct vpa_wave w;
		vpa_wave_init(&w);
		float *x;
		size_t T;
		char *text;
		if (vpa_datadir_load(&d, i, &w, NULL, &err) ||
		    vpa_ctc_wave(c, d.utt[i], &w, &x, &T, &text, &err)) {
			fprintf(stderr, "bench_ctc: %s\n", err.msg);
			return 1;
		}
		audio += (double)w.n / w.rate;
		char g[600];
		snprintf(g, sizeof(g), "%s/logits_%s.npy", dir, d.utt[i]);
		struct vpa_npy_nd a;
		size_t V = vpa_ctc_n_tokens(c);
		if (vpa_npy_read_nd(g, &a, &err) || a.ndim != 2 || a.shape[0] != T || a.shape[1] != V) {
			fprintf(stderr, "bench_ctc: %s: not (%zu, %zu) float32 %s\n", g, T, V, err.msg);
			return 1;
		}
		const float *p = a.data;
		double m = 0;
		for (size_t k = 0; k < T * V; k++)
			m = fmax(m, fabs((double)x[k] - p[k]));
		worst = fmax(worst, m);
		/* frames whose PyTorch winner leads the runner-up by less than 2 m */
		for (size_t t = 0; t < T; t++) {
			float b1 = -INFINITY, b2 = -INFINITY;
			for (size_t v = 0; v < V; v++) {
				float s = p[t * V + v];
				if (s > b1) {
					b2 = b1;
					b1 = s;
				} else if (s > b2) {
					b2 = s;
				}
			}
			ambiguous += (double)(b1 - b2) <= 2 * m;
		}
		frames += T;
		vpa_npy_nd_release(&a);
		free(x);
		free(text);
		vpa_wave_release(&w);
	}
	vpa_datadir_release(&d);
	/* the whole data directory's text, as the CLI writes it */
	if (vpa_ctc_transcribe_datadir_with(c, &o, data, out, &err)) {
		fprintf(stderr, "bench_ctc: %s\n", err.msg);
		return 1;
	}
	char *a = slurp(out), *b = slurp(ref);
	int same = a && b && !strcmp(a, b);
	free(a);
	free(b);
	/* the kernel OpenBLAS runs decides the SGEMM speed (OPENBLAS_CORETYPE) */
	printf("check: %zu frames, max |logit - PyTorch| %.3g, transcripts %s PyTorch's greedy decode (%zu ambiguous frames); load %.2f s; OpenBLAS kernel %s\n",
	       frames, worst, same ? "equal to" : "DIFFER from", ambiguous, t_load, vpa_la_blas_kernel());
	if (worst > 1e-3 || (!same && ambiguous == 0))
		bad = 1;
	double best = INFINITY;
	for (int r = 0; r < rounds; r++) {
		t0 = now();
		if (vpa_ctc_transcribe_datadir_with(c, &o, data, out, &err)) {
			fprintf(stderr, "bench_ctc: %s\n", err.msg);
			return 1;
		}
		best = fmin(best, now() - t0);
	}
	printf("vpaudit %d %.5f\n", threads, best / audio);
	vpa_ctc_free(c);
	return bad;
}
