/*
 * audio/datadir_merge.c - several Kaldi data directories as one (contract in
 * audio/audio.h, vpa_datadir_merge): the trial directories VoicePrivacy
 * splits by gender (libri_dev_trials_f, libri_dev_trials_m) made one set for
 * targets/anon_audio.c, with every conflict between them an error that names
 * the user's files, never the merged copy.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audio/audio.h"
#include "formats/embset.h"
#include "formats/kaldi.h"

/* The files of a merged copy, in the order they are written. */
static const char *const outs[6] = {"wav.scp", "segments", "utt2spk", "text", "utt2dur",
				    "spk2gender"};

static char *join2(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *s = xmalloc(la + lb + 2);
	memcpy(s, a, la);
	s[la] = '/';
	memcpy(s + la + 1, b, lb + 1);
	return s;
}

static int exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0;
}

/* Utterance (or recording) ids unique over all directories. */
static int unique_ids(const struct vpa_datadir *d, size_t n, int recs, struct vpa_err *err)
{
	struct vpa_strmap seen, where; /* id -> its directory, id -> its index there */
	vpa_strmap_init(&seen);
	vpa_strmap_init(&where);
	int rc = 0;
	for (size_t k = 0; k < n && !rc; k++) {
		size_t m = recs ? d[k].n_rec : d[k].n_utt;
		for (size_t i = 0; i < m && !rc; i++) {
			const char *id = recs ? d[k].rec[i] : d[k].utt[i];
			uint32_t dk, di;
			if (vpa_strmap_get(&seen, id, &dk)) {
				vpa_strmap_get(&where, id, &di);
				const char *f0 = recs || !d[k].seg_file ? d[k].scp : d[k].seg_file;
				const char *f1 = recs || !d[dk].seg_file ? d[dk].scp : d[dk].seg_file;
				long l0 = recs ? d[k].rec_line[i] : d[k].utt_line[i];
				long l1 = recs ? d[dk].rec_line[di] : d[dk].utt_line[di];
				struct vpa_loc loc = {f0, l0, 0};
				rc = vpa_fail(err, VPA_EINPUT, &loc, "%s '%s' is also in %s:%ld",
					      recs ? "recording" : "utterance", id, f1, l1);
				break;
			}
			vpa_strmap_put(&seen, id, (uint32_t)k, NULL);
			vpa_strmap_put(&where, id, (uint32_t)i, NULL);
		}
	}
	vpa_strmap_release(&seen);
	vpa_strmap_release(&where);
	return rc;
}

/* 1 when every directory has NAME, 0 when none has; an error when some have. */
static int all_or_none(const char *const *dirs, size_t n, const char *name, int *all,
		       struct vpa_err *err)
{
	size_t first_with = n, first_without = n;
	for (size_t k = 0; k < n; k++) {
		char *p = join2(dirs[k], name);
		if (exists(p)) {
			if (first_with == n)
				first_with = k;
		} else if (first_without == n) {
			first_without = k;
		}
		free(p);
	}
	*all = first_without == n;
	if (first_with < n && first_without < n)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"%s has no %s file and %s has one (the directories merged as one set "
				"need the same lists)", dirs[first_without], name, dirs[first_with]);
	return 0;
}

static int copy_into(FILE *o, const char *path, struct vpa_err *err)
{
	char *buf;
	size_t len;
	int rc = vpa_read_file(path, &buf, &len, err);
	if (rc)
		return rc;
	fwrite(buf, 1, len, o);
	if (len && buf[len - 1] != '\n')
		fputc('\n', o);
	free(buf);
	return 0;
}

static int spk2gender_union(const char *const *dirs, size_t n, FILE *o, struct vpa_err *err)
{
	struct vpa_kaldi_list *g = xcalloc(n, sizeof(*g));
	struct vpa_strmap seen, row; /* speaker -> its first list, speaker -> its row there */
	vpa_strmap_init(&seen);
	vpa_strmap_init(&row);
	int rc = 0;
	for (size_t k = 0; k < n && !rc; k++) {
		vpa_kaldi_list_init(&g[k]);
		char *p = join2(dirs[k], "spk2gender");
		rc = vpa_kaldi_read_list(p, 2, &g[k], err);
		free(p);
		for (size_t i = 0; i < g[k].n && !rc; i++) {
			const char *s = g[k].f[2 * i], *x = g[k].f[2 * i + 1];
			uint32_t k0, i0;
			if (vpa_strmap_get(&seen, s, &k0)) {
				vpa_strmap_get(&row, s, &i0);
				const char *x0 = g[k0].f[2 * i0 + 1];
				if (strcmp(x, x0)) {
					struct vpa_loc loc = {g[k].name, g[k].line[i], 0};
					rc = vpa_fail(err, VPA_EINPUT, &loc,
						      "speaker '%s' is '%s' here and '%s' in %s:%ld", s,
						      x, x0, g[k0].name, g[k0].line[i0]);
				}
				continue;
			}
			vpa_strmap_put(&seen, s, (uint32_t)k, NULL);
			vpa_strmap_put(&row, s, (uint32_t)i, NULL);
			fprintf(o, "%s %s\n", s, x);
		}
	}
	for (size_t k = 0; k < n; k++)
		vpa_kaldi_list_release(&g[k]);
	free(g);
	vpa_strmap_release(&seen);
	vpa_strmap_release(&row);
	return rc;
}

