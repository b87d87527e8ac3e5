/*
 * audio/anon_dir.c - a whole Kaldi data directory through a signal
 * anonymiser (vpa_anonymise_datadir, contract in audio/anon.h), and the
 * 16-bit WAV writer it shares with the synthetic corpus.
 *
 * All or nothing: everything is written under OUT.tmp.PID and renamed to OUT
 * at the end; on error the temporary tree (only files we wrote) is removed.
 * Coefficients are drawn from vpa_rng_split(seed, id) with the speaker or
 * utterance id as the stream name, so they do not depend on the order or
 * the thread that handles an utterance.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sndfile.h>

#include "audio/anon.h"
#include "audio/anon_int.h"
#include "core/la.h"

void vpa_anon_opts_init(struct vpa_anon_opts *o, int kind)
{
	memset(o, 0, sizeof(*o));
	o->kind = kind;
	vpa_mcadams_opts_init(&o->mcadams);
	vpa_warp_opts_init(&o->warp);
	o->level = VPA_ANON_FIXED;
	o->lo = o->hi = kind == VPA_ANON_MCADAMS ? o->mcadams.alpha : o->warp.alpha;
	o->seed = 1;
}

int vpa_wav16_write(const char *path, const float *x, size_t n, double rate, struct vpa_err *err)
{
	SF_INFO info;
	memset(&info, 0, sizeof(info));
	info.samplerate = (int)lrint(rate);
	info.channels = 1;
	info.format = SF_FORMAT_WAV | SF_FORMAT_PCM_16;
	SNDFILE *s = sf_open(path, SFM_WRITE, &info);
	if (!s)
		return vpa_fail(err, VPA_EIO, NULL, "%s: cannot write: %s", path, sf_strerror(NULL));
	short buf[4096];
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i += 4096) {
		size_t m = n - i < 4096 ? n - i : 4096;
		for (size_t j = 0; j < m; j++) {
			double v = nearbyint(x[i + j]);
			buf[j] = (short)(v > 32767 ? 32767 : v < -32768 ? -32768 : v);
		}
		if (sf_writef_short(s, buf, (sf_count_t)m) != (sf_count_t)m)
			rc = vpa_fail(err, VPA_EIO, NULL, "%s: write failed: %s", path, sf_strerror(s));
	}
	if (sf_close(s) && !rc)
		rc = vpa_fail(err, VPA_EIO, NULL, "%s: write failed", path);
	return rc;
}

void vpa_rm_tree(const char *path)
{
	DIR *d = opendir(path);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			size_t len = strlen(path) + strlen(e->d_name) + 2;
			char *p = xmalloc(len);
			snprintf(p, len, "%s/%s", path, e->d_name);
			struct stat st;
			if (!lstat(p, &st) && S_ISDIR(st.st_mode))
				vpa_rm_tree(p);
			else
				unlink(p);
			free(p);
		}
		closedir(d);
	}
	rmdir(path);
}

char *vpa_anon_join(const char *a, const char *b)
{
	size_t len = strlen(a) + strlen(b) + 2;
	char *p = xmalloc(len);
	snprintf(p, len, "%s/%s", a, b);
	return p;
}

int vpa_copy_file(const char *from, const char *to, struct vpa_err *err)
{
	char *data = NULL;
	size_t len = 0;
	int rc = vpa_read_file(from, &data, &len, err);
	if (!rc) {
		FILE *f = fopen(to, "wb");
		if (!f || fwrite(data, 1, len, f) != len || fclose(f)) {
			rc = vpa_fail(err, VPA_EIO, NULL, "%s: cannot write: %s", to, strerror(errno));
			if (f)
				fclose(f);
		}
	}
	free(data);
	return rc;
}

int vpa_check_id(const char *id, const char *what, struct vpa_err *err)
{
	if (!*id || !strcmp(id, ".") || !strcmp(id, "..") || strchr(id, '/'))
		return vpa_fail(err, VPA_EINPUT, NULL,
				"%s id '%s' cannot name a file (empty, '.', '..' or with '/')", what, id);
	return 0;
}

double vpa_anon_coeff(const struct vpa_anon_opts *o, const char *utt, const char *spk)
{
	if (o->level == VPA_ANON_FIXED)
		return o->kind == VPA_ANON_MCADAMS ? o->mcadams.alpha : o->warp.alpha;
	struct vpa_rng r;
	const char *name = o->level == VPA_SIGANON_SPEAKER ? spk : utt;
	if (o->stream)
		name = o->stream(o->stream_ctx, utt, spk);
	vpa_rng_split(&r, o->seed, name);
	return o->lo + (o->hi - o->lo) * vpa_rng_uniform(&r);
}

struct job {
	const struct vpa_datadir *d;
	const struct vpa_anon_opts *o;
	const char *tmp;
	double *coeff;      /* (n_utt) */
	struct vpa_err *err; /* (n_utt) */
};

