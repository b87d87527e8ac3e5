/*
 * cli/cmd_asr.c - `vpaudit asr DATA -o HYP.txt`: speech recognition of every
 * utterance of a data directory with the embedded recogniser (CMU
 * PocketSphinx, audio/asr.h) or, with --onnx MODEL --tokens T, the user's
 * ONNX CTC model (asr/ctc.h, greedy decoding), a Kaldi `text` of hypotheses
 * out, ready for `vpaudit wer REF HYP`.  The file is written whole at the
 * end under a temporary name (nothing is written on error) and does not
 * depend on --threads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "asr/ctc.h"
#include "asr/ctc_align.h"
#include "audio/asr.h"
#include "cli/audio_in.h"
#include "cli/cli.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vpaudit asr DATA -o HYP.txt [OPTIONS]\n"
		"       vpaudit asr DATA -o HYP.txt --onnx MODEL.onnx --tokens TOKENS.txt [OPTIONS]\n"
		"\n"
		"Speech recognition with the embedded recogniser, %s,\n"
		"and its US-English model (Debian pocketsphinx-en-us: continuous acoustic model,\n"
		"trigram language model, CMU dictionary).  Each utterance is decoded whole on\n"
		"exactly its samples at 16 kHz, as `pocketsphinx_batch -adcin yes` decodes one\n"
		"utterance on its own (default settings; the decoder's noise estimate and CMN put\n"
		"back before every utterance): the hypotheses do not depend on the order of the\n"
		"utterances or on --threads.\n"
		"\n"
		"DATA  a Kaldi data directory, a wav.scp file (name ending in .scp) or audio\n"
		"      files, as for `vpaudit features`.\n"
		"OUT   a Kaldi `text` file: `UTT WORD WORD ...` per utterance in DATA's order\n"
		"      (PocketSphinx's lower-case words, fillers left out; `UTT` alone when\n"
		"      nothing was recognised).  Score it with `vpaudit wer REF OUT`.\n"
		"\n"
		"options:\n"
		"  -o OUT                 where to write (required)\n"
		"  --model=DIR            the model folder: en-us/ (acoustic model), en-us.lm.bin,\n"
		"                         cmudict-en-us.dict (default %s)\n"
		"  --threads=N            utterances decoded in parallel, one decoder (about 100 MB)\n"
		"                         each (default: online CPUs)\n"
		"  --channel=N            channel of multi-channel files (0-based; default: mono)\n"
		CLI_AUDIO_IN_HELP
		"\nYour ONNX CTC model instead (wav2vec2, HuBERT, Conformer-CTC exports): each\n"
		"utterance whole in one pass, greedy CTC decoding (best token per frame, repeats\n"
		"collapsed, blanks dropped, the delimiter a word break), then the VoicePrivacy\n"
		"normalisation (upper case, punctuation removed):\n"
		"  --onnx=MODEL.onnx      the model: input [1, samples] (waveform) or [1, T, F] /\n"
		"                         [1, F, T] (features), output [1, T, V] or [T, V]\n"
		"                         logits or log-probabilities\n"
		"  --tokens=FILE          one token per line, line k = output index k (required)\n"
		"  --blank=K              index of the CTC blank (default 0)\n"
		"  --delimiter=TOK        the word delimiter token (default '|'; 'sentencepiece'\n"
		"                         for U+2581, 'none')\n"
		"  --input=waveform|features  what the model takes (default waveform)\n"
		"  --rate=HZ              the model's sample rate (waveform input; default 16000)\n"
		"  --wave-scale=X         waveform multiplier (default 1/32768: the [-1, 1] scale)\n"
		"  --wave-norm=true       zero mean, unit variance per utterance (Hugging Face's\n"
		"                         do_normalize; default false)\n"
		"  --normalise=vpc|upper|punct|none  text normalisation (default vpc: both)\n"
		"  --layout=btf|bft       features input: [1, T, F] or [1, F, T] (default btf)\n"
		"  --input-name=NAME, --output-name=NAME  graph input / value read (default: the\n"
		"                         model's only input, its first output)\n"
		"  --NAME=VALUE           features input: any option of `vpaudit features`\n"
		"                         (default: its fbank defaults, 23 bins at 16 kHz)\n"
		"  --align=TEXT           instead of recognising: force-align each utterance's\n"
		"                         transcript in TEXT (a Kaldi `text`) to the model's output\n"
		"                         (Viterbi over the CTC topology; asr/ctc_align.h) and write\n"
		"                         one label per 10 ms frame (25 ms window, Kaldi's framing),\n"
		"                         `UTT ID ID ...` with ID a token's index, the layout of\n"
		"                         `ali-to-phones --per-frame` that fl_acoustic_models takes\n"
		"                         as `ali` (a blank frame labelled with the token before it)\n"
		"--model is PocketSphinx's and is refused with --onnx; the --onnx options are\n"
		"refused without it.\n"
		"\nAudio at another rate than the recogniser's (16000 Hz; with --onnx, --rate or the\n"
		"front-end's) is an error unless --allow-downsample / --allow-upsample lets it be\n"
		"resampled (the count is reported on stderr).\n"
		"\nExit status: 0 ok, 1 bad input, 2 usage.\n",
		vpa_asr_ps_version(), VPA_ASR_PS_MODEL_DIR);
}

/* `--name=V` or `--name V` */
static const char *opt_value(int argc, char **argv, int *i, const char *eq)
{
	if (eq)
		return eq + 1;
	return *i + 1 < argc ? argv[++*i] : NULL;
}