/* Every recording's header: readable, and at one rate (*rate < 0: any rate,
   the reader resamples).  The rate is the one the line gives: a raw file's,
   or sox's output -r. */
static int check_rates(const struct vpa_datadir *d, size_t n, double *rate, struct vpa_err *err)
{
	for (size_t k = 0; k < n; k++)
		for (size_t r = 0; r < d[k].n_rec; r++) {
			struct vpa_err e1;
			vpa_err_init(&e1);
			double x;
			struct vpa_loc loc = {d[k].scp, d[k].rec_line[r], 0};
			const struct vpa_rawfmt *raw = &d[k].rec_raw[r];
			if (raw->sf_format) {
				struct vpa_wave w; /* no header to look at: the first frame proves it readable */
				vpa_wave_init(&w);
				double dur;
				int rc = vpa_audio_read_part_fmt(d[k].rec_path[r], raw, raw->channels > 1 ? 0 : -1,
								 0, 1 / raw->rate, &w, &dur, &e1);
				vpa_wave_release(&w);
				if (rc)
					return vpa_fail(err, e1.status, &loc, "%s", e1.msg);
				x = raw->rate;
			} else if (vpa_audio_rate(d[k].rec_path[r], &x, &e1)) {
				return vpa_fail(err, e1.status, &loc, "%s", e1.msg);
			}
			if (d[k].rec_rate[r] > 0)
				x = d[k].rec_rate[r];
			if (*rate < 0)
				continue;
			if (*rate == 0)
				*rate = x;
			else if (x != *rate) /* merged trial directories share one rate */
				return vpa_fail(err, VPA_EINPUT, &loc, "'%s' is at %g Hz, expected %g Hz",
						d[k].rec_path[r], x, *rate);
		}
	return 0;
}

int vpa_datadir_merge(const char *const *dirs, size_t n, const char *out, double *rate,
		      struct vpa_err *err)
{
	if (n == 0)
		VPA_BUG("vpa_datadir_merge of no directory");
	struct vpa_datadir *d = xcalloc(n, sizeof(*d));
	int rc = 0, segs = 0, lists[4] = {0};
	static const char *const names[4] = {"utt2spk", "text", "utt2dur", "spk2gender"};
	FILE *o = NULL;
	char *p = NULL;
	int made = 0; /* out was made here: removed again on an error */
	for (size_t k = 0; k < n; k++)
		vpa_datadir_init(&d[k]);
	for (size_t k = 0; k < n && !rc; k++)
		rc = vpa_datadir_open(&d[k], dirs[k], -1, err);
	if (rc)
		goto out;
	if ((rc = unique_ids(d, n, 1, err)) || (rc = unique_ids(d, n, 0, err)) ||
	    (rc = all_or_none(dirs, n, "segments", &segs, err)))
		goto out;
	for (int l = 0; l < 4 && !rc; l++) {
		struct vpa_err e1;
		vpa_err_init(&e1);
		/* utt2dur (durations for the timing) is left out unless every one has it */
		rc = all_or_none(dirs, n, names[l], &lists[l], l == 2 ? &e1 : err);
		if (l == 2)
			rc = 0;
	}
	if (rc || (rc = check_rates(d, n, rate, err)))
		goto out;
	if (mkdir(out, 0777) != 0) {
		rc = vpa_fail(err, VPA_EIO, NULL, "cannot make '%s': %s", out, strerror(errno));
		goto out;
	}
	made = 1;
	for (int f = 0; f < 6 && !rc; f++) {
		if ((f == 1 && !segs) || (f >= 2 && !lists[f - 2]))
			continue;
		free(p);
		p = join2(out, outs[f]);
		if (!(o = fopen(p, "w"))) {
			rc = vpa_fail(err, VPA_EIO, NULL, "cannot write '%s': %s", p, strerror(errno));
			break;
		}
		for (size_t k = 0; k < n && !rc; k++) {
			if (f == 0)
				for (size_t r = 0; r < d[k].n_rec; r++)
					fprintf(o, "%s\n", d[k].rec_text[r]);
			else if (f == 1)
				for (size_t u = 0; u < d[k].n_utt; u++)
					fprintf(o, "%s\n", d[k].seg_text[u]);
			else if (f == 2)
				for (size_t u = 0; u < d[k].n_utt; u++)
					fprintf(o, "%s %s\n", d[k].utt[u], d[k].utt_spk[u]);
			else if (f < 5) {
				char *src = join2(dirs[k], outs[f]);
				rc = copy_into(o, src, err);
				free(src);
			}
		}
		if (f == 5 && !rc)
			rc = spk2gender_union(dirs, n, o, err);
		if (fclose(o) != 0 && !rc)
			rc = vpa_fail(err, VPA_EIO, NULL, "cannot write '%s': %s", p, strerror(errno));
		o = NULL;
	}
out:
	if (rc && made) { /* a conflict found while writing (spk2gender): no partial copy */
		for (int f = 0; f < 6; f++) {
			free(p);
			p = join2(out, outs[f]);
			unlink(p);
		}
		rmdir(out);
	}
	free(p);
	for (size_t k = 0; k < n; k++)
		vpa_datadir_release(&d[k]);
	free(d);
	return rc;
}
