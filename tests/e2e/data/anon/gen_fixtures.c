/*
 * tests/e2e/data/anon/gen_fixtures.c - makes the small embedding fixtures of
 * this folder (simulated x-vectors, d = 16, anonymised with the x-vector
 * anonymiser) in every import format: Kaldi text archives, Kaldi binary
 * archives (FV and DV), .npy float32 with a two-column id list and .npy
 * float64 with a one-column id list.  Not built by make; to regenerate:
 *
 *   cc -std=c11 -O2 -D_GNU_SOURCE -I. tests/e2e/data/anon/gen_fixtures.c build/libvpaudit.a \
 *      -llapacke -lopenblas -lm -lpthread -o /tmp/gen_fixtures
 *   (cd tests/e2e/data/anon && /tmp/gen_fixtures)
 */
#include "targets/anon.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE *open_w(const char *path)
{
	FILE *f = fopen(path, "wb");
	if (!f) {
		perror(path);
		exit(1);
	}
	return f;
}

static void text_ark(const struct vpa_embset *es, const char *path)
{
	struct vpa_err err;
	vpa_err_init(&err);
	if (vpa_embset_write_ark(es, path, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		exit(1);
	}
}

/* Kaldi binary archive: KEY ' ' "\0B" "FV "|"DV " '\4' int32 dim values */
static void bin_ark(const struct vpa_embset *es, const char *path, int dbl)
{
	FILE *f = open_w(path);
	for (size_t i = 0; i < es->n; i++) {
		int32_t d = (int32_t)es->d;
		fprintf(f, "%s ", es->utt[i]);
		fputc(0, f);
		fputc('B', f);
		fputs(dbl ? "DV " : "FV ", f);
		fputc(4, f);
		fwrite(&d, 4, 1, f);
		for (size_t j = 0; j < es->d; j++) {
			if (dbl) {
				fwrite(&es->x[i * es->d + j], 8, 1, f);
			} else {
				float v = (float)es->x[i * es->d + j];
				fwrite(&v, 4, 1, f);
			}
		}
	}
	fclose(f);
}

/* .npy version 1.0, '<f4' or '<f8', shape (n, d), C order */
static void npy(const struct vpa_embset *es, const char *path, int dbl)
{
	char hdr[128];
	int len = snprintf(hdr, sizeof(hdr), "{'descr': '%s', 'fortran_order': False, 'shape': (%zu, %zu), }",
			   dbl ? "<f8" : "<f4", es->n, es->d);
	int total = 10 + len + 1;
	int pad = (64 - total % 64) % 64;
	FILE *f = open_w(path);
	fwrite("\x93NUMPY\x01\x00", 1, 8, f);
	uint16_t hl = (uint16_t)(len + pad + 1);
	fwrite(&hl, 2, 1, f);
	fwrite(hdr, 1, (size_t)len, f);
	for (int i = 0; i < pad; i++)
		fputc(' ', f);
	fputc('\n', f);
	for (size_t i = 0; i < es->n * es->d; i++) {
		if (dbl) {
			fwrite(&es->x[i], 8, 1, f);
		} else {
			float v = (float)es->x[i];
			fwrite(&v, 4, 1, f);
		}
	}
	fclose(f);
}

static void ids(const struct vpa_embset *es, const char *path, int two_cols)
{
	FILE *f = open_w(path);
	for (size_t i = 0; i < es->n; i++)
		fprintf(f, two_cols ? "%s %s\n" : "%s\n", es->utt[i], es->spk_id[es->spk[i]]);
	fclose(f);
}

static void utt2spk(const struct vpa_embset *const *sets, size_t n, const char *path)
{
	FILE *f = open_w(path);
	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < sets[k]->n; i++)
			fprintf(f, "%s %s\n", sets[k]->utt[i], sets[k]->spk_id[sets[k]->spk[i]]);
	fclose(f);
}

static void spk2gender(const struct vpa_embset *es, const char *path, size_t skip)
{
	FILE *f = open_w(path);
	for (size_t s = 0; s < es->n_spk; s++)
		if (s + 1 != skip)
			fprintf(f, "%s %c\n", es->spk_id[s], es->gender[s]);
	fclose(f);
}

