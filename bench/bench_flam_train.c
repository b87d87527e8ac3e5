/*
 * bench/bench_flam_train.c - the acoustic models of `fl_acoustic_models`
 * trained from frames (issue 32: source audio; the simulator shares the code,
 * targets/fl_am_train.c): the global TDNN's training time per hour of audio
 * at 1 and 2 threads, and the personalisation of 100 speakers.
 *
 *   bench_flam_train                 both measurements, printed with ratios
 *   bench_flam_train dump DIR        the same frames as DIR/x.npy (float32 (N, 40)),
 *                                    DIR/y.npy (int64 labels), DIR/off.npy (int64
 *                                    utterance offsets) for bench/flam_torch.py
 *   bench_flam_train global THREADS  seconds of the global training alone (the C
 *                                    side of bench/flam_train.sh's PyTorch ratio)
 *
 * Frames: 400 utterances of 300 frames (120,000 frames, 1/3 hour at 10 ms),
 * 40-dim, 40 classes walked in segments of 3-8 frames, class mean plus unit
 * noise (what the network computes does not depend on the values).  The TDNN:
 * 4 hidden layers of 256 (contexts {-2..2}, {-1,0,1}, {-1,0,1}, {-3,0,3}),
 * Adam 2 epochs, mini-batches of 8 utterances.  Personalisation: 100 speakers
 * x 10 utterances of 300 frames, 2 epochs of SGD each.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/la.h"
#include "formats/io.h"
#include "targets/fl_am.h"

enum { D = 40, K = 40, T_UTT = 300, N_TRAIN = 400, N_SPK = 100, U_SPK = 10 };

static void gen(struct vpa_flam_uset *u, size_t n, uint64_t seed)
{
	struct vpa_rng r;
	vpa_rng_seed(&r, seed);
	u->n = n;
	u->off = xmalloc((n + 1) * sizeof(size_t));
	u->x = xmalloc(n * T_UTT * D * sizeof(float));
	u->lab = xmalloc(n * T_UTT * sizeof(uint32_t));
	u->off[0] = 0;
	for (size_t i = 0; i < n; i++) {
		u->off[i + 1] = u->off[i] + T_UTT;
		uint32_t c = (uint32_t)vpa_rng_below(&r, K);
		size_t left = 3 + vpa_rng_below(&r, 6);
		for (size_t t = u->off[i]; t < u->off[i + 1]; t++) {
			if (left-- == 0) {
				c = (uint32_t)vpa_rng_below(&r, K);
				left = 2 + vpa_rng_below(&r, 6);
			}
			u->lab[t] = c;
			for (size_t d = 0; d < D; d++)
				u->x[t * D + d] = (float)(((c * 7 + d * 13) % 11) * 0.3 +
							  vpa_rng_normal(&r));
		}
	}
}

static void adapt(void *arg, size_t spk, size_t which, struct vpa_rng *r,
		  struct vpa_flam_uset *u)
{
	(void)arg;
	(void)which;
	(void)r;
	gen(u, U_SPK, 1000 + spk);
}

/* One federation: global on N_TRAIN utterances; n_spk speakers personalised. */
static int run(int threads, size_t n_spk, double *t_global, double *t_pers)
{
	struct vpa_flam_fed f;
	struct vpa_flam t;
	struct vpa_err err;
	memset(&f, 0, sizeof(f));
	vpa_flam_init(&t);
	vpa_err_init(&err);
	f.in_dim = D;
	f.states = K;
	f.hidden_layers = 4;
	f.hidden_dim = 256;
	f.global_epochs = 2;
	f.batch = 8;
	f.adapt_epochs = 2;
	f.global_lr = 2e-3;
	f.adapt_lr = 0.02;
	f.dp_delta = 1e-5;
	f.seed = 7;
	f.threads = threads;
	f.stream = "bench";
	gen(&f.train, N_TRAIN, 1);
	f.n_part1 = n_spk / 2;
	f.n_part2 = n_spk - n_spk / 2;
	unsigned char *two = xcalloc(n_spk ? n_spk : 1, 1);
	f.two = two;
	f.spk_id = xcalloc(n_spk ? n_spk : 1, sizeof(char *));
	f.heldout = xcalloc(n_spk ? n_spk : 1, sizeof(*f.heldout));
	for (size_t s = 0; s < n_spk; s++) {
		char id[32];
		snprintf(id, sizeof(id), "s%03zu", s);
		f.spk_id[s] = xstrdup(id);
		gen(&f.heldout[s], 1, 5000 + s);
	}
	f.adapt = adapt;
	gen(&f.indicator, 2, 99);
	f.ind_utt_id = xcalloc(3, sizeof(char *));
	f.ind_utt_id[0] = xstrdup("i1");
	f.ind_utt_id[1] = xstrdup("i2");
	vpa_la_set_threads(threads);
	int rc = vpa_flam_federate(&f, &t, &err);
	if (rc)
		fprintf(stderr, "bench_flam_train: %s\n", err.msg);
	*t_global = f.t_global;
	*t_pers = f.t_pers;
	vpa_flam_release(&t);
	free(f.heldout);
	free(two);
	return rc;
}

