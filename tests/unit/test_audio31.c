/*
 * tests/unit/test_audio31.c - issue 31, audio as it comes: resampling
 * (libsoxr) against sox's own `rate`, wav.scp's sox pipe with -r and with
 * -t raw input, --raw-format, the rate policy of a data directory
 * (vpa_datadir_set_rate), and their bad input.  Files: tests/golden/audio31/
 * (made by make_audio.sh there, with sox).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audio/anon.h"
#include "audio/audio.h"
#include "audio/xvector.h"
#include "harness.h"

#define G "tests/golden/audio31/"

static char tmpdir[64];

static void put(const char *name, const char *text)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", tmpdir, name);
	FILE *f = fopen(p, "w");
	fputs(text, f);
	fclose(f);
}

static double maxdiff(const struct vpa_wave *a, const struct vpa_wave *b, size_t skip)
{
	double m = 0;
	for (size_t i = skip; i + skip < a->n && i < b->n; i++)
		if (fabs(a->x[i] - b->x[i]) > m)
			m = fabs(a->x[i] - b->x[i]);
	return m;
}

/* Ours against sox's output of the same conversion; prints the difference. */
static void against_sox(const char *in, const char *ref, double bound)
{
	struct vpa_err err;
	struct vpa_wave w, r;
	vpa_err_init(&err);
	vpa_wave_init(&w), vpa_wave_init(&r);
	CHECK(vpa_audio_read(in, -1, &w, &err) == 0);
	CHECK(vpa_audio_read(ref, -1, &r, &err) == 0);
	double rin = w.rate;
	CHECK(vpa_wave_resample(&w, 16000, in, &err) == 0);
	CHECK(w.rate == 16000);
	CHECK(w.n == r.n); /* sox's length: round(n * 16000 / rate) */
	double peak = 0;
	for (size_t i = 0; i < r.n; i++)
		peak = fmax(peak, fabs(r.x[i]));
	double d = maxdiff(&w, &r, 0);
	printf("# %g Hz -> 16 kHz: %zu samples, max |ours - sox| = %.4g (int16 scale; peak %.0f)\n",
	       rin, w.n, d, peak);
	CHECK(d <= bound);
	vpa_wave_release(&w), vpa_wave_release(&r);
}

/*
 * The bound: libsoxr HQ and sox's `rate -h` are both linear-phase filters
 * whose passband gain is within 0.01 dB of 1 (libsoxr's SOXR_ROLLOFF_SMALL,
 * the default; sox(1) says the same of `rate`), so in the passband two such
 * outputs differ by at most 2 (10^(0.01/20) - 1) = 0.23 % of the peak.
 * Measured (2026-11-28): 44.1 kHz: 10.02 (at 7.1-7.8 kHz of the sweep, the
 * filters' transition bands; below 4.5 kHz < 0.03, float rounding), 8 kHz:
 * 5.50 (the last 68 samples: the two flush the filter tail differently;
 * elsewhere < 0.63).  The bound is then 38 and 38 on peaks of 16421, 16587.
 */
static void test_resample_vs_sox(void)
{
	double k = 2 * (pow(10, 0.01 / 20) - 1);
	against_sox(G "in44k.wav", G "sox44k_16k.wav", k * 16421);
	against_sox(G "in8k.wav", G "sox8k_16k.wav", k * 16587);
}


