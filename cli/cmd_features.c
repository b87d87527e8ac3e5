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
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audio/audio.h"
#include "cli/cli.h"
#include "core/io.h"

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
		"      'flac -c -d -s F |', 'sox F -t wav - |', 'sph2pipe -f wav F |' are read\n"
		"      directly, never run; any other command is an error.\n"
		"OUT   a Kaldi archive (binary float matrices 'FM', readable by copy-feats), or\n"
		"      with a trailing '/' (or an existing directory) one UTT.npy (float64) per\n"
		"      utterance.\n"
		"\n"
		"Utterances shorter than one frame (and, with --vad=true, with no voiced frame)\n"
		"get a warning and are left out, as Kaldi's zero-frame case.\n"
		"\n"
		"options (Kaldi's names, --name=value, booleans true|false; a bare boolean is true):\n"
		"  -o OUT, --output=OUT   where to write (required)\n"
		"  --text                 text archive instead of binary\n"
		"  --threads=N            utterances computed in parallel (default: online CPUs)\n"
		"  --channel=N            channel of multi-channel files (0-based; default: mono required)\n");
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

/* Remove a temporary directory of .npy files. */
static void rm_tmpdir(const char *dir)
{
	DIR *dh = opendir(dir);
	struct dirent *de;
	while (dh && (de = readdir(dh))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		struct vpa_buf b;
		vpa_buf_init(&b);
		vpa_buf_printf(&b, "%s/%s", dir, de->d_name);
		unlink(b.data);
		vpa_buf_release(&b);
	}
	if (dh)
		closedir(dh);
	rmdir(dir);
}

