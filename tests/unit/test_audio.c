/*
 * tests/unit/test_audio.c - audio/: features against torchaudio.compliance.kaldi
 * goldens (tests/golden/audio/, generator gen_features.py beside them), VAD and
 * CMVN against NumPy transcriptions of Kaldi's code, the reader on every
 * sample format and FLAC (written here with libsndfile), data directories,
 * pipe forms and segments, bad input.  Test audio is synthetic speech.
 */
#include <ftw.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include <sndfile.h>

#include "audio/audio.h"
#include "formats/kaldi.h"
#include "harness.h"

#define GOLD "tests/golden/audio/"

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

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

/* Find entry `key` of an archive. */
static long find(const struct vpa_kaldi_ark *a, const char *key)
{
	for (size_t i = 0; i < a->n; i++)
		if (!strcmp(a->e[i].key, key))
			return (long)i;
	return -1;
}

/* Parse "--name=value" tokens of a cases.txt line into o. */
static int set_opts(struct vpa_feat_opts *o, char *save)
{
	char *t;
	struct vpa_err err;
	while ((t = strtok_r(NULL, " \n", &save))) {
		char *eq = strchr(t, '=');
		*eq = 0;
		vpa_err_init(&err);
		if (vpa_feat_opts_set(o, t + 2, eq + 1, &err)) {
			printf("#   %s\n", err.msg);
			return 1;
		}
	}
	return 0;
}

/*
 * Tolerance: torchaudio works in float32 with other summation orders (and
 * torch's FFT); log mel energies of speech are 5..25, so 2e-3 absolute on
 * values of that size (1e-4 relative) is float noise, while any definition
 * change (window, mel edges, pre-emphasis, energy) moves values by > 1e-2.
 */
static void test_golden_features(void)
{
	struct vpa_kaldi_ark ark;
	struct vpa_err err;
	char *cases;
	size_t len;
	vpa_kaldi_ark_init(&ark);
	vpa_err_init(&err);
	CHECK(vpa_kaldi_read(GOLD "expected.ark", VPA_KALDI_ANY, &ark, &err) == 0);
	CHECK(vpa_read_file(GOLD "cases.txt", &cases, &len, &err) == 0);
	char *lsave = NULL;
	int n_cases = 0;
	for (char *line = strtok_r(cases, "\n", &lsave); line; line = strtok_r(NULL, "\n", &lsave)) {
		if (line[0] == '#')
			continue;
		char *save = NULL, *name = strtok_r(line, " ", &save), *src = strtok_r(NULL, " ", &save),
		     *kind = strtok_r(NULL, " ", &save);
		int is_feat = !strcmp(kind, "fbank") || !strcmp(kind, "mfcc");
		if (!is_feat)
			continue;
		struct vpa_feat_opts o;
		vpa_feat_opts_init(&o, !strcmp(kind, "mfcc") ? VPA_FEAT_MFCC : VPA_FEAT_FBANK);
		CHECK(set_opts(&o, save) == 0);
		long e = find(&ark, name);
		CHECK(e >= 0);
		if (e < 0)
			continue;
		char path[256];
		snprintf(path, sizeof(path), GOLD "%s", src);
		struct vpa_wave w;
		struct vpa_fmat m;
		vpa_wave_init(&w);
		vpa_fmat_init(&m);
		CHECK(vpa_audio_read(path, -1, &w, &err) == 0);
		struct vpa_feat *fe = vpa_feat_new(&o, &err);
		CHECK(fe != NULL);
		if (!fe) {
			printf("#   %s: %s\n", name, err.msg);
			vpa_wave_release(&w);
			continue;
		}
		CHECK(vpa_feat_apply(fe, &w, name, &m, &err) == 0);
		const struct vpa_kaldi_entry *en = &ark.e[e];
		CHECK(m.rows == en->rows && m.cols == en->cols);
		double maxd = 0;
		if (m.rows == en->rows && m.cols == en->cols)
			for (size_t i = 0; i < m.rows * m.cols; i++) {
				double ref = ark.data[en->off + i];
				double d = fabs(m.x[i] - ref) / fmax(1.0, fabs(ref) / 20);
				if (d > maxd)
					maxd = d;
			}
		if (getenv("VPA_SHOW") || !(maxd <= 2e-3))
			printf("#   %s: max difference %g\n", name, maxd);
		CHECK(maxd <= 2e-3);
		n_cases++;
		vpa_fmat_release(&m);
		vpa_wave_release(&w);
		vpa_feat_free(fe);
	}
	CHECK(n_cases >= 30);
	free(cases);
	vpa_kaldi_ark_release(&ark);
}

static void test_golden_vad_cmvn(void)
{
	struct vpa_kaldi_ark ark;
	struct vpa_err err;
	char *cases;
	size_t len;
	vpa_kaldi_ark_init(&ark);
	vpa_err_init(&err);
	CHECK(vpa_kaldi_read(GOLD "expected.ark", VPA_KALDI_ANY, &ark, &err) == 0);
	CHECK(vpa_read_file(GOLD "cases.txt", &cases, &len, &err) == 0);
	char *lsave = NULL;
	int n_vad = 0, n_cmvn = 0;
	for (char *line = strtok_r(cases, "\n", &lsave); line; line = strtok_r(NULL, "\n", &lsave)) {
		if (line[0] == '#')
			continue;
		char *save = NULL, *name = strtok_r(line, " ", &save), *src = strtok_r(NULL, " ", &save),
		     *kind = strtok_r(NULL, " ", &save);
		if (strcmp(kind, "vad") && strcmp(kind, "cmvn"))
			continue;
		struct vpa_feat_opts o;
		vpa_feat_opts_init(&o, VPA_FEAT_MFCC);
		CHECK(set_opts(&o, save) == 0);
		long e = find(&ark, name), s = find(&ark, src);
		CHECK(e >= 0 && s >= 0);
		if (e < 0 || s < 0)
			continue;
		const struct vpa_kaldi_entry *in = &ark.e[s], *ex = &ark.e[e];
		size_t T = in->rows, D = in->cols;
		float *x = malloc(T * D * sizeof(float));
		for (size_t i = 0; i < T * D; i++)
			x[i] = (float)ark.data[in->off + i];
		if (!strcmp(kind, "vad")) {
			float *en = malloc(T * sizeof(float));
			unsigned char *v = malloc(T);
			for (size_t t = 0; t < T; t++)
				en[t] = x[t * D];
			vpa_vad_compute(en, T, o.vad_energy_threshold, o.vad_energy_mean_scale,
					o.vad_frames_context, o.vad_proportion_threshold, v);
			size_t bad = 0, voiced = 0;
			CHECK(ex->cols == T);
			for (size_t t = 0; t < T && ex->cols == T; t++) {
				bad += v[t] != (ark.data[ex->off + t] > 0.5);
				voiced += v[t];
			}
			CHECK(bad == 0);
			/* a test that can fail: some frames voiced, some not */
			CHECK(voiced > 0 && voiced < T);
			free(en);
			free(v);
			n_vad++;
		} else {
			if (o.cmvn == VPA_CMVN_UTT)
				vpa_cmvn_utt(x, T, D, o.norm_vars);
			else
				vpa_cmvn_sliding(x, T, D, o.cmn_window, o.min_cmn_window, o.center, o.norm_vars);
			double maxd = 0;
			CHECK(ex->rows == T && ex->cols == D);
			for (size_t i = 0; i < T * D && ex->rows == T; i++)
				maxd = fmax(maxd, fabs(x[i] - ark.data[ex->off + i]));
			if (!(maxd < 1e-4))
				printf("#   %s: max difference %g\n", name, maxd);
			CHECK(maxd < 1e-4);
			n_cmvn++;
		}
		free(x);
	}
	CHECK(n_vad == 3 && n_cmvn == 6);
	free(cases);
	vpa_kaldi_ark_release(&ark);
}