static void utt2dur(const struct vpa_embset *es, const char *path)
{
	FILE *f = open_w(path);
	for (size_t i = 0; i < es->n; i++)
		fprintf(f, "%s %.2f\n", es->utt[i], es->dur[i]);
	fclose(f);
}

static void split(const struct vpa_embset *test, size_t n_enr, size_t per, struct vpa_embset *enr,
		  struct vpa_embset *tri)
{
	size_t *a = malloc(test->n * sizeof(size_t)), *b = malloc(test->n * sizeof(size_t));
	size_t na = 0, nb = 0;
	for (size_t i = 0; i < test->n; i++) {
		if (i % per < n_enr)
			a[na++] = i;
		else
			b[nb++] = i;
	}
	vpa_embset_subset_rows(test, a, na, enr);
	vpa_embset_subset_rows(test, b, nb, tri);
	free(a);
	free(b);
}

static void anon(const struct vpa_anonymiser *an, const struct vpa_sim *sim,
		 const struct vpa_embset *src, const char *stream, const char *tag,
		 struct vpa_embset *out)
{
	struct vpa_anon_result r;
	struct vpa_err err;
	vpa_err_init(&err);
	if (vpa_anonymise(an, src, 5, stream, &r, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		exit(1);
	}
	vpa_sim_anon_set(sim, src, &r, 0, tag, out);
	vpa_anon_result_release(&r);
}

int main(void)
{
	struct vpa_sim_cfg c;
	vpa_sim_cfg_init(&c);
	c.dim = 16;
	c.spk_rank = 10;
	c.utt_rank = 6;
	c.synth_rank = 2;
	c.spk_scale = 1.0; /* well separated speakers: the baseline EER is low in d = 16 */
	c.spk_decay = 0.5;
	c.utt_scale = 0.3;
	c.noise = 0.1;
	struct vpa_sim *sim = vpa_sim_new(&c, 5);
	struct vpa_embset train, pool, test, enroll, trial, pop, tmp;
	vpa_embset_init(&train);
	vpa_embset_init(&pool);
	vpa_embset_init(&test);
	vpa_embset_init(&enroll);
	vpa_embset_init(&trial);
	vpa_embset_init(&pop);
	vpa_sim_make_set(sim, "train", 40, 6, &train);
	vpa_sim_make_set(sim, "pool", 60, 3, &pool);
	vpa_sim_make_set(sim, "test", 10, 11, &test);
	vpa_sim_make_set(sim, "pop", 30, 3, &pop);
	split(&test, 3, 11, &enroll, &trial);

	struct vpa_anon_cfg ac;
	vpa_anon_cfg_init(&ac);
	ac.proximity = VPA_ANON_RANDOM; /* the same pseudo-speaker for a speaker in every set */
	ac.n = 20;
	ac.n_star = 10;
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_anonymiser *an = vpa_anonymiser_new(&pool, &ac, &err);
	if (!an) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}

	text_ark(&train, "train.ark");
	const struct vpa_embset *tr1[1] = {&train};
	utt2spk(tr1, 1, "train.utt2spk");
	spk2gender(&train, "train.spk2gender", 0);
	vpa_embset_init(&tmp);
	anon(an, sim, &train, "attacker", "attacker", &tmp);
	bin_ark(&tmp, "train_anon.ark", 0); /* binary, float vectors */
	vpa_embset_release(&tmp);

	npy(&enroll, "enroll.npy", 0); /* float32 + `utt spk` ids */
	ids(&enroll, "enroll.ids", 1);
	vpa_embset_init(&tmp);
	anon(an, sim, &enroll, "attacker", "attacker", &tmp);
	npy(&tmp, "enroll_anon.npy", 1); /* float64 + one-column ids + utt2spk */
	ids(&tmp, "enroll_anon.ids", 0);
	vpa_embset_release(&tmp);
	vpa_embset_init(&tmp);
	anon(an, sim, &enroll, "user", "informed", &tmp);
	text_ark(&tmp, "enroll_informed.ark");
	vpa_embset_release(&tmp);

