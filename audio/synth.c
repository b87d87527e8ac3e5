/*
 * audio/synth.c - the synthetic multi-speaker corpus of issue 17 item 6
 * (vpa_synth_corpus, contract in audio/anon.h).
 *
 * Speakers.  Speaker i is female for odd i, male for even i.  A speaker is a
 * base voice plus a pitch and a speaking rate drawn from
 * vpa_rng_split(seed, "synth-spk-<i>"):
 *   espeak-ng: an accent (en-us, en-gb, en-gb-scotland, en-gb-x-rp, en-029,
 *     en-gb-x-gbclan, en-gb-x-gbcwmd) with a variant (+f1..+f5 female,
 *     +m1..+m7 male), -p pitch 20..80, -s speed 140..190 wpm;
 *   flite (Debian's voices: slt female; rms, awb, kal16 male - kal is the
 *     8 kHz diphone voice of kal16 and awb_time a talking clock, both left
 *     out): int_f0_target_mean and duration_stretch set with --setf.
 * Base voices are dealt per gender in an order shuffled by the seed, flite
 * voices first among them so that every corpus of 8 or more speakers has
 * recorded-donor voices of both genders; when the bases run out they repeat
 * with other pitch/rate draws.
 *
 * Vocal-tract scale.  The timbre of an espeak-ng voice is its variant (the
 * accent changes pronunciation, not the formants), so a corpus of 60 has
 * about six speakers per variant; with pitch alone to tell them apart, pairs
 * of the same variant and close pitch were nearly the same voice (most false
 * alarms of the unprotected baseline, issue 17).  The k-th speaker of a
 * timbre (variant, or flite voice) therefore gets the k-th scale of a fixed
 * list (1.03, 0.91, 1.15, 0.97, 0.85, 1.09, ...: 6% apart for the first six):
 * the synthesiser's output is read as if recorded at its rate x scale before
 * resampling, which multiplies every frequency (formants and F0) by the scale
 * and durations by its inverse, as a shorter or longer vocal tract would.
 *
 * Sentences.  Brown corpus sentences of 5..16 words that are all alphabetic
 * (apostrophes and hyphens allowed inside), lower-cased; the transcript is
 * the words joined by spaces.  Each utterance gets its own sentence, dealt
 * from the order shuffled by the seed.
 *
 * Split (VoicePrivacy-like): the first half of the speakers (rounded to
 * even, so both genders) is train/; each other speaker gives its first
 * utterance to enrol/ (enrolls) and the rest to trials/; trials pairs every
 * enrolment speaker with every trial utterance of the same gender (target
 * when the speaker is the same): trials_f, trials_m, and trials = both.
 *
 * Synthesis by fork/exec (execvp, never a shell) into a temporary WAV that
 * libsndfile reads; resampled to the output rate by windowed-sinc
 * interpolation (vpa_resample); leading/trailing silence kept as the
 * synthesiser made it.  Every utterance is an independent job (vpa_dist_jobs,
 * shared out over threads and MPI ranks, the samples exchanged): the corpus
 * is byte-identical for any thread or rank count.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "audio/anon.h"
#include "audio/anon_int.h"
#include "audio/audio.h"
#include "audio/synth_ali.h"
#include "formats/corpus.h"
#include "base/dist.h"

void vpa_synth_opts_init(struct vpa_synth_opts *o)
{
	o->speakers = 60;
	o->utts = 8;
	o->seed = 1;
	o->brown = "data/brown";
	o->rate = 16000;
}

/* ------------------------------------------------------------ resampling */

/*
 * Band-limited interpolation: y[k] = sum_j x[j] c h(c (p - j)), p = k rin/rout,
 * c = min(1, rout/rin) (the anti-aliasing cutoff when downsampling), h the
 * sinc with a Hann window over +-16 zero crossings; 0.95 of the cutoff keeps
 * the transition band below the new Nyquist.
 */
float *vpa_resample(const float *x, size_t n, double rin, double rout, size_t *nout)
{
	size_t m = (size_t)floor((double)n * rout / rin);
	float *y = xmalloc(xmul(m ? m : 1, sizeof(float)));
	double c = (rout < rin ? rout / rin : 1) * 0.95;
	const double Z = 16; /* zero crossings each side */
	double half = Z / c;  /* input samples each side */
	for (size_t k = 0; k < m; k++) {
		double p = (double)k * rin / rout;
		long lo = (long)ceil(p - half), hi = (long)floor(p + half);
		if (lo < 0)
			lo = 0;
		if (hi > (long)n - 1)
			hi = (long)n - 1;
		double acc = 0;
		for (long j = lo; j <= hi; j++) {
			double t = (p - (double)j) * c;
			double s = fabs(t) < 1e-12 ? 1 : sin(M_PI * t) / (M_PI * t);
			double w = 0.5 + 0.5 * cos(M_PI * t / Z);
			acc += x[j] * c * s * w;
		}
		y[k] = (float)acc;
	}
	*nout = m;
	return y;
}

