/*
 * cli/cmd_embed.c - `vpaudit embed MODEL.onnx DATA -o OUT.ark`: one embedding
 * per utterance of a data directory (or wav.scp, or audio files) with an ONNX
 * extractor (embed/embed.h), written as a Kaldi vector archive.
 *
 * Utterances are computed in batches of 8 x threads shared out over
 * --threads (vpa_par_jobs, one BLAS thread per worker) and written in
 * data-directory order: the archive does not depend on the thread count.
 * The archive is written under a temporary name and renamed at the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/audio_in.h"
#include "cli/cli.h"
#include "formats/io.h"
#include "base/la.h"
#include "embed/embed.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vpaudit embed MODEL.onnx DATA -o OUT.ark [OPTIONS]\n"
		"\n"
		"One speaker embedding per utterance of DATA with an ONNX extractor (SpeechBrain,\n"
		"WeSpeaker, ... exported with torch.onnx.export): the features of `vpaudit\n"
		"features` (Kaldi fbank or MFCC, optional CMVN and energy VAD), then mean\n"
		"subtraction (--cmn), then the model on (1, T, F) (--layout btf) or (1, F, T)\n"
		"(--layout bft).  With --chunk C the frames are cut into chunks of C as\n"
		"WeSpeaker's runtime does (a last partial chunk completed with the first frames,\n"
		"an utterance shorter than C repeated to C frames), --cmn applies per chunk, and\n"
		"the chunk embeddings are averaged.\n"
		"\n"
		"With --input=waveform the model's front-end is inside the graph (SpeechBrain's\n"
		"Fbank, an STFT of opset 17, a Conv1d framing, wav2vec2's encoder): each\n"
		"utterance's samples, resampled to --sample-frequency and scaled to [-1, 1)\n"
		"(int16 / 32768, as torchaudio.load reads them), are fed as (1, T), (1, 1, T) or\n"
		"(1, T, 1), whichever the input declares; --chunk then counts samples.  A model\n"
		"exported without a dynamic time axis is refused with the --chunk that fits it.\n"
		"\n"
		"DATA  a Kaldi data directory, a wav.scp file (name ending in .scp) or audio\n"
		"      files, as for `vpaudit features`.\n"
		"OUT   a Kaldi archive of float vectors (binary 'FV', readable by copy-vector;\n"
		"      --text: `utt  [ v1 v2 ... ]`).\n"
		"\n"
		"Utterances that give no frame (shorter than one frame, or no voiced frame with\n"
		"--vad) get a warning and are left out.\n"
		"\n"
		"options (--name=value, or --name value for the ones below; booleans true|false, bare = true):\n"
		"  -o OUT                 where to write (required)\n"
		"  --features=fbank|mfcc  the front-end (default fbank)\n"
		"  --cmn=true|false       subtract the mean of the frames fed to the model (default true)\n"
		"  --output=NAME          the value to read: a graph output or any intermediate\n"
		"                         value (default: the first graph output)\n"
		"  --input=waveform|features  what the model is fed (default features); any other\n"
		"                         word names the graph input of the features\n"
		"  --input-name=NAME      the graph input (default: the only one)\n"
		"  --chunk=C              frames (samples with --input=waveform) per forward pass\n"
		"                         (default 0: the whole utterance)\n"
		"  --layout=auto|btf|bft  (batch, time, features) or (batch, features, time); auto\n"
		"                         (default): the axis the model fixes at the front-end's\n"
		"                         dimension, btf when its shape does not tell\n"
		"  --text                 text archive instead of binary\n"
		"  --threads=N            utterances computed in parallel (default: online CPUs)\n"
		"  --channel=N            channel of multi-channel files (0-based; default: mono)\n"
		CLI_AUDIO_IN_HELP
		"\nfront-end options (--name=value only; Kaldi's names; `vpaudit features fbank --help` and\n"
		"`vpaudit features mfcc --help` list them with their defaults):\n");
	vpa_feat_opts_help(f, VPA_FEAT_FBANK);
	fprintf(f, "\nExit status: 0 ok, 1 bad input, 2 usage.\n");
}

struct eargs {
	struct vpa_embed_opts o;
	const char *model;
	char **inputs; /* (n_in) borrowed from argv */
	size_t n_in;
	const char *outpath;
	int text;
	struct cli_audio_in ai;
};

