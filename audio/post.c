/*
 * audio/post.c - after the features: Kaldi's compute-vad
 * (ivector/voice-activity-detection.cc), per-utterance CMVN (apply-cmvn with
 * the utterance's own stats) and apply-cmvn-sliding
 * (feat/feature-functions.cc SlidingWindowCmn), and the archive writer.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audio/audio.h"
#include "base/dist.h"

void vpa_fmat_init(struct vpa_fmat *m)
{
	memset(m, 0, sizeof(*m));
}

void vpa_fmat_release(struct vpa_fmat *m)
{
	free(m->x);
	vpa_fmat_init(m);
}

void vpa_fmat_pack(struct vpa_buf *b, const struct vpa_fmat *m)
{
	vpa_pack_u64(b, m->rows);
	vpa_pack_u64(b, m->cols);
	vpa_pack_f32s(b, m->x, m->rows * m->cols);
}

int vpa_fmat_unpack(const unsigned char **p, const unsigned char *end, struct vpa_fmat *m)
{
	uint64_t r, c;
	vpa_fmat_release(m);
	if (vpa_unpack_u64(p, end, &r) || vpa_unpack_u64(p, end, &c) ||
	    (c && r > (uint64_t)(end - *p) / c / sizeof(float)))
		return -1;
	m->rows = (size_t)r;
	m->cols = (size_t)c;
	if (r && c) {
		m->x = xmalloc(xmul(r * c, sizeof(float)));
		return vpa_unpack_f32s(p, end, m->x, r * c);
	}
	return 0;
}

void vpa_vad_compute(const float *e, size_t T, double thr, double mean_scale, int context,
		     double proportion, unsigned char *voiced)
{
	if (T == 0)
		return;
	/* Kaldi: BaseFloat threshold, Vector<BaseFloat>::Sum() */
	float threshold = (float)thr;
	if (mean_scale != 0) {
		double sum = 0;
		for (size_t t = 0; t < T; t++)
			sum += e[t];
		threshold += (float)(mean_scale * sum / (double)T);
	}
	for (size_t t = 0; t < T; t++) {
		long num = 0, den = 0;
		for (long u = (long)t - context; u <= (long)t + context; u++)
			if (u >= 0 && u < (long)T) {
				den++;
				if (e[u] > threshold)
					num++;
			}
		voiced[t] = (double)num >= (double)den * proportion;
	}
}

void vpa_cmvn_utt(float *x, size_t T, size_t dim, int norm_vars)
{
	if (T == 0)
		return;
	for (size_t d = 0; d < dim; d++) {
		double s = 0, ss = 0;
		for (size_t t = 0; t < T; t++) {
			s += x[t * dim + d];
			ss += (double)x[t * dim + d] * x[t * dim + d];
		}
		double mean = s / (double)T, scale = 1, offset = -mean;
		if (norm_vars) {
			double var = ss / (double)T - mean * mean;
			if (var < 1e-20)
				var = 1e-20;
			scale = 1 / sqrt(var);
			offset = -mean * scale;
		}
		for (size_t t = 0; t < T; t++)
			x[t * dim + d] = (float)(x[t * dim + d] * scale + offset);
	}
}

void vpa_cmvn_sliding(float *x, size_t T, size_t dim, int cmn_window, int min_window, int center,
		      int norm_vars)
{
	if (T == 0)
		return;
	double *sum = xcalloc(dim, sizeof(double)), *sumsq = xcalloc(dim, sizeof(double));
	float *in = xmalloc(xmul(xmul(T, dim), sizeof(float))); /* the input, unchanged */
	memcpy(in, x, T * dim * sizeof(float));
	long N = (long)T, last_s = -1, last_e = -1;
	for (long t = 0; t < N; t++) {
		long s, e;
		if (center) {
			s = t - cmn_window / 2;
			e = s + cmn_window;
		} else {
			s = t - cmn_window;
			e = t + 1;
		}
		if (s < 0) {
			e -= s;
			s = 0;
		}
		if (!center && e < min_window)
			e = min_window;
		if (e > N) {
			s -= e - N;
			e = N;
			if (s < 0)
				s = 0;
		}
		if (last_s < 0) {
			for (long u = s; u < e; u++)
				for (size_t d = 0; d < dim; d++) {
					double v = in[u * (long)dim + (long)d];
					sum[d] += v;
					sumsq[d] += v * v;
				}
		} else {
			if (s > last_s)
				for (size_t d = 0; d < dim; d++) {
					double v = in[last_s * (long)dim + (long)d];
					sum[d] -= v;
					sumsq[d] -= v * v;
				}
			if (e > last_e)
				for (size_t d = 0; d < dim; d++) {
					double v = in[last_e * (long)dim + (long)d];
					sum[d] += v;
					sumsq[d] += v * v;
				}
		}
		long n = e - s;
		last_s = s;
		last_e = e;
		float *y = x + t * (long)dim;
		const float *xi = in + t * (long)dim;
		for (size_t d = 0; d < dim; d++) {
			double v = xi[d] - sum[d] / (double)n;
			if (norm_vars) {
				if (n == 1) {
					v = 0;
				} else {
					double var = sumsq[d] / (double)n - sum[d] * sum[d] / ((double)n * n);
					if (var < 1e-10)
						var = 1e-10;
					v /= sqrt(var);
				}
			}
			y[d] = (float)v;
		}
	}
	free(in);
	free(sum);
	free(sumsq);
}

void vpa_ark_write_fmat(FILE *f, const char *id, const struct vpa_fmat *m, int text)
{
	if (text) {
		fprintf(f, "%s  [", id);
		for (size_t r = 0; r < m->rows; r++) {
			fputs("\n  ", f);
			for (size_t c = 0; c < m->cols; c++)
				fprintf(f, "%.9g ", m->x[r * m->cols + c]);
		}
		fputs("]\n", f);
		return;
	}
	int32_t rows = (int32_t)m->rows, cols = (int32_t)m->cols;
	fprintf(f, "%s ", id);
	fwrite("\0BFM \4", 1, 6, f);
	fwrite(&rows, 4, 1, f);
	fputc(4, f);
	fwrite(&cols, 4, 1, f);
	if (m->rows)
		fwrite(m->x, sizeof(float), m->rows * m->cols, f);
}

void vpa_ark_write_fvec(FILE *f, const char *id, const float *v, size_t d, int text)
{
	if (text) {
		fprintf(f, "%s  [ ", id);
		for (size_t j = 0; j < d; j++)
			fprintf(f, "%.9g ", v[j]);
		fputs("]\n", f);
		return;
	}
	int32_t n = (int32_t)d;
	fprintf(f, "%s ", id);
	fwrite("\0BFV \4", 1, 6, f);
	fwrite(&n, 4, 1, f);
	if (d)
		fwrite(v, sizeof(float), d, f);
}
