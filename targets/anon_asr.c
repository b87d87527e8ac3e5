/*
 * targets/anon_asr.c - `audio.asr` of the anonymised_speech target: vpaudit's
 * embedded recogniser (CMU PocketSphinx, audio/asr.h) on the original and the
 * anonymised trial sets, scored against the trial `text` exactly as `hyp` /
 * `hyp_anon` files are (audio/wer.c, wer_normalise, wer_strict), the records
 * naming the recogniser, its version and model.  On the built-in synthetic
 * corpus the WER is also given per voice family (espeak-ng, flite: the
 * recogniser handles them very differently, so the anonymiser's cost is read
 * on the family it recognises) with a sentence naming the family it
 * recognises poorly.
 *
 * The key is a mapping whose `recogniser` names the kind: `pocketsphinx`
 * (with an optional `model` folder) or `onnx`, the user's ONNX CTC model
 * (`model`, `tokens` and asr/ctc.h's options; greedy decoding, as `vpaudit
 * asr --onnx`), named in the records by its file and SHA-256.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audio/asr.h"
#include "base/inputs.h"
#include "base/json.h"
#include "base/strmap.h"
#include "targets/anon.h"
#include "targets/anon_asr_ctc.h"

#define INF INFINITY

#define AO struct vpa_anon_asr_opts
static const struct vpa_key asr_keys[] = {
	{"recogniser", VPA_K_ENUM, 1, NULL, -INF, INF, 0, "pocketsphinx|onnx", NULL, "pocketsphinx",
	 "the recogniser: pocketsphinx = CMU PocketSphinx 5prealpha with its US-English model "
	 "(Debian pocketsphinx-en-us), each utterance decoded whole at 16 kHz (resampled with "
	 "libsoxr when the audio is at another rate, counted in the record), as "
	 "`vpaudit asr` and `pocketsphinx_batch -adcin yes`; onnx = your ONNX CTC model "
	 "(`model`, `tokens`: wav2vec2 / HuBERT / Conformer-CTC exports), greedy decoding, "
	 "as `vpaudit asr --onnx`",
	 VPA_AT(AO, recogniser), VPA_MARK(AO, recogniser_at)},
	{"model", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "models/en-us",
	 "pocketsphinx: the model folder (en-us/, en-us.lm.bin, cmudict-en-us.dict); default "
	 VPA_ASR_PS_MODEL_DIR "; onnx: the ONNX CTC model (required)",
	 VPA_AT(AO, model), VPA_MARK(AO, model_at)},
	{"tokens", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "models/tokens.txt",
	 "onnx: the tokens file, one per line, line k = output index k (required)",
	 VPA_AT(AO, tokens), VPA_MARK(AO, tokens_at)},
	{"blank", VPA_K_INT, 0, "0", 0, 1000000, 0, NULL, NULL, "0",
	 "onnx: index of the CTC blank token", VPA_AT(AO, blank), VPA_MARK(AO, blank_at)},
	{"delimiter", VPA_K_STR, 0, "|", -INF, 64, 0, NULL, NULL, "sentencepiece",
	 "onnx: the word delimiter token (`|` as wav2vec2's vocabularies; `sentencepiece` for "
	 "U+2581; `none`)",
	 VPA_AT(AO, delimiter), VPA_MARK(AO, delimiter_at)},
	{"input", VPA_K_ENUM, 0, "waveform", -INF, INF, 0, "waveform|features", NULL, "features",
	 "onnx: what the model takes: the waveform [1, samples] at 16 kHz, scaled to [-1, 1], "
	 "or vpaudit's fbank (the defaults of `vpaudit features`)",
	 VPA_AT(AO, input), VPA_MARK(AO, input_at)},
	{"layout", VPA_K_ENUM, 0, "btf", -INF, INF, 0, "btf|bft", NULL, "bft",
	 "onnx, features input: [1, T, F] or [1, F, T]", VPA_AT(AO, layout), VPA_MARK(AO, layout_at)},
	{"wave_norm", VPA_K_BOOL, 0, "false", -INF, INF, 0, NULL, NULL, "true",
	 "onnx, waveform input: zero mean and unit variance per utterance (Hugging Face's "
	 "do_normalize)",
	 VPA_AT(AO, wave_norm), VPA_MARK(AO, wave_norm_at)},
	{NULL},
};
#undef AO
const struct vpa_schema vpa_anon_asr_schema = {"asr", asr_keys, sizeof(struct vpa_anon_asr_opts)};

/* the CTC request of an `asr: {recogniser: onnx}` mapping; paths joined to dir
 * (r->model, r->tokens: the caller frees) */
