/*
 * tests/unit/test_asr.c - the embedded recogniser (audio/asr_ps.c) against
 * pocketsphinx_batch's own hypotheses (tests/golden/asr/batch.hyp, written by
 * tests/golden/asr/gen.py: one pocketsphinx_batch -adcin yes process per
 * utterance) on wav.scp: pocketsphinx-testdata's 8 short recordings and 5
 * synthetic utterances (its 5 LibriVox recordings are tests/e2e/test_asr.sh's), the independence of an utterance's decode from the ones
 * before it (noise tracker, live CMN), the bad input, and the target's
 * `audio.asr` (targets/anon_asr.c): WER and WER per voice family of the five
 * synthetic utterances against counts from an independent Levenshtein distance
 * of batch.hyp and synth/text (Python, by hand, normalised as the VPC).
 */
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "audio/asr.h"
#include "base/json.h"
#include "targets/anon.h"
#include "harness.h"

#define G "tests/golden/asr/"

/* utterance i's hypothesis in batch.hyp (the text after "ID "), or NULL */
static char *golden(const char *id)
{
	FILE *f = fopen(G "batch.hyp", "r");
	char line[4096], *r = NULL;
	size_t n = strlen(id);
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, id, n) && (line[n] == ' ' || !line[n])) {
			r = xstrdup(line[n] ? line + n + 1 : "");
			break;
		}
	}
	if (f)
		fclose(f);
	return r;
}

static int have_model(void)
{
	FILE *f = fopen(VPA_ASR_PS_MODEL_DIR "/en-us.lm.bin", "rb");
	FILE *g = fopen("/usr/share/pocketsphinx/test/data/cards/001.wav", "rb");
	int ok = f && g;
	if (f)
		fclose(f);
	if (g)
		fclose(g);
	if (!ok)
		printf("# SKIP: pocketsphinx-en-us or pocketsphinx-testdata not installed\n");
	return ok;
}

/* Every utterance with 2 decoders sharing them (each decoder sees a different sequence of
 * utterances): equal to pocketsphinx_batch on that utterance alone. */
static void test_golden_batch(void)
{
	if (!have_model())
		return;
	struct vpa_datadir d;
	vpa_datadir_init(&d);
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_datadir_open(&d, G "wav.scp", -1, &err) == 0);
	CHECK(d.n_utt == 13);
	char **hyps = NULL, *about = NULL;
	const char *line = NULL;
	int rc = vpa_asr_ps_datadir(&d, NULL, 2, &hyps, &about, &line, &err);
	CHECK(rc == 0);
	if (rc) {
		printf("#   %s\n", err.msg);
		vpa_datadir_release(&d);
		return;
	}
	CHECK(about && strstr(about, "en-us.lm.bin"));
	size_t same = 0;
	for (size_t i = 0; i < d.n_utt; i++) {
		char *g = golden(d.utt[i]);
		CHECK(g != NULL);
		if (g && !strcmp(g, hyps[i]))
			same++;
		else
			printf("#   %s: '%s', pocketsphinx_batch '%s'\n", d.utt[i], hyps[i], g ? g : "?");
		free(g);
		free(hyps[i]);
	}
	CHECK(same == d.n_utt);
	free(hyps);
	free(about);
	vpa_datadir_release(&d);
}

static int load(const char *path, struct vpa_wave *w)
{
	struct vpa_err err;
	vpa_err_init(&err);
	vpa_wave_init(w);
	return vpa_audio_read(path, -1, w, &err);
}

/* One decoder, utterances in both orders: each decode equals the same utterance's in the
 * other order (with_golden: b after a equals b alone, pocketsphinx_batch's).  synm005-02 then synf006-02 changed words of the latter before the
 * noise tracker was reset per utterance. */