static int anon_one(void *arg, size_t i)
{
	struct job *j = arg;
	const char *utt = j->d->utt[i];
	struct vpa_err *err = &j->err[i];
	struct vpa_wave w;
	vpa_wave_init(&w);
	float *y = NULL;
	int rc = vpa_datadir_load(j->d, i, &w, NULL, err);
	double c = vpa_anon_coeff(j->o, utt, j->d->utt_spk ? j->d->utt_spk[i] : utt);
	j->coeff[i] = c;
	if (!rc) {
		struct vpa_err e2;
		vpa_err_init(&e2);
		if (j->o->kind == VPA_ANON_MCADAMS) {
			struct vpa_mcadams_opts mo = j->o->mcadams;
			mo.alpha = c;
			rc = vpa_mcadams(w.x, w.n, w.rate, &mo, &y, &e2);
		} else {
			struct vpa_warp_opts wo = j->o->warp;
			wo.alpha = c;
			rc = vpa_warp(w.x, w.n, w.rate, &wo, &y, &e2);
			/* the warped signal keeps its level; scale down only what would clip */
			double mx = 0;
			for (size_t k = 0; !rc && k < w.n; k++)
				mx = fmax(mx, fabs(y[k]));
			if (!rc && mx > 32767)
				for (size_t k = 0; k < w.n; k++)
					y[k] = (float)(y[k] / mx * 32766);
		}
		if (rc)
			rc = vpa_fail(err, rc, NULL, "utterance '%s': %s", utt, e2.msg);
	}
	if (!rc) {
		char *dir = vpa_anon_join(j->tmp, "wav");
		size_t len = strlen(dir) + strlen(utt) + 6;
		char *p = xmalloc(len);
		snprintf(p, len, "%s/%s.wav", dir, utt);
		rc = vpa_wav16_write(p, y, w.n, w.rate, err);
		free(p);
		free(dir);
	}
	free(y);
	vpa_wave_release(&w);
	return rc;
}

static const char *const copied[] = {"utt2spk", "spk2utt", "spk2gender", "text", "utt2dur",
				      "enrolls"};