/* Write the samples of g16.wav in another format with libsndfile. */
static void write_as(const char *path, const struct vpa_wave *w, int format, int channels)
{
	SF_INFO info = {0};
	info.samplerate = (int)w->rate;
	info.channels = channels;
	info.format = format;
	SNDFILE *s = sf_open(path, SFM_WRITE, &info);
	CHECK(s != NULL);
	if (!s)
		return;
	if ((format & SF_FORMAT_SUBMASK) == SF_FORMAT_PCM_16) { /* exact int16 values */
		short *sb = malloc(w->n * (size_t)channels * sizeof(short));
		for (size_t i = 0; i < w->n; i++)
			for (int c = 0; c < channels; c++)
				sb[i * (size_t)channels + (size_t)c] = (short)lrintf(w->x[i] / (float)(c + 1));
		sf_writef_short(s, sb, (sf_count_t)w->n);
		sf_close(s);
		free(sb);
		return;
	}
	float *buf = malloc(w->n * (size_t)channels * sizeof(float));
	for (size_t i = 0; i < w->n; i++)
		for (int c = 0; c < channels; c++) /* channel c: the signal scaled by 1/(c+1) */
			buf[i * (size_t)channels + (size_t)c] = w->x[i] / 32768.0f / (float)(c + 1);
	sf_writef_float(s, buf, (sf_count_t)w->n);
	sf_close(s);
	free(buf);
}

static double max_diff(const struct vpa_wave *a, const struct vpa_wave *b, double scale)
{
	if (a->n != b->n)
		return INFINITY;
	double m = 0;
	for (size_t i = 0; i < a->n; i++)
		m = fmax(m, fabs(a->x[i] * scale - b->x[i]));
	return m;
}

static void test_reader_formats(void)
{
	struct vpa_wave w, r;
	struct vpa_err err;
	vpa_wave_init(&w);
	vpa_err_init(&err);
	CHECK(vpa_audio_read(GOLD "g16.wav", -1, &w, &err) == 0);
	CHECK(w.n == 8000 && w.rate == 16000);
	/* int16 scale: the samples are the file's int16 values (header is 44 bytes) */
	FILE *f = fopen(GOLD "g16.wav", "rb");
	int16_t raw[8000];
	fseek(f, 44, SEEK_SET);
	CHECK(fread(raw, 2, 8000, f) == 8000);
	fclose(f);
	int same = 1, nonzero = 0;
	for (size_t i = 0; i < 8000; i++) {
		same &= w.x[i] == (float)raw[i];
		nonzero += raw[i] != 0;
	}
	CHECK(same && nonzero > 1000);
	static const struct {
		const char *name;
		int format;
		double tol;
	} fm[] = {
		{"p24.wav", SF_FORMAT_WAV | SF_FORMAT_PCM_24, 1e-3},
		{"p32.wav", SF_FORMAT_WAV | SF_FORMAT_PCM_32, 1e-3},
		{"f32.wav", SF_FORMAT_WAV | SF_FORMAT_FLOAT, 1e-3},
		{"x.flac", SF_FORMAT_FLAC | SF_FORMAT_PCM_16, 0},
		{"p8.wav", SF_FORMAT_WAV | SF_FORMAT_PCM_U8, 256},
	};
	for (size_t k = 0; k < sizeof(fm) / sizeof(fm[0]); k++) {
		write_as(tpath(fm[k].name), &w, fm[k].format, 1);
		vpa_wave_init(&r);
		vpa_err_init(&err);
		CHECK(vpa_audio_read(tpath(fm[k].name), -1, &r, &err) == 0);
		double d = max_diff(&w, &r, 1.0);
		if (!(d <= fm[k].tol))
			printf("#   %s: max sample difference %g\n", fm[k].name, d);
		CHECK(d <= fm[k].tol);
		vpa_wave_release(&r);
	}
	/* stereo: an error without --channel, channel 1 is the second */
	write_as(tpath("st.wav"), &w, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 2);
	vpa_wave_init(&r);
	vpa_err_init(&err);
	CHECK(vpa_audio_read(tpath("st.wav"), -1, &r, &err) != 0);
	CHECK(strstr(err.msg, "st.wav: 2 channels: pick one with --channel N") != NULL);
	vpa_err_init(&err);
	CHECK(vpa_audio_read(tpath("st.wav"), 1, &r, &err) == 0);
	CHECK(max_diff(&w, &r, 0.5) <= 1.0);
	vpa_wave_release(&r);
	vpa_err_init(&err);
	CHECK(vpa_audio_read(tpath("st.wav"), 2, &r, &err) != 0);
	CHECK(strstr(err.msg, "no channel 2") != NULL);
	vpa_wave_release(&w);
}

