/*
 * audio/anon_dir.c - a whole Kaldi data directory through a signal
 * anonymiser (vpa_anonymise_datadir, contract in audio/anon.h), and the
 * 16-bit WAV writer it shares with the synthetic corpus.
 *
 * All or nothing: everything is written under OUT.tmp.PID and renamed to OUT
 * at the end; on error the temporary tree (only files we wrote) is removed.
 * Coefficients are drawn from vpa_rng_split(seed, id) with the speaker or
 * utterance id as the stream name, so they do not depend on the order, the
 * thread or the MPI rank that handles an utterance.
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
#include "base/dist.h"
#include "base/la.h"

void vpa_anon_opts_init(struct vpa_anon_opts *o, int kind)
{
	memset(o, 0, sizeof(*o));
	o->kind = kind;
	vpa_mcadams_opts_init(&o->mcadams);
	vpa_warp_opts_init(&o->warp);
	vpa_pshift_opts_init(&o->pshift);
	o->level = VPA_ANON_FIXED;
	o->channel = -1;
	o->lo = o->hi = vpa_anon_fixed_coeff(o);
	o->seed = 1;
}

double vpa_anon_fixed_coeff(const struct vpa_anon_opts *o)
{
	return o->kind == VPA_ANON_MCADAMS ? o->mcadams.alpha
	       : o->kind == VPA_ANON_WARP  ? o->warp.alpha
					   : o->pshift.semitones;
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

short *vpa_pcm16(const float *x, size_t n)
{
	short *y = xmalloc(xmul(n ? n : 1, sizeof(short)));
	for (size_t k = 0; k < n; k++) {
		double v = nearbyint(x[k]);
		y[k] = (short)(v > 32767 ? 32767 : v < -32768 ? -32768 : v);
	}
	return y;
}

int vpa_pcm16_write(const char *path, const short *pcm, size_t n, double rate,
		    struct vpa_err *err)
{
	float *x = xmalloc(xmul(n ? n : 1, sizeof(float)));
	for (size_t k = 0; k < n; k++)
		x[k] = pcm[k]; /* exact: vpa_wav16_write writes the same integers */
	int rc = vpa_wav16_write(path, x, n, rate, err);
	free(x);
	return rc;
}

void vpa_pcm16_pack(struct vpa_buf *b, const short *pcm, size_t n)
{
	vpa_pack_u64(b, n);
	if (n)
		vpa_buf_add(b, pcm, xmul(n, sizeof(short)));
}

int vpa_pcm16_unpack(const unsigned char **p, const unsigned char *end, short **pcm, size_t *n)
{
	uint64_t m;
	if (vpa_unpack_u64(p, end, &m) || m > (uint64_t)(end - *p) / sizeof(short))
		return -1;
	free(*pcm);
	*n = (size_t)m;
	*pcm = xmalloc(xmul(m ? m : 1, sizeof(short)));
	if (m)
		memcpy(*pcm, *p, (size_t)m * sizeof(short));
	*p += m * sizeof(short);
	return 0;
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
		return vpa_anon_fixed_coeff(o);
	struct vpa_rng r;
	const char *name = o->level == VPA_SIGANON_SPEAKER ? spk : utt;
	if (o->stream)
		name = o->stream(o->stream_ctx, utt, spk);
	vpa_rng_split(&r, o->seed, name);
	return o->lo + (o->hi - o->lo) * vpa_rng_uniform(&r);
}

/*
 * Utterance i anonymised: a job of vpa_dist_jobs.  The job keeps the 16-bit
 * samples the WAV file will hold (slot i); after each block of utterances
 * every rank writes the block's files into its own temporary tree.  Under MPI
 * the ranks share the utterances out and exchange the samples (2 bytes per
 * sample), so each rank's OUT is the whole anonymised directory its later
 * stages read (a rank's temporary folder is its own: node-local /tmp), and
 * the files are byte for byte those of a one-process run.  Blocks bound the
 * samples held at once.
 */
#define ANON_BLOCK 256

struct job {
	const struct vpa_datadir *d;
	const struct vpa_anon_opts *o;
	double *coeff;  /* (n_utt) */
	short **pcm;    /* (n_utt) the samples of the block's utterances, owned */
	size_t *len;    /* (n_utt) */
	double *rate;   /* (n_utt) */
	size_t base;    /* the block's first utterance */
};

static int anon_one(void *arg, size_t k, struct vpa_err *err)
{
	struct job *j = arg;
	size_t i = j->base + k;
	const char *utt = j->d->utt[i];
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
			if (j->o->kind == VPA_ANON_WARP) {
				struct vpa_warp_opts wo = j->o->warp;
				wo.alpha = c;
				rc = vpa_warp(w.x, w.n, w.rate, &wo, &y, &e2);
			} else {
				struct vpa_pshift_opts po = j->o->pshift;
				po.semitones = c;
				rc = vpa_pshift(w.x, w.n, w.rate, &po, &y, &e2);
			}
			/* the warped or pitch-shifted signal keeps its level; scale down
			 * only what would clip */
			double mx = 0;
			for (size_t k2 = 0; !rc && k2 < w.n; k2++)
				mx = fmax(mx, fabs(y[k2]));
			if (!rc && mx > 32767)
				for (size_t k2 = 0; k2 < w.n; k2++)
					y[k2] = (float)(y[k2] / mx * 32766);
		}
		if (rc)
			rc = vpa_fail(err, rc, NULL, "utterance '%s': %s", utt, e2.msg);
	}
	if (!rc) {
		j->pcm[i] = vpa_pcm16(y, w.n); /* the 16-bit samples of the file */
		j->len[i] = w.n;
		j->rate[i] = w.rate;
	}
	free(y);
	vpa_wave_release(&w);
	return rc;
}

