/*
 * audio/asr_ps.c - CMU PocketSphinx as vpaudit's embedded recogniser
 * (audio/asr.h).  The decoder is set up as pocketsphinx_batch sets it up with
 * its defaults (the same -hmm/-lm/-dict, everything else PocketSphinx's
 * default plus the model's feat.params), and fed as `pocketsphinx_batch
 * -adcin yes` feeds one utterance: the whole utterance in one
 * ps_process_raw(..., full_utt = TRUE) between ps_start_utt and ps_end_utt.
 * tests/golden/asr/ holds pocketsphinx_batch's own hypotheses (one process per
 * utterance) that tests/unit/test_asr.c compares with.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pocketsphinx.h>
#include <sphinxbase/cmn.h>
#include <sphinxbase/err.h>
#include <sphinxbase/fe.h>
#include <sphinxbase/feat.h>

#include "audio/asr.h"

struct vpa_asr_ps {
	size_t n;
	ps_decoder_t **ps;   /* (n) */
	cmd_ln_t **cfg;      /* (n) */
	mfcc_t **cmn0;       /* (n) live CMN only: the initial mean, put back before each utterance */
	char *about;
};

const char *vpa_asr_ps_version(void)
{
	/* libpocketsphinx has no version call; Debian's package is the only one we build against
	 * (.ci/deps), its upstream tag is 5prealpha */
	return "CMU PocketSphinx 5prealpha (Debian libpocketsphinx3 0.8+5prealpha)";
}

const char *vpa_asr_ps_model(const struct vpa_asr_ps *a)
{
	return a->about;
}

/* PocketSphinx ends the process (E_FATAL) on some unreadable model files: look first. */
static int check_file(const char *dir, const char *rel, char **path, struct vpa_err *err)
{
	size_t n = strlen(dir) + strlen(rel) + 2;
	*path = xmalloc(n);
	snprintf(*path, n, "%s/%s", dir, rel);
	FILE *f = fopen(*path, "rb");
	struct stat st;
	if (!f || fstat(fileno(f), &st) || !S_ISREG(st.st_mode) || st.st_size == 0) {
		int e = errno;
		const char *why = !f ? strerror(e) : !S_ISREG(st.st_mode) ? "not a regular file" : "empty";
		if (f)
			fclose(f);
		return vpa_fail(err, VPA_EIO, NULL,
				"PocketSphinx model folder %s: cannot read '%s': %s (expected en-us/, "
				"en-us.lm.bin and cmudict-en-us.dict as in Debian's pocketsphinx-en-us)",
				dir, rel, why);
	}
	fclose(f);
	return 0;
}

/* every file of the model folder into p[8] (freed on error) */
static int check_files(const char *dir, char **p, struct vpa_err *err)
{
	static const char *const need[] = {"en-us/mdef", "en-us/means", "en-us/variances",
					   "en-us/transition_matrices", "en-us/feat.params",
					   "en-us/noisedict", "en-us.lm.bin", "cmudict-en-us.dict"};
	int rc = 0;
	for (size_t i = 0; i < 8 && !rc; i++)
		rc = check_file(dir, need[i], &p[i], err);
	if (rc)
		for (size_t i = 0; i < 8; i++) {
			free(p[i]);
			p[i] = NULL;
		}
	return rc;
}

int vpa_asr_ps_check(const char *dir, struct vpa_err *err)
{
	char *p[8] = {0};
	int rc = check_files(dir ? dir : VPA_ASR_PS_MODEL_DIR, p, err);
	for (size_t i = 0; i < 8; i++)
		free(p[i]);
	return rc;
}

/* sphinxbase's logging is process-wide: turned off once */
static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static void log_off(void)
{
	err_set_logfp(NULL);
}


int vpa_asr_ps_new(const char *dir, size_t n, struct vpa_asr_ps **out, struct vpa_err *err)
{
	return vpa_asr_ps_new_cmn(dir, n, NULL, out, err);
}

/* cmn NULL: the model's; "live" / "batch" override it (tests/unit/test_asr.c checks that a
 * live-CMN decode does not depend on the utterances before it). */
