/*
 * cli/cmd_asr.c - `vpaudit asr DATA -o HYP.txt`: speech recognition of every
 * utterance of a data directory with the embedded recogniser (CMU
 * PocketSphinx, audio/asr.h), a Kaldi `text` of hypotheses out, ready for
 * `vpaudit wer REF HYP`.  The file is written whole at the end under a
 * temporary name (nothing is written on error) and does not depend on
 * --threads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audio/asr.h"
#include "cli/audio_in.h"
#include "cli/cli.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vpaudit asr DATA -o HYP.txt [OPTIONS]\n"
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
		"\nAudio at another rate than 16000 Hz is an error unless --allow-downsample /\n"
		"--allow-upsample lets it be resampled (the count is reported on stderr).\n"
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

int cmd_asr(int argc, char **argv)
{
	const char *outpath = NULL, *model = NULL;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int threads = ncpu > 0 ? (int)(ncpu > 256 ? 256 : ncpu) : 1, channel = -1;
	struct cli_audio_in ai;
	memset(&ai, 0, sizeof(ai));
	char **inputs = xcalloc((size_t)argc + 1, sizeof(char *));
	size_t n_in = 0;
	int rc = 0;
	for (int i = 1; i < argc && !rc; i++) {
		const char *arg = argv[i];
		if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
			usage(stdout);
			free(inputs);
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
			     !strcmp(name, "channel") || cli_audio_takes_value(name);
		const char *val = valued ? opt_value(argc, argv, &i, eq) : eq ? eq + 1 : "true";
		if (!val) {
			rc = cli_usage_error("asr", "option '--%s' needs a value", name);
		} else if (!strcmp(name, "model")) {
			model = val;
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
			else if (ar == 1)
				rc = cli_usage_error("asr", "unknown option '--%s'", name);
		}
	}
	if (!rc && !outpath)
		rc = cli_usage_error("asr", "missing -o HYP.txt");
	if (!rc && n_in == 0)
		rc = cli_usage_error("asr", "missing DATA (a data directory, a wav.scp or audio files)");
	if (rc) {
		free(inputs);
		return rc;
	}
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
	struct vpa_buf b;
	vpa_buf_init(&b);
	for (size_t i = 0; i < d.n_utt; i++) {
		vpa_buf_puts(&b, d.utt[i]);
		if (hyps[i][0]) {
			vpa_buf_puts(&b, " ");
			vpa_buf_puts(&b, hyps[i]);
		}
		vpa_buf_puts(&b, "\n");
		free(hyps[i]);
	}
	free(hyps);
	if (cli_write_file(outpath, b.data, b.len, &err))
		rc = cli_error(&err);
	else if (rs)
		fprintf(stderr, "vpaudit asr: %lu of %zu utterances resampled to 16000 Hz (%s)\n", rs,
			d.n_utt, vpa_resample_about());
	vpa_buf_release(&b);
	vpa_datadir_release(&d);
	return rc;
}