static void check_orders(const char *cmn, const char *a, const char *b, int with_golden)
{
	struct vpa_wave wa, wb;
	CHECK(load(a, &wa) == 0);
	CHECK(load(b, &wb) == 0);
	struct vpa_asr_ps *ps = NULL;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_asr_ps_new_cmn(NULL, 1, cmn, &ps, &err) == 0);
	if (!ps)
		return;
	char *h[4] = {0};
	CHECK(vpa_asr_ps_decode(ps, 0, &wa, "a", &h[0], &err) == 0);
	CHECK(vpa_asr_ps_decode(ps, 0, &wb, "b", &h[1], &err) == 0);
	if (with_golden) {
		/* the golden is b decoded alone (a fresh process) */
		char *g = golden("synf006-02");
		CHECK_STR(h[1], g);
		free(g);
	} else {
		CHECK(vpa_asr_ps_decode(ps, 0, &wb, "b", &h[2], &err) == 0);
		CHECK(vpa_asr_ps_decode(ps, 0, &wa, "a", &h[3], &err) == 0);
		CHECK_STR(h[0], h[3]);
		CHECK_STR(h[1], h[2]);
	}
	for (int i = 0; i < 4; i++)
		free(h[i]);
	vpa_asr_ps_free(ps);
	vpa_wave_release(&wa);
	vpa_wave_release(&wb);
}

static void test_order_independent(void)
{
	if (!have_model())
		return;
	check_orders(NULL, G "synth/synm005-02.wav", G "synth/synf006-02.wav", 1);
}

/* A model with live CMN (forced here: the en-us model's feat.params asks for batch CMN) gets
 * its initial mean back before every utterance. */
static void test_live_cmn_reset(void)
{
	if (!have_model())
		return;
	check_orders("live", "/usr/share/pocketsphinx/test/data/cards/005.wav",
		     "/usr/share/pocketsphinx/test/data/cards/002.wav", 0);
}

