/*
 * cli/cmd_features.c - `vpaudit features fbank|mfcc [OPTIONS] DATA -o OUT`:
 * Kaldi-compatible features of a data directory, a wav.scp or audio files
 * (audio/audio.h), written as a Kaldi archive (binary "FM" or text) or one
 * .npy per utterance.
 *
 * Utterances are computed in batches shared out over --threads
 * (vpa_par_jobs) and written in data-directory order, so the output does not
 * depend on the thread count and the audio is never all in memory.  The
 * output goes to a temporary name renamed at the end: an error leaves
 * nothing behind.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audio/audio.h"
#include "cli/audio_in.h"
#include "cli/cli.h"
#include "formats/io.h"

static void usage(FILE *f, int kind)
{
	fprintf(f,
		"usage: vpaudit features fbank|mfcc [OPTIONS] DATA -o OUT\n"
		"\n"
		"Kaldi's compute-fbank-feats / compute-mfcc-feats (equal to Kaldi's definitions;\n"
		"checked against torchaudio.compliance.kaldi), then optionally CMVN\n"
		"(apply-cmvn per utterance or apply-cmvn-sliding) and energy VAD (compute-vad +\n"
		"select-voiced-frames), in that order.\n"
		"\n"
		"DATA  a Kaldi data directory (wav.scp, optional segments; utt2spk, spk2utt,\n"
		"      spk2gender, text, utt2dur, enrolls, trials* are checked when present),\n"
		"      a wav.scp file (name ending in .scp), or audio files (WAV, FLAC, ...;\n"
		"      the utterance id is the file name without suffix).  wav.scp pipe forms\n"
		"      'flac -c -d -s F |', 'sox F -t wav [-r N] - |', 'sph2pipe -f wav F |' and\n"
		"      'sox -t raw -r R -e signed -b 16 -c 1 F -t wav - |' are read directly,\n"
		"      never run (sox's -r N is done as a resampling to N, with libsoxr); any\n"
		"      other command is an error.  Audio at another rate than\n"
		"      --sample-frequency is an error unless --allow-downsample/--allow-upsample.\n"
		"OUT   a Kaldi archive (binary float matrices 'FM', readable by copy-feats), or\n"
		"      with a trailing '/' (or an existing directory) one UTT.npy (float64, or\n"
		"      float32 with --npy-dtype=float32, what `onnx run -i` feeds a float32\n"
		"      input as it is) per utterance.  An error leaves no file, and removes the folders it made.\n"
		"\n"
		"Utterances shorter than one frame (and, with --vad=true, with no voiced frame)\n"
		"get a warning and are left out, as Kaldi's zero-frame case.\n"
		"\n"
		"options (Kaldi's names, --name=value, booleans true|false; a bare boolean is true):\n"
		"  -o OUT, --output=OUT   where to write (required)\n"
		"  --text                 text archive instead of binary\n"
		"  --npy-dtype=float64|float32  element type of .npy output (default float64)\n"
		"  --threads=N            utterances computed in parallel (default: online CPUs)\n"
		"  --channel=N            channel of multi-channel files (0-based; default: mono required)\n"
		CLI_AUDIO_IN_HELP);
	if (kind < 0) {
		fprintf(f, "\nfbank options (defaults are Kaldi's, except --dither):\n");
		vpa_feat_opts_help(f, VPA_FEAT_FBANK);
		fprintf(f, "\nmfcc: the same plus --num-ceps=13 --cepstral-lifter=22, without\n"
			   "--use-log-fbank / --use-power; --use-energy defaults to true\n"
			   "(`vpaudit features mfcc --help` lists them).\n");
	} else {
		fprintf(f, "\n%s options (defaults are Kaldi's, except --dither):\n",
			kind == VPA_FEAT_MFCC ? "mfcc" : "fbank");
		vpa_feat_opts_help(f, kind);
	}
	fprintf(f, "\nExit status: 0 ok, 1 bad input, 2 usage.\n");
}

/* One batch of utterances, computed in parallel, written in order. */
struct batch {
	const struct vpa_datadir *d;
	const struct vpa_feat *fe;
	size_t base;
	struct vpa_fmat *m; /* (n) */
	struct vpa_err *err; /* (n) */
	const char **line;   /* (n) the data-directory line a load error blames, or NULL */
};