static void ctc_req_of(const struct vpa_anon_asr_opts *ao, const char *dir, int threads,
		       struct vpa_anon_ctc_req *r)
{
	memset(r, 0, sizeof(*r));
	r->model = ao->model ? vpa_path_join(dir, ao->model) : NULL;
	r->tokens = ao->tokens ? vpa_path_join(dir, ao->tokens) : NULL;
	r->blank = (long)ao->blank;
	r->delimiter = ao->delimiter;
	r->features = !strcmp(ao->input, "features");
	r->bft = !strcmp(ao->layout, "bft");
	r->wave_norm = ao->wave_norm;
	r->threads = threads;
}

/* recogniser: onnx needs model and tokens; the model is loaded once here so that a
 * wrong file, an unsupported operator or a tokens file of the wrong size is a
 * validation error at the key */
static int validate_onnx(const struct vpa_kind_ctx *ctx, const struct vpa_anon_asr_opts *ao,
			 struct vpa_err *err)
{
	if (!ao->model || !ao->tokens) {
		struct vpa_loc loc = vpa_mark_key_loc(ctx->file, ao->recogniser_at);
		return vpa_fail(err, VPA_EINPUT, &loc,
				"`recogniser: onnx` needs `model` (the ONNX CTC model) and `tokens` "
				"(line k = output index k)");
	}
	struct vpa_anon_ctc_req r;
	ctc_req_of(ao, ctx->dir, 1, &r);
	struct vpa_err e2;
	vpa_err_init(&e2);
	struct vpa_anon_ctc *c = NULL;
	int rc = vpa_anon_ctc_open(&r, &c, &e2);
	vpa_anon_ctc_close(c);
	free((char *)r.model);
	free((char *)r.tokens);
	if (rc) {
		struct vpa_loc loc = vpa_mark_loc(ctx->file, strstr(e2.msg, "tokens") || strstr(e2.msg, ".txt")
								 ? ao->tokens_at
								 : ao->model_at);
		return vpa_fail(err, rc, &loc, "%s", e2.msg);
	}
	return 0;
}

int vpa_anon_asr_validate(const struct vpa_kind_ctx *ctx, const struct vpa_anon_audio_opts *au,
			  struct vpa_err *err)
{
	if (!au->asr_at.line)
		return 0;
	const struct vpa_mark h_at[2] = {au->hyp_at, au->hyp_anon_at};
	for (int h = 0; h < 2; h++)
		if (h_at[h].line) {
			struct vpa_loc loc = vpa_mark_key_loc(ctx->file, h_at[h]);
			return vpa_fail(err, VPA_EINPUT, &loc,
					"`%s` cannot be given with `asr`: the hypotheses are either "
					"yours or vpaudit's recogniser's",
					h ? "hyp_anon" : "hyp");
		}
	const struct vpa_anon_asr_opts *ao = &au->asr;
	if (!strcmp(ao->recogniser, "onnx"))
		return validate_onnx(ctx, ao, err);
	const struct vpa_mark only_onnx[5] = {ao->tokens_at, ao->blank_at, ao->delimiter_at,
					      ao->input_at, ao->layout_at};
	const char *names[5] = {"tokens", "blank", "delimiter", "input", "layout"};
	for (int k = 0; k < 6; k++) {
		struct vpa_mark m = k < 5 ? only_onnx[k] : ao->wave_norm_at;
		if (m.line) {
			struct vpa_loc loc = vpa_mark_key_loc(ctx->file, m);
			return vpa_fail(err, VPA_EINPUT, &loc,
					"`%s` applies to `recogniser: onnx` (PocketSphinx has its own "
					"model folder)",
					k < 5 ? names[k] : "wave_norm");
		}
	}
	char *dir = au->asr.model ? vpa_path_join(ctx->dir, au->asr.model) : NULL;
	struct vpa_err e2;
	vpa_err_init(&e2);
	int rc = vpa_asr_ps_check(dir, &e2);
	free(dir);
	if (rc) {
		struct vpa_loc loc = vpa_mark_loc(ctx->file, au->asr.model_at.line ? au->asr.model_at
									 : au->asr.recogniser_at);
		return vpa_fail(err, rc, &loc, "%s", e2.msg);
	}
	return 0;
}