static void test_bad_input(void)
{
	struct vpa_asr_ps *ps = NULL;
	struct vpa_err err;
	vpa_err_init(&err);
	/* a model folder without the model: one line naming the folder and the file */
	CHECK(vpa_asr_ps_new("/nonexistent/model", 1, &ps, &err) == VPA_EIO);
	CHECK(ps == NULL);
	CHECK(strstr(err.msg, "/nonexistent/model") && strstr(err.msg, "en-us/mdef"));
	CHECK(!strchr(err.msg, '\n'));
	if (!have_model())
		return;
	vpa_err_init(&err);
	CHECK(vpa_asr_ps_new(NULL, 1, &ps, &err) == 0);
	if (!ps)
		return;
	/* 8 kHz audio is refused, naming the rate it takes */
	float x[800] = {0};
	struct vpa_wave w = {x, 800, 8000};
	char *h = NULL;
	vpa_err_init(&err);
	CHECK(vpa_asr_ps_decode(ps, 0, &w, "u1", &h, &err) == VPA_EINPUT);
	CHECK(h == NULL);
	CHECK(strstr(err.msg, "u1: 8000 Hz") && strstr(err.msg, "16000 Hz"));
	/* silence decodes to no word, not to garbage */
	w.rate = 16000;
	vpa_err_init(&err);
	CHECK(vpa_asr_ps_decode(ps, 0, &w, "u1", &h, &err) == 0);
	CHECK_STR(h, "");
	free(h);
	vpa_asr_ps_free(ps);
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* A trial directory of the five synthetic utterances (flite: synm001, synf002, synm005;
 * espeak-ng: synf004, synf006), its "anonymised" version the same files.  Expected, from
 * batch.hyp (which test_golden_batch ties to vpaudit) and synth/text, upper-cased with
 * punctuation as word breaks ("model t." -> MODEL T): flite 30 reference words, 1 error
 * (CRUDE IN -> CRUDE AND); espeak-ng 21 words, 24 errors (16 + 8); all 51 words, 25 errors. */
static void test_target_wer(void)
{
	if (!have_model())
		return;
	char tpl[] = "/tmp/vpa-test-asr-XXXXXX", cwd[4096], p[8192];
	if (!mkdtemp(tpl) || !getcwd(cwd, sizeof(cwd))) {
		CHECK(0);
		return;
	}
	static const char *const u[5] = {"synm001-01", "synf002-01", "synf004-01", "synm005-02",
					 "synf006-02"};
	struct vpa_buf scp, u2s;
	vpa_buf_init(&scp);
	vpa_buf_init(&u2s);
	for (int i = 0; i < 5; i++) {
		vpa_buf_printf(&scp, "%s %s/" G "synth/%s.wav\n", u[i], cwd, u[i]);
		vpa_buf_printf(&u2s, "%s %.7s\n", u[i], u[i]);
	}
	snprintf(p, sizeof(p), "%s/wav.scp", tpl);
	put(p, vpa_buf_str(&scp));
	snprintf(p, sizeof(p), "%s/utt2spk", tpl);
	put(p, vpa_buf_str(&u2s));
	char *text;
	size_t len;
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_read_file(G "synth/text", &text, &len, &err) == 0);
	snprintf(p, sizeof(p), "%s/text", tpl);
	put(p, text ? text : "");
	free(text);
	snprintf(p, sizeof(p), "%s/speakers.txt", tpl);
	put(p, "synm001 m train flite -voice rms\nsynf002 f train flite -voice slt\n"
	       "synf004 f train espeak-ng -v en-gb-x-gbcwmd+f2\nsynm005 m eval flite -voice kal16\n"
	       "synf006 f eval espeak-ng -v en-us+f3\n");
	struct vpa_anon_audio_opts au;
	memset(&au, 0, sizeof(au));
	au.asr.recogniser = "pocketsphinx";
	au.wer_normalise = "vpc";
	struct vpa_run_ctx ctx = {.file = "t.yaml", .dir = ".", .seed = 1, .threads = 1};
	struct vpa_json *o = vpa_json_obj();
	int rc = vpa_anon_asr_wer(&ctx, &au, tpl, tpl, p, o, &err);
	CHECK(rc == 0);
	if (rc)
		printf("#   %s\n", err.msg);
	for (int h = 0; h < 2 && !rc; h++) {
		const struct vpa_json *w = vpa_json_get(o, h ? "wer_anon" : "wer_orig");
		CHECK(w != NULL);
		if (!w)
			break;
		CHECK_NEAR(vpa_json_get_num(w, "ref_words", -1), 51, 0);
		CHECK_NEAR(vpa_json_get_num(w, "wer", -1), 25.0 / 51, 1e-12);
		CHECK_NEAR(vpa_json_get_num(w, "ins", -1) + vpa_json_get_num(w, "del", -1) +
				   vpa_json_get_num(w, "sub", -1), 25, 0);
		const struct vpa_json *r = vpa_json_get(w, "recogniser");
		CHECK(r && !strcmp(vpa_json_get_str(r, "name"), "CMU PocketSphinx"));
		CHECK(r && strstr(vpa_json_get_str(r, "version"), "5prealpha"));
		CHECK(r && strstr(vpa_json_get_str(r, "model"), "cmudict-en-us.dict"));
		CHECK(r && vpa_json_get_num(r, "resampled_utterances", -1) == 0);
		const struct vpa_json *pf = vpa_json_get(w, "per_voice_family");
		const struct vpa_json *fl = pf ? vpa_json_get(pf, "flite") : NULL;
		const struct vpa_json *es = pf ? vpa_json_get(pf, "espeak-ng") : NULL;
		CHECK(fl && es);
		if (!fl || !es)
			break;
		CHECK_NEAR(vpa_json_get_num(fl, "ref_words", -1), 30, 0);
		CHECK_NEAR(vpa_json_get_num(fl, "wer", -1), 1.0 / 30, 1e-12);
		CHECK_NEAR(vpa_json_get_num(fl, "utterances", -1), 3, 0);
		CHECK_NEAR(vpa_json_get_num(es, "ref_words", -1), 21, 0);
		CHECK_NEAR(vpa_json_get_num(es, "wer", -1), 24.0 / 21, 1e-12);
		CHECK_NEAR(vpa_json_get_num(es, "utterances", -1), 2, 0);
	}
	const char *note = vpa_json_get_str(o, "asr_note");
	CHECK(note && strstr(note, "recognises the espeak-ng voices poorly (WER 114.3%") &&
	      strstr(note, "flite voices best (WER 3.3%)"));
	vpa_json_free(o);
	vpa_buf_release(&scp);
	vpa_buf_release(&u2s);
	static const char *const files[] = {"wav.scp", "utt2spk", "text", "speakers.txt"};
	for (int i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s/%s", tpl, files[i]);
		unlink(p);
	}
	rmdir(tpl);
}

int main(void)
{
	RUN(test_bad_input);
	RUN(test_order_independent);
	RUN(test_live_cmn_reset);
	RUN(test_golden_batch);
	RUN(test_target_wer);
	return DONE();
}
