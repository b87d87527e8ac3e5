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
#include <stdint.h>
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
#include "base/dist.h"

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

/* Utterance i: a job of vpa_dist_jobs (under MPI the ranks share the utterances out and
 * exchange the hypotheses).  The thread running it owns decoder vpa_dist_thread(). */
struct dd_job {
	const struct vpa_datadir *d;
	struct vpa_asr_ps *a;
	char **hyps;          /* (n_utt) */
	unsigned char *failed; /* (n_utt) this process's failed jobs, for *line */
	const char **lines;   /* (n_utt) */
};

static int dd_one(void *arg, size_t i, struct vpa_err *err)
{
	struct dd_job *j = arg;
	struct vpa_wave w;
	vpa_wave_init(&w);
	int rc = vpa_datadir_load(j->d, i, &w, &j->lines[i], err);
	if (!rc) {
		size_t k = vpa_dist_thread();
		rc = vpa_asr_ps_decode(j->a, k, &w, j->d->utt[i], &j->hyps[i], err);
	}
	if (rc)
		j->failed[i] = 1;
	vpa_wave_release(&w);
	return rc;
}

static void dd_pack(void *arg, size_t i, struct vpa_buf *b)
{
	struct dd_job *j = arg;
	size_t n = strlen(j->hyps[i]);
	vpa_pack_u64(b, n);
	vpa_buf_add(b, j->hyps[i], n);
}

static int dd_unpack(void *arg, size_t i, const unsigned char *p, size_t len)
{
	struct dd_job *j = arg;
	const unsigned char *end = p + len;
	uint64_t n;
	if (vpa_unpack_u64(&p, end, &n) || n != (uint64_t)(end - p))
		return -1;
	free(j->hyps[i]);
	j->hyps[i] = xstrndup((const char *)p, (size_t)n);
	return 0;
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
	j.hyps = xcalloc(d->n_utt, sizeof(char *));
	j.failed = xcalloc(d->n_utt, 1);
	j.lines = xcalloc(d->n_utt, sizeof(char *));
	/* the error is the lowest failed utterance's: the same message for any thread count */
	rc = vpa_dist_jobs(d->n_utt, (int)nt, dd_one, dd_pack, dd_unpack, &j, "speech recognition",
			   NULL, err);
	if (rc) {
		for (size_t i = 0; i < d->n_utt; i++) {
			if (line && !*line && j.failed[i])
				*line = j.lines[i];
			free(j.hyps[i]);
		}
		free(j.hyps);
	} else {
		*hyps = j.hyps;
		if (about)
			*about = xstrdup(a->about);
	}
	free(j.failed);
	free(j.lines);
	vpa_asr_ps_free(a);
	return rc;
}