/* The family of each speaker of speakers.txt (`SPK GENDER SET SYNTH ...`): *fam[k] the names
 * in order of first appearance, spk -> k in m, whose keys point into *keep (the file's text:
 * the caller frees it after the map). */
static int read_families(const char *path, struct vpa_strmap *m, char ***fam, size_t *nf,
			 char **keep, struct vpa_err *err)
{
	char *data;
	size_t len;
	int rc = vpa_read_file(path, &data, &len, err);
	if (rc)
		return rc;
	*keep = data;
	*fam = NULL;
	*nf = 0;
	char *save = NULL;
	for (char *line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *tok[4], *s2 = NULL;
		int n = 0;
		for (char *t = strtok_r(line, " \t", &s2); t && n < 4; t = strtok_r(NULL, " \t", &s2))
			tok[n++] = t;
		if (n < 4)
			continue;
		size_t k = 0;
		while (k < *nf && strcmp((*fam)[k], tok[3]))
			k++;
		if (k == *nf) {
			*fam = xrealloc(*fam, xmul(*nf + 1, sizeof(char *)));
			(*fam)[(*nf)++] = xstrdup(tok[3]);
		}
		vpa_strmap_put(m, tok[0], (uint32_t)k, NULL);
	}
	return 0;
}

/* the first word of a text line (up to a blank) as a NUL-terminated copy in buf */
static const char *first_word(const char *line, size_t n, char *buf, size_t cap)
{
	size_t i = 0;
	while (i < n && line[i] != ' ' && line[i] != '\t' && i + 1 < cap)
		i++;
	memcpy(buf, line, i);
	buf[i] = 0;
	return buf;
}

static struct vpa_json *wer_json(const struct vpa_asr_wer *w)
{
	struct vpa_json *wo = vpa_json_obj();
	/* a fraction, as every rate of results.json (reports print percent) */
	vpa_json_set_num(wo, "wer", w->wer / 100);
	vpa_json_set_num(wo, "ref_words", (double)w->ref_words);
	vpa_json_set_num(wo, "ins", (double)w->ins);
	vpa_json_set_num(wo, "del", (double)w->del);
	vpa_json_set_num(wo, "sub", (double)w->sub);
	return wo;
}