	text_ark(&trial, "trial.ark");
	const struct vpa_embset *te[2] = {&enroll, &trial};
	utt2spk(te, 2, "test.utt2spk");
	spk2gender(&test, "test.spk2gender", 0);
	spk2gender(&test, "test_partial.spk2gender", 3); /* the third speaker has no gender */
	utt2dur(&trial, "trial.utt2dur");
	struct vpa_anon_result ru;
	if (vpa_anonymise(an, &trial, 5, "user", &ru, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	vpa_embset_init(&tmp);
	vpa_sim_anon_set(sim, &trial, &ru, 0, "user", &tmp);
	bin_ark(&tmp, "trial_anon.ark", 1); /* binary, double vectors */
	vpa_embset_release(&tmp);
	/* 1- and 4-second slices of the trial utterances */
	for (int sec = 1; sec <= 4; sec *= 4) {
		char name[64];
		vpa_embset_init(&tmp);
		vpa_sim_remake(sim, &trial, sec, &tmp);
		snprintf(name, sizeof(name), "trial_%ds.ark", sec);
		text_ark(&tmp, name);
		vpa_embset_release(&tmp);
		vpa_embset_init(&tmp);
		vpa_sim_anon_set(sim, &trial, &ru, sec, "user", &tmp);
		snprintf(name, sizeof(name), "trial_anon_%ds.ark", sec);
		text_ark(&tmp, name);
		vpa_embset_release(&tmp);
	}
	vpa_anon_result_release(&ru);
	/* a trial_anon of another dimension (error case) */
	{
		FILE *f = open_w("trial_anon_d15.ark");
		for (size_t i = 0; i < trial.n; i++) {
			fprintf(f, "%s  [", trial.utt[i]);
			for (size_t j = 0; j < 15; j++)
				fprintf(f, " %.6g", trial.x[i * trial.d + j]);
			fprintf(f, " ]\n");
		}
		fclose(f);
	}

	text_ark(&pop, "pop.ark");
	const struct vpa_embset *p1[1] = {&pop};
	utt2spk(p1, 1, "pop.utt2spk");
	spk2gender(&pop, "pop.spk2gender", 0);
	vpa_embset_init(&tmp);
	anon(an, sim, &pop, "attacker", "attacker", &tmp);
	text_ark(&tmp, "pop_anon.ark");
	vpa_embset_release(&tmp);
	vpa_embset_init(&tmp);
	anon(an, sim, &pop, "user", "informed", &tmp);
	text_ark(&tmp, "pop_informed.ark");
	vpa_embset_release(&tmp);

	/* enrolls: the first two enrolment utterances of each speaker */
	FILE *f = open_w("enrolls");
	for (size_t i = 0; i < enroll.n; i++)
		if (i % 3 < 2)
			fprintf(f, "%s\n", enroll.utt[i]);
	fclose(f);
	/* trials: every enrolment speaker against every same-gender trial utterance */
	f = open_w("trials");
	FILE *fu = open_w("trials_unknown");
	for (size_t s = 0; s < enroll.n_spk; s++)
		for (size_t i = 0; i < trial.n; i++) {
			if (vpa_embset_utt_gender(&trial, i) != enroll.gender[s])
				continue;
			const char *ts = trial.spk_id[trial.spk[i]];
			const char *lab = strcmp(ts, enroll.spk_id[s]) ? "nontarget" : "target";
			fprintf(f, "%s %s %s\n", enroll.spk_id[s], trial.utt[i], lab);
			fprintf(fu, "%s %s %s\n", enroll.spk_id[s], trial.utt[i], lab);
		}
	fprintf(fu, "%s test-s0001-u999 target\n", enroll.spk_id[0]);
	fclose(f);
	fclose(fu);

	vpa_anonymiser_free(an);
	vpa_embset_release(&train);
	vpa_embset_release(&pool);
	vpa_embset_release(&test);
	vpa_embset_release(&enroll);
	vpa_embset_release(&trial);
	vpa_embset_release(&pop);
	vpa_sim_free(sim);
	return 0;
}