/* ----------------------------------------------------------- speakers */

static const char *const accents[] = {"en-us", "en-gb", "en-gb-scotland", "en-gb-x-rp", "en-029",
				      "en-gb-x-gbclan", "en-gb-x-gbcwmd"};
#define N_ACC 7
static const char *const fvar[] = {"f1", "f2", "f3", "f4", "f5"};
static const char *const mvar[] = {"m1", "m2", "m3", "m4", "m5", "m6", "m7"};

struct speaker {
	char id[16];
	char gender;          /* 'f' | 'm' */
	int flite;            /* 1: flite voice, 0: espeak-ng */
	char voice[48];       /* espeak "en-us+f3", flite "slt" */
	int pitch, speed;     /* espeak -p, -s */
	double f0, stretch;   /* flite int_f0_target_mean, duration_stretch */
	double scale;         /* vocal-tract scale: every frequency times this */
	char desc[800];      /* room for any %g the compiler can imagine (-Wformat-truncation) */
};

static void shuffle(size_t *a, size_t n, struct vpa_rng *r)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)vpa_rng_below(r, i);
		size_t t = a[i - 1];
		a[i - 1] = a[j];
		a[j] = t;
	}
}

static void make_speakers(struct speaker *S, int n, uint64_t seed)
{
	/* base voices per gender: flite ones first (in a fixed order), then the
	 * espeak accent x variant grid shuffled */
	static const char *const ff[] = {"slt"}, *const fm[] = {"rms", "awb", "kal16"};
	size_t nf = 1 + N_ACC * 5, nm = 3 + N_ACC * 7;
	size_t *of = xmalloc(nf * sizeof(size_t)), *om = xmalloc(nm * sizeof(size_t));
	for (size_t i = 0; i < nf; i++)
		of[i] = i;
	for (size_t i = 0; i < nm; i++)
		om[i] = i;
	struct vpa_rng r;
	vpa_rng_split(&r, seed, "synth-voices");
	shuffle(of + 1, nf - 1, &r);
	shuffle(om + 3, nm - 3, &r);
	/*
	 * The k-th speaker of a timbre (espeak variant or flite voice) gets the
	 * k-th vocal-tract scale: 6% apart for the first six, then in between.
	 */
	static const double scales[] = {1.03, 0.91, 1.15, 0.97, 0.85, 1.09, 1.00,
					0.88, 1.12, 0.94, 1.06, 0.82, 1.18};
	enum { N_SCALES = sizeof scales / sizeof scales[0] };
	int uses[4 + 5 + 7] = {0}; /* per timbre: flite slt rms awb kal16, f1..f5, m1..m7 */
	int kf = 0, km = 0;
	for (int i = 0; i < n; i++) {
		struct speaker *s = &S[i];
		memset(s, 0, sizeof(*s));
		s->gender = i % 2 ? 'f' : 'm';
		snprintf(s->id, sizeof s->id, "syn%c%03d", s->gender, i + 1);
		char name[32];
		snprintf(name, sizeof name, "synth-spk-%d", i);
		struct vpa_rng q;
		vpa_rng_split(&q, seed, name);
		size_t b;
		int timbre;
		if (s->gender == 'f') {
			b = of[(size_t)kf++ % nf];
			if (b < 1) {
				s->flite = 1;
				snprintf(s->voice, sizeof s->voice, "%s", ff[b]);
				timbre = 0;
			} else {
				b -= 1;
				snprintf(s->voice, sizeof s->voice, "%s+%s", accents[b / 5], fvar[b % 5]);
				timbre = 4 + (int)(b % 5);
			}
		} else {
			b = om[(size_t)km++ % nm];
			if (b < 3) {
				s->flite = 1;
				snprintf(s->voice, sizeof s->voice, "%s", fm[b]);
				timbre = 1 + (int)b;
			} else {
				b -= 3;
				snprintf(s->voice, sizeof s->voice, "%s+%s", accents[b / 7], mvar[b % 7]);
				timbre = 9 + (int)(b % 7);
			}
		}
		s->scale = scales[uses[timbre]++ % N_SCALES];
		s->pitch = 20 + (int)vpa_rng_below(&q, 61);
		s->speed = 140 + (int)vpa_rng_below(&q, 51);
		double base = s->gender == 'f' ? 180 : 105;
		s->f0 = base * (0.85 + 0.3 * vpa_rng_uniform(&q));
		s->stretch = 0.9 + 0.25 * vpa_rng_uniform(&q);
		if (s->flite)
			snprintf(s->desc, sizeof s->desc, "flite -voice %s --setf int_f0_target_mean=%.1f "
				 "--setf duration_stretch=%.3f, scale %.2f", s->voice, s->f0, s->stretch,
				 s->scale);
		else
			snprintf(s->desc, sizeof s->desc, "espeak-ng -v %s -p %d -s %d, scale %.2f", s->voice,
				 s->pitch, s->speed, s->scale);
	}
	free(of);
	free(om);
}