static void test_reader_bad(void)
{
	struct vpa_wave w, r;
	struct vpa_err err;
	char *buf;
	size_t len;
	vpa_wave_init(&w);
	vpa_err_init(&err);
	CHECK(vpa_read_file(GOLD "g16.wav", &buf, &len, &err) == 0);
	/* truncated WAV: header promises 16000 bytes, file cut */
	vpa_wave_init(&r);
	CHECK(vpa_audio_parse("cut.wav", (unsigned char *)buf, 5000, -1, &r, &err) != 0);
	CHECK(strstr(err.msg, "cut.wav: truncated") != NULL);
	/* not audio */
	vpa_err_init(&err);
	CHECK(vpa_audio_parse("junk.wav", (const unsigned char *)"RIFFjunkjunkjunk", 16, -1, &r, &err) != 0);
	CHECK(strstr(err.msg, "junk.wav: not a readable audio file") != NULL);
	/* empty audio: header only */
	vpa_err_init(&err);
	SF_INFO info = {0};
	info.samplerate = 16000, info.channels = 1, info.format = SF_FORMAT_WAV | SF_FORMAT_PCM_16;
	SNDFILE *s = sf_open(tpath("empty.wav"), SFM_WRITE, &info);
	sf_close(s);
	CHECK(vpa_audio_read(tpath("empty.wav"), -1, &r, &err) != 0);
	CHECK(strstr(err.msg, "empty.wav: no audio samples") != NULL);
	/* NaN in a float WAV */
	vpa_err_init(&err);
	info.format = SF_FORMAT_WAV | SF_FORMAT_FLOAT;
	s = sf_open(tpath("nan.wav"), SFM_WRITE, &info);
	float x[4] = {0.1f, 0.2f, NAN, 0.3f};
	sf_writef_float(s, x, 4);
	sf_close(s);
	CHECK(vpa_audio_read(tpath("nan.wav"), -1, &r, &err) != 0);
	CHECK(strstr(err.msg, "nan.wav: sample 3 is not finite") != NULL);
	/* truncated / corrupt FLAC */
	vpa_err_init(&err);
	CHECK(vpa_audio_read(GOLD "g16.wav", -1, &w, &err) == 0);
	write_as(tpath("t.flac"), &w, SF_FORMAT_FLAC | SF_FORMAT_PCM_16, 1);
	char *fb;
	size_t fl;
	CHECK(vpa_read_file(tpath("t.flac"), &fb, &fl, &err) == 0);
	vpa_err_init(&err);
	CHECK(vpa_audio_parse("t.flac", (unsigned char *)fb, fl * 2 / 3, -1, &r, &err) != 0);
	CHECK(strstr(err.msg, "t.flac:") != NULL);
	memset(fb + fl / 2, 0x55, 64);
	vpa_err_init(&err);
	CHECK(vpa_audio_parse("c.flac", (unsigned char *)fb, fl, -1, &r, &err) != 0);
	CHECK(strstr(err.msg, "c.flac:") != NULL);
	vpa_wave_release(&r);
	vpa_wave_release(&w);
	free(fb);
	free(buf);
}

/* The bytes of a file (test helper; NULL when unreadable). */
static unsigned char *slurp(const char *path, size_t *len)
{
	char *b;
	struct vpa_err e;
	vpa_err_init(&e);
	return vpa_read_file(path, &b, len, &e) ? NULL : (unsigned char *)b;
}

static void spit(const char *path, const unsigned char *b, size_t len)
{
	FILE *f = fopen(path, "wb");
	fwrite(b, 1, len, f);
	fclose(f);
}

/*
 * Lengths the header gets wrong (issue 26 item 11): a FLAC whose STREAMINFO
 * says 0 samples ("unknown" in the FLAC format; libsndfile reports
 * SF_COUNT_MAX frames) with no frames, or with frames; a SPHERE header
 * announcing more samples than the file holds (libsndfile believes the
 * file's length).
 */
