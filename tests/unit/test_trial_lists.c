/*
 * tests/unit/test_trial_lists.c - VoicePrivacy's trial directories used as
 * one set (issue 17): vpa_datadir_merge (audio/datadir_merge.c) and the
 * per-gender record names of a list of trial directories or trials files
 * (vpa_anon_trials_name, targets/anon_gender.c).
 */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "audio/audio.h"
#include "scenarios/scenario.h"
#include "targets/anon.h"
#include "tests/unit/harness.h"

static char tmpdir[64];

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(p);
}

static char *tpath(const char *name)
{
	static char buf[8][256];
	static int k;
	k = (k + 1) % 8;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", tmpdir, name);
	return buf[k];
}

static void put(const char *dir, const char *file, const char *text)
{
	char p[512];
	mkdir(tpath(dir), 0777);
	snprintf(p, sizeof(p), "%s/%s/%s", tmpdir, dir, file);
	FILE *f = fopen(p, "w");
	fputs(text, f);
	fclose(f);
}

static char *slurp(const char *dir, const char *file)
{
	char p[512], *buf = NULL;
	size_t len;
	struct vpa_err err;
	vpa_err_init(&err);
	snprintf(p, sizeof(p), "%s/%s/%s", tmpdir, dir, file);
	if (vpa_read_file(p, &buf, &len, &err))
		return NULL;
	return buf;
}

#define WAV "tests/golden/audio/g16.wav"

/* Merge directories a, b (names under tmpdir) into out; the error message or "". */
static const char *merge2(const char *a, const char *b, const char *out, double *rate)
{
	static struct vpa_err err;
	char pa[256], pb[256], po[256];
	snprintf(pa, sizeof(pa), "%s/%s", tmpdir, a);
	snprintf(pb, sizeof(pb), "%s/%s", tmpdir, b);
	snprintf(po, sizeof(po), "%s/%s", tmpdir, out);
	const char *d[2] = {pa, pb};
	vpa_err_init(&err);
	if (!vpa_datadir_merge(d, 2, po, rate, &err))
		return "";
	/* the temporary folder's name varies: drop it */
	static char m[sizeof(err.msg)];
	size_t k = 0, tl = strlen(tmpdir);
	for (const char *p = err.msg; *p && k + 1 < sizeof(m);)
		if (!strncmp(p, tmpdir, tl) && p[tl] == '/')
			p += tl + 1;
		else
			m[k++] = *p++;
	m[k] = 0;
	return m;
}

static void test_merge_lists(void)
{
	put("fa", "wav.scp", "fa-u1 " WAV "\nfa-u2 sox " WAV " -t wav - |\n");
	put("fa", "utt2spk", "fa-u1 s1\nfa-u2 s1\n");
	put("fa", "spk2gender", "s1 f\n");
	put("fa", "text", "fa-u1 hello world\nfa-u2 good bye");
	put("fa", "utt2dur", "fa-u1 1.0\nfa-u2 1.0\n");
	put("fa", "trials", "s1 fa-u1 target\n");
	put("mb", "wav.scp", "mb-u1 " WAV "\n");
	put("mb", "utt2spk", "mb-u1 s2\n");
	put("mb", "spk2gender", "s2 m\n");
	put("mb", "text", "mb-u1 third one\n");
	double rate = 0;
	CHECK_STR(merge2("fa", "mb", "m1", &rate), "");
	CHECK(rate == 16000);
	char *s = slurp("m1", "wav.scp");
	CHECK_STR(s ? s : "", "fa-u1 " WAV "\nfa-u2 sox " WAV " -t wav - |\nmb-u1 " WAV "\n");
	free(s);
	s = slurp("m1", "utt2spk");
	CHECK_STR(s ? s : "", "fa-u1 s1\nfa-u2 s1\nmb-u1 s2\n");
	free(s);
	s = slurp("m1", "text"); /* a last line without newline gets one */
	CHECK_STR(s ? s : "", "fa-u1 hello world\nfa-u2 good bye\nmb-u1 third one\n");
	free(s);
	s = slurp("m1", "spk2gender");
	CHECK_STR(s ? s : "", "s1 f\ns2 m\n");
	free(s);
	/* utt2dur only in one: left out; trials are the caller's */
	CHECK(slurp("m1", "utt2dur") == NULL);
	CHECK(slurp("m1", "trials") == NULL);
	/* the merged directory reads as one */
	struct vpa_datadir d;
	struct vpa_err err;
	vpa_datadir_init(&d);
	vpa_err_init(&err);
	CHECK(vpa_datadir_open(&d, tpath("m1"), -1, &err) == 0);
	CHECK(d.n_utt == 3 && d.utt_spk && !strcmp(d.utt_spk[2], "s2"));
	vpa_datadir_release(&d);
	/* a speaker in both with the same gender is listed once */
	put("mc", "wav.scp", "mc-u1 " WAV "\n");
	put("mc", "utt2spk", "mc-u1 s1\n");
	put("mc", "spk2gender", "s1 f\n");
	put("mc", "text", "mc-u1 x\n");
	rate = 0;
	CHECK_STR(merge2("fa", "mc", "m2", &rate), "");
	s = slurp("m2", "spk2gender");
	CHECK_STR(s ? s : "", "s1 f\n");
	free(s);
}