int vpa_asr_ps_new_cmn(const char *dir, size_t n, const char *cmn, struct vpa_asr_ps **out,
		       struct vpa_err *err)
{
	*out = NULL;
	if (!dir)
		dir = VPA_ASR_PS_MODEL_DIR;
	if (n < 1)
		n = 1;
	char *p[8] = {0};
	int rc = check_files(dir, p, err);
	if (rc)
		return rc;
	pthread_once(&log_once, log_off);
	struct vpa_asr_ps *a = xcalloc(1, sizeof(*a));
	a->n = n;
	a->ps = xcalloc(n, sizeof(*a->ps));
	a->cfg = xcalloc(n, sizeof(*a->cfg));
	a->cmn0 = xcalloc(n, sizeof(*a->cmn0));
	char hmm[4096];
	snprintf(hmm, sizeof(hmm), "%s/en-us", dir);
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_buf_printf(&b, "%s (acoustic model), %s (language model), %s (dictionary)", hmm, p[6],
		       p[7]);
	a->about = xstrdup(vpa_buf_str(&b));
	vpa_buf_release(&b);
	/* decoders are made one after the other: ps_init is not documented thread-safe */
	for (size_t k = 0; k < n && !rc; k++) {
		a->cfg[k] = cmn ? cmd_ln_init(NULL, ps_args(), TRUE, "-hmm", hmm, "-lm", p[6], "-dict",
					      p[7], "-cmn", cmn, NULL)
				: cmd_ln_init(NULL, ps_args(), TRUE, "-hmm", hmm, "-lm", p[6], "-dict",
					      p[7], NULL);
		if (!a->cfg[k] || !(a->ps[k] = ps_init(a->cfg[k]))) {
			rc = vpa_fail(err, VPA_EIO, NULL,
				      "PocketSphinx model folder %s: the decoder cannot be made from it "
				      "(a damaged model file?)",
				      dir);
			break;
		}
		feat_t *fc = ps_get_feat(a->ps[k]);
		if (fc->cmn == CMN_LIVE) {
			a->cmn0[k] = xcalloc((size_t)fc->cmn_struct->veclen, sizeof(mfcc_t));
			cmn_live_get(fc->cmn_struct, a->cmn0[k]);
		}
	}
	for (size_t i = 0; i < 8; i++)
		free(p[i]);
	if (rc) {
		vpa_asr_ps_free(a);
		return rc;
	}
	*out = a;
	return 0;
}

void vpa_asr_ps_free(struct vpa_asr_ps *a)
{
	if (!a)
		return;
	for (size_t k = 0; k < a->n; k++) {
		if (a->ps[k])
			ps_free(a->ps[k]);
		else if (a->cfg[k])
			cmd_ln_free_r(a->cfg[k]);
		free(a->cmn0[k]);
	}
	/* ps_init took its own reference to the config: ours is released here */
	for (size_t k = 0; k < a->n; k++)
		if (a->ps[k] && a->cfg[k])
			cmd_ln_free_r(a->cfg[k]);
	free(a->ps);
	free(a->cfg);
	free(a->cmn0);
	free(a->about);
	free(a);
}

int vpa_asr_ps_decode(struct vpa_asr_ps *a, size_t k, const struct vpa_wave *w, const char *name,
		      char **hyp, struct vpa_err *err)
{
	*hyp = NULL;
	if (k >= a->n)
		VPA_BUG("decoder %zu of %zu", k, a->n);
	if (w->rate != VPA_ASR_RATE)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"%s: %g Hz: PocketSphinx's en-us model takes %g Hz audio only", name,
				w->rate, VPA_ASR_RATE);
	if (w->n == 0)
		return vpa_fail(err, VPA_EINPUT, NULL, "%s: no audio samples", name);
	if (w->n > (size_t)INT32_MAX)
		return vpa_fail(err, VPA_EINPUT, NULL, "%s: %zu samples: more than PocketSphinx takes "
				"in one utterance (%d)", name, w->n, INT32_MAX);
	int16 *s = xmalloc(xmul(w->n, sizeof(*s)));
	for (size_t i = 0; i < w->n; i++) {
		/* 16-bit files give exact integers here; other formats round to nearest and clip
		 * as sox does when it writes 16 bits */
		double v = nearbyint((double)w->x[i]);
		s[i] = (int16)(v > 32767 ? 32767 : v < -32768 ? -32768 : v);
	}
	ps_decoder_t *ps = a->ps[k];
	/* State a decoder carries from one utterance to the next, put back to what a fresh
	 * decoder has: the noise tracker of -remove_noise / -remove_silence (ps_start_utt resets
	 * the VAD's buffers, not the noise estimate: without this, utterance k's words depended on
	 * utterance k - 1, tests/unit/test_asr.c) and a live CMN mean. */
	fe_start_stream(ps_get_fe(ps));
	if (a->cmn0[k])
		cmn_live_set(ps_get_feat(ps)->cmn_struct, a->cmn0[k]);
	int rc = 0;
	if (ps_start_utt(ps) < 0 || ps_process_raw(ps, s, w->n, FALSE, TRUE) < 0 ||
	    ps_end_utt(ps) < 0) {
		rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: PocketSphinx cannot decode it", name);
	} else {
		int32 score;
		const char *h = ps_get_hyp(ps, &score);
		*hyp = xstrdup(h ? h : "");
	}
	free(s);
	return rc;
}