/* One set: decode, score, set o[key]. fam_wer (nf, may be NULL) gets each family's WER. */
static int one_set(const struct vpa_run_ctx *ctx, const struct vpa_anon_audio_opts *au,
		   const struct vpa_anon_ctc *ctc, const char *ctc_about,
		   const char *dir, const char *ref_dir, const char *key, const struct vpa_strmap *spk_fam,
		   char *const *fam, size_t nf, double *fam_wer, struct vpa_json *o, struct vpa_err *err)
{
	struct vpa_datadir d;
	vpa_datadir_init(&d);
	char **hyps = NULL, *about = NULL, *model = NULL, *ref = NULL;
	size_t ref_len = 0;
	struct vpa_buf hb;
	vpa_buf_init(&hb);
	int rc = vpa_datadir_open(&d, dir, -1, err);
	if (rc)
		goto out;
	int onnx = !strcmp(au->asr.recogniser, "onnx");
	double rate = VPA_ASR_RATE;
	unsigned long rs0 = vpa_resample_count();
	if (onnx) {
		/* the model loaded and named once for both sets (vpa_anon_asr_wer) */
		vpa_progress_note("%s: speech recognition (ONNX CTC) of %zu utterances", key, d.n_utt);
		rate = vpa_anon_ctc_rate(ctc);
		about = xstrdup(ctc_about);
		if ((rc = vpa_anon_ctc_run(ctc, &d, &hyps, err)))
			goto out;
	} else {
		/* the recogniser takes 16 kHz: any other rate is resampled (libsoxr), and counted */
		vpa_datadir_set_rate(&d, VPA_ASR_RATE, VPA_ALLOW_DOWN | VPA_ALLOW_UP, 0);
		model = au->asr.model ? vpa_path_join(ctx->dir, au->asr.model) : NULL;
		vpa_progress_note("%s: speech recognition (PocketSphinx) of %zu utterances", key,
				  d.n_utt);
		if ((rc = vpa_asr_ps_datadir(&d, model, ctx->threads, &hyps, &about, NULL, err)))
			goto out;
	}
	unsigned long rs = vpa_resample_count() - rs0;
	for (size_t i = 0; i < d.n_utt; i++) {
		vpa_buf_puts(&hb, d.utt[i]);
		if (hyps[i][0]) {
			vpa_buf_puts(&hb, " ");
			vpa_buf_puts(&hb, hyps[i]);
		}
		vpa_buf_puts(&hb, "\n");
	}
	char *ref_path = vpa_path_join(ref_dir, "text");
	rc = vpa_read_file(ref_path, &ref, &ref_len, err);
	struct vpa_asr_wer w;
	memset(&w, 0, sizeof(w));
	if (!rc)
		rc = vpa_asr_wer_text(ref_path, ref, ref_len, key, hb.data ? hb.data : "", hb.len,
				      au->wer_normalise, au->wer_strict, &w, err);
	if (!rc && w.n_absent)
		vpa_warn("%s: %zu utterance%s of %s not in %s: scored as deletions", key, w.n_absent,
			 w.n_absent == 1 ? "" : "s", ref_path, dir);
	if (rc) {
		free(ref_path);
		goto out;
	}
	struct vpa_json *j = wer_json(&w);
	vpa_json_set_num(j, "not_present_in_hyp", (double)w.n_absent);
	vpa_json_set_str(j, "normalise", au->wer_normalise);
	struct vpa_json *r = vpa_json_obj();
	vpa_json_set_str(r, "name", onnx ? "ONNX CTC model (greedy decoding)" : "CMU PocketSphinx");
	vpa_json_set_str(r, "version", onnx ? "vpaudit's ONNX engine" : vpa_asr_ps_version());
	vpa_json_set_str(r, "model", about);
	vpa_json_set_num(r, "rate", rate);
	vpa_json_set_num(r, "resampled_utterances", (double)rs);
	vpa_json_set(j, "recogniser", r);
	if (nf && d.utt_spk) {
		/* the same scoring on each family's utterances: reference and hypothesis lines
		 * kept by the speaker of their utterance */
		struct vpa_strmap uf;
		vpa_strmap_init(&uf);
		for (size_t i = 0; i < d.n_utt; i++) {
			uint32_t k;
			if (vpa_strmap_get(spk_fam, d.utt_spk[i], &k))
				vpa_strmap_put(&uf, d.utt[i], k, NULL);
		}
		struct vpa_json *pf = vpa_json_obj();
		for (size_t k = 0; k < nf && !rc; k++) {
			struct vpa_buf rb, fb;
			vpa_buf_init(&rb);
			vpa_buf_init(&fb);
			const char *texts[2] = {ref, hb.data ? hb.data : ""};
			size_t lens[2] = {ref_len, hb.len};
			struct vpa_buf *outs[2] = {&rb, &fb};
			size_t n_utt = 0;
			for (int t = 0; t < 2; t++) {
				const char *p = texts[t], *end = p + lens[t];
				while (p < end) {
					const char *nl = memchr(p, '\n', (size_t)(end - p));
					size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
					char id[512];
					uint32_t fk;
					first_word(p, n, id, sizeof(id));
					if (vpa_strmap_get(&uf, id, &fk) && fk == k) {
						vpa_buf_add(outs[t], p, n);
						vpa_buf_puts(outs[t], "\n");
						n_utt += t == 0;
					}
					p += n + 1;
				}
			}
			if (n_utt) {
				struct vpa_asr_wer fw;
				memset(&fw, 0, sizeof(fw));
				rc = vpa_asr_wer_text(ref_path, rb.data, rb.len, key,
						      fb.data ? fb.data : "", fb.len, au->wer_normalise,
						      au->wer_strict, &fw, err);
				if (!rc) {
					struct vpa_json *fj = wer_json(&fw);
					vpa_json_set_num(fj, "utterances", (double)n_utt);
					vpa_json_set(pf, fam[k], fj);
					if (fam_wer)
						fam_wer[k] = fw.wer;
				}
			}
			vpa_buf_release(&rb);
			vpa_buf_release(&fb);
		}
		vpa_strmap_release(&uf);
		vpa_json_set(j, "per_voice_family", pf);
	}
	free(ref_path);
	vpa_json_set(o, key, j);
out:
	if (hyps)
		for (size_t i = 0; i < d.n_utt; i++)
			free(hyps[i]);
	free(hyps);
	free(about);
	free(model);
	free(ref);
	vpa_buf_release(&hb);
	vpa_datadir_release(&d);
	return rc;
}