/* the options of the ONNX path that take a value (asr/ctc.h's names; "output-name" is
 * its "output", renamed here beside -o) */
static int ctc_valued(const char *name)
{
	static const char *const names[] = {"onnx", "tokens", "align", "blank", "delimiter", "input",
					    "rate", "wave-scale", "wave-norm", "normalise",
					    "normalize", "layout", "input-name", "output-name", NULL};
	for (size_t i = 0; names[i]; i++)
		if (!strcmp(name, names[i]))
			return 1;
	return 0;
}

struct ctc_arg {
	const char *name, *val;
};

/* hypotheses as a Kaldi text, written whole (nothing on error) */
static int write_hyps(const char *outpath, const struct vpa_datadir *d, char **hyps,
		      struct vpa_err *err)
{
	struct vpa_buf b;
	vpa_buf_init(&b);
	for (size_t i = 0; i < d->n_utt; i++) {
		vpa_buf_puts(&b, d->utt[i]);
		if (hyps[i][0]) {
			vpa_buf_puts(&b, " ");
			vpa_buf_puts(&b, hyps[i]);
		}
		vpa_buf_puts(&b, "\n");
	}
	int rc = cli_write_file(outpath, b.data, b.len, err);
	vpa_buf_release(&b);
	return rc;
}

/* --align: frame labels as Kaldi per-frame text, written whole (nothing on error) */
static int run_align(const struct vpa_ctc *c, const struct vpa_ctc_opts *o,
		     const struct vpa_datadir *d, const char *text, const char *outpath,
		     struct vpa_err *err)
{
	struct vpa_feat_opts fo;
	vpa_feat_opts_init(&fo, VPA_FEAT_FBANK);
	fo.sample_frequency = vpa_ctc_rate(c, o);
	struct vpa_feat *grid = vpa_feat_new(&fo, err);
	if (!grid)
		return err->status;
	size_t nu = d->n_utt, *n = xcalloc(nu ? nu : 1, sizeof(size_t));
	uint32_t **lab = NULL;
	int rc = vpa_ctc_align_dd(c, o->threads, d, text, n, grid, &lab, err);
	if (!rc) {
		struct vpa_buf b;
		vpa_buf_init(&b);
		for (size_t i = 0; i < nu; i++) {
			vpa_buf_puts(&b, d->utt[i]);
			for (size_t k = 0; k < n[i]; k++)
				vpa_buf_printf(&b, " %u", lab[i][k]);
			vpa_buf_puts(&b, "\n");
			free(lab[i]);
		}
		free(lab);
		rc = cli_write_file(outpath, b.data, b.len, err);
		vpa_buf_release(&b);
	}
	free(n);
	vpa_feat_free(grid);
	return rc;
}