static void test_reader_lengths(void)
{
	struct vpa_wave w, r;
	struct vpa_err err;
	double dur;
	vpa_wave_init(&w), vpa_wave_init(&r);
	vpa_err_init(&err);
	CHECK(vpa_audio_read(GOLD "g16.wav", -1, &w, &err) == 0);
	/* "fLaC", the last metadata block (STREAMINFO, 34 bytes): 16 kHz, mono, 16 bits, 0 samples */
	static const unsigned char zero[42] = {'f', 'L', 'a', 'C', 0x80, 0, 0, 34, 0x10, 0, 0x10, 0,
					       0, 0, 0, 0, 0, 0, 0x03, 0xe8, 0x00, 0xf0};
	vpa_err_init(&err);
	CHECK(vpa_audio_parse("zero.flac", zero, sizeof(zero), -1, &r, &err) != 0);
	CHECK_STR(err.msg, "zero.flac: no audio samples");
	spit(tpath("zero.flac"), zero, sizeof(zero));
	vpa_err_init(&err);
	CHECK(vpa_audio_read(tpath("zero.flac"), -1, &r, &err) != 0);
	CHECK(strstr(err.msg, "zero.flac: no audio samples") != NULL);
	vpa_err_init(&err);
	CHECK(vpa_audio_read_part(tpath("zero.flac"), -1, 0, 1, &r, &dur, &err) != 0);
	CHECK(strstr(err.msg, "zero.flac: no audio samples") != NULL);
	if (strstr(err.msg, "9223372036854775807"))
		printf("#   %s\n", err.msg);
	/* a FLAC with frames and total samples 0 (a streaming encoder's): read to its end */
	write_as(tpath("unk.flac"), &w, SF_FORMAT_FLAC | SF_FORMAT_PCM_16, 1);
	size_t fl;
	unsigned char *fb = slurp(tpath("unk.flac"), &fl);
	CHECK(fb && fl > 42 && !memcmp(fb, "fLaC", 4) && (fb[4] & 0x7f) == 0);
	if (fb && fl > 42) {
		fb[21] &= 0xf0, fb[22] = fb[23] = fb[24] = fb[25] = 0; /* the low 36 bits */
		spit(tpath("unk.flac"), fb, fl);
	}
	vpa_err_init(&err);
	CHECK(vpa_audio_read(tpath("unk.flac"), -1, &r, &err) == 0);
	if (err.status)
		printf("#   %s\n", err.msg);
	CHECK(max_diff(&w, &r, 1.0) == 0);
	vpa_wave_release(&r);
	vpa_err_init(&err);
	CHECK(vpa_audio_read_part(tpath("unk.flac"), -1, 0.1, 0.4, &r, &dur, &err) == 0);
	CHECK(r.n == 4800 && dur == 0.5 && r.x && r.x[0] == w.x[1600] && r.x[4799] == w.x[6399]);
	vpa_wave_release(&r);
	vpa_err_init(&err);
	CHECK(vpa_audio_read_part(tpath("unk.flac"), -1, 0.25, -1, &r, &dur, &err) == 0);
	CHECK(r.n == 4000 && dur == 0.5 && r.x && r.x[3999] == w.x[7999]);
	vpa_wave_release(&r);
	vpa_err_init(&err);
	CHECK(vpa_audio_read_part(tpath("unk.flac"), -1, 0.6, 0.9, &r, &dur, &err) != 0);
	CHECK(dur == 0.5);
	CHECK(strstr(err.msg, "unk.flac: no samples between 0.6 and 0.9 s (0.5 s long)") != NULL);
	free(fb);
	/* SPHERE: 8000 samples announced, 4000 present */
	write_as(tpath("cut.sph"), &w, SF_FORMAT_NIST | SF_FORMAT_PCM_16, 1);
	unsigned char *sb = slurp(tpath("cut.sph"), &fl);
	CHECK(sb && fl == 1024 + 16000 && strstr((char *)sb, "sample_count -i 8000\n"));
	spit(tpath("cut.sph"), sb, 1024 + 8000);
	vpa_err_init(&err);
	CHECK(vpa_audio_read(tpath("cut.sph"), -1, &r, &err) != 0);
	CHECK(strstr(err.msg, "cut.sph: truncated: the SPHERE header announces 8000 samples, the file holds 4000") != NULL);
	vpa_err_init(&err);
	CHECK(vpa_audio_parse("cut.sph", sb, 1024 + 8000, -1, &r, &err) != 0);
	CHECK_STR(err.msg, "cut.sph: truncated: the SPHERE header announces 8000 samples, the file holds 4000");
	vpa_err_init(&err);
	CHECK(vpa_audio_read_part(tpath("cut.sph"), -1, 0, 0.1, &r, &dur, &err) != 0);
	CHECK(strstr(err.msg, "cut.sph: truncated: the SPHERE header announces 8000 samples") != NULL);
	/* the whole file still reads, and a count it cannot parse is an error */
	vpa_err_init(&err);
	CHECK(vpa_audio_parse("full.sph", sb, fl, -1, &r, &err) == 0 && r.n == 8000);
	vpa_wave_release(&r);
	char *c = sb ? strstr((char *)sb, "sample_count -i 8000\n") : NULL;
	if (c) {
		memcpy(c, "sample_count -i 8x00\n", 21);
		vpa_err_init(&err);
		CHECK(vpa_audio_parse("bad.sph", sb, fl, -1, &r, &err) != 0);
		CHECK_STR(err.msg, "bad.sph: the SPHERE header's sample_count '8x00' is not a count of samples");
	}
	free(sb);
	vpa_wave_release(&w);
}

/* Features of utterance i of a data dir. */
static int dir_feats(const char *path, size_t i, struct vpa_fmat *m, struct vpa_err *err)
{
	struct vpa_datadir d;
	struct vpa_wave w;
	struct vpa_feat_opts o;
	vpa_feat_opts_init(&o, VPA_FEAT_FBANK);
	struct vpa_feat *fe = vpa_feat_new(&o, err);
	vpa_datadir_init(&d);
	vpa_wave_init(&w);
	int rc = vpa_datadir_open(&d, path, -1, err);
	if (!rc)
		rc = vpa_datadir_load(&d, i, &w, NULL, err);
	if (!rc)
		rc = vpa_feat_apply(fe, &w, d.utt[i], m, err);
	vpa_wave_release(&w);
	vpa_datadir_release(&d);
	vpa_feat_free(fe);
	return rc;
}

static int same_fmat(const struct vpa_fmat *a, const struct vpa_fmat *b)
{
	return a->rows == b->rows && a->cols == b->cols && a->rows > 0 &&
	       !memcmp(a->x, b->x, a->rows * a->cols * sizeof(float));
}

static void test_datadir_pipes_segments(void)
{
	struct vpa_wave w;
	struct vpa_err err;
	struct vpa_fmat ref, m;
	char scp[2048];
	vpa_wave_init(&w);
	vpa_err_init(&err);
	CHECK(vpa_audio_read(GOLD "g16.wav", -1, &w, &err) == 0);
	write_as(tpath("a.flac"), &w, SF_FORMAT_FLAC | SF_FORMAT_PCM_16, 1);
	write_as(tpath("a.wav"), &w, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 1);
	write_as(tpath("a.sph"), &w, SF_FORMAT_NIST | SF_FORMAT_PCM_16, 1);
	write_as(tpath("st.wav"), &w, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 2);
	snprintf(scp, sizeof(scp),
		 "plain %s\n"
		 "flac flac -c -d -s %s |\n"
		 "sox sox %s -t wav -r 16000 -b 16 - |\n"
		 "sph /usr/bin/sph2pipe -f wav -p %s |\n"
		 "sph1 sph2pipe -f wav -p -c 1 %s |\n",
		 tpath("a.wav"), tpath("a.flac"), tpath("a.wav"), tpath("a.sph"), tpath("st.wav"));
	write_text(tpath("wav.scp"), scp);
	vpa_fmat_init(&ref);
	CHECK(dir_feats(tpath("wav.scp"), 0, &ref, &err) == 0);
	for (size_t i = 1; i < 5; i++) {
		vpa_fmat_init(&m);
		vpa_err_init(&err);
		CHECK(dir_feats(tpath("wav.scp"), i, &m, &err) == 0);
		if (err.status)
			printf("#   %s\n", err.msg);
		CHECK(same_fmat(&ref, &m));
		vpa_fmat_release(&m);
	}
	/* segments: utterance = samples 1600 .. 6400 (0.1 s .. 0.4 s) of the recording */
	CHECK(mkdir(tpath("d"), 0777) == 0);
	snprintf(scp, sizeof(scp), "rec %s\n", tpath("a.wav"));
	write_text(tpath("d/wav.scp"), scp);
	write_text(tpath("d/segments"), "u1 rec 0.1 0.4\nu2 rec 0.25 -1\n");
	write_text(tpath("d/utt2spk"), "u1 s1\nu2 s1\n");
	write_text(tpath("d/spk2utt"), "s1 u1 u2\n");
	write_text(tpath("d/spk2gender"), "s1 f\n");
	struct vpa_wave cut = {0};
	cut.rate = 16000;
	cut.n = 4800;
	cut.x = w.x + 1600;
	write_as(tpath("cut.wav"), &cut, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 1);
	snprintf(scp, sizeof(scp), "u1 %s\n", tpath("cut.wav"));
	write_text(tpath("cut.scp"), scp);
	vpa_fmat_release(&ref);
	CHECK(dir_feats(tpath("cut.scp"), 0, &ref, &err) == 0);
	vpa_fmat_init(&m);
	CHECK(dir_feats(tpath("d"), 0, &m, &err) == 0);
	CHECK(same_fmat(&ref, &m) && m.rows == 28);
	vpa_fmat_release(&m);
	vpa_fmat_release(&ref);
	/* segments' 5th column picks the channel of a stereo recording (1: the half-scale copy) */
	mkdir(tpath("d2"), 0777);
	snprintf(scp, sizeof(scp), "rec %s\nrec2 %s\n", tpath("st.wav"), tpath("a.wav"));
	write_text(tpath("d2/wav.scp"), scp);
	write_text(tpath("d2/segments"), "left rec 0 -1 0\nright rec 0 -1 1\nplain rec2 0 -1\n");
	struct vpa_fmat l0, l1, p0;
	vpa_fmat_init(&l0), vpa_fmat_init(&l1), vpa_fmat_init(&p0);
	CHECK(dir_feats(tpath("d2"), 0, &l0, &err) == 0);
	CHECK(dir_feats(tpath("d2"), 1, &l1, &err) == 0);
	CHECK(dir_feats(tpath("d2"), 2, &p0, &err) == 0);
	CHECK(same_fmat(&l0, &p0) && !same_fmat(&l1, &p0) && l1.rows == p0.rows);
	vpa_fmat_release(&l0), vpa_fmat_release(&l1), vpa_fmat_release(&p0);
	/* end -1: to the end (8000 - 4000 samples = 23 frames) */
	vpa_fmat_init(&m);
	CHECK(dir_feats(tpath("d"), 1, &m, &err) == 0);
	CHECK(m.rows == 23);
	vpa_fmat_release(&m);
	vpa_wave_release(&w);
}