static int dump(const char *dir)
{
	struct vpa_flam_uset u;
	struct vpa_err err;
	vpa_err_init(&err);
	gen(&u, N_TRAIN, 1);
	size_t N = u.off[u.n];
	double *x = xmalloc(N * D * sizeof(double)), *y = xmalloc(N * sizeof(double)),
	       *o = xmalloc((u.n + 1) * sizeof(double));
	for (size_t i = 0; i < N * D; i++)
		x[i] = u.x[i];
	for (size_t i = 0; i < N; i++)
		y[i] = u.lab[i];
	for (size_t i = 0; i <= u.n; i++)
		o[i] = (double)u.off[i];
	char p[4096];
	size_t sx[2] = {N, D}, sy[1] = {N}, so[1] = {u.n + 1};
	int rc = 0;
	snprintf(p, sizeof(p), "%s/x.npy", dir);
	rc |= vpa_npy_write(p, x, 2, sx, &err);
	snprintf(p, sizeof(p), "%s/y.npy", dir);
	rc |= vpa_npy_write(p, y, 1, sy, &err);
	snprintf(p, sizeof(p), "%s/off.npy", dir);
	rc |= vpa_npy_write(p, o, 1, so, &err);
	free(x);
	free(y);
	free(o);
	vpa_flam_uset_release(&u);
	if (rc)
		fprintf(stderr, "bench_flam_train: %s\n", err.msg);
	return rc != 0;
}

int main(int argc, char **argv)
{
	const double hours = (double)N_TRAIN * T_UTT / 360000.0;
	if (argc == 3 && !strcmp(argv[1], "dump"))
		return dump(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "global")) {
		double tg, tp;
		if (run(atoi(argv[2]), 2, &tg, &tp))
			return 1;
		printf("%.3f\n", tg);
		return 0;
	}
	double g1, p1, g2, p2;
	if (run(1, N_SPK, &g1, &p1) || run(2, N_SPK, &g2, &p2))
		return 1;
	printf("global TDNN (4 x 256, 40 classes), 2 epochs on %.2f h of frames:\n", hours);
	printf("  1 thread  %7.2f s  = %6.1f s per hour of audio per epoch\n", g1, g1 / hours / 2);
	printf("  2 threads %7.2f s  = %6.1f s per hour of audio per epoch\n", g2, g2 / hours / 2);
	printf("  ratio 2 threads / 1: %.2fx faster\n", g1 / g2);
	printf("personalisation of %d speakers (%d x 3 s each, 2 epochs of SGD):\n", N_SPK, U_SPK);
	printf("  1 thread  %7.2f s, 2 threads %7.2f s: %.2fx\n", p1, p2, p1 / p2);
	return 0;
}