static int job(void *arg, size_t i)
{
	struct batch *b = arg;
	size_t u = b->base + i;
	struct vpa_wave w;
	vpa_wave_init(&w);
	vpa_fmat_init(&b->m[i]);
	b->line[i] = NULL;
	int rc = vpa_datadir_load(b->d, u, &w, &b->line[i], &b->err[i]);
	if (!rc)
		b->line[i] = NULL;
	if (!rc)
		rc = vpa_feat_apply(b->fe, &w, b->d->utt[u], &b->m[i], &b->err[i]);
	vpa_wave_release(&w);
	return rc;
}

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The command line, parsed. */
struct fargs {
	struct vpa_feat_opts o;
	char **inputs; /* (n_in) borrowed from argv; the array owned */
	size_t n_in;
	const char *outpath;
	int text, channel, threads;
	int npy32;     /* --npy-dtype=float32 */
	int npy_dtype_set;
	struct cli_audio_in ai;
};

/* The value of a CLI-only option: `--name=V` or `--name V`. */
static const char *cli_value(int argc, char **argv, int *i, const char *eq)
{
	if (eq)
		return eq + 1;
	return *i + 1 < argc ? argv[++*i] : NULL;
}

/* 0: parsed; 1: help printed (exit 0); 2: usage error printed. */
static int parse_args(int argc, char **argv, struct fargs *a)
{
	struct vpa_err err;
	vpa_err_init(&err);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	a->threads = ncpu > 0 ? (int)(ncpu > 256 ? 256 : ncpu) : 1;
	a->channel = -1;
	if (argc < 2)
		return cli_usage_error("features", "expected 'fbank' or 'mfcc'");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout, -1);
		return 1;
	}
	int kind = !strcmp(argv[1], "fbank") ? VPA_FEAT_FBANK : !strcmp(argv[1], "mfcc") ? VPA_FEAT_MFCC : -1;
	if (kind < 0)
		return cli_usage_error("features", "expected 'fbank' or 'mfcc', got '%s'", argv[1]);
	vpa_feat_opts_init(&a->o, kind);
	a->inputs = xcalloc((size_t)argc, sizeof(char *));
	for (int i = 2; i < argc; i++) {
		const char *arg = argv[i];
		if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
			usage(stdout, kind);
			return 1;
		}
		if (!strcmp(arg, "-o")) {
			if (!(a->outpath = cli_value(argc, argv, &i, NULL)))
				return cli_usage_error("features", "option '-o' needs a value");
			continue;
		}
		if (strncmp(arg, "--", 2) || !arg[2]) {
			if (arg[0] == '-' && arg[1])
				return cli_usage_error("features", "unknown option '%s'", arg);
			a->inputs[a->n_in++] = argv[i];
			continue;
		}
		char name[64];
		const char *eq = strchr(arg + 2, '=');
		size_t nl = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
		if (nl >= sizeof(name))
			return cli_usage_error("features", "unknown option '%s'", arg);
		memcpy(name, arg + 2, nl);
		name[nl] = 0;
		if (!strcmp(name, "output")) {
			if (!(a->outpath = cli_value(argc, argv, &i, eq)))
				return cli_usage_error("features", "option '--output' needs a value");
		} else if (!strcmp(name, "text")) {
			const char *val = eq ? eq + 1 : "true";
			if (strcmp(val, "true") && strcmp(val, "false"))
				return cli_usage_error("features", "--text must be true or false, got '%s'", val);
			a->text = !strcmp(val, "true");
		} else if (!strcmp(name, "npy-dtype")) {
			const char *val = cli_value(argc, argv, &i, eq);
			if (!val)
				return cli_usage_error("features", "option '--npy-dtype' needs a value");
			if (strcmp(val, "float32") && strcmp(val, "float64"))
				return cli_usage_error("features",
						       "--npy-dtype must be float32 or float64, got '%s'", val);
			a->npy32 = !strcmp(val, "float32");
			a->npy_dtype_set = 1;
		} else if (!strcmp(name, "threads") || !strcmp(name, "channel")) {
			int th = !strcmp(name, "threads");
			unsigned long v;
			const char *val = cli_value(argc, argv, &i, eq);
			if (!val)
				return cli_usage_error("features", "option '--%s' needs a value", name);
			if (cli_ulong(th ? "--threads" : "--channel", val, th ? 1 : 0, 256, &v))
				return 2;
			*(th ? &a->threads : &a->channel) = (int)v;
		} else if (cli_audio_takes_value(name) || !strncmp(name, "allow-", 6)) {
			const char *val = cli_audio_takes_value(name) ? cli_value(argc, argv, &i, eq)
								      : eq ? eq + 1 : "true";
			if (!val)
				return cli_usage_error("features", "option '--%s' needs a value", name);
			int ar = cli_audio_opt("features", name, val, &a->ai);
			if (ar == 2)
				return 2;
			if (ar == 1)
				return cli_usage_error("features", "unknown option '--%s'", name);
		} else if (vpa_feat_opts_set(&a->o, name, eq ? eq + 1 : "true", &err)) {
			return cli_usage_error("features", "%s", err.msg);
		}
	}
	if (!a->outpath)
		return cli_usage_error("features", "missing -o OUT");
	if (a->n_in == 0)
		return cli_usage_error("features", "missing DATA (a data directory, a wav.scp or audio files)");
	return 0;
}