/* Open a data dir with the given files; return the error message or "". */
static const char *open_msg(const char *scp, const char *segments, const char *utt2spk,
			    const char *extra_name, const char *extra, char *bad_line, size_t cap)
{
	static struct vpa_err err;
	static int k;
	char dir[128];
	snprintf(dir, sizeof(dir), "%s/bad%d", tmpdir, k++);
	mkdir(dir, 0777);
	char p[256];
	snprintf(p, sizeof(p), "%s/wav.scp", dir);
	write_text(p, scp);
	if (segments) {
		snprintf(p, sizeof(p), "%s/segments", dir);
		write_text(p, segments);
	}
	if (utt2spk) {
		snprintf(p, sizeof(p), "%s/utt2spk", dir);
		write_text(p, utt2spk);
	}
	if (extra_name) {
		snprintf(p, sizeof(p), "%s/%s", dir, extra_name);
		write_text(p, extra);
	}
	struct vpa_datadir d;
	vpa_datadir_init(&d);
	vpa_err_init(&err);
	int rc = vpa_datadir_open(&d, dir, -1, &err);
	const char *load_line = NULL;
	if (!rc && d.n_utt) { /* also load every utterance */
		for (size_t i = 0; i < d.n_utt && !rc; i++) {
			struct vpa_wave w;
			vpa_wave_init(&w);
			rc = vpa_datadir_load(&d, i, &w, &load_line, &err);
			vpa_wave_release(&w);
		}
	}
	if (bad_line)
		snprintf(bad_line, cap, "%s", d.bad_line ? d.bad_line : rc && load_line ? load_line : "");
	vpa_datadir_release(&d);
	/* drop the temp folder prefix from the message */
	const char *m = err.msg;
	const char *s = strstr(m, "/wav.scp");
	if (!s)
		s = strstr(m, "/segments");
	if (!s)
		s = strstr(m, "/utt2spk");
	if (!s)
		s = strstr(m, "/spk2utt");
	if (!s)
		s = strstr(m, "/trials");
	return s && s > m ? s + 1 : m;
}