static int run_onnx(char **inputs, size_t n_in, const char *outpath, const char *model,
		    const char *tokens, const char *align, const struct ctc_arg *args,
		    size_t n_args, int threads, int channel, const struct cli_audio_in *ai)
{
	struct vpa_ctc_opts o;
	vpa_ctc_opts_init(&o);
	o.model = model;
	o.tokens = tokens;
	o.threads = threads;
	o.channel = channel;
	struct vpa_err err;
	vpa_err_init(&err);
	for (size_t i = 0; i < n_args; i++) {
		const char *name = !strcmp(args[i].name, "output-name") ? "output" : args[i].name;
		if (vpa_ctc_opts_set(&o, name, args[i].val, &err)) {
			if (!strncmp(err.msg, "unknown option", 14))
				return cli_usage_error("asr", "unknown option '--%s'", args[i].name);
			return cli_usage_error("asr", "%s", err.msg);
		}
	}
	struct vpa_ctc *c;
	if (vpa_ctc_new(&o, &c, &err))
		return cli_error(&err);
	struct vpa_datadir d;
	vpa_datadir_init(&d);
	double rate = vpa_ctc_rate(c, &o);
	if (cli_audio_open(inputs, n_in, channel, ai, rate, &d)) {
		vpa_datadir_release(&d);
		vpa_ctc_free(c);
		return 1;
	}
	unsigned long rs0 = vpa_resample_count();
	char **hyps = NULL;
	int rc;
	if (align) {
		rc = run_align(c, &o, &d, align, outpath, &err) ? cli_error(&err) : 0;
		vpa_datadir_release(&d);
		vpa_ctc_free(c);
		return rc;
	}
	rc = vpa_ctc_transcribe_dd(c, &o, &d, &hyps, &err);
	if (rc) {
		rc = cli_error(&err);
	} else {
		unsigned long rs = vpa_resample_count() - rs0;
		if (write_hyps(outpath, &d, hyps, &err))
			rc = cli_error(&err);
		else if (rs)
			fprintf(stderr, "vpaudit asr: %lu of %zu utterances resampled to %g Hz (%s)\n",
				rs, d.n_utt, rate, vpa_resample_about());
		for (size_t i = 0; i < d.n_utt; i++)
			free(hyps[i]);
		free(hyps);
	}
	vpa_datadir_release(&d);
	vpa_ctc_free(c);
	return rc;
}