int vpa_anonymise_datadir(const char *in_dir, const char *out_dir, const struct vpa_anon_opts *o,
			  int threads, struct vpa_err *err)
{
	struct stat st;
	if (!stat(out_dir, &st))
		return vpa_fail(err, VPA_EINPUT, NULL, "%s: already exists", out_dir);
	if (o->level != VPA_ANON_FIXED && !(o->lo <= o->hi))
		return vpa_fail(err, VPA_EINPUT, NULL, "coefficient range %g,%g is empty", o->lo, o->hi);
	struct vpa_datadir d;
	vpa_datadir_init(&d);
	int rc = vpa_datadir_open(&d, in_dir, -1, err);
	if (!rc && !d.scp)
		rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: not a data directory", in_dir);
	if (!rc && o->level == VPA_SIGANON_SPEAKER && !d.utt_spk)
		rc = vpa_fail(err, VPA_EINPUT, NULL,
			      "%s: speaker-level anonymisation needs utt2spk", in_dir);
	for (size_t i = 0; !rc && i < d.n_utt; i++)
		rc = vpa_check_id(d.utt[i], "utterance", err);
	if (rc) {
		vpa_datadir_release(&d);
		return rc;
	}
	size_t tl = strlen(out_dir) + 32;
	char *tmp = xmalloc(tl);
	snprintf(tmp, tl, "%s.tmp.%ld", out_dir, (long)getpid());
	char *wavdir = vpa_anon_join(tmp, "wav");
	if (vpa_mkdirs(wavdir, err)) {
		rc = VPA_EIO;
		goto out;
	}
	struct job j = {&d, o, tmp, xcalloc(d.n_utt ? d.n_utt : 1, sizeof(double)),
			xcalloc(d.n_utt ? d.n_utt : 1, sizeof(struct vpa_err))};
	for (size_t i = 0; i < d.n_utt; i++)
		vpa_err_init(&j.err[i]);
	vpa_par_jobs(d.n_utt, threads, anon_one, &j, "anonymise", vpa_la_run_workers);
	for (size_t i = 0; !rc && i < d.n_utt; i++)
		if (j.err[i].status)
			rc = vpa_fail(err, j.err[i].status, NULL, "%s", j.err[i].msg);
	if (!rc) {
		struct vpa_buf scp, co;
		vpa_buf_init(&scp);
		vpa_buf_init(&co);
		for (size_t i = 0; i < d.n_utt; i++) {
			vpa_buf_printf(&scp, "%s %s/wav/%s.wav\n", d.utt[i], out_dir, d.utt[i]);
			vpa_buf_printf(&co, "%s %.6f\n", d.utt[i], j.coeff[i]);
		}
		char *p = vpa_anon_join(tmp, "wav.scp");
		FILE *f = fopen(p, "wb");
		if (!f || fwrite(scp.data, 1, scp.len, f) != scp.len || fclose(f))
			rc = vpa_fail(err, VPA_EIO, NULL, "%s: cannot write: %s", p, strerror(errno));
		free(p);
		p = vpa_anon_join(tmp, "anon_coeffs");
		f = rc ? NULL : fopen(p, "wb");
		if (!rc && (!f || fwrite(co.data, 1, co.len, f) != co.len || fclose(f)))
			rc = vpa_fail(err, VPA_EIO, NULL, "%s: cannot write: %s", p, strerror(errno));
		free(p);
		vpa_buf_release(&scp);
		vpa_buf_release(&co);
	}
	/* the lists, and every trials* file */
	for (size_t k = 0; !rc && k < sizeof copied / sizeof copied[0]; k++) {
		char *from = vpa_anon_join(in_dir, copied[k]);
		if (!stat(from, &st)) {
			char *to = vpa_anon_join(tmp, copied[k]);
			rc = vpa_copy_file(from, to, err);
			free(to);
		}
		free(from);
	}
	if (!rc) {
		DIR *dd = opendir(in_dir);
		struct dirent *e;
		while (dd && !rc && (e = readdir(dd)))
			if (!strncmp(e->d_name, "trials", 6)) {
				char *from = vpa_anon_join(in_dir, e->d_name);
				char *to = vpa_anon_join(tmp, e->d_name);
				if (!stat(from, &st) && S_ISREG(st.st_mode))
					rc = vpa_copy_file(from, to, err);
				free(to);
				free(from);
			}
		if (dd)
			closedir(dd);
	}
	if (!rc && rename(tmp, out_dir))
		rc = vpa_fail(err, VPA_EIO, NULL, "%s: cannot rename into place: %s", out_dir,
			      strerror(errno));
	free(j.coeff);
	free(j.err);
out:
	if (rc)
		vpa_rm_tree(tmp);
	free(wavdir);
	free(tmp);
	vpa_datadir_release(&d);
	return rc;
}