static void test_datadir_bad(void)
{
	char line[256], scp[512];
	snprintf(scp, sizeof(scp), "r1 %s\n", GOLD "g16.wav");
	CHECK_STR(open_msg("r1 ffmpeg -i x.mp3 -f wav - |\n", NULL, NULL, NULL, NULL, line, sizeof(line)),
		  "wav.scp:1: command 'ffmpeg' is not executed: only 'flac -c -d -s FILE |', 'sox FILE -t wav - |' and 'sph2pipe -f wav FILE |' are read");
	CHECK_STR(line, "r1 ffmpeg -i x.mp3 -f wav - |");
	CHECK_STR(open_msg("r1 cat x.wav|\n", NULL, NULL, NULL, NULL, NULL, 0),
		  "wav.scp:1: command 'cat' is not executed: only 'flac -c -d -s FILE |', 'sox FILE -t wav - |' and 'sph2pipe -f wav FILE |' are read");
	CHECK_STR(open_msg("r1 sox x.wav -t wav - rate 8000 |\n", NULL, NULL, NULL, NULL, NULL, 0),
		  "wav.scp:1: sox effect 'rate' is not supported (sox is not executed): expected 'sox FILE -t wav [-r N] [-b 16] [-e signed-integer] [-c 1] - |'");
	CHECK_STR(open_msg("# c\nr1 missing.wav\n", NULL, NULL, NULL, NULL, line, sizeof(line)),
		  "wav.scp:2: cannot open 'missing.wav': No such file or directory");
	CHECK_STR(line, "r1 missing.wav");
	char two[512];
	snprintf(two, sizeof(two), "r1 %s\nr1 %s\n", GOLD "g16.wav", GOLD "g8.wav");
	CHECK_STR(open_msg(two, NULL, NULL, NULL, NULL, NULL, 0),
		  "wav.scp:2: duplicate recording 'r1' (first on line 1)");
	CHECK_STR(open_msg(scp, "u1 r1 0 0.2\nu1 r1 0.2 0.4\n", NULL, NULL, NULL, NULL, 0),
		  "segments:2: duplicate utterance 'u1' (first on line 1)");
	CHECK_STR(open_msg(scp, "u1 r1 0 0.9\nu2 r1 0.2 1.2\n", NULL, NULL, NULL, line, sizeof(line)),
		  "segments:2: segment 'u2' ends at 1.2 s, past the end of recording 'r1' (0.5 s)");
	CHECK_STR(line, "u2 r1 0.2 1.2");
	CHECK_STR(open_msg(scp, "u1 r1 0.6 0.9\n", NULL, NULL, NULL, line, sizeof(line)),
		  "segments:1: segment 'u1' starts at 0.6 s, past the end of recording 'r1' (0.5 s)");
	CHECK_STR(open_msg(scp, "u1 r2 0 0.2\n", NULL, NULL, NULL, NULL, 0),
		  "segments:1: recording 'r2' is not in wav.scp");
	CHECK_STR(open_msg(scp, "u1 r1 0.3 0.2\n", NULL, NULL, NULL, NULL, 0),
		  "segments:1: end time must be a number > start (0.3) or -1, got '0.2'");
	CHECK_STR(open_msg(scp, NULL, "r1 s1\nr9 s1\n", NULL, NULL, line, sizeof(line)),
		  "utt2spk:2: utterance 'r9' is not in wav.scp");
	CHECK_STR(line, "r9 s1");
	snprintf(two, sizeof(two), "r1 %s\nr2 %s\n", GOLD "g16.wav", GOLD "g16.wav");
	CHECK(strstr(open_msg(two, NULL, "r1 s1\n", NULL, NULL, NULL, 0),
		     "wav.scp:2: utterance 'r2' has no speaker in") != NULL);
	CHECK_STR(open_msg(scp, NULL, "r1 s1\n", "spk2utt", "s2 r1\n", NULL, 0),
		  "spk2utt:1: utterance 'r1' has speaker 's1' in utt2spk");
	CHECK_STR(open_msg(scp, NULL, "r1 s1\n", "trials_f", "s1 r7 target\n", NULL, 0),
		  "trials_f:1: test utterance 'r7' is not in wav.scp");
	CHECK(strstr(open_msg(scp, NULL, "r1 s1\n", "spk2gender", "s1 x\n", line, sizeof(line)),
		     "spk2gender:1: gender must be m or f, got 'x'") != NULL);
	CHECK_STR(line, "s1 x");
	CHECK(strstr(open_msg(scp, NULL, "r1 s1\n", "utt2dur", "r1 -2\n", NULL, 0),
		     "utt2dur:1: expected 'UTTERANCE_ID DURATION' (seconds >= 0)") != NULL);
	CHECK(strstr(open_msg(scp, NULL, "r1 s1\n", "enrolls", "r1\nr5\n", NULL, 0),
		     "enrolls:2: utterance 'r5' is not in wav.scp") != NULL);
	CHECK(strstr(open_msg(scp, NULL, "r1 s1\n", "text", "r2 hello\n", NULL, 0),
		     "text:1: utterance 'r2' is not in wav.scp") != NULL);
	/* spk2utt lines with many utterances (a real speaker has hundreds) */
	{
		static char seg[4096], u2s[4096], s2u[4096];
		size_t a = 0, b = 0, c = (size_t)snprintf(s2u, sizeof(s2u), "s1");
		for (int k = 0; k < 40; k++) {
			a += (size_t)snprintf(seg + a, sizeof(seg) - a, "u%02d r1 %.2f %.2f\n", k, k * 0.01, (k + 1) * 0.01);
			b += (size_t)snprintf(u2s + b, sizeof(u2s) - b, "u%02d s1\n", k);
			c += (size_t)snprintf(s2u + c, sizeof(s2u) - c, " u%02d", k);
		}
		snprintf(s2u + c, sizeof(s2u) - c, "\n");
		CHECK_STR(open_msg(scp, seg, u2s, "spk2utt", s2u, NULL, 0), "");
		s2u[c - 4] = 0; /* drop u39 */
		strcat(s2u, "\n");
		CHECK(strstr(open_msg(scp, seg, u2s, "spk2utt", s2u, NULL, 0),
			     "spk2utt: lists 39 utterances, utt2spk 40: the files disagree") != NULL);
	}
	/* a complete valid directory opens */
	CHECK_STR(open_msg(scp, NULL, "r1 s1\n", "enrolls", "r1\n", NULL, 0), "");
	/* a line of NUL bytes first in text / utt2dur / enrolls is blank (found by fuzz_datadir:
	 * the reader took field 0 of a line that had none, a NULL array: SEGV) */
	{
		static const char *const lists[] = {"text", "utt2dur", "enrolls"};
		for (size_t k = 0; k < 3; k++) {
			char dir[128], p[256];
			snprintf(dir, sizeof(dir), "%s/nul%zu", tmpdir, k);
			mkdir(dir, 0777);
			snprintf(p, sizeof(p), "%s/wav.scp", dir);
			write_text(p, scp);
			snprintf(p, sizeof(p), "%s/%s", dir, lists[k]);
			FILE *f = fopen(p, "wb");
			fwrite("\0\0\n\0\n", 1, 5, f);
			fclose(f);
			struct vpa_datadir d;
			struct vpa_err err;
			vpa_datadir_init(&d);
			vpa_err_init(&err);
			CHECK(vpa_datadir_open(&d, dir, -1, &err) == 0);
			if (err.status)
				printf("#   %s\n", err.msg);
			vpa_datadir_release(&d);
		}
	}
	/* a UTF-8 byte order mark names its own file (issue 26 item 11): in wav.scp it
	 * became part of the first id and utt2spk was blamed */
	{
		static const char B[] = "\xEF\xBB\xBF", M[] = ":1: the file starts with a UTF-8 byte order mark (bytes EF BB BF), which would become part of the first id: save it without the mark";
		char bscp[600], want[300], seg[64];
		snprintf(bscp, sizeof(bscp), "%s%s", B, scp);
		snprintf(want, sizeof(want), "wav.scp%s", M);
		CHECK_STR(open_msg(bscp, NULL, "r1 s1\n", NULL, NULL, NULL, 0), want);
		CHECK_STR(open_msg(bscp, NULL, NULL, NULL, NULL, NULL, 0), want);
		snprintf(seg, sizeof(seg), "%su1 r1 0 0.2\n", B);
		snprintf(want, sizeof(want), "segments%s", M);
		CHECK_STR(open_msg(scp, seg, NULL, NULL, NULL, NULL, 0), want);
		snprintf(seg, sizeof(seg), "%sr1 s1\n", B);
		snprintf(want, sizeof(want), "utt2spk%s", M);
		CHECK_STR(open_msg(scp, NULL, seg, NULL, NULL, NULL, 0), want);
		static const char *const lists[][2] = {
			{"spk2utt", "s1 r1\n"}, {"spk2gender", "s1 f\n"}, {"text", "r1 hello\n"},
			{"utt2dur", "r1 0.5\n"}, {"enrolls", "r1\n"},      {"trials_f", "s1 r1 target\n"},
		};
		for (size_t k = 0; k < sizeof(lists) / sizeof(lists[0]); k++) {
			char body[64];
			snprintf(body, sizeof(body), "%s%s", B, lists[k][1]);
			snprintf(want, sizeof(want), "%s%s", lists[k][0], M);
			const char *got = open_msg(scp, NULL, "r1 s1\n", lists[k][0], body, NULL, 0);
			size_t gl = strlen(got), wl = strlen(want);
			CHECK(gl >= wl && !strcmp(got + gl - wl, want));
			if (!(gl >= wl && !strcmp(got + gl - wl, want)))
				printf("#   %s: got '%s'\n", lists[k][0], got);
		}
	}
}