/* Where matrices go: an archive (temporary name, renamed at the end) or .npy files. */
struct sink {
	int npy, text;
	int f32;            /* .npy files in float32 (the features' own values: exact) */
	const char *path;   /* borrowed */
	struct vpa_atomic at;
	FILE *out;          /* the archive, or NULL */
	char *tmpdir;       /* .npy files are written here first (owned), or NULL */
	char *made;         /* the highest folder sink_open created (owned), or NULL */
};

/* The highest missing folder of path (caller frees), NULL when path exists. */
static char *first_missing(const char *path)
{
	struct stat st;
	char *p = xstrdup(path), *miss = NULL;
	size_t n = strlen(p);
	while (n > 1 && p[n - 1] == '/')
		p[--n] = '\0';
	while (n && stat(p, &st) != 0 && errno == ENOENT) {
		free(miss);
		miss = xstrdup(p);
		while (n > 0 && p[n - 1] != '/')
			n--;
		while (n > 1 && p[n - 1] == '/')
			n--;
		p[n] = '\0';
	}
	free(p);
	return miss;
}

static int sink_open(struct sink *s, const char *path, int text, struct vpa_err *err)
{
	size_t ol = strlen(path);
	memset(s, 0, sizeof(*s));
	s->path = path;
	s->text = text;
	s->npy = (ol && path[ol - 1] == '/') || is_dir(path);
	if (!s->npy) {
		vpa_tmp_clean_stale(path);
		return (s->out = vpa_atomic_open(path, &s->at, err)) ? 0 : err->status;
	}
	/* a failure removes the folders made here (empty then), as it removes the files */
	s->made = first_missing(path);
	if (vpa_mkdirs(path, err))
		return err->status;
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_buf_printf(&b, "%s/.features", path);
	vpa_tmp_clean_stale(b.data);
	vpa_buf_printf(&b, ".tmp.%ld", (long)getpid());
	/* registered, so that SIGINT/SIGTERM removes it; never made through a planted link */
	vpa_tmp_register(b.data, 1);
	s->tmpdir = b.data;
	return vpa_mkdir_new(b.data, err);
}

static int sink_put(struct sink *s, const char *id, const struct vpa_fmat *m, struct vpa_err *err)
{
	if (!s->npy) {
		vpa_ark_write_fmat(s->out, id, m, s->text);
		return 0;
	}
	if (strchr(id, '/') || !strcmp(id, "..") || !strcmp(id, "."))
		return vpa_fail(err, VPA_EINPUT, NULL,
				"utterance id '%s' cannot be a .npy file name", id);
	size_t shape[2] = {m->rows, m->cols}, k = m->rows * m->cols;
	if (s->f32) {
		struct vpa_buf p;
		vpa_buf_init(&p);
		vpa_buf_printf(&p, "%s/%s.npy", s->tmpdir, id);
		int rc = vpa_npy_write_nd(p.data, 'f', 4, m->x, 2, shape, err);
		vpa_buf_release(&p);
		return rc;
	}
	double *x = xmalloc(xmul(k, sizeof(double)));
	for (size_t j = 0; j < k; j++)
		x[j] = m->x[j];
	struct vpa_buf p;
	vpa_buf_init(&p);
	vpa_buf_printf(&p, "%s/%s.npy", s->tmpdir, id);
	int rc = vpa_npy_write(p.data, x, 2, shape, err);
	vpa_buf_release(&p);
	free(x);
	return rc;
}

static void sink_abort(struct sink *s)
{
	if (s->out)
		vpa_atomic_abort(&s->at);
	s->out = NULL;
	if (s->tmpdir) {
		vpa_rm_tree(s->tmpdir);
		vpa_tmp_unregister(s->tmpdir);
		free(s->tmpdir);
		s->tmpdir = NULL;
	}
}

/* After a failure: also the folders sink_open made (rmdir: only when empty). */
static void sink_fail(struct sink *s)
{
	sink_abort(s);
	if (!s->made)
		return;
	char *p = xstrdup(s->path);
	size_t n = strlen(p), top = strlen(s->made);
	while (n > 1 && p[n - 1] == '/')
		p[--n] = '\0';
	while (n >= top && rmdir(p) == 0) {
		while (n > 0 && p[n - 1] != '/')
			n--;
		while (n > 1 && p[n - 1] == '/')
			n--;
		p[n] = '\0';
	}
	free(p);
}