/* ------------------------------------------------------------ sentences */

static int word_ok(const char *w)
{
	if (!((w[0] >= 'a' && w[0] <= 'z') || (w[0] >= 'A' && w[0] <= 'Z')))
		return 0;
	for (const char *p = w; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      ((*p == '\'' || *p == '-') && p[1])))
			return 0;
	return 1;
}

/* ------------------------------------------------------------- the jobs */

struct utt {
	int spk;            /* index into speakers */
	char id[32];
	char *text;         /* owned */
	int set;            /* 0 train, 1 enrol, 2 trials */
	size_t n;           /* samples written */
	char *seg;          /* "PHONE B0 B1" lines on the output samples (synth_ali.h), owned */
};

/* Utterance i synthesised: a job of vpa_dist_jobs that keeps the 16-bit
 * samples of its file (as audio/anon_dir.c does): under MPI the ranks share
 * the utterances out and exchange the samples, and every rank writes the
 * whole corpus into its own folder, in blocks of SYNTH_BLOCK utterances. */
#define SYNTH_BLOCK 256

struct ctx {
	const struct vpa_synth_opts *o;
	const struct speaker *S;
	struct utt *U;
	const char *tmp;
	short **pcm; /* (n_utt) the block's samples, owned */
	size_t base; /* the block's first utterance */
	const char *helper; /* vpaudit-espeak-phones (espeak_helper) */
};

/*
 * Runs argv by fork/exec (never a shell): execvp of argv[0], or execv of path
 * when given (vpaudit-espeak-phones).  in, when not NULL, is written
 * to its stdin; out, when not NULL, gets its stdout; the rest goes to
 * /dev/null.  The pipes are made close-on-exec so that the children other
 * threads start at the same time do not hold them open (a reader would then
 * wait for their end, not this child's).
 */