static void test_short_and_frames(void)
{
	struct vpa_feat_opts o;
	struct vpa_err err;
	vpa_err_init(&err);
	vpa_feat_opts_init(&o, VPA_FEAT_FBANK);
	struct vpa_feat *fe = vpa_feat_new(&o, &err);
	/* Kaldi NumFrames, snip-edges=true: 1 + (n - 400) / 160, 0 below 400 */
	CHECK(vpa_feat_num_frames(fe, 399) == 0);
	CHECK(vpa_feat_num_frames(fe, 400) == 1);
	CHECK(vpa_feat_num_frames(fe, 559) == 1);
	CHECK(vpa_feat_num_frames(fe, 560) == 2);
	struct vpa_wave w = {0};
	float x[300];
	for (int i = 0; i < 300; i++)
		x[i] = (float)(1000 * sin(i * 0.3));
	w.x = x, w.n = 300, w.rate = 16000;
	struct vpa_fmat m;
	CHECK(vpa_feat_apply(fe, &w, "short", &m, &err) == 0);
	CHECK(m.rows == 0 && m.cols == 23);
	vpa_fmat_release(&m);
	vpa_feat_free(fe);
	/* snip-edges=false: (n + 80) / 160 frames */
	CHECK(vpa_feat_opts_set(&o, "snip-edges", "false", &err) == 0);
	fe = vpa_feat_new(&o, &err);
	CHECK(vpa_feat_num_frames(fe, 79) == 0);
	CHECK(vpa_feat_num_frames(fe, 80) == 1);
	CHECK(vpa_feat_num_frames(fe, 300) == 2);
	CHECK(vpa_feat_apply(fe, &w, "short", &m, &err) == 0);
	CHECK(m.rows == 2);
	for (size_t i = 0; i < m.rows * m.cols; i++)
		CHECK(isfinite(m.x[i]));
	vpa_fmat_release(&m);
	/* wrong rate */
	w.rate = 8000;
	CHECK(vpa_feat_apply(fe, &w, "u8", &m, &err) != 0);
	CHECK_STR(err.msg, "u8: sample rate 8000 Hz differs from --sample-frequency=16000");
	vpa_feat_free(fe);
}

static void test_options(void)
{
	struct vpa_feat_opts o;
	struct vpa_err err;
	vpa_feat_opts_init(&o, VPA_FEAT_FBANK);
	vpa_err_init(&err);
	CHECK(vpa_feat_opts_set(&o, "num-ceps", "13", &err) != 0);
	CHECK_STR(err.msg, "unknown option '--num-ceps'");
	vpa_err_init(&err);
	CHECK(vpa_feat_opts_set(&o, "num-mel-bins", "2", &err) != 0);
	CHECK_STR(err.msg, "--num-mel-bins must be an integer in [3, 1024], got '2'");
	vpa_err_init(&err);
	CHECK(vpa_feat_opts_set(&o, "snip-edges", "yes", &err) != 0);
	CHECK_STR(err.msg, "--snip-edges must be true or false, got 'yes'");
	vpa_err_init(&err);
	CHECK(vpa_feat_opts_set(&o, "window-type", "kaiser", &err) != 0);
	vpa_err_init(&err);
	CHECK(vpa_feat_opts_set(&o, "high-freq", "9000", &err) == 0);
	CHECK(vpa_feat_new(&o, &err) == NULL);
	CHECK_STR(err.msg, "bad mel band edges: --low-freq=20 and --high-freq=9000 give 20 .. 9000 Hz, need 0 <= low < high <= Nyquist 8000");
	vpa_feat_opts_init(&o, VPA_FEAT_FBANK);
	vpa_err_init(&err);
	CHECK(vpa_feat_opts_set(&o, "num-mel-bins", "200", &err) == 0);
	CHECK(vpa_feat_new(&o, &err) == NULL);
	CHECK(strstr(err.msg, "is too large") != NULL);
	vpa_feat_opts_init(&o, VPA_FEAT_MFCC);
	vpa_err_init(&err);
	CHECK(vpa_feat_opts_set(&o, "num-ceps", "30", &err) == 0);
	CHECK(vpa_feat_new(&o, &err) == NULL);
	CHECK_STR(err.msg, "--num-ceps=30 exceeds --num-mel-bins=23");
	/* defaults are Kaldi's, dither 0 */
	vpa_feat_opts_init(&o, VPA_FEAT_MFCC);
	CHECK(o.use_energy == 1 && o.dither == 0 && o.num_ceps == 13 && o.cepstral_lifter == 22 &&
	      o.preemphasis_coefficient == 0.97 && o.low_freq == 20 && o.snip_edges == 1);
}