static void test_rawfmt(void)
{
	struct vpa_rawfmt f;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_rawfmt_parse("s16le:16000", &f, &err) == 0);
	CHECK(f.rate == 16000 && f.channels == 1);
	CHECK_STR(f.name, "s16le");
	CHECK(vpa_rawfmt_parse("f32be:8000:2", &f, &err) == 0);
	CHECK(f.rate == 8000 && f.channels == 2);
	CHECK_STR(f.name, "f32be");
	static const char *const bad[][2] = {
		{"s16le", "--raw-format 's16le': expected ENCODING:RATE[:CHANNELS] with ENCODING one of s8 u8 s16le s16be s24le s24be s32le s32be f32le f32be f64le f64be"},
		{"s16:16000", "--raw-format 's16:16000': unknown encoding 's16': expected ENCODING:RATE[:CHANNELS] with ENCODING one of s8 u8 s16le s16be s24le s24be s32le s32be f32le f32be f64le f64be"},
		{"s16le:16k", "--raw-format 's16le:16k': the rate must be a whole number of Hz in [1, 1000000]: expected ENCODING:RATE[:CHANNELS] with ENCODING one of s8 u8 s16le s16be s24le s24be s32le s32be f32le f32be f64le f64be"},
		{"s16le:16000:0", "--raw-format 's16le:16000:0': the channel count must be in [1, 64]: expected ENCODING:RATE[:CHANNELS] with ENCODING one of s8 u8 s16le s16be s24le s24be s32le s32be f32le f32be f64le f64be"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		vpa_err_init(&err);
		CHECK(vpa_rawfmt_parse(bad[i][0], &f, &err) != 0);
		CHECK_STR(err.msg, bad[i][1]);
	}
	const char *why = NULL;
	CHECK(vpa_rawfmt_sox("signed-integer", 24, 1, 48000, 2, &f, &why) == 0);
	CHECK_STR(f.name, "s24be");
	CHECK(vpa_rawfmt_sox("unsigned", 8, 0, 8000, 1, &f, &why) == 0);
	CHECK_STR(f.name, "u8");
	CHECK(vpa_rawfmt_sox("unsigned", 16, 0, 8000, 1, &f, &why) != 0);
	CHECK_STR(why, "unsigned raw PCM is read as 8-bit only (-b 8)");
	CHECK(vpa_rawfmt_sox("a-law", 8, 0, 8000, 1, &f, &why) != 0);
	CHECK(vpa_rawfmt_sox("signed", 16, 0, 8000.5, 1, &f, &why) != 0);
}