int cmd_asr(int argc, char **argv)
{
	const char *outpath = NULL, *model = NULL, *onnx = NULL, *tokens = NULL, *align = NULL;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int threads = ncpu > 0 ? (int)(ncpu > 256 ? 256 : ncpu) : 1, channel = -1;
	struct cli_audio_in ai;
	memset(&ai, 0, sizeof(ai));
	char **inputs = xcalloc((size_t)argc + 1, sizeof(char *));
	struct ctc_arg *args = xcalloc((size_t)argc + 1, sizeof(*args));
	size_t n_in = 0, n_args = 0;
	int rc = 0;
	for (int i = 1; i < argc && !rc; i++) {
		const char *arg = argv[i];
		if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
			usage(stdout);
			free(inputs);
			free(args);
			return 0;
		}
		if (!strcmp(arg, "-o")) {
			if (!(outpath = opt_value(argc, argv, &i, NULL)))
				rc = cli_usage_error("asr", "option '-o' needs a value");
			continue;
		}
		if (strncmp(arg, "--", 2) || !arg[2]) {
			if (arg[0] == '-' && arg[1])
				rc = cli_usage_error("asr", "unknown option '%s'", arg);
			else
				inputs[n_in++] = argv[i];
			continue;
		}
		char name[64];
		const char *eq = strchr(arg + 2, '=');
		size_t nl = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
		if (nl >= sizeof(name)) {
			rc = cli_usage_error("asr", "unknown option '%s'", arg);
			break;
		}
		memcpy(name, arg + 2, nl);
		name[nl] = 0;
		int valued = !strcmp(name, "model") || !strcmp(name, "threads") ||
			     !strcmp(name, "channel") || cli_audio_takes_value(name) ||
			     ctc_valued(name);
		const char *val = valued ? opt_value(argc, argv, &i, eq) : eq ? eq + 1 : "true";
		if (!val) {
			rc = cli_usage_error("asr", "option '--%s' needs a value", name);
		} else if (!strcmp(name, "model")) {
			model = val;
		} else if (!strcmp(name, "onnx")) {
			onnx = val;
		} else if (!strcmp(name, "tokens")) {
			tokens = val;
		} else if (!strcmp(name, "align")) {
			align = val;
		} else if (!strcmp(name, "threads") || !strcmp(name, "channel")) {
			int th = !strcmp(name, "threads");
			unsigned long v;
			if (cli_ulong(th ? "--threads" : "--channel", val, th ? 1 : 0, 256, &v))
				rc = 2;
			else
				*(th ? &threads : &channel) = (int)v;
		} else {
			int ar = cli_audio_opt("asr", name, val, &ai);
			if (ar == 2)
				rc = 2;
			else if (ar == 1 && (ctc_valued(name) || eq)) {
				/* the ONNX path's options, and the front-end's as --NAME=VALUE */
				args[n_args].name = xstrndup(name, nl);
				args[n_args].val = val;
				n_args++;
			} else if (ar == 1)
				rc = cli_usage_error("asr", "unknown option '--%s'", name);
		}
	}
	if (!rc && !outpath)
		rc = cli_usage_error("asr", "missing -o HYP.txt");
	if (!rc && n_in == 0)
		rc = cli_usage_error("asr", "missing DATA (a data directory, a wav.scp or audio files)");
	if (!rc && onnx && model)
		rc = cli_usage_error("asr", "--model is PocketSphinx's model folder; with --onnx the "
					    "model is the ONNX file");
	if (!rc && onnx && !tokens)
		rc = cli_usage_error("asr", "--onnx needs --tokens FILE (line k = output index k)");
	if (!rc && !onnx && tokens)
		rc = cli_usage_error("asr", "--tokens applies to --onnx MODEL only");
	if (!rc && !onnx && align)
		rc = cli_usage_error("asr", "--align needs --onnx MODEL --tokens FILE (a CTC model "
					    "aligns; PocketSphinx does not)");
	for (size_t k = 0; !rc && !onnx && k < n_args; k++)
		rc = ctc_valued(args[k].name)
			     ? cli_usage_error("asr", "'--%s' applies to --onnx MODEL only", args[k].name)
			     : cli_usage_error("asr", "unknown option '--%s'", args[k].name);
	if (!rc && onnx)
		rc = run_onnx(inputs, n_in, outpath, onnx, tokens, align, args, n_args, threads, channel,
			      &ai);
	if (rc || onnx) {
		for (size_t k = 0; k < n_args; k++)
			free((char *)args[k].name);
		free(args);
		free(inputs);
		return rc;
	}
	free(args);
	struct vpa_datadir d;
	vpa_datadir_init(&d);
	struct vpa_err err;
	vpa_err_init(&err);
	if (cli_audio_open(inputs, n_in, channel, &ai, VPA_ASR_RATE, &d)) {
		vpa_datadir_release(&d);
		free(inputs);
		return 1;
	}
	free(inputs);
	char **hyps = NULL;
	const char *line = NULL;
	unsigned long rs0 = vpa_resample_count();
	rc = vpa_asr_ps_datadir(&d, model, threads, &hyps, NULL, &line, &err);
	if (rc) {
		rc = cli_error(&err);
		if (line)
			cli_echo_line(line);
		vpa_datadir_release(&d);
		return rc;
	}
	unsigned long rs = vpa_resample_count() - rs0;
	if (write_hyps(outpath, &d, hyps, &err))
		rc = cli_error(&err);
	else if (rs)
		fprintf(stderr, "vpaudit asr: %lu of %zu utterances resampled to 16000 Hz (%s)\n", rs,
			d.n_utt, vpa_resample_about());
	for (size_t i = 0; i < d.n_utt; i++)
		free(hyps[i]);
	free(hyps);
	vpa_datadir_release(&d);
	return rc;
}
