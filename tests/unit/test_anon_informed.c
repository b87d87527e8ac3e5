/*
 * tests/unit/test_anon_informed.c - the informed attacker's enrolment from
 * audio (targets/anon_informed.c): at utterance level the j-th enrolment
 * utterance of a speaker gets exactly the McAdams coefficient the user's
 * draw gave the (j mod n)-th trial utterance of that speaker (read back from
 * the anon_coeffs files of vpa_anonymise_datadir), at speaker level the
 * speaker's own coefficient; an enrolment speaker without trials is an
 * error naming it, with nothing written.  Audio: tests/golden/audio/g16.wav.
 */
#include "harness.h"

#include "audio/anon.h"
#include "audio/anon_int.h"
#include "targets/anon_informed.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/vpa-informed-XXXXXX";

static char *tpath(const char *name)
{
	static char buf[8][1024];
	static int k;
	k = (k + 1) % 8;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", tmpdir, name);
	return buf[k];
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

/* A data directory DIR: utterance utt[i] of speaker spk[i], all g16.wav. */
static void make_dir(const char *dir, const char *const *utt, const char *const *spk, size_t n)
{
	char scp[4096] = "", u2s[4096] = "", line[512], cwd[256];
	if (!getcwd(cwd, sizeof(cwd)))
		strcpy(cwd, ".");
	mkdir(tpath(dir), 0755);
	for (size_t i = 0; i < n; i++) {
		snprintf(line, sizeof(line), "%s %s/tests/golden/audio/g16.wav\n", utt[i], cwd);
		strcat(scp, line);
		snprintf(line, sizeof(line), "%s %s\n", utt[i], spk[i]);
		strcat(u2s, line);
	}
	char p[600];
	snprintf(p, sizeof(p), "%s/wav.scp", dir);
	write_text(tpath(p), scp);
	snprintf(p, sizeof(p), "%s/utt2spk", dir);
	write_text(tpath(p), u2s);
}

/* The coefficient of utt in DIR/anon_coeffs, NAN when absent. */
static double coeff(const char *dir, const char *utt)
{
	char p[600], u[256];
	double c;
	snprintf(p, sizeof(p), "%s/anon_coeffs", dir);
	FILE *f = fopen(tpath(p), "r");
	double out = NAN;
	while (f && fscanf(f, "%255s %lf", u, &c) == 2)
		if (!strcmp(u, utt))
			out = c;
	if (f)
		fclose(f);
	return out;
}

static const char *const tu[] = {"a-t1", "a-t2", "b-t1", "a-t3"};
static const char *const ts[] = {"a", "a", "b", "a"};
static const char *const eu[] = {"a-e1", "b-e1", "a-e2", "a-e3", "a-e4", "b-e2"};
static const char *const es[] = {"a", "b", "a", "a", "a", "b"};

static void test_utterance_level(void)
{
	struct vpa_err err;
	vpa_err_init(&err);
	make_dir("trial", tu, ts, 4);
	make_dir("enroll", eu, es, 6);
	/* the user's anonymisation of the trials, seed 11, per utterance */
	struct vpa_anon_opts ao;
	vpa_anon_opts_init(&ao, VPA_ANON_MCADAMS);
	ao.level = VPA_SIGANON_UTTERANCE;
	ao.lo = 0.5;
	ao.hi = 0.9;
	ao.seed = 11;
	CHECK(vpa_anonymise_datadir(tpath("trial"), tpath("trial_anon"), &ao, 1, &err) == 0);
	CHECK(vpa_anon_audio_informed(tpath("enroll"), tpath("trial"), tpath("ei"), 0, 1, 0.5, 0.9,
				      11, 2, &err) == 0);
	if (err.status)
		printf("# %s\n", err.msg);
	/* a: trial utterances a-t1, a-t2, a-t3 in order; b: b-t1 */
	static const char *const want[6] = {"a-t1", "b-t1", "a-t2", "a-t3", "a-t1", "b-t1"};
	for (int i = 0; i < 6; i++) {
		double got = coeff("ei", eu[i]), exp = coeff("trial_anon", want[i]);
		CHECK(isfinite(got) && got == exp);
	}
	/* the trials' draws differ among themselves (else the check proves nothing) */
	CHECK(coeff("trial_anon", "a-t1") != coeff("trial_anon", "a-t2"));
}

static void test_speaker_level(void)
{
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_anon_opts ao;
	vpa_anon_opts_init(&ao, VPA_ANON_MCADAMS);
	ao.level = VPA_SIGANON_SPEAKER;
	ao.lo = 0.5;
	ao.hi = 0.9;
	ao.seed = 5;
	CHECK(vpa_anonymise_datadir(tpath("trial"), tpath("trial_spk"), &ao, 1, &err) == 0);
	CHECK(vpa_anon_audio_informed(tpath("enroll"), tpath("trial"), tpath("es"), 0, 0, 0.5, 0.9,
				      5, 1, &err) == 0);
	for (int i = 0; i < 6; i++)
		CHECK(coeff("es", eu[i]) == coeff("trial_spk", es[i][0] == 'a' ? "a-t1" : "b-t1"));
	CHECK(coeff("trial_spk", "a-t1") != coeff("trial_spk", "b-t1"));
}

static void test_speaker_without_trials(void)
{
	static const char *const u[] = {"c-e1"};
	static const char *const s[] = {"c"};
	struct vpa_err err;
	vpa_err_init(&err);
	make_dir("enroll_c", u, s, 1);
	CHECK(vpa_anon_audio_informed(tpath("enroll_c"), tpath("trial"), tpath("ec"), 0, 1, 0.5,
				      0.9, 11, 1, &err) == VPA_EINPUT);
	CHECK(strstr(err.msg, "enrolment speaker 'c' has no trial utterance") != NULL);
	struct stat st;
	CHECK(stat(tpath("ec"), &st) != 0);
}

int main(void)
{
	if (!mkdtemp(tmpdir))
		return 1;
	RUN(test_utterance_level);
	RUN(test_speaker_level);
	RUN(test_speaker_without_trials);
	vpa_rm_tree(tmpdir); /* only files these tests wrote */
	return DONE();
}