/* wav.scp sox forms: what is recorded per recording, and the bad ones by line. */
static void test_wavscp_sox_forms(void)
{
	static const char scp[] =
		"a sox -t raw -r 8k -e signed -b 16 -c 2 a.raw -t wav - |\n"
		"b sox -t raw -r 16000 -e floating-point -b 32 -B b.raw -t wav -r 16000 - |\n"
		"c sox c.flac -t wav -r 16000 -b 16 -e signed-integer -c 1 - |\n"
		"d sox -t wav d.wav -t wav - |\n";
	struct vpa_datadir d;
	struct vpa_err err;
	vpa_datadir_init(&d);
	vpa_err_init(&err);
	CHECK(vpa_datadir_parse(&d, "wav.scp", scp, strlen(scp), NULL, NULL, 0, &err) == 0);
	CHECK(d.n_rec == 4);
	if (d.n_rec == 4) {
		CHECK_STR(d.rec_path[0], "a.raw");
		CHECK_STR(d.rec_raw[0].name, "s16le");
		CHECK(d.rec_raw[0].rate == 8000 && d.rec_raw[0].channels == 2 && d.rec_rate[0] == 0);
		CHECK_STR(d.rec_raw[1].name, "f32be");
		CHECK(d.rec_rate[1] == 16000);
		CHECK(d.rec_raw[2].sf_format == 0 && d.rec_rate[2] == 16000);
		CHECK(d.rec_raw[3].sf_format == 0 && d.rec_rate[3] == 0);
	}
	vpa_datadir_release(&d);
	static const char *const bad[][2] = {
		{"x sox -t raw -r 8000 -e mu-law -b 8 x.raw -t wav - |\n",
		 "wav.scp:1: sox -t raw -e mu-law -b 8: expected -e signed-integer, unsigned-integer or floating-point"},
		{"x sox -t raw -r 8000 -b 16 x.raw -t wav - |\n",
		 "wav.scp:1: sox -t raw input needs -r RATE, -e ENCODING and -b BITS before the file"},
		{"x sox -t raw -r 8000 -e signed -b 16 -c 0 x.raw -t wav - |\n",
		 "wav.scp:1: sox -c needs a number in [1, 64], got '0'"},
		{"x sox -G x.wav -t wav - |\n",
		 "wav.scp:1: sox input option '-G' is not supported (sox is not executed): expected 'sox [-t raw -r N -e ENC -b BITS [-c N] [-L|-B]] FILE -t wav [-r N] - |'"},
		{"x sox -e signed x.wav -t wav - |\n",
		 "wav.scp:1: sox -r/-e/-b/-c/-L/-B before the input file apply to '-t raw' input only (a file with a header gives its own)"},
		{"x sox x.wav -t wav -r fast - |\n", "wav.scp:1: sox -r needs a rate, got 'fast'"},
		{"x sox x.wav -t wav - remix 1 |\n",
		 "wav.scp:1: sox effect 'remix' is not supported (sox is not executed): expected 'sox FILE -t wav [-r N] [-b 16] [-e signed-integer] [-c 1] - |'"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		vpa_datadir_init(&d);
		vpa_err_init(&err);
		CHECK(vpa_datadir_parse(&d, "wav.scp", bad[i][0], strlen(bad[i][0]), NULL, NULL, 0, &err) != 0);
		CHECK_STR(err.msg, bad[i][1]);
		vpa_datadir_release(&d);
	}
}

/* Raw PCM (pipe form and --raw-format's path) gives the WAV's samples; a 2-channel raw file with a channel. */
static void test_raw_read(void)
{
	struct vpa_err err;
	struct vpa_wave a, b;
	struct vpa_rawfmt f;
	vpa_err_init(&err);
	vpa_wave_init(&a), vpa_wave_init(&b);
	CHECK(vpa_rawfmt_parse("s16le:16000", &f, &err) == 0);
	CHECK(vpa_audio_read_fmt(G "pcm16k.raw", &f, -1, &a, &err) == 0);
	CHECK(vpa_audio_read(G "in16k.wav", -1, &b, &err) == 0);
	CHECK(a.n == b.n && a.n == 4000 && a.rate == 16000);
	CHECK(a.n == b.n && !memcmp(a.x, b.x, a.n * sizeof(float)));
	vpa_wave_release(&a);
	/* the same bytes as 2 channels at 8 kHz: channel 1 = the odd samples */
	CHECK(vpa_rawfmt_parse("s16le:8000:2", &f, &err) == 0);
	CHECK(vpa_audio_read_fmt(G "pcm16k.raw", &f, -1, &a, &err) != 0);
	CHECK(strstr(err.msg, "2 channels: pick one with --channel N") != NULL);
	vpa_err_init(&err);
	CHECK(vpa_audio_read_fmt(G "pcm16k.raw", &f, 1, &a, &err) == 0);
	CHECK(a.n == 2000 && a.rate == 8000);
	int same = a.n == 2000;
	for (size_t i = 0; same && i < a.n; i++)
		same = a.x[i] == b.x[2 * i + 1];
	CHECK(same);
	vpa_wave_release(&a), vpa_wave_release(&b);
}

/* vpa_datadir_set_rate: refused without the direction, resampled with it
 * (the same samples as vpa_wave_resample), counted. */
static void test_set_rate(void)
{
	char *files[] = {G "in8k.wav"};
	struct vpa_datadir d;
	struct vpa_err err;
	struct vpa_wave w, r;
	vpa_datadir_init(&d);
	vpa_err_init(&err);
	vpa_wave_init(&w), vpa_wave_init(&r);
	CHECK(vpa_datadir_from_files(&d, files, 1, -1, &err) == 0);
	vpa_datadir_set_rate(&d, 16000, VPA_ALLOW_DOWN, 1);
	CHECK(vpa_datadir_load(&d, 0, &w, NULL, &err) != 0);
	CHECK_STR(err.msg, "'" G "in8k.wav' is at 8000 Hz, expected 16000 Hz: resample it with --allow-upsample");
	vpa_datadir_set_rate(&d, 16000, VPA_ALLOW_DOWN, 0);
	vpa_err_init(&err);
	CHECK(vpa_datadir_load(&d, 0, &w, NULL, &err) != 0);
	CHECK_STR(err.msg, "'" G "in8k.wav' is at 8000 Hz, expected 16000 Hz");
	vpa_datadir_set_rate(&d, 16000, VPA_ALLOW_UP, 1);
	unsigned long c0 = vpa_resample_count();
	vpa_err_init(&err);
	CHECK(vpa_datadir_load(&d, 0, &w, NULL, &err) == 0);
	CHECK(vpa_resample_count() == c0 + 1);
	CHECK(vpa_audio_read(G "in8k.wav", -1, &r, &err) == 0);
	CHECK(vpa_wave_resample(&r, 16000, "in8k", &err) == 0);
	CHECK(w.n == 8000 && r.n == 8000 && w.rate == 16000);
	CHECK(w.n == r.n && !memcmp(w.x, r.x, w.n * sizeof(float)));
	vpa_wave_release(&w), vpa_wave_release(&r);
	vpa_datadir_release(&d);
	/* lengths as sox: round(n * out / in) */
	CHECK(vpa_resample_len(22050, 44100, 16000) == 8000);
	CHECK(vpa_resample_len(1001, 44100, 16000) == 363); /* 363.17 */
	CHECK(vpa_resample_len(1, 48000, 8000) == 0);
	/* too short to give one sample */
	float one = 1;
	struct vpa_wave t = {xmalloc(sizeof(float)), 1, 48000};
	t.x[0] = one;
	vpa_err_init(&err);
	CHECK(vpa_wave_resample(&t, 8000, "tiny", &err) != 0);
	CHECK_STR(err.msg, "tiny: 1 samples at 48000 Hz give no sample at 8000 Hz");
	vpa_wave_release(&t);
}

/* The scenarios' path: vpa_xvec_set_load of a 44.1 kHz data directory gives 16 kHz features. */
static void test_scenario_path(void)
{
	char cwd[4096];
	CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
	char line[8192];
	snprintf(line, sizeof(line), "u1 %s/%s\n", cwd, G "in44k.wav");
	put("wav.scp", line);
	put("utt2spk", "u1 s1\n");
	struct vpa_feat_opts o;
	vpa_feat_opts_init(&o, VPA_FEAT_FBANK);
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_feat *fe = vpa_feat_new(&o, &err);
	struct vpa_xvec_set s;
	unsigned long c0 = vpa_resample_count();
	CHECK(vpa_xvec_set_load(tmpdir, fe, 1, &s, &err) == 0);
	CHECK(s.n == 1 && s.feats[0].rows == 48 && s.feats[0].cols == 23);
	CHECK(vpa_resample_count() == c0 + 1);
	vpa_xvec_set_release(&s);
	vpa_feat_free(fe);
}

/* Warping at 44.1 kHz (a 32 ms window is 1411.2 samples, rounded to 1412): alpha 0 is the identity. */
static void test_warp_44k(void)
{
	struct vpa_err err;
	struct vpa_wave w;
	vpa_err_init(&err);
	vpa_wave_init(&w);
	CHECK(vpa_audio_read(G "in44k.wav", -1, &w, &err) == 0);
	struct vpa_warp_opts o;
	vpa_warp_opts_init(&o);
	o.alpha = 0;
	float *y = NULL;
	CHECK(vpa_warp(w.x, w.n, 44100, &o, &y, &err) == 0);
	double md = 0;
	for (size_t i = 0; y && i < w.n; i++)
		md = fmax(md, fabs(y[i] - w.x[i]));
	CHECK(y && md < 0.05); /* the 16 kHz identity test's bound (float FFT, values to ~1.6e4) */
	free(y);
	o.alpha = 0.1;
	CHECK(vpa_warp(w.x, w.n, 44100, &o, &y, &err) == 0);
	free(y);
	vpa_wave_release(&w);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/vpa_audio31_XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	RUN(test_resample_vs_sox);
	RUN(test_rawfmt);
	RUN(test_wavscp_sox_forms);
	RUN(test_raw_read);
	RUN(test_set_rate);
	RUN(test_scenario_path);
	RUN(test_warp_44k);
	static const char *const made[] = {"wav.scp", "utt2spk"};
	for (size_t i = 0; i < 2; i++) {
		char q[256];
		snprintf(q, sizeof(q), "%s/%s", tmpdir, made[i]);
		unlink(q);
	}
	rmdir(tmpdir);
	return DONE();
}
