/*
 * bench/bench_extractor_io.c - what reusing a saved extractor saves (issue 31
 * item 9): training ASV_eval (the baseline, measured in the same run) against
 * saving it (the model folder and model.onnx), loading it back and embedding
 * with it, for the x-vector (H = 128) and the ECAPA-TDNN (C = 64, s = 4), the
 * `extractor:` defaults, on bench_ecapa.c's data (60 synthetic "speakers" x 8
 * utterances of 150-400 frames of 40 features), E = 64, 3 epochs (the
 * defaults train 30: the saving grows with them).  Wall times; training on one
 * thread as the run trains.  Also checks that the reloaded extractor's
 * embeddings are bit-equal to the trained one's (else exit 1).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audio/xvector_io.h"
#include "base/base.h"
#include "targets/anon_extractor_io.h"

enum { DIM = 40, PHONES = 10, SPK = 60, UTTS = 8, N = SPK * UTTS, EPOCHS = 3 };

static void make_corpus(struct vpa_fmat *f, uint32_t *lab)
{
	struct vpa_rng r;
	vpa_rng_seed(&r, 7);
	float P[PHONES * DIM];
	for (int i = 0; i < PHONES * DIM; i++)
		P[i] = (float)(1.5 * vpa_rng_normal(&r));
	for (int s = 0; s < SPK; s++) {
		float gain[DIM], mu[DIM];
		for (int d = 0; d < DIM; d++) {
			gain[d] = (float)(0.3 + 1.4 * vpa_rng_uniform(&r));
			mu[d] = (float)(0.1 * vpa_rng_normal(&r));
		}
		for (int u = 0; u < UTTS; u++) {
			struct vpa_fmat *m = &f[s * UTTS + u];
			size_t T = 150 + (size_t)vpa_rng_below(&r, 251);
			vpa_fmat_init(m);
			m->rows = T;
			m->cols = DIM;
			m->x = xmalloc(T * DIM * sizeof(float));
			lab[s * UTTS + u] = (uint32_t)s;
			size_t t = 0;
			while (t < T) {
				size_t q = (size_t)vpa_rng_below(&r, PHONES);
				size_t len = 5 + (size_t)vpa_rng_below(&r, 11);
				for (size_t k = 0; k < len && t < T; k++, t++)
					for (int d = 0; d < DIM; d++)
						m->x[t * DIM + d] = gain[d] * P[q * DIM + d] + mu[d] +
								    (float)(0.3 * vpa_rng_normal(&r));
			}
		}
	}
}

static void die(const struct vpa_err *err)
{
	fprintf(stderr, "bench_extractor_io: %s\n", err->msg);
	exit(1);
}

static void one(const struct vpa_fmat *f, const uint32_t *lab, int arch, const char *dir)
{
	struct vpa_xvec_opts o;
	vpa_xvec_opts_init(&o);
	o.arch = arch;
	o.epochs = EPOCHS;
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_xvec x, y;
	double w0 = vpa_now();
	if (vpa_xvec_train(f, lab, N, SPK, &o, NULL, &x, &err))
		die(&err);
	double t_train = vpa_now() - w0;
	struct vpa_xvec_meta m;
	vpa_xvec_meta_init(&m);
	snprintf(m.role, sizeof(m.role), "asv_eval");
	m.hidden = o.hidden;
	snprintf(m.features, sizeof(m.features), "fbank");
	m.num_mel_bins = DIM;
	snprintf(m.cmvn, sizeof(m.cmvn), "utt");
	m.vad = 1;
	m.sample_frequency = 16000;
	m.frame_length = 25;
	m.frame_shift = 10;
	snprintf(m.loss, sizeof(m.loss), "aam");
	m.epochs = EPOCHS;
	w0 = vpa_now();
	if (vpa_xvec_save(&x, &m, dir, &err))
		die(&err);
	double t_save = vpa_now() - w0;
	char onnx[600];
	snprintf(onnx, sizeof(onnx), "%s/model.onnx", dir);
	w0 = vpa_now();
	if (vpa_anon_extractor_onnx(&x, &m, onnx, &err))
		die(&err);
	double t_onnx = vpa_now() - w0;
	w0 = vpa_now();
	if (vpa_xvec_load(dir, &y, NULL, &err))
		die(&err);
	double t_load = vpa_now() - w0;
	float *e1 = xmalloc(N * x.emb_dim * sizeof(float)), *e2 = xmalloc(N * x.emb_dim * sizeof(float));
	w0 = vpa_now();
	if (vpa_xvec_embed(&y, f, NULL, N, 1, e2, &err))
		die(&err);
	double t_embed = vpa_now() - w0;
	if (vpa_xvec_embed(&x, f, NULL, N, 1, e1, &err))
		die(&err);
	if (memcmp(e1, e2, N * x.emb_dim * sizeof(float))) {
		fprintf(stderr, "bench_extractor_io: the reloaded %s embeds differently\n",
			vpa_xvec_arch_name(arch));
		exit(1);
	}
	printf("%-8s train %d epochs %8.3f s (baseline)  save %.4f s  onnx %.4f s  load %.4f s  "
	       "embed %d utts %.3f s\n",
	       vpa_xvec_arch_name(arch), EPOCHS, t_train, t_save, t_onnx, t_load, N, t_embed);
	printf("ratio: load / train = %.5f (load / one epoch = %.4f); reloaded embeddings "
	       "bit-equal\n",
	       t_load / t_train, t_load / (t_train / EPOCHS));
	free(e1);
	free(e2);
	vpa_xvec_release(&x);
	vpa_xvec_release(&y);
}

int main(void)
{
	static struct vpa_fmat f[N];
	static uint32_t lab[N];
	make_corpus(f, lab);
	char tmp[] = "/tmp/vpa-bench-extio-XXXXXX";
	if (!mkdtemp(tmp))
		return 1;
	char d1[64], d2[64];
	snprintf(d1, sizeof(d1), "%s/xvector", tmp);
	snprintf(d2, sizeof(d2), "%s/ecapa", tmp);
	one(f, lab, VPA_XVEC_TDNN, d1);
	one(f, lab, VPA_XVEC_ECAPA, d2);
	vpa_rm_tree(tmp);
	for (int i = 0; i < N; i++)
		vpa_fmat_release(&f[i]);
	return 0;
}