struct dd_job {
	const struct vpa_datadir *d;
	struct vpa_asr_ps *a;
	pthread_mutex_t lock;
	unsigned char *busy; /* (a->n) decoder k in use */
	char **hyps;
	struct vpa_err *errs;
	const char **lines;
};

static int dd_one(void *arg, size_t i)
{
	struct dd_job *j = arg;
	struct vpa_wave w;
	vpa_wave_init(&w);
	vpa_err_init(&j->errs[i]);
	int rc = vpa_datadir_load(j->d, i, &w, &j->lines[i], &j->errs[i]);
	if (!rc) {
		/* a free decoder: there are as many as threads, so one is always free */
		size_t k = 0;
		pthread_mutex_lock(&j->lock);
		while (k < j->a->n && j->busy[k])
			k++;
		if (k == j->a->n)
			VPA_BUG("no free decoder");
		j->busy[k] = 1;
		pthread_mutex_unlock(&j->lock);
		rc = vpa_asr_ps_decode(j->a, k, &w, j->d->utt[i], &j->hyps[i], &j->errs[i]);
		pthread_mutex_lock(&j->lock);
		j->busy[k] = 0;
		pthread_mutex_unlock(&j->lock);
	}
	vpa_wave_release(&w);
	return rc;
}

int vpa_asr_ps_datadir(const struct vpa_datadir *d, const char *dir, int threads, char ***hyps,
		       char **about, const char **line, struct vpa_err *err)
{
	*hyps = NULL;
	if (about)
		*about = NULL;
	if (line)
		*line = NULL;
	if (d->n_utt == 0)
		return vpa_fail(err, VPA_EINPUT, NULL, "%s: no utterances", d->scp ? d->scp : "DATA");
	size_t nt = threads < 1 ? 1 : (size_t)threads;
	if (nt > d->n_utt)
		nt = d->n_utt;
	struct vpa_asr_ps *a;
	int rc = vpa_asr_ps_new(dir, nt, &a, err);
	if (rc)
		return rc;
	struct dd_job j = {.d = d, .a = a};
	pthread_mutex_init(&j.lock, NULL);
	j.busy = xcalloc(nt, 1);
	j.hyps = xcalloc(d->n_utt, sizeof(char *));
	j.errs = xcalloc(d->n_utt, sizeof(*j.errs));
	j.lines = xcalloc(d->n_utt, sizeof(char *));
	for (size_t i = 0; i < d->n_utt; i++)
		vpa_err_init(&j.errs[i]);
	vpa_par_jobs(d->n_utt, (int)nt, dd_one, &j, NULL, NULL);
	/* the first failed utterance in data order: the same message for any thread count */
	for (size_t i = 0; i < d->n_utt && !rc; i++)
		if (j.errs[i].status) {
			*err = j.errs[i];
			rc = j.errs[i].status;
			if (line)
				*line = j.lines[i];
		}
	if (rc) {
		for (size_t i = 0; i < d->n_utt; i++)
			free(j.hyps[i]);
		free(j.hyps);
	} else {
		*hyps = j.hyps;
		if (about)
			*about = xstrdup(a->about);
	}
	pthread_mutex_destroy(&j.lock);
	free(j.busy);
	free(j.errs);
	free(j.lines);
	vpa_asr_ps_free(a);
	return rc;
}