int vpa_anon_asr_wer(const struct vpa_run_ctx *ctx, const struct vpa_anon_audio_opts *au,
		     const char *trial, const char *trial_anon, const char *speakers,
		     struct vpa_json *o, struct vpa_err *err)
{
	struct vpa_strmap spk;
	vpa_strmap_init(&spk);
	char **fam = NULL, *keep = NULL;
	size_t nf = 0;
	int rc = speakers ? read_families(speakers, &spk, &fam, &nf, &keep, err) : 0;
	double *fw = nf ? xcalloc(nf, sizeof(double)) : NULL;
	for (size_t k = 0; k < nf; k++)
		fw[k] = -1;
	/* recogniser: onnx: the model loaded once for both sets, and named by its file
	 * and content (read once more, through the recording reader: it is an input) */
	struct vpa_anon_ctc *ctc = NULL;
	char *about = NULL;
	if (!rc && !strcmp(au->asr.recogniser, "onnx")) {
		struct vpa_anon_ctc_req r;
		ctc_req_of(&au->asr, ctx->dir, ctx->threads, &r);
		rc = vpa_anon_ctc_open(&r, &ctc, err);
		char *data = NULL, hex[65];
		size_t len = 0;
		if (!rc && !(rc = vpa_read_file(r.model, &data, &len, err))) {
			vpa_sha256_hex(data, len, hex);
			struct vpa_buf ab;
			vpa_buf_init(&ab);
			vpa_buf_printf(&ab, "%s (sha256 %.12s), tokens %s", r.model, hex, r.tokens);
			about = xstrdup(vpa_buf_str(&ab));
			vpa_buf_release(&ab);
		}
		free(data);
		free((char *)r.model);
		free((char *)r.tokens);
	}
	if (!rc)
		rc = one_set(ctx, au, ctc, about, trial, trial, "wer_orig", &spk, fam, nf, fw, o,
			     err);
	if (!rc && trial_anon)
		rc = one_set(ctx, au, ctc, about, trial_anon, trial, "wer_anon", &spk, fam, nf, NULL,
			     o, err);
	if (!rc && nf > 1) {
		/* the sentence the report prints: which voices the recogniser handles, on the
		 * original trials (the anonymiser's cost is read on those) */
		size_t worst = nf, best = nf;
		for (size_t k = 0; k < nf; k++) {
			if (fw[k] < 0)
				continue;
			if (worst == nf || fw[k] > fw[worst])
				worst = k;
			if (best == nf || fw[k] < fw[best])
				best = k;
		}
		if (worst != nf && best != worst) {
			struct vpa_buf b;
			vpa_buf_init(&b);
			vpa_buf_printf(&b,
				       "%s recognises the %s voices poorly (WER %.1f%% on the "
				       "original trials) and the %s voices best (WER %.1f%%): read the "
				       "anonymiser's WER cost on the %s voices",
				       strcmp(au->asr.recogniser, "onnx") ? "PocketSphinx"
									 : "The ONNX model",
				       fam[worst], fw[worst], fam[best], fw[best], fam[best]);
			vpa_json_set_str(o, "asr_note", vpa_buf_str(&b));
			vpa_buf_release(&b);
		}
	}
	vpa_anon_ctc_close(ctc);
	free(about);
	for (size_t k = 0; k < nf; k++)
		free(fam[k]);
	free(fam);
	free(fw);
	vpa_strmap_release(&spk);
	free(keep);
	return rc;
}