/* `--name=V` or `--name V` */
static const char *opt_value(int argc, char **argv, int *i, const char *eq)
{
	if (eq)
		return eq + 1;
	return *i + 1 < argc ? argv[++*i] : NULL;
}

/* Options that take a value (so `--name V` consumes V). */
static int takes_value(const char *name)
{
	static const char *const v[] = {"features", "output", "input", "input-name", "chunk",
					"layout", "threads", "channel", "cmn", NULL};
	for (size_t i = 0; v[i]; i++)
		if (!strcmp(name, v[i]))
			return 1;
	return cli_audio_takes_value(name);
}

/* 0: parsed; 1: help printed; 2: usage error printed. */
static int parse_args(int argc, char **argv, struct eargs *a)
{
	struct vpa_err err;
	vpa_err_init(&err);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int kind = VPA_FEAT_FBANK;
	/* the front-end kind first: the option table depends on it */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 1;
		}
		const char *v = NULL;
		if (!strncmp(argv[i], "--features=", 11))
			v = argv[i] + 11;
		else if (!strcmp(argv[i], "--features") && i + 1 < argc)
			v = argv[i + 1];
		if (v) {
			if (strcmp(v, "fbank") && strcmp(v, "mfcc"))
				return cli_usage_error("embed", "--features must be fbank or mfcc, got '%s'", v);
			kind = !strcmp(v, "mfcc") ? VPA_FEAT_MFCC : VPA_FEAT_FBANK;
		}
	}
	vpa_embed_opts_init(&a->o, kind);
	a->o.threads = ncpu > 0 ? (int)(ncpu > 256 ? 256 : ncpu) : 1;
	a->inputs = xcalloc((size_t)argc, sizeof(char *));
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (!strcmp(arg, "-o")) {
			if (!(a->outpath = opt_value(argc, argv, &i, NULL)))
				return cli_usage_error("embed", "option '-o' needs a value");
			continue;
		}
		if (strncmp(arg, "--", 2) || !arg[2]) {
			if (arg[0] == '-' && arg[1])
				return cli_usage_error("embed", "unknown option '%s'", arg);
			if (!a->model)
				a->model = arg;
			else
				a->inputs[a->n_in++] = argv[i];
			continue;
		}
		char name[64];
		const char *eq = strchr(arg + 2, '=');
		size_t nl = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
		if (nl >= sizeof(name))
			return cli_usage_error("embed", "unknown option '%s'", arg);
		memcpy(name, arg + 2, nl);
		name[nl] = 0;
		const char *val;
		if (takes_value(name)) {
			if (!(val = opt_value(argc, argv, &i, eq)))
				return cli_usage_error("embed", "option '--%s' needs a value", name);
		} else {
			val = eq ? eq + 1 : "true";
		}
		if (!strcmp(name, "features")) {
			continue; /* done above */
		} else if (!strcmp(name, "output")) {
			a->o.output = val;
		} else if (!strcmp(name, "text")) {
			if (strcmp(val, "true") && strcmp(val, "false"))
				return cli_usage_error("embed", "--text must be true or false, got '%s'", val);
			a->text = !strcmp(val, "true");
		} else if (!strcmp(name, "threads") || !strcmp(name, "channel")) {
			int th = !strcmp(name, "threads");
			unsigned long v;
			if (cli_ulong(th ? "--threads" : "--channel", val, th ? 1 : 0, 256, &v))
				return 2;
			*(th ? &a->o.threads : &a->o.channel) = (int)v;
		} else if (cli_audio_takes_value(name) || !strncmp(name, "allow-", 6)) {
			int ar = cli_audio_opt("embed", name, val, &a->ai);
			if (ar == 2)
				return 2;
			if (ar == 1)
				return cli_usage_error("embed", "unknown option '--%s'", name);
		} else if (vpa_embed_opts_set(&a->o, name, val, &err)) {
			return cli_usage_error("embed", "%s", err.msg);
		}
	}
	if (!a->model)
		return cli_usage_error("embed", "missing MODEL.onnx");
	if (!a->outpath)
		return cli_usage_error("embed", "missing -o OUT.ark");
	if (a->n_in == 0)
		return cli_usage_error("embed", "missing DATA (a data directory, a wav.scp or audio files)");
	return 0;
}

struct batch {
	const struct vpa_datadir *d;
	const struct vpa_embedder *e;
	size_t base;
	float **emb;
	size_t *dim;
	struct vpa_err *err;
	const char **line;
};