int cmd_features(int argc, char **argv)
{
	struct vpa_feat_opts o;
	struct vpa_err err;
	struct vpa_datadir d;
	struct vpa_feat *fe = NULL;
	struct vpa_atomic at = {0};
	FILE *out = NULL;
	char **inputs = NULL, *tmpdir = NULL;
	const char *outpath = NULL;
	size_t n_in = 0, written = 0;
	int text = 0, channel = -1, rc = 0, npy = 0;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int threads = ncpu > 0 ? (int)(ncpu > 256 ? 256 : ncpu) : 1;

	vpa_err_init(&err);
	vpa_datadir_init(&d);
	if (argc < 2)
		return cli_usage_error("features", "expected 'fbank' or 'mfcc'");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout, -1);
		return 0;
	}
	int kind = !strcmp(argv[1], "fbank") ? VPA_FEAT_FBANK : !strcmp(argv[1], "mfcc") ? VPA_FEAT_MFCC : -1;
	if (kind < 0)
		return cli_usage_error("features", "expected 'fbank' or 'mfcc', got '%s'", argv[1]);
	vpa_feat_opts_init(&o, kind);
	inputs = xcalloc((size_t)argc, sizeof(char *));
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout, kind);
			goto out;
		}
		if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			if (i + 1 >= argc) {
				rc = cli_usage_error("features", "option '%s' needs a value", a);
				goto out;
			}
			outpath = argv[++i];
			continue;
		}
		if (!strncmp(a, "--output=", 9)) {
			outpath = a + 9;
			continue;
		}
		if (strncmp(a, "--", 2) || !a[2]) {
			if (a[0] == '-' && a[1]) {
				rc = cli_usage_error("features", "unknown option '%s'", a);
				goto out;
			}
			inputs[n_in++] = argv[i];
			continue;
		}
		char name[64];
		const char *eq = strchr(a + 2, '='), *val = eq ? eq + 1 : "true";
		size_t nl = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
		if (nl >= sizeof(name)) {
			rc = cli_usage_error("features", "unknown option '%s'", a);
			goto out;
		}
		memcpy(name, a + 2, nl);
		name[nl] = 0;
		if (!strcmp(name, "text")) {
			if (strcmp(val, "true") && strcmp(val, "false")) {
				rc = cli_usage_error("features", "--text must be true or false, got '%s'", val);
				goto out;
			}
			text = !strcmp(val, "true");
		} else if (!strcmp(name, "threads") || !strcmp(name, "channel")) {
			unsigned long v;
			if (!eq) {
				rc = cli_usage_error("features", "option '--%s' needs a value (--%s=N)", name, name);
				goto out;
			}
			if (cli_ulong(!strcmp(name, "threads") ? "--threads" : "--channel", val,
				      !strcmp(name, "threads") ? 1 : 0, 256, &v)) {
				rc = 2;
				goto out;
			}
			if (!strcmp(name, "threads"))
				threads = (int)v;
			else
				channel = (int)v;
		} else if (vpa_feat_opts_set(&o, name, val, &err)) {
			rc = cli_usage_error("features", "%s", err.msg);
			goto out;
		}
	}
	if (!outpath) {
		rc = cli_usage_error("features", "missing -o OUT");
		goto out;
	}
	if (n_in == 0) {
		rc = cli_usage_error("features", "missing DATA (a data directory, a wav.scp or audio files)");
		goto out;
	}
	if (!(fe = vpa_feat_new(&o, &err))) {
		rc = cli_error(&err);
		goto out;
	}
	size_t il = strlen(inputs[0]);
	if (n_in == 1 && (is_dir(inputs[0]) || (il >= 4 && !strcmp(inputs[0] + il - 4, ".scp")))) {
		if (vpa_datadir_open(&d, inputs[0], channel, &err)) {
			rc = cli_error(&err);
			if (d.bad_line)
				fprintf(stderr, "  %s\n", d.bad_line);
			goto out;
		}
	} else if (vpa_datadir_from_files(&d, inputs, n_in, channel, &err)) {
		rc = cli_error(&err);
		goto out;
	}

	size_t ol = strlen(outpath);
	npy = (ol && outpath[ol - 1] == '/') || is_dir(outpath);
	if (npy) {
		if (vpa_mkdirs(outpath, &err)) {
			rc = cli_error(&err);
			goto out;
		}
		struct vpa_buf b;
		vpa_buf_init(&b);
		vpa_buf_printf(&b, "%s/.features.tmp.%ld", outpath, (long)getpid());
		tmpdir = b.data;
		if (mkdir(tmpdir, 0777) != 0) {
			vpa_fail(&err, VPA_EIO, NULL, "cannot create '%s': %s", tmpdir, strerror(errno));
			free(tmpdir);
			tmpdir = NULL;
			rc = cli_error(&err);
			goto out;
		}
	} else if (!(out = vpa_atomic_open(outpath, &at, &err))) {
		rc = cli_error(&err);
		goto out;
	}

	size_t B = (size_t)threads * 8;
	struct vpa_fmat *m = xcalloc(B, sizeof(*m));
	struct vpa_err *errs = xcalloc(B, sizeof(*errs));
	const char **lines = xcalloc(B, sizeof(*lines));
	for (size_t base = 0; base < d.n_utt && !rc; base += B) {
		size_t n = d.n_utt - base < B ? d.n_utt - base : B;
		struct batch b = {&d, fe, base, m, errs, lines};
		for (size_t i = 0; i < n; i++) {
			vpa_err_init(&errs[i]);
			vpa_fmat_init(&m[i]);
		}
		vpa_par_jobs(n, threads, job, &b, NULL, NULL);
		for (size_t i = 0; i < n && !rc; i++) {
			const char *id = d.utt[base + i];
			if (errs[i].status) {
				rc = cli_error(&errs[i]);
				if (lines[i])
					fprintf(stderr, "  %s\n", lines[i]);
				break;
			}
			if (m[i].rows == 0) {
				vpa_warn("utterance '%s' gives no frame (%s): left out", id,
					 o.vad ? "shorter than one frame, or no voiced frame"
					       : "shorter than one frame");
				continue;
			}
			if (npy) {
				size_t shape[2] = {m[i].rows, m[i].cols}, k = m[i].rows * m[i].cols;
				double *x = xmalloc(xmul(k, sizeof(double)));
				for (size_t j = 0; j < k; j++)
					x[j] = m[i].x[j];
				struct vpa_buf p;
				vpa_buf_init(&p);
				vpa_buf_printf(&p, "%s/%s.npy", tmpdir, id);
				if (strchr(id, '/'))
					vpa_fail(&err, VPA_EINPUT, NULL,
						 "utterance id '%s' contains '/': cannot be a .npy file name", id);
				else
					vpa_npy_write(p.data, x, 2, shape, &err);
				vpa_buf_release(&p);
				free(x);
				if (err.status) {
					rc = cli_error(&err);
					break;
				}
			} else {
				vpa_ark_write_fmat(out, id, &m[i], text);
			}
			written++;
		}
		for (size_t i = 0; i < n; i++)
			vpa_fmat_release(&m[i]);
	}
	free(m);
	free(errs);
	free(lines);
	if (!rc && written == 0) {
		vpa_fail(&err, VPA_EINPUT, NULL, "%s: no utterance gave a feature frame", inputs[0]);
		rc = cli_error(&err);
	}
	if (rc)
		goto out;
	if (npy) { /* move the files in, then drop the temporary folder */
		for (size_t i = 0; i < d.n_utt && !rc; i++) {
			struct vpa_buf a, b;
			vpa_buf_init(&a);
			vpa_buf_init(&b);
			vpa_buf_printf(&a, "%s/%s.npy", tmpdir, d.utt[i]);
			vpa_buf_printf(&b, "%s/%s.npy", outpath, d.utt[i]);
			if (access(a.data, F_OK) == 0 && rename(a.data, b.data) != 0) {
				vpa_fail(&err, VPA_EIO, NULL, "cannot write '%s': %s", b.data, strerror(errno));
				rc = cli_error(&err);
			}
			vpa_buf_release(&a);
			vpa_buf_release(&b);
		}
	} else {
		out = NULL;
		if (vpa_atomic_commit(&at, &err))
			rc = cli_error(&err);
	}
out:
	if (out)
		vpa_atomic_abort(&at);
	if (tmpdir) {
		rm_tmpdir(tmpdir);
		free(tmpdir);
	}
	vpa_feat_free(fe);
	vpa_datadir_release(&d);
	free(inputs);
	return rc;
}