static int sink_commit(struct sink *s, const struct vpa_datadir *d, struct vpa_err *err)
{
	int rc = 0;
	if (!s->npy) {
		s->out = NULL;
		return vpa_atomic_commit(&s->at, err);
	}
	for (size_t i = 0; i < d->n_utt && !rc; i++) { /* move the files in */
		struct vpa_buf a, b;
		vpa_buf_init(&a);
		vpa_buf_init(&b);
		vpa_buf_printf(&a, "%s/%s.npy", s->tmpdir, d->utt[i]);
		vpa_buf_printf(&b, "%s/%s.npy", s->path, d->utt[i]);
		if (access(a.data, F_OK) == 0 && rename(a.data, b.data) != 0)
			rc = vpa_fail(err, VPA_EIO, NULL, "cannot write '%s': %s", b.data, strerror(errno));
		vpa_buf_release(&a);
		vpa_buf_release(&b);
	}
	sink_abort(s); /* drops the (now empty) temporary folder */
	return rc;
}

/*
 * Every utterance, in batches of 8 x threads computed in parallel and put in
 * order.  Returns the exit status (errors printed); *written counts matrices.
 */
static int run_batches(const struct vpa_datadir *d, const struct vpa_feat *fe, int threads,
		       struct sink *s, size_t *written)
{
	size_t B = (size_t)threads * 8;
	struct vpa_fmat *m = xcalloc(B, sizeof(*m));
	struct vpa_err *errs = xcalloc(B, sizeof(*errs)), err;
	const char **lines = xcalloc(B, sizeof(*lines));
	int rc = 0, vad = vpa_feat_get_opts(fe)->vad;
	vpa_err_init(&err);
	for (size_t base = 0; base < d->n_utt && !rc; base += B) {
		size_t n = d->n_utt - base < B ? d->n_utt - base : B;
		struct batch b = {d, fe, base, m, errs, lines};
		for (size_t i = 0; i < n; i++) {
			vpa_err_init(&errs[i]);
			vpa_fmat_init(&m[i]);
		}
		vpa_par_jobs(n, threads, job, &b, NULL, NULL);
		for (size_t i = 0; i < n && !rc; i++) {
			const char *id = d->utt[base + i];
			if (errs[i].status) {
				rc = cli_error(&errs[i]);
				if (lines[i])
					cli_echo_line(lines[i]);
			} else if (m[i].rows == 0) {
				vpa_warn("utterance '%s' gives no frame (%s): left out", id,
					 vad ? "shorter than one frame, or no voiced frame"
					     : "shorter than one frame");
			} else if (sink_put(s, id, &m[i], &err)) {
				rc = cli_error(&err);
			} else {
				(*written)++;
			}
		}
		for (size_t i = 0; i < n; i++)
			vpa_fmat_release(&m[i]);
	}
	free(m);
	free(errs);
	free(lines);
	return rc;
}

int cmd_features(int argc, char **argv)
{
	struct fargs a;
	struct vpa_err err;
	struct vpa_datadir d;
	struct vpa_feat *fe = NULL;
	struct sink s;
	size_t written = 0;
	int rc;

	memset(&a, 0, sizeof(a));
	memset(&s, 0, sizeof(s));
	vpa_err_init(&err);
	vpa_datadir_init(&d);
	if ((rc = parse_args(argc, argv, &a))) {
		rc = rc == 1 ? 0 : rc;
		goto out;
	}
	if (!(fe = vpa_feat_new(&a.o, &err))) {
		rc = cli_error(&err);
		goto out;
	}
	if ((rc = cli_audio_open(a.inputs, a.n_in, a.channel, &a.ai, a.o.sample_frequency, &d)))
		goto out;
	size_t ol = strlen(a.outpath);
	if (a.npy_dtype_set && !((ol && a.outpath[ol - 1] == '/') || is_dir(a.outpath))) {
		rc = cli_usage_error("features", "--npy-dtype applies to .npy output (OUT ending in '/')");
		goto out;
	}
	if (sink_open(&s, a.outpath, a.text, &err)) {
		rc = cli_error(&err);
		goto out;
	}
	s.f32 = a.npy32;
	if ((rc = run_batches(&d, fe, a.threads, &s, &written)))
		goto out;
	if (written == 0) {
		vpa_fail(&err, VPA_EINPUT, NULL, "%s: no utterance gave a feature frame", a.inputs[0]);
		rc = cli_error(&err);
		goto out;
	}
	if (sink_commit(&s, &d, &err))
		rc = cli_error(&err);
out:
	if (rc)
		sink_fail(&s);
	sink_abort(&s);
	free(s.made);
	vpa_feat_free(fe);
	vpa_datadir_release(&d);
	free(a.inputs);
	return rc;
}