static int job(void *arg, size_t i)
{
	struct batch *b = arg;
	vpa_err_init(&b->err[i]);
	return vpa_embedder_utt(b->e, b->d, b->base + i, &b->emb[i], &b->dim[i], &b->line[i],
				&b->err[i]);
}

static int run_batches(const struct vpa_datadir *d, const struct vpa_embedder *e,
		       const struct eargs *a, FILE *out, size_t *written)
{
	size_t B = (size_t)a->o.threads * 8;
	/* one BLAS thread per worker also for one worker: --threads 1 is one core
	 * (vpa_la_run_workers leaves the BLAS threads alone for a single worker) */
	int blas = vpa_la_get_threads();
	vpa_la_set_threads(1);
	float **emb = xcalloc(B, sizeof(*emb));
	size_t *dim = xcalloc(B, sizeof(*dim)), d0 = 0;
	struct vpa_err *errs = xcalloc(B, sizeof(*errs)), err;
	const char **lines = xcalloc(B, sizeof(*lines));
	int rc = 0, vad = vpa_feat_get_opts(vpa_embedder_feat(e))->vad;
	vpa_err_init(&err);
	for (size_t base = 0; base < d->n_utt && !rc; base += B) {
		size_t n = d->n_utt - base < B ? d->n_utt - base : B;
		struct batch b = {d, e, base, emb, dim, errs, lines};
		for (size_t i = 0; i < n; i++) {
			emb[i] = NULL;
			dim[i] = 0;
			lines[i] = NULL;
			vpa_err_init(&errs[i]);
		}
		vpa_par_jobs(n, a->o.threads, job, &b, NULL, vpa_la_run_workers);
		for (size_t i = 0; i < n && !rc; i++) {
			const char *id = d->utt[base + i];
			if (errs[i].status) {
				rc = cli_error(&errs[i]);
				if (lines[i])
					cli_echo_line(lines[i]);
			} else if (!dim[i]) {
				vpa_warn("utterance '%s' gives no frame (%s): left out", id,
					 vad ? "shorter than one frame, or no voiced frame"
					     : "shorter than one frame");
			} else if (d0 && dim[i] != d0) {
				vpa_fail(&err, VPA_EINPUT, NULL,
					 "utterance '%s' gives %zu values, the ones before %zu", id, dim[i],
					 d0);
				rc = cli_error(&err);
			} else {
				d0 = dim[i];
				vpa_ark_write_fvec(out, id, emb[i], dim[i], a->text);
				(*written)++;
			}
		}
		for (size_t i = 0; i < n; i++) {
			free(emb[i]);
			emb[i] = NULL;
		}
	}
	free(emb);
	free(dim);
	free(errs);
	free(lines);
	vpa_la_set_threads(blas);
	return rc;
}

int cmd_embed(int argc, char **argv)
{
	struct eargs a;
	struct vpa_err err;
	struct vpa_datadir d;
	struct vpa_embedder *e = NULL;
	struct vpa_atomic at;
	FILE *out = NULL;
	size_t written = 0;
	int rc;

	memset(&a, 0, sizeof(a));
	vpa_err_init(&err);
	vpa_datadir_init(&d);
	if ((rc = parse_args(argc, argv, &a))) {
		rc = rc == 1 ? 0 : rc;
		goto out;
	}
	if (vpa_embedder_new(a.model, &a.o, &e, &err)) {
		rc = cli_error(&err);
		goto out;
	}
	if ((rc = cli_audio_open(a.inputs, a.n_in, a.o.channel, &a.ai, a.o.feat.sample_frequency, &d)))
		goto out;
	vpa_tmp_clean_stale(a.outpath);
	if (!(out = vpa_atomic_open(a.outpath, &at, &err))) {
		rc = cli_error(&err);
		goto out;
	}
	if ((rc = run_batches(&d, e, &a, out, &written)))
		goto out;
	if (written == 0) {
		vpa_fail(&err, VPA_EINPUT, NULL, "%s: no utterance gave a feature frame", a.inputs[0]);
		rc = cli_error(&err);
		goto out;
	}
	out = NULL;
	if (vpa_atomic_commit(&at, &err))
		rc = cli_error(&err);
out:
	if (out)
		vpa_atomic_abort(&at);
	vpa_embedder_free(e);
	vpa_datadir_release(&d);
	free(a.inputs);
	return rc;
}