static void anon_pack(void *arg, size_t k, struct vpa_buf *b)
{
	struct job *j = arg;
	size_t i = j->base + k;
	vpa_pack_f64s(b, &j->coeff[i], 1);
	vpa_pack_f64s(b, &j->rate[i], 1);
	vpa_pcm16_pack(b, j->pcm[i], j->len[i]);
}

static int anon_unpack(void *arg, size_t k, const unsigned char *p, size_t len)
{
	struct job *j = arg;
	size_t i = j->base + k;
	const unsigned char *end = p + len;
	if (vpa_unpack_f64s(&p, end, &j->coeff[i], 1) || vpa_unpack_f64s(&p, end, &j->rate[i], 1) ||
	    vpa_pcm16_unpack(&p, end, &j->pcm[i], &j->len[i]))
		return -1;
	return p != end;
}

/* Utterance i's samples into TMP/wav/UTT.wav (and out of memory). */
static int write_one(struct job *j, const char *tmp, size_t i, struct vpa_err *err)
{
	size_t l = strlen(tmp) + strlen(j->d->utt[i]) + 10;
	char *p = xmalloc(l);
	snprintf(p, l, "%s/wav/%s.wav", tmp, j->d->utt[i]);
	int rc = vpa_pcm16_write(p, j->pcm[i], j->len[i], j->rate[i], err);
	free(p);
	free(j->pcm[i]);
	j->pcm[i] = NULL;
	return rc;
}

char *vpa_anon_abs(const char *dir)
{
	/* dir need not exist yet (it is renamed into place last): its parent
	 * is made absolute and canonical, its last name kept */
	size_t l = strlen(dir);
	while (l > 1 && dir[l - 1] == '/')
		l--;
	char *d = xmalloc(l + 1);
	memcpy(d, dir, l);
	d[l] = 0;
	char *slash = strrchr(d, '/');
	const char *base = slash ? slash + 1 : d;
	char *parent = slash ? (slash == d ? xstrdup("/") : xstrndup(d, (size_t)(slash - d)))
			     : xstrdup(".");
	char *rp = realpath(parent, NULL);
	char *out;
	if (rp && *base && strcmp(base, ".") && strcmp(base, ".."))
		out = vpa_anon_join(strcmp(rp, "/") ? rp : "", base);
	else if (rp && !*base)
		out = xstrdup(rp);
	else {
		char *whole = realpath(d, NULL); /* "." / "..": the folder itself */
		out = whole ? xstrdup(whole) : xstrdup(d);
		free(whole);
	}
	free(rp);
	free(parent);
	free(d);
	return out;
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
	int rc = vpa_datadir_open(&d, in_dir, o->channel, err);
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
	char *tmp = xmalloc(tl), *abs_out = NULL;
	snprintf(tmp, tl, "%s.tmp.%ld", out_dir, (long)getpid());
	char *wavdir = vpa_anon_join(tmp, "wav");
	vpa_tmp_clean_stale(out_dir);
	/* a predictable name: made anew, never through a planted link; removed on a signal */
	vpa_tmp_register(tmp, 1);
	if (vpa_mkdir_new(tmp, err) || vpa_mkdirs(wavdir, err)) {
		rc = VPA_EIO;
		goto out;
	}
	/* wav.scp names the files by absolute path: Kaldi (and vpaudit) read a
	 * relative path against the current folder, not the data directory's, so
	 * a relative one would break a scenario run from another folder */
	abs_out = vpa_anon_abs(out_dir);
	size_t nu = d.n_utt ? d.n_utt : 1;
	struct job j = {&d, o, xcalloc(nu, sizeof(double)), xcalloc(nu, sizeof(short *)),
			xcalloc(nu, sizeof(size_t)), xcalloc(nu, sizeof(double)), 0};
	for (size_t b = 0; !rc && b < d.n_utt; b += ANON_BLOCK) {
		size_t m = d.n_utt - b < ANON_BLOCK ? d.n_utt - b : ANON_BLOCK;
		j.base = b;
		rc = vpa_dist_jobs(m, threads, anon_one, anon_pack, anon_unpack, &j, "anonymise",
				   vpa_la_run_workers, err);
		for (size_t i = b; !rc && i < b + m; i++)
			rc = write_one(&j, tmp, i, err);
	}
	for (size_t i = 0; i < d.n_utt; i++)
		free(j.pcm[i]);
	free(j.pcm);
	free(j.len);
	free(j.rate);
	if (!rc) {
		struct vpa_buf scp, co;
		vpa_buf_init(&scp);
		vpa_buf_init(&co);
		for (size_t i = 0; i < d.n_utt; i++) {
			vpa_buf_printf(&scp, "%s %s/wav/%s.wav\n", d.utt[i], abs_out, d.utt[i]);
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
out:
	if (rc)
		vpa_rm_tree(tmp);
	vpa_tmp_unregister(tmp);
	free(wavdir);
	free(abs_out);
	free(tmp);
	vpa_datadir_release(&d);
	return rc;
}