static void test_merge_errors(void)
{
	double rate = 0;
	/* the same recording, the same utterance (segments), a gender conflict */
	put("ra", "wav.scp", "r1 " WAV "\n");
	put("rb", "wav.scp", "r0 " WAV "\nr1 " WAV "\n");
	CHECK_STR(merge2("ra", "rb", "o1", &rate), "rb/wav.scp:2: recording 'r1' is also in ra/wav.scp:1");
	put("sa", "wav.scp", "ra " WAV "\n");
	put("sa", "segments", "x1 ra 0 0.1\n");
	put("sb", "wav.scp", "rb " WAV "\n");
	put("sb", "segments", "x0 rb 0 0.1\nx1 rb 0.1 0.2\n");
	rate = 0;
	CHECK_STR(merge2("sa", "sb", "o2", &rate), "sb/segments:2: utterance 'x1' is also in sa/segments:1");
	rate = 0;
	CHECK_STR(merge2("sa", "ra", "o3", &rate), "ra has no segments file and sa has one (the directories merged as one set need the same lists)");
	put("ga", "wav.scp", "g1 " WAV "\n");
	put("ga", "utt2spk", "g1 s1\n");
	put("ga", "spk2gender", "s1 f\n");
	put("gb", "wav.scp", "g2 " WAV "\n");
	put("gb", "utt2spk", "g2 s1\n");
	put("gb", "spk2gender", "s1 m\n");
	rate = 0;
	CHECK_STR(merge2("ga", "gb", "o4", &rate), "gb/spk2gender:1: speaker 's1' is 'm' here and 'f' in ga/spk2gender:1");
	{ /* found while writing the merged copy: no partial copy is left (it held wav.scp, utt2spk) */
		char o4[256];
		struct stat st;
		snprintf(o4, sizeof(o4), "%s/o4", tmpdir);
		CHECK(stat(o4, &st) != 0);
	}
	/* text in one only */
	put("ta", "wav.scp", "t1 " WAV "\n");
	put("ta", "text", "t1 a b\n");
	put("tb", "wav.scp", "t2 " WAV "\n");
	rate = 0;
	CHECK_STR(merge2("ta", "tb", "o5", &rate), "tb has no text file and ta has one (the directories merged as one set need the same lists)");
	/* the rate asked for, and an unreadable recording, named by their wav.scp lines */
	put("rc", "wav.scp", "r2 " WAV "\n");
	rate = 8000;
	CHECK(strstr(merge2("ra", "rc", "o6", &rate), "ra/wav.scp:1: '" WAV "' is at 16000 Hz, expected 8000 Hz") != NULL);
	put("na", "wav.scp", "n1 " WAV "\nn2 nosuch.wav\n");
	rate = 0;
	CHECK_STR(merge2("na", "rc", "o7", &rate), "na/wav.scp:2: cannot open 'nosuch.wav': No such file or directory");
	/* the list checks of each directory name its own files */
	put("la", "wav.scp", "l1 " WAV "\n");
	put("la", "utt2spk", "l1 s1\nl9 s1\n");
	rate = 0;
	CHECK(strstr(merge2("ga", "la", "o8", &rate), "la/utt2spk:2") != NULL);
	/* nothing is written on an error; an existing output folder is refused */
	struct stat st;
	CHECK(stat(tpath("o1"), &st) != 0 && stat(tpath("o7"), &st) != 0);
	rate = 0;
	CHECK_STR(merge2("ra", "rc", "ta", &rate), "cannot make 'ta': File exists");
}

static char *name_of(const char *yaml)
{
	struct vpa_ynode *n = NULL;
	struct vpa_err err;
	vpa_err_init(&err);
	if (vpa_yaml_parse("cfg", yaml, strlen(yaml), &n, &err)) {
		printf("# %s\n", err.msg);
		return xstrdup("?");
	}
	/* the options validation fills (config/schema.h "Typed options") */
	const struct vpa_schema *sch = vpa_target_kind_find("anonymised_speech")->schema;
	struct vpa_anon_opts *o = vpa_opts_new(sch, n);
	char *s = vpa_anon_trials_name(o);
	vpa_opts_free(sch, o);
	vpa_ynode_free(n);
	return s;
}

static void test_trials_names(void)
{
	static const char *const cases[][2] = {
		{"source: simulate", "trials"},
		{"source: audio\naudio: {trial: d/trial}", "trials"},
		{"source: audio\naudio: {trials: data/trial/trials_f}", "trials"},
		{"source: audio\naudio: {trials: data/trial/trials_m}", "trials"},
		{"source: audio\naudio: {trials: lists/libri_test_trials_m}", "libri_test_trials"},
		{"source: audio\naudio: {trials: data/libri_dev_trials_f/trials}", "libri_dev_trials"},
		{"source: audio\naudio: {trials: data/libri_dev_trials_f/trials/}", "libri_dev_trials"},
		{"source: audio\naudio: {trials: ./trials}", "trials"},
		{"source: audio\naudio: {trials: trials}", "trials"},
		{"source: audio\naudio: {trial: [a/libri_dev_trials_f, a/libri_dev_trials_m]}",
		 "libri_dev_trials"},
		{"source: audio\naudio: {trial: [a/libri_dev_trials_f/, b/libri_dev_trials_m//]}",
		 "libri_dev_trials"},
		{"source: audio\naudio: {trial: [vctk_dev_trials_f_common, vctk_dev_trials_m_common]}",
		 "vctk_dev_trials"},
		{"source: audio\naudio: {trial: [x/f, y/m]}", "trials"},
		{"source: audio\naudio: {trial: [libri_dev_trials_f, libri_dev_trials_m],"
		 " trials: [t/libri_test_trials_f/trials, t/libri_test_trials_m/trials]}",
		 "libri_test_trials"},
		{"source: import\nimport: {trials: my_list_f}", "my_list"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *s = name_of(cases[i][0]);
		if (strcmp(s, cases[i][1]))
			printf("#   case %zu: '%s', expected '%s'\n", i, s, cases[i][1]);
		CHECK_STR(s, cases[i][1]);
		free(s);
	}
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/vpa_lists_XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	RUN(test_merge_lists);
	RUN(test_merge_errors);
	RUN(test_trials_names);
	nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return DONE();
}