static void test_dither_and_archive(void)
{
	struct vpa_wave w;
	struct vpa_err err;
	struct vpa_feat_opts o;
	struct vpa_fmat a, b, c;
	vpa_wave_init(&w);
	vpa_err_init(&err);
	CHECK(vpa_audio_read(GOLD "g16.wav", -1, &w, &err) == 0);
	vpa_feat_opts_init(&o, VPA_FEAT_FBANK);
	struct vpa_feat *f0 = vpa_feat_new(&o, &err);
	o.dither = 1;
	struct vpa_feat *f1 = vpa_feat_new(&o, &err);
	CHECK(vpa_feat_apply(f0, &w, "u", &a, &err) == 0);
	CHECK(vpa_feat_apply(f1, &w, "u", &b, &err) == 0);
	CHECK(vpa_feat_apply(f1, &w, "u", &c, &err) == 0);
	CHECK(same_fmat(&b, &c));  /* same id, same dither */
	CHECK(!same_fmat(&a, &b)); /* dither changes the values ... */
	double md = 0;
	for (size_t i = 0; i < a.rows * a.cols; i++)
		md += fabs(a.x[i] - b.x[i]);
	md /= (double)(a.rows * a.cols);
	CHECK(md > 0 && md < 0.1); /* ... a little on average on speech */
	/* archive: binary FM and text read back by the Kaldi reader */
	FILE *f = fopen(tpath("x.ark"), "wb");
	vpa_ark_write_fmat(f, "u1", &a, 0);
	vpa_ark_write_fmat(f, "u2", &b, 1);
	fclose(f);
	struct vpa_kaldi_ark ark;
	vpa_kaldi_ark_init(&ark);
	CHECK(vpa_kaldi_read(tpath("x.ark"), VPA_KALDI_MATRICES, &ark, &err) == 0);
	CHECK(ark.n == 2 && ark.e[0].binary && !ark.e[1].binary);
	int same = ark.n == 2;
	for (size_t i = 0; same && i < a.rows * a.cols; i++) {
		/* %.9g text reads back to the same float */
		same = ark.data[i] == a.x[i] && (float)ark.data[ark.e[1].off + i] == b.x[i];
	}
	CHECK(same && ark.e[0].rows == a.rows && ark.e[0].cols == a.cols);
	/* the exact Kaldi binary layout: key, space, \0B, "FM ", \4 rows, \4 cols */
	char *buf;
	size_t len;
	CHECK(vpa_read_file(tpath("x.ark"), &buf, &len, &err) == 0);
	int32_t rows, cols;
	memcpy(&rows, buf + 9, 4);
	memcpy(&cols, buf + 14, 4);
	CHECK(!memcmp(buf, "u1 \0BFM \4", 9) && buf[13] == 4 && rows == 48 && cols == 23);
	free(buf);
	vpa_kaldi_ark_release(&ark);
	vpa_fmat_release(&a), vpa_fmat_release(&b), vpa_fmat_release(&c);
	vpa_feat_free(f0), vpa_feat_free(f1);
	vpa_wave_release(&w);
}

static void test_vad_cmvn_pipeline(void)
{
	/* vad=true keeps exactly the frames compute-vad marks voiced, after CMVN */
	struct vpa_wave w;
	struct vpa_err err;
	struct vpa_feat_opts o;
	struct vpa_fmat a, b;
	vpa_wave_init(&w);
	vpa_err_init(&err);
	CHECK(vpa_audio_read(GOLD "g16.wav", -1, &w, &err) == 0);
	vpa_feat_opts_init(&o, VPA_FEAT_MFCC);
	o.cmvn = VPA_CMVN_SLIDING;
	o.center = 1;
	o.cmn_window = 20;
	struct vpa_feat *f0 = vpa_feat_new(&o, &err);
	o.vad = 1;
	struct vpa_feat *f1 = vpa_feat_new(&o, &err);
	CHECK(vpa_feat_apply(f0, &w, "u", &a, &err) == 0);
	CHECK(vpa_feat_apply(f1, &w, "u", &b, &err) == 0);
	size_t T = vpa_feat_num_frames(f0, w.n);
	float *x = malloc(T * 13 * sizeof(float)), *e = malloc(T * sizeof(float));
	unsigned char *v = malloc(T);
	vpa_feat_compute(f0, w.x, w.n, x, e, 0);
	for (size_t t = 0; t < T; t++) /* MFCC's C0 with --use-energy is the log energy */
		CHECK(e[t] == x[t * 13]);
	vpa_vad_compute(e, T, 5.0, 0.5, 0, 0.6, v);
	size_t k = 0, ok = 1;
	for (size_t t = 0; t < T; t++)
		if (v[t]) {
			ok &= k < b.rows && !memcmp(b.x + k * 13, a.x + t * 13, 13 * sizeof(float));
			k++;
		}
	CHECK(ok && k == b.rows && b.rows < a.rows && b.rows > 0);
	free(x), free(e), free(v);
	vpa_fmat_release(&a), vpa_fmat_release(&b);
	vpa_feat_free(f0), vpa_feat_free(f1);
	vpa_wave_release(&w);
}

/* Properties independent of the NumPy transcription: a centred window covering
 * the whole utterance is per-utterance CMVN; window 1 with norm-vars gives 0. */
static void test_cmvn_properties(void)
{
	enum { T = 37, D = 3 };
	float a[T * D], b[T * D];
	struct vpa_rng r;
	vpa_rng_seed(&r, 7);
	for (size_t i = 0; i < T * D; i++)
		a[i] = b[i] = (float)(10 * vpa_rng_normal(&r) + (double)(i % D) * 5);
	vpa_cmvn_sliding(a, T, D, 1000, 100, 1, 1);
	vpa_cmvn_utt(b, T, D, 1);
	double md = 0, mean0 = 0;
	for (size_t i = 0; i < T * D; i++)
		md = fmax(md, fabs(a[i] - b[i]));
	for (size_t t = 0; t < T; t++)
		mean0 += b[t * D];
	CHECK(md < 1e-5);
	CHECK(fabs(mean0 / T) < 1e-5);
	vpa_cmvn_sliding(a, T, D, 1, 1, 1, 1); /* centred window of one frame */
	int zero = 1;
	for (size_t i = 0; i < T * D; i++)
		zero &= a[i] == 0;
	CHECK(zero);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/vpa_audio_XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	RUN(test_golden_features);
	RUN(test_golden_vad_cmvn);
	RUN(test_reader_formats);
	RUN(test_reader_bad);
	RUN(test_reader_lengths);
	RUN(test_datadir_pipes_segments);
	RUN(test_datadir_bad);
	RUN(test_short_and_frames);
	RUN(test_options);
	RUN(test_dither_and_archive);
	RUN(test_vad_cmvn_pipeline);
	RUN(test_cmvn_properties);
	nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return DONE();
}
