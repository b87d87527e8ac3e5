/*
 * tests/unit/test_audio_prov.c - issue 31 items 4-7 below the CLI:
 *  - streamed SHA-256 (base/inputs.h) against FIPS 180-2's published digests,
 *    for every split of the input into updates;
 *  - audio files hashed while read (audio/read.c): whole reads, segment reads
 *    (seeks), FLAC, SPHERE and float WAV give the SHA-256 of the file's bytes (hashed here
 *    independently with one vpa_sha256 call), a re-written file a new one,
 *    nothing noted while recording is off or under an ignored folder;
 *  - the header probe (vpa_datadir_probe): a missing, 8 kHz, stereo, empty
 *    file and a segment past the end named at their wav.scp / segments line;
 *  - WER normalisation and missing hypotheses counted by hand;
 *  - vpa_anon_abs, the absolute paths anonymise and synth-corpus write.
 */
#include <sndfile.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audio/anon.h"
#include "audio/anon_int.h"
#include "audio/audio.h"
#include "base/inputs.h"
#include "base/json.h"
#include "harness.h"

static char dir[256];

static const char *tpath(const char *name)
{
	static char p[8][512];
	static int k;
	k = (k + 1) % 8;
	snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
	return p[k];
}

/* n samples of a tone (seeded by seed) at rate, channels, in format fmt. */
static void write_audio(const char *path, int rate, int channels, int fmt, int n, int seed)
{
	SF_INFO info = {0};
	info.samplerate = rate;
	info.channels = channels;
	info.format = fmt;
	SNDFILE *s = sf_open(path, SFM_WRITE, &info);
	if (!s) {
		printf("# cannot write %s: %s\n", path, sf_strerror(NULL));
		exit(1);
	}
	short *x = malloc(sizeof(short) * (size_t)n * (size_t)channels);
	for (int i = 0; i < n * channels; i++)
		x[i] = (short)(8000 * sin(0.01 * (i + 1) * (seed + 1)) + seed);
	sf_writef_short(s, x, n);
	sf_close(s);
	free(x);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

/* The SHA-256 of path's bytes, read here with stdio (not through the read hook). */
static void file_hash(const char *path, char hex[65])
{
	FILE *f = fopen(path, "rb");
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *b = malloc((size_t)n + 1);
	CHECK(fread(b, 1, (size_t)n, f) == (size_t)n);
	fclose(f);
	vpa_sha256_hex(b, (size_t)n, hex);
	free(b);
}

/* The sha256 noted for path ("" when it is not noted). */
static void noted(const char *path, char hex[65])
{
	struct vpa_json *a = vpa_inputs_json();
	hex[0] = 0;
	for (size_t i = 0; i < a->n; i++) {
		const struct vpa_json *o = a->items[i];
		const char *p = vpa_json_get_str(o, "path"), *h = vpa_json_get_str(o, "sha256");
		if (p && h && !strcmp(p, path))
			snprintf(hex, 65, "%s", h);
	}
	vpa_json_free(a);
}

static void test_sha256_stream(void)
{
	static const struct {
		const char *msg, *hex;
	} v[] = {
		/* FIPS 180-2, appendix B.1 and B.2 */
		{"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		 "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
		{"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
	};
	for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
		size_t n = strlen(v[k].msg);
		for (size_t split = 0; split <= n; split++) {
			struct vpa_sha256_ctx c;
			unsigned char d[32];
			char hex[65];
			vpa_sha256_init(&c);
			vpa_sha256_update(&c, v[k].msg, split);
			vpa_sha256_update(&c, v[k].msg + split, n - split);
			vpa_sha256_final(&c, d);
			vpa_sha256_hex_of(d, hex);
			CHECK_STR(hex, v[k].hex);
		}
	}
	/* B.3: one million 'a', in updates of 1, 63, 64, 65, 1000, ... bytes */
	static const size_t steps[] = {1, 63, 64, 65, 1000, 4097};
	char *a = malloc(1000000);
	memset(a, 'a', 1000000);
	for (size_t s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
		struct vpa_sha256_ctx c;
		unsigned char d[32];
		char hex[65];
		vpa_sha256_init(&c);
		for (size_t p = 0; p < 1000000; p += steps[s])
			vpa_sha256_update(&c, a + p, 1000000 - p < steps[s] ? 1000000 - p : steps[s]);
		vpa_sha256_final(&c, d);
		vpa_sha256_hex_of(d, hex);
		CHECK_STR(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	}
	free(a);
}

static void test_read_hashes(void)
{
	const char *w = tpath("h.wav"), *f = tpath("h.flac"), *s = tpath("seg.wav");
	write_audio(w, 16000, 1, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 16000, 1);
	write_audio(f, 16000, 1, SF_FORMAT_FLAC | SF_FORMAT_PCM_16, 40000, 2);
	write_audio(s, 16000, 2, SF_FORMAT_WAV | SF_FORMAT_PCM_24, 100000, 3);
	char want[65], got[65];
	struct vpa_err err;
	struct vpa_wave x;
	double dur;
	vpa_err_init(&err);
	/* recording off: nothing noted */
	vpa_wave_init(&x);
	CHECK(vpa_audio_read(w, -1, &x, &err) == 0);
	vpa_wave_release(&x);
	noted(w, got);
	CHECK_STR(got, "");
	vpa_inputs_begin();
	vpa_wave_init(&x);
	CHECK(vpa_audio_read(w, -1, &x, &err) == 0);
	CHECK(x.n == 16000);
	vpa_wave_release(&x);
	/* a segment in the middle of a long file (a seek past unread bytes), channel 1 */
	CHECK(vpa_audio_read_part(s, 1, 2.0, 2.5, &x, &dur, &err) == 0);
	CHECK(x.n == 8000);
	vpa_wave_release(&x);
	/* FLAC: libsndfile reads it in its own blocks, seeking back for the header */
	CHECK(vpa_audio_read_part(f, -1, 1.0, -1, &x, &dur, &err) == 0);
	CHECK(x.n == 24000);
	vpa_wave_release(&x);
	/* NIST SPHERE (its sample_count read by our own header reader too) and float WAV */
	const char *sp = tpath("h.sph"), *fl = tpath("hf.wav");
	write_audio(sp, 16000, 1, SF_FORMAT_NIST | SF_FORMAT_PCM_16, 12345, 7);
	write_audio(fl, 16000, 1, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 5000, 8);
	CHECK(vpa_audio_read_part(sp, -1, 0.1, 0.2, &x, &dur, &err) == 0);
	CHECK(x.n == 1600);
	vpa_wave_release(&x);
	CHECK(vpa_audio_read(fl, -1, &x, &err) == 0);
	CHECK(x.n == 5000);
	vpa_wave_release(&x);
	const char *files[5] = {w, s, f, sp, fl};
	for (int k = 0; k < 5; k++) {
		file_hash(files[k], want);
		noted(files[k], got);
		CHECK_STR(got, want);
	}
	/* a header probe is not a reading: not noted */
	const char *p = tpath("probe.wav");
	struct vpa_audio_info ai;
	write_audio(p, 16000, 1, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 100, 4);
	CHECK(vpa_audio_probe(p, &ai, &err) == 0);
	noted(p, got);
	CHECK_STR(got, "");
	vpa_inputs_end();
	/* re-written at the same path with the same size: another hash */
	char before[65];
	file_hash(w, before);
	write_audio(w, 16000, 1, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 16000, 5);
	file_hash(w, want);
	CHECK(strcmp(before, want) != 0);
	vpa_inputs_begin();
	CHECK(vpa_audio_read(w, -1, &x, &err) == 0);
	vpa_wave_release(&x);
	noted(w, got);
	CHECK_STR(got, want);
	/* under an ignored folder (the run's own temporaries): not noted */
	mkdir(tpath("own"), 0777);
	const char *o = tpath("own/x.wav");
	write_audio(o, 16000, 1, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 100, 6);
	vpa_inputs_ignore(tpath("own"));
	CHECK(vpa_audio_read(o, -1, &x, &err) == 0);
	vpa_wave_release(&x);
	noted(o, got);
	CHECK_STR(got, "");
	vpa_inputs_end();
}

/* vpa_datadir_check_audio of a directory holding wav.scp (and segments) text. */
static int check_dir(const char *name, const char *scp, const char *seg, double want,
		     struct vpa_err *err)
{
	char d[512];
	snprintf(d, sizeof(d), "%s/%s", dir, name);
	mkdir(d, 0777);
	char p[600];
	snprintf(p, sizeof(p), "%s/wav.scp", d);
	write_text(p, scp);
	if (seg) {
		snprintf(p, sizeof(p), "%s/segments", d);
		write_text(p, seg);
	}
	vpa_err_init(err);
	return vpa_datadir_check_audio(d, want, err);
}

static void test_probe(void)
{
	char scp[4096];
	const char *a = tpath("a16.wav"), *b8 = tpath("b8.wav"), *st = tpath("st.wav"),
		   *em = tpath("empty.wav");
	write_audio(a, 16000, 1, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 16000, 1);
	write_audio(b8, 8000, 1, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 8000, 1);
	write_audio(st, 16000, 2, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 16000, 1);
	write_audio(em, 16000, 1, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 0, 1);
	struct vpa_err err;
	CHECK(vpa_audio_rate_ok(16000, 16000) && vpa_audio_rate_ok(8000, 16000) && !vpa_audio_rate_ok(0, 16000) &&
	      vpa_audio_rate_ok(8000, 0));
	snprintf(scp, sizeof(scp), "r1 %s\nr2 %s\n", a, a);
	CHECK(check_dir("ok", scp, NULL, 16000, &err) == 0);
	snprintf(scp, sizeof(scp), "r1 %s\nr2 %s/nope.wav\n", a, dir);
	CHECK(check_dir("missing", scp, NULL, 16000, &err) == VPA_EIO);
	CHECK(strstr(err.msg, "missing/wav.scp:2: cannot open '") && strstr(err.msg, "nope.wav': No such file"));
	snprintf(scp, sizeof(scp), "r1 %s\nr2 %s\nr3 %s\n", a, a, b8);
	/* another rate passes: a scenario resamples it to the front-end's (libsoxr) */
	CHECK(check_dir("rate", scp, NULL, 16000, &err) == 0);
	CHECK(check_dir("rate_any", scp, NULL, 0, &err) == 0);
	snprintf(scp, sizeof(scp), "r1 %s\n", st);
	CHECK(check_dir("stereo", scp, NULL, 16000, &err) == VPA_EINPUT);
	CHECK(strstr(err.msg, "stereo/wav.scp:1: ") && strstr(err.msg, "2 channels: pick one"));
	/* sph2pipe -c 2 picks channel 1 (0-based): fine; -c 3 does not exist */
	snprintf(scp, sizeof(scp), "r1 sph2pipe -f wav -c 2 %s |\n", st);
	CHECK(check_dir("stereo_c2", scp, NULL, 16000, &err) == 0);
	snprintf(scp, sizeof(scp), "r1 sph2pipe -f wav -c 3 %s |\n", st);
	CHECK(check_dir("stereo_c3", scp, NULL, 16000, &err) == VPA_EINPUT);
	CHECK(strstr(err.msg, "stereo_c3/wav.scp:1: ") && strstr(err.msg, "no channel 2"));
	snprintf(scp, sizeof(scp), "r1 %s\nr2 %s\n", a, em);
	CHECK(check_dir("empty", scp, NULL, 16000, &err) == VPA_EINPUT);
	CHECK(strstr(err.msg, "empty/wav.scp:2: ") && strstr(err.msg, "no audio samples"));
	/* sox -r 8000 of a 16 kHz file: executed as a resampling when read */
	snprintf(scp, sizeof(scp), "r1 sox %s -t wav -r 8000 - |\n", a);
	CHECK(check_dir("soxr", scp, NULL, 0, &err) == 0);
	/* segments: 1 s recording; 0.2-1.4 ends 0.4 s past (cut, as extract-segments), 1.0- starts past */
	snprintf(scp, sizeof(scp), "r1 %s\n", a);
	CHECK(check_dir("seg_ok", scp, "u1 r1 0 0.5\nu2 r1 0.2 1.4\n", 16000, &err) == 0);
	CHECK(check_dir("seg_end", scp, "u1 r1 0 0.5\nu2 r1 0.2 1.6\n", 16000, &err) == VPA_EINPUT);
	CHECK(strstr(err.msg, "seg_end/segments:2: segment 'u2' ends at 1.6 s, past the end of recording 'r1' (1 s)"));
	CHECK(check_dir("seg_start", scp, "u1 r1 1.0 -1\n", 16000, &err) == VPA_EINPUT);
	CHECK(strstr(err.msg, "seg_start/segments:1: segment 'u1' starts at 1 s"));
	/* the same wording as a run's reading (vpa_datadir_load) */
	struct vpa_datadir d;
	struct vpa_wave x;
	vpa_datadir_init(&d);
	vpa_wave_init(&x);
	vpa_err_init(&err);
	CHECK(vpa_datadir_open(&d, tpath("seg_end"), -1, &err) == 0);
	CHECK(vpa_datadir_load(&d, 1, &x, NULL, &err) == VPA_EINPUT);
	CHECK(strstr(err.msg, "seg_end/segments:2: segment 'u2' ends at 1.6 s, past the end of recording 'r1' (1 s)"));
	vpa_datadir_release(&d);
}

static void test_wer_normalise(void)
{
	struct vpa_wer w;
	struct vpa_wer_opts o;
	struct vpa_err err;
	vpa_wer_opts_init(&o);
	vpa_err_init(&err);
	CHECK(o.upper && o.punct && !o.strict);
	/* vpc: DON'T kept (apostrophe inside a word), 'quoted' loses its quotes,
	 * rock-n-roll is three words, "--" none: both sides ROCK N ROLL */
	const char *r = "u1 don't 'quoted' rock-n-roll -- ok.\n";
	const char *h = "u1 DON'T QUOTED ROCK N ROLL OK\n";
	CHECK(vpa_wer_text_opts("r", r, strlen(r), "h", h, strlen(h), &o, &w, &err) == 0);
	CHECK(w.ref_words == 6 && w.ins + w.del + w.sub == 0);
	/* none: as written: don't/DON'T, 'quoted'/QUOTED, rock-n-roll/ROCK sub,
	 * "--"/N sub, ok./ROLL sub, OK inserted (6 hyp words for 5 ref) */
	CHECK(vpa_wer_norm_parse("none", &o) == 0 && !o.upper && !o.punct);
	CHECK(vpa_wer_text_opts("r", r, strlen(r), "h", h, strlen(h), &o, &w, &err) == 0);
	CHECK(w.ref_words == 5 && w.sub == 5 && w.ins == 1 && w.del == 0);
	CHECK(vpa_wer_norm_parse("lower", &o) == -1);
	/* utterance ids are not normalised: U1 is not u1 */
	vpa_wer_opts_init(&o);
	const char *r2 = "U1 a b\n", *h2 = "u1 a b\n";
	vpa_err_init(&err);
	CHECK(vpa_wer_text_opts("r", r2, strlen(r2), "h", h2, strlen(h2), &o, &w, &err) == VPA_EINPUT);
	CHECK(strstr(err.msg, "h:1: utterance 'u1' is not in r"));
	/* missing hypotheses, by hand: h3 lacks u2 (its 3 words deleted), u4 h i / h
	 * (1 del), u1 a b c / a x c (1 sub); h4 lacks u2 and u4 (3 + 2 del) and has
	 * u1's sub: 6 errors / 9 words, 3 of 4 sentences wrong, 2 absent */
	const char *r3 = "u1 a b c\nu2 d e f\nu3 g\nu4 h i\n";
	const char *h3 = "u3 g\nu1 a x c\nu4 h\n";
	const char *h4 = "u1 a x c\nu3 g\n";
	CHECK(vpa_wer_text_opts("r", r3, strlen(r3), "h", h3, strlen(h3), &o, &w, &err) == 0);
	CHECK(w.ref_words == 9 && w.sub == 1 && w.del == 4 && w.ins == 0 && w.n_absent == 1);
	CHECK(vpa_wer_text_opts("r", r3, strlen(r3), "h", h4, strlen(h4), &o, &w, &err) == 0);
	CHECK(w.ref_words == 9 && w.sub == 1 && w.del == 5 && w.ins == 0 && w.n_absent == 2);
	CHECK(w.n_utt == 4 && w.n_utt_err == 3);
	CHECK_NEAR(w.wer, 100.0 * 6 / 9, 1e-12);
	o.strict = 1;
	vpa_err_init(&err);
	CHECK(vpa_wer_text_opts("r", r3, strlen(r3), "h", h4, strlen(h4), &o, &w, &err) == VPA_EINPUT);
	CHECK(strstr(err.msg, "h: utterance 'u2' of r:2 has no hypothesis"));
	/* the old entry points stay compute-wer's strict, unnormalised scoring */
	CHECK(vpa_wer_text("r", r3, strlen(r3), "h", h4, strlen(h4), &w, &err) == VPA_EINPUT);
}

static void test_abs_path(void)
{
	char cwd[4096], *rd = realpath(dir, NULL), want[8192];
	CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
	CHECK(chdir(dir) == 0);
	mkdir("x", 0777);
	char *p = vpa_anon_abs("x/out/");
	snprintf(want, sizeof(want), "%s/x/out", rd);
	CHECK_STR(p, want);
	free(p);
	p = vpa_anon_abs("out");
	snprintf(want, sizeof(want), "%s/out", rd);
	CHECK_STR(p, want);
	free(p);
	p = vpa_anon_abs("./x/../x/o2");
	snprintf(want, sizeof(want), "%s/x/o2", rd);
	CHECK_STR(p, want);
	free(p);
	snprintf(want, sizeof(want), "%s/x/o3", rd);
	p = vpa_anon_abs(want);
	CHECK_STR(p, want);
	free(p);
	CHECK(chdir(cwd) == 0);
	free(rd);
}

int main(void)
{
	const char *td = getenv("TMPDIR");
	snprintf(dir, sizeof(dir), "%s/vpa-prov-XXXXXX", td && *td ? td : "/tmp");
	if (!mkdtemp(dir))
		return 1;
	RUN(test_sha256_stream);
	RUN(test_read_hashes);
	RUN(test_probe);
	RUN(test_wer_normalise);
	RUN(test_abs_path);
	vpa_rm_tree(dir);
	return DONE();
}