static int run_prog(const char *const *argv, const char *path, const char *in, struct vpa_buf *out,
		    struct vpa_err *err)
{
	int pin[2] = {-1, -1}, pout[2] = {-1, -1};
	if ((in && pipe2(pin, O_CLOEXEC)) || (out && pipe2(pout, O_CLOEXEC))) {
		int e = errno;
		for (int k = 0; k < 2; k++) {
			if (pin[k] >= 0)
				close(pin[k]);
			if (pout[k] >= 0)
				close(pout[k]);
		}
		return vpa_fail(err, VPA_EIO, NULL, "cannot start %s: %s", argv[0], strerror(e));
	}
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR);
		if (fd >= 0) {
			dup2(in ? pin[0] : fd, 0);
			dup2(out ? pout[1] : fd, 1);
			dup2(fd, 2);
		}
		if (path)
			execv(path, (char *const *)argv);
		else
			execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	int fork_errno = errno;
	if (in)
		close(pin[0]);
	if (out)
		close(pout[1]);
	if (pid < 0) {
		if (in)
			close(pin[1]);
		if (out)
			close(pout[0]);
		return vpa_fail(err, VPA_EIO, NULL, "cannot start %s: %s", argv[0],
				strerror(fork_errno));
	}
	if (in) {
		/* a child that exits unread must not kill us with SIGPIPE: block it in
		 * this thread while writing and take a pending one off again */
		sigset_t pipe_set, old;
		sigemptyset(&pipe_set);
		sigaddset(&pipe_set, SIGPIPE);
		pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
		size_t len = strlen(in), done = 0;
		while (done < len) {
			ssize_t w = write(pin[1], in + done, len - done);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				break; /* EPIPE: the exit status tells why */
			done += (size_t)w;
		}
		close(pin[1]);
		struct timespec zero = {0, 0};
		while (sigtimedwait(&pipe_set, NULL, &zero) == SIGPIPE)
			;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (out) {
		char chunk[4096];
		for (;;) {
			ssize_t r = read(pout[0], chunk, sizeof chunk);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			vpa_buf_add(out, chunk, (size_t)r);
		}
		close(pout[0]);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return vpa_fail(err, VPA_EIO, NULL, "%s: wait failed: %s", argv[0], strerror(errno));
	if (WIFEXITED(st) && WEXITSTATUS(st) == 127 && path)
		return vpa_fail(err, VPA_EIO, NULL, "cannot run %s again as %s", argv[0], path);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
		return vpa_fail(err, VPA_EIO, NULL, "cannot run '%s': is it installed? (Debian package %s)",
				argv[0], argv[0]);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		return vpa_fail(err, VPA_EIO, NULL, "%s failed (status %d)", argv[0],
				WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}

static int synth_one(void *arg, size_t k, struct vpa_err *err)
{
	struct ctx *c = arg;
	size_t i = c->base + k;
	struct utt *u = &c->U[i];
	const struct speaker *s = &c->S[u->spk];
	char raw[512];
	snprintf(raw, sizeof raw, "%s/raw-%s.wav", c->tmp, u->id);
	char p1[32], p2[32], f0[64], st[64];
	int rc;
	struct vpa_buf timing; /* flite's -psdur, or the lines of vpaudit-espeak-phones */
	vpa_buf_init(&timing);
	if (s->flite) {
		snprintf(f0, sizeof f0, "int_f0_target_mean=%.1f", s->f0);
		snprintf(st, sizeof st, "duration_stretch=%.3f", s->stretch);
		/* -psdur prints the segments of this very synthesis (the audio is the same
		 * with or without it: checked byte for byte against the corpus before it) */
		const char *argv[] = {"flite", "-voice", s->voice, "--setf", f0, "--setf", st,
				      "-psdur", "-t", u->text, "-o", raw, NULL};
		rc = run_prog(argv, NULL, NULL, &timing, err);
	} else {
		snprintf(p1, sizeof p1, "%d", s->pitch);
		snprintf(p2, sizeof p2, "%d", s->speed);
		const char *argv[] = {"espeak-ng", "-v", s->voice, "-p", p1, "-s", p2, "-w", raw,
				      "--", u->text, NULL};
		rc = run_prog(argv, NULL, NULL, NULL, err);
		if (!rc) {
			/* libespeak-ng's timing, in a fresh process (see synth_ali.c) */
			const char *hv[] = {"vpaudit-espeak-phones", s->voice, p1, p2, raw, NULL};
			rc = run_prog(hv, c->helper, u->text, &timing, err);
			const char *t = vpa_buf_str(&timing);
			if (!strncmp(t, "error: ", 7)) {
				vpa_err_init(err);
				rc = vpa_fail(err, VPA_EIO, NULL, "%.*s", (int)strcspn(t + 7, "\n"), t + 7);
			}
		}
	}
	struct vpa_wave w;
	vpa_wave_init(&w);
	if (!rc)
		rc = vpa_audio_read(raw, -1, &w, err);
	unlink(raw);
	if (!rc) {
		float *y = w.x;
		size_t n = w.n;
		/* read as if recorded at rate x scale: frequencies x scale, durations / scale */
		double rin = w.rate * s->scale;
		if (rin != c->o->rate)
			y = vpa_resample(w.x, w.n, rin, c->o->rate, &n);
		u->n = n;
		c->pcm[i] = vpa_pcm16(y, n);
		if (y != w.x)
			free(y);
		struct vpa_buf seg;
		vpa_buf_init(&seg);
		rc = vpa_synth_segments(vpa_buf_str(&timing), s->flite, s->scale, c->o->rate, n, &seg,
					err);
		free(u->seg);
		u->seg = rc ? NULL : xstrdup(vpa_buf_str(&seg));
		vpa_buf_release(&seg);
	}
	vpa_buf_release(&timing);
	vpa_wave_release(&w);
	if (rc) {
		char m[sizeof err->msg];
		snprintf(m, sizeof m, "%s", err->msg);
		vpa_err_init(err);
		vpa_fail(err, rc, NULL, "synthesising '%s' (%s): %s", u->id, s->desc, m);
	}
	return rc;
}

static void synth_pack(void *arg, size_t k, struct vpa_buf *b)
{
	struct ctx *c = arg;
	size_t i = c->base + k;
	vpa_pcm16_pack(b, c->pcm[i], c->U[i].n);
	/* the phone segments follow, their length first */
	size_t len = strlen(c->U[i].seg);
	vpa_pack_u64(b, len);
	vpa_buf_add(b, c->U[i].seg, len);
}

static int synth_unpack(void *arg, size_t k, const unsigned char *p, size_t len)
{
	struct ctx *c = arg;
	size_t i = c->base + k;
	const unsigned char *end = p + len;
	uint64_t sl;
	if (vpa_pcm16_unpack(&p, end, &c->pcm[i], &c->U[i].n) || vpa_unpack_u64(&p, end, &sl) ||
	    sl != (uint64_t)(end - p))
		return -1;
	free(c->U[i].seg);
	c->U[i].seg = xmalloc((size_t)sl + 1);
	memcpy(c->U[i].seg, p, (size_t)sl);
	c->U[i].seg[sl] = 0;
	return 0;
}

static int write_text(const char *dir, const char *name, const struct vpa_buf *b, struct vpa_err *err)
{
	char *p = vpa_anon_join(dir, name);
	FILE *f = fopen(p, "wb");
	int rc = 0;
	if (!f || (b->len && fwrite(b->data, 1, b->len, f) != b->len) || fclose(f))
		rc = vpa_fail(err, VPA_EIO, NULL, "%s: cannot write: %s", p, strerror(errno));
	free(p);
	return rc;
}

/* ------------------------------------------------------ the alignments */

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * OUT/phones.txt (SIL 0, then the union of every utterance's phones in byte
 * order, 1..), and per data directory phones.seg ("UTT PHONE START END" in
 * seconds, contiguous from 0 to the utterance's length) and ali.txt ("UTT
 * ID ..." one phone id per frame of the default front end, the phone
 * covering the frame's centre), both in the order of wav.scp.
 */
static int write_alignments(const struct vpa_synth_opts *o, const struct utt *U, size_t nu,
			    const char *tmp, struct vpa_err *err)
{
	struct vpa_feat_opts fo;
	vpa_feat_opts_init(&fo, VPA_FEAT_FBANK);
	fo.sample_frequency = o->rate;
	struct vpa_feat *feat = vpa_feat_new(&fo, err);
	if (!feat)
		return -1;
	/* the frame's window as audio/feat.c sizes it: its centre is len/2 samples in */
	size_t len = (size_t)(o->rate * 0.001 * fo.frame_length);
	size_t shift = (size_t)(o->rate * 0.001 * fo.frame_shift);
	/* the inventory */
	size_t cap = 64, np = 0;
	char **ph = xmalloc(cap * sizeof(char *));
	char nm[VPA_PHONE_MAX + 1];
	size_t b0, b1;
	int used;
	for (size_t k = 0; k < nu; k++)
		for (const char *p = U[k].seg; sscanf(p, "%16s %zu %zu\n%n", nm, &b0, &b1, &used) == 3;
		     p += used) {
			size_t j = 0;
			while (j < np && strcmp(ph[j], nm))
				j++;
			if (j < np || !strcmp(nm, "SIL"))
				continue;
			if (np == cap)
				ph = xrealloc(ph, xmul(cap *= 2, sizeof(char *)));
			ph[np++] = xstrdup(nm);
		}
	qsort(ph, np, sizeof(char *), cmp_name);
	struct vpa_buf pt;
	vpa_buf_init(&pt);
	vpa_buf_puts(&pt, "SIL 0\n");
	for (size_t j = 0; j < np; j++)
		vpa_buf_printf(&pt, "%s %zu\n", ph[j], j + 1);
	int rc = write_text(tmp, "phones.txt", &pt, err);
	vpa_buf_release(&pt);
	static const char *const sets[] = {"train", "enrol", "trials"};
	for (int set = 0; set < 3 && !rc; set++) {
		struct vpa_buf seg, ali;
		vpa_buf_init(&seg);
		vpa_buf_init(&ali);
		for (size_t k = 0; k < nu; k++) {
			if (U[k].set != set)
				continue;
			size_t nf = vpa_feat_num_frames(feat, U[k].n), f = 0;
			vpa_buf_puts(&ali, U[k].id);
			for (const char *p = U[k].seg;
			     sscanf(p, "%16s %zu %zu\n%n", nm, &b0, &b1, &used) == 3; p += used) {
				/* 7 decimals: the sample boundaries exactly at 16 kHz */
				vpa_buf_printf(&seg, "%s %s %.7f %.7f\n", U[k].id, nm, (double)b0 / o->rate,
					       (double)b1 / o->rate);
				size_t j = 0;
				if (strcmp(nm, "SIL")) {
					char *key = nm;
					char **hit = bsearch(&key, ph, np, sizeof(char *), cmp_name);
					j = (size_t)(hit - ph) + 1;
				}
				/* frames whose centre f*shift + len/2 lies in [b0, b1) (twice over:
				 * an odd len's centre is half a sample in) */
				for (; f < nf && 2 * f * shift + len < 2 * b1; f++)
					vpa_buf_printf(&ali, " %zu", j);
			}
			vpa_buf_puts(&ali, "\n");
			if (f != nf) {
				rc = vpa_fail(err, VPA_EIO, NULL, "%s: the phones cover %zu of its %zu frames",
					      U[k].id, f, nf);
				break;
			}
		}
		char *d = vpa_anon_join(tmp, sets[set]);
		if (!rc)
			rc = write_text(d, "phones.seg", &seg, err);
		if (!rc)
			rc = write_text(d, "ali.txt", &ali, err);
		free(d);
		vpa_buf_release(&seg);
		vpa_buf_release(&ali);
	}
	for (size_t j = 0; j < np; j++)
		free(ph[j]);
	free(ph);
	vpa_feat_free(feat);
	return rc;
}

static const char note[] =
	"SYNTHETIC SPEECH - NOT RECORDINGS OF PEOPLE\n"
	"\n"
	"This corpus was made by `vpaudit synth-corpus` from Debian's speech synthesisers\n"
	"(espeak-ng: accents x voice variants with drawn pitch and rate; flite: its voices\n"
	"slt, rms, awb, kal16 with drawn F0 and duration stretch; every frequency scaled\n"
	"per speaker as a vocal tract length would) reading Brown corpus\n"
	"sentences.  Its \"speakers\" are synthesiser settings: results on it show that a\n"
	"pipeline runs and how attackers compare on synthetic voices, not how they fare on\n"
	"human speech.  speakers.txt gives each speaker's exact synthesiser command.\n"
	"\n"
	"train/   attacker training set (half of the speakers)\n"
	"enrol/   one enrolment utterance per evaluation speaker (enrolls)\n"
	"trials/  the other utterances of the evaluation speakers; trials_f, trials_m\n"
	"         (same-gender pairs) and trials (both), `ENROLL_SPK UTT target|nontarget`\n";

/*
 * The program that gives an espeak-ng utterance's phone timing
 * (tools/espeak_phones.c): $VPAUDIT_ESPEAK_PHONES when set, else
 * vpaudit-espeak-phones in the folder of the running program (`make` builds
 * it next to vpaudit).  Checked before any synthesis.  Caller frees *path.
 */
static int espeak_helper(char **path, struct vpa_err *err)
{
	const char *env = getenv("VPAUDIT_ESPEAK_PHONES");
	char self[4096];
	if (env && *env) {
		*path = xstrdup(env);
	} else {
		ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
		if (n <= 0)
			return vpa_fail(err, VPA_EIO, NULL,
					"cannot find the running program (/proc/self/exe), so not "
					"vpaudit-espeak-phones beside it: set VPAUDIT_ESPEAK_PHONES");
		self[n] = 0;
		char *slash = strrchr(self, '/');
		if (slash)
			*slash = 0;
		*path = vpa_anon_join(slash ? self : ".", "vpaudit-espeak-phones");
	}
	if (access(*path, X_OK))
		return vpa_fail(err, VPA_EIO, NULL,
				"%s: %s (the espeak-ng voices' phone timing; `make` builds it next "
				"to vpaudit, or set VPAUDIT_ESPEAK_PHONES)", *path, strerror(errno));
	return 0;
}

int vpa_synth_corpus(const struct vpa_synth_opts *o, const char *out_dir, int threads,
		     struct vpa_err *err)
{
	if (o->speakers < 8 || o->speakers > 1000)
		return vpa_fail(err, VPA_EINPUT, NULL, "--speakers must be in [8, 1000], got %d",
				o->speakers);
	if (o->utts < 3 || o->utts > 200)
		return vpa_fail(err, VPA_EINPUT, NULL, "--utts must be in [3, 200], got %d", o->utts);
	if (!(o->rate >= 8000 && o->rate <= 48000))
		return vpa_fail(err, VPA_EINPUT, NULL, "output rate must be in [8000, 48000], got %g",
				o->rate);
	struct stat stt;
	if (!stat(out_dir, &stt))
		return vpa_fail(err, VPA_EINPUT, NULL, "%s: already exists", out_dir);
	struct vpa_corpus corp;
	vpa_corpus_init(&corp);
	struct vpa_corpus_opts co;
	vpa_corpus_opts_init(&co);
	co.lower = 1;
	int rc = vpa_corpus_load_brown(&corp, o->brown, 0, &co, err);
	size_t nu = (size_t)o->speakers * (size_t)o->utts;
	size_t *good = xmalloc(xmul(corp.n_sent ? corp.n_sent : 1, sizeof(size_t)));
	size_t ng = 0;
	for (size_t s = 0; !rc && s < corp.n_sent; s++) {
		size_t a = corp.sent_off[s], b = corp.sent_off[s + 1], nw = 0;
		int ok = 1;
		for (size_t t = a; t < b && ok; t++) {
			const char *w = corp.word[t];
			if (!strcmp(w, ".") || !strcmp(w, ",") || !strcmp(w, ";") || !strcmp(w, "?") ||
			    !strcmp(w, "!"))
				continue; /* punctuation tokens are not read out */
			ok = word_ok(w);
			nw++;
		}
		if (ok && nw >= 5 && nw <= 16)
			good[ng++] = s;
	}
	if (!rc && ng < nu)
		rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: %zu usable sentences for %zu utterances",
			      o->brown, ng, nu);
	struct speaker *S = xcalloc((size_t)o->speakers, sizeof(*S));
	struct utt *U = xcalloc(nu ? nu : 1, sizeof(*U));
	char *tmp = NULL, *helper = NULL;
	if (!rc)
		rc = espeak_helper(&helper, err);
	if (rc)
		goto out;
	make_speakers(S, o->speakers, o->seed);
	struct vpa_rng r;
	vpa_rng_split(&r, o->seed, "synth-sentences");
	shuffle(good, ng, &r);
	int ntrain = (o->speakers / 2) & ~1;
	for (size_t k = 0; k < nu; k++) {
		struct utt *u = &U[k];
		u->spk = (int)(k / (size_t)o->utts);
		int j = (int)(k % (size_t)o->utts);
		snprintf(u->id, sizeof u->id, "%s-%02d", S[u->spk].id, j + 1);
		u->set = u->spk < ntrain ? 0 : j == 0 ? 1 : 2;
		struct vpa_buf b;
		vpa_buf_init(&b);
		size_t s = good[k];
		for (size_t t = corp.sent_off[s]; t < corp.sent_off[s + 1]; t++) {
			const char *w = corp.word[t];
			if (!word_ok(w))
				continue;
			if (b.len)
				vpa_buf_puts(&b, " ");
			vpa_buf_puts(&b, w);
		}
		u->text = xstrdup(vpa_buf_str(&b));
		vpa_buf_release(&b);
	}
	size_t tl = strlen(out_dir) + 32;
	tmp = xmalloc(tl);
	snprintf(tmp, tl, "%s.tmp.%ld", out_dir, (long)getpid());
	vpa_tmp_clean_stale(out_dir);
	/* a predictable name: made anew, never through a planted link; removed on a signal */
	vpa_tmp_register(tmp, 1);
	rc = vpa_mkdir_new(tmp, err);
	static const char *const sets[] = {"train", "enrol", "trials"};
	for (int k = 0; k < 3 && !rc; k++) {
		char *d = vpa_anon_join(tmp, sets[k]);
		char *w = vpa_anon_join(d, "wav");
		rc = vpa_mkdirs(w, err);
		free(w);
		free(d);
	}
	if (rc)
		goto out;
	static const char *const setname[] = {"train", "enrol", "trials"};
	struct ctx c = {o, S, U, tmp, xcalloc(nu ? nu : 1, sizeof(short *)), 0, helper};
	for (size_t b = 0; !rc && b < nu; b += SYNTH_BLOCK) {
		size_t m = nu - b < SYNTH_BLOCK ? nu - b : SYNTH_BLOCK;
		c.base = b;
		rc = vpa_dist_jobs(m, threads, synth_one, synth_pack, synth_unpack, &c, "synthesise",
				   NULL, err);
		for (size_t k = b; !rc && k < b + m; k++) {
			char out[512];
			snprintf(out, sizeof out, "%s/%s/wav/%s.wav", tmp, setname[U[k].set], U[k].id);
			rc = vpa_pcm16_write(out, c.pcm[k], U[k].n, o->rate, err);
			free(c.pcm[k]);
			c.pcm[k] = NULL;
		}
	}
	for (size_t k = 0; k < nu; k++)
		free(c.pcm[k]);
	free(c.pcm);
	/* the lists; wav.scp names the files by absolute path (relative ones
	 * are read against the current folder, not the data directory) */
	char *abs_out = rc ? NULL : vpa_anon_abs(out_dir);
	for (int set = 0; set < 3 && !rc; set++) {
		struct vpa_buf scp, u2s, s2u, s2g, text, dur, enr, tf, tm, ta;
		struct vpa_buf *all[] = {&scp, &u2s, &s2u, &s2g, &text, &dur, &enr, &tf, &tm, &ta};
		for (size_t q = 0; q < 10; q++)
			vpa_buf_init(all[q]);
		char *d = vpa_anon_join(tmp, sets[set]);
		int last = -1;
		for (size_t k = 0; k < nu; k++) {
			if (U[k].set != set)
				continue;
			vpa_buf_printf(&scp, "%s %s/%s/wav/%s.wav\n", U[k].id, abs_out, sets[set], U[k].id);
			vpa_buf_printf(&u2s, "%s %s\n", U[k].id, S[U[k].spk].id);
			vpa_buf_printf(&text, "%s %s\n", U[k].id, U[k].text);
			vpa_buf_printf(&dur, "%s %.4f\n", U[k].id, (double)U[k].n / o->rate);
			if (set == 1)
				vpa_buf_printf(&enr, "%s\n", U[k].id);
			if (U[k].spk != last) {
				if (last >= 0)
					vpa_buf_puts(&s2u, "\n");
				vpa_buf_printf(&s2u, "%s", S[U[k].spk].id);
				vpa_buf_printf(&s2g, "%s %c\n", S[U[k].spk].id, S[U[k].spk].gender);
				last = U[k].spk;
			}
			vpa_buf_printf(&s2u, " %s", U[k].id);
		}
		if (last >= 0)
			vpa_buf_puts(&s2u, "\n");
		if (set == 2)
			for (int e = ntrain; e < o->speakers; e++)
				for (size_t k = 0; k < nu; k++)
					if (U[k].set == 2 && S[U[k].spk].gender == S[e].gender) {
						const char *lab = U[k].spk == e ? "target" : "nontarget";
						struct vpa_buf *g = S[e].gender == 'f' ? &tf : &tm;
						vpa_buf_printf(g, "%s %s %s\n", S[e].id, U[k].id, lab);
						vpa_buf_printf(&ta, "%s %s %s\n", S[e].id, U[k].id, lab);
					}
		rc = write_text(d, "wav.scp", &scp, err);
		if (!rc)
			rc = write_text(d, "utt2spk", &u2s, err);
		if (!rc)
			rc = write_text(d, "spk2utt", &s2u, err);
		if (!rc)
			rc = write_text(d, "spk2gender", &s2g, err);
		if (!rc)
			rc = write_text(d, "text", &text, err);
		if (!rc)
			rc = write_text(d, "utt2dur", &dur, err);
		if (!rc && set == 1)
			rc = write_text(d, "enrolls", &enr, err);
		if (!rc && set == 2)
			rc = write_text(d, "trials_f", &tf, err);
		if (!rc && set == 2)
			rc = write_text(d, "trials_m", &tm, err);
		if (!rc && set == 2)
			rc = write_text(d, "trials", &ta, err);
		for (size_t q = 0; q < 10; q++)
			vpa_buf_release(all[q]);
		free(d);
	}
	free(abs_out);
	if (!rc)
		rc = write_alignments(o, U, nu, tmp, err);
	if (!rc) {
		struct vpa_buf b, sp;
		vpa_buf_init(&b);
		vpa_buf_init(&sp);
		vpa_buf_puts(&b, note);
		vpa_buf_printf(&b, "\nmade with: --speakers %d --utts %d --seed %llu, rate %g Hz\n",
			       o->speakers, o->utts, (unsigned long long)o->seed, o->rate);
		for (int i = 0; i < o->speakers; i++)
			vpa_buf_printf(&sp, "%s %c %s %s\n", S[i].id, S[i].gender,
				       i < ntrain ? "train" : "eval", S[i].desc);
		rc = write_text(tmp, "SYNTHETIC", &b, err);
		if (!rc)
			rc = write_text(tmp, "README", &b, err);
		if (!rc)
			rc = write_text(tmp, "speakers.txt", &sp, err);
		vpa_buf_release(&b);
		vpa_buf_release(&sp);
	}
	if (!rc && rename(tmp, out_dir))
		rc = vpa_fail(err, VPA_EIO, NULL, "%s: cannot rename into place: %s", out_dir,
			      strerror(errno));
out:
	if (rc && tmp)
		vpa_rm_tree(tmp);
	if (tmp)
		vpa_tmp_unregister(tmp);
	free(tmp);
	free(helper);
	for (size_t k = 0; k < nu; k++) {
		free(U[k].text);
		free(U[k].seg);
	}
	free(U);
	free(S);
	free(good);
	vpa_corpus_release(&corp);
	return rc;
}
