/*
 * audio/datadir.c - Kaldi data directories: wav.scp (plain paths and the
 * recognised pipe forms, which are read directly and never executed),
 * segments, and the cross-checks of the other lists (utt2spk, spk2utt,
 * spk2gender, text, utt2dur, enrolls, trials*), as validate_data_dir.sh.
 *
 * Every error names FILE:LINE and keeps the line in d->bad_line: a user who
 * reads "wav.scp:3: ..." sees the line without opening the file.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "audio/audio.h"
#include "formats/embset.h"
#include "formats/kaldi.h"

void vpa_datadir_init(struct vpa_datadir *d)
{
	memset(d, 0, sizeof(*d));
	d->channel = -1;
}

void vpa_datadir_release(struct vpa_datadir *d)
{
	for (size_t i = 0; i < d->n_rec; i++) {
		free(d->rec[i]);
		free(d->rec_path[i]);
		free(d->rec_text[i]);
	}
	for (size_t i = 0; i < d->n_utt; i++) {
		free(d->utt[i]);
		if (d->utt_spk)
			free(d->utt_spk[i]);
		if (d->seg_text)
			free(d->seg_text[i]);
	}
	free(d->rec_text), free(d->seg_text), free(d->seg_channel);
	free(d->rec), free(d->rec_path), free(d->rec_channel), free(d->rec_rate), free(d->rec_line);
	free(d->rec_raw);
	free(d->utt), free(d->utt_rec), free(d->seg_start), free(d->seg_end), free(d->utt_line);
	free(d->utt_spk), free(d->scp), free(d->seg_file), free(d->bad_line);
	vpa_datadir_init(d);
}

/* ---- lines and fields ---------------------------------------------------- */

/* wav.scp lines with more fields are refused (no recognised command has that many). */
#define MAX_FIELDS 32

/* One line split on blanks (in a private copy). */
struct line {
	char *text;              /* the whole line, NUL-terminated (copy, owned) */
	char *buf;               /* fields live here (copy, owned) */
	char **f;                /* (nf) fields into buf, array owned */
	int nf, cap;
	long no;                 /* 1-based */
};

/*
 * Next line of buf at *pos; 0 at the end.  Blank and '#' lines are skipped;
 * a NUL byte is a blank (a line of NUL bytes is blank: it had no field, and
 * the lists' readers took its first field from the previous line's array).
 */
static int next_line(const char *buf, size_t len, size_t *pos, long *no, struct line *l)
{
	while (*pos < len) {
		size_t s = *pos, e = s;
		while (e < len && buf[e] != '\n')
			e++;
		*pos = e < len ? e + 1 : e;
		(*no)++;
		size_t te = e;
		if (te > s && buf[te - 1] == '\r')
			te--;
		size_t k = s;
		while (k < te && (isspace((unsigned char)buf[k]) || buf[k] == 0))
			k++;
		if (k == te || buf[k] == '#')
			continue;
		l->text = xmalloc(te - s + 1);
		memcpy(l->text, buf + s, te - s);
		l->text[te - s] = 0;
		for (size_t i = 0; i < te - s; i++) /* a NUL byte would cut the echo and the fields */
			if (l->text[i] == 0 || l->text[i] == '\t')
				l->text[i] = ' ';
		l->buf = xstrdup(l->text);
		l->nf = 0;
		l->no = *no;
		char *save = NULL;
		for (char *t = strtok_r(l->buf, " \t\v\f", &save); t; t = strtok_r(NULL, " \t\v\f", &save)) {
			if (l->nf == l->cap) {
				l->cap = l->cap ? 2 * l->cap : 8;
				l->f = xrealloc(l->f, xmul((size_t)l->cap, sizeof(char *)));
			}
			l->f[l->nf++] = t;
		}
		return 1;
	}
	return 0;
}

/* Frees the line's text; the field array is kept for the next line (line_release frees it). */
static void line_free(struct line *l)
{
	free(l->text);
	free(l->buf);
	l->text = l->buf = NULL;
	l->nf = 0;
}

static void line_release(struct line *l)
{
	line_free(l);
	free(l->f);
	l->f = NULL;
	l->cap = 0;
}

/* Fail at a line: the message gets "FILE:LINE: " and d keeps the line. */
__attribute__((format(printf, 5, 6)))
static int line_fail(struct vpa_datadir *d, struct vpa_err *err, const char *file,
		     const struct line *l, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	struct vpa_loc loc = {file, l->no, 0};
	if (err && err->status == 0 && d && !d->bad_line)
		d->bad_line = xstrdup(l->text);
	return vpa_fail(err, VPA_EINPUT, &loc, "%s", msg);
}

/* ---- wav.scp --------------------------------------------------------------- */

static int is_flag(const char *t, const char *a, const char *b)
{
	return !strcmp(t, a) || (b && !strcmp(t, b));
}

/*
 * Recognise a pipe command (fields f[0..nf-1], the last one "|" already
 * removed) and find the file it reads.  Never executed.
 */
static int parse_command(struct vpa_datadir *d, const char *file, const struct line *l,
			 char **f, int nf, char **path, int *channel, double *rate,
			 struct vpa_rawfmt *raw, struct vpa_err *err)
{
	const char *cmd = f[0];
	const char *slash = strrchr(cmd, '/');
	const char *base = slash ? slash + 1 : cmd;
	const char *p = NULL;
	*channel = -1;
	*rate = 0;
	if (!strcmp(base, "flac")) {
		int c = 0, dd = 0;
		for (int i = 1; i < nf; i++) {
			if (is_flag(f[i], "-c", "--stdout"))
				c = 1;
			else if (is_flag(f[i], "-d", "--decode"))
				dd = 1;
			else if (is_flag(f[i], "-s", "--silent"))
				;
			else if (!strcmp(f[i], "-cds") || !strcmp(f[i], "-dcs") || !strcmp(f[i], "-csd") ||
				 !strcmp(f[i], "-scd") || !strcmp(f[i], "-cd") || !strcmp(f[i], "-dc"))
				c = dd = 1;
			else if (f[i][0] == '-')
				return line_fail(d, err, file, l,
						 "flac option '%s' is not supported: expected 'flac -c -d -s FILE |'",
						 f[i]);
			else if (p)
				return line_fail(d, err, file, l, "flac command names two files: '%s' and '%s'",
						 p, f[i]);
			else
				p = f[i];
		}
		if (!c || !dd)
			return line_fail(d, err, file, l,
					 "flac command without -c -d: expected 'flac -c -d -s FILE |'");
	} else if (!strcmp(base, "sox")) {
		/*
		 * sox [INPUT-OPTIONS] IN -t wav [-r N] [-b 16] [-e signed-integer] [-c 1] - |
		 * INPUT-OPTIONS: -t T (libsndfile finds the type itself), or for
		 * headerless input -t raw -r N -e ENC -b BITS [-c N] [-L|-B].
		 * An output -r N is a resampling to N (vpa_datadir_load).
		 */
		int i = 1, out_wav = 0, dash = 0, in_raw = 0, in_bits = 0, in_ch = 1, in_big = 0;
		double in_rate = 0;
		const char *in_enc = NULL;
		while (i < nf && f[i][0] == '-' && strcmp(f[i], "-")) {
			const char *o = f[i], *v = i + 1 < nf ? f[i + 1] : NULL;
			if (!strcmp(o, "-L") || !strcmp(o, "-B")) {
				in_big = o[1] == 'B', i++;
				continue;
			}
			if (!v)
				break;
			if (!strcmp(o, "-t")) {
				in_raw = !strcmp(v, "raw");
			} else if (!strcmp(o, "-r")) {
				char *e;
				in_rate = strtod(v, &e);
				if (*e == 'k')
					in_rate *= 1000, e++;
				if (e == v || *e || !(in_rate > 0) || !isfinite(in_rate))
					return line_fail(d, err, file, l, "sox -r needs a rate, got '%s'", v);
			} else if (!strcmp(o, "-e")) {
				in_enc = v;
			} else if (!strcmp(o, "-b") || !strcmp(o, "-c")) {
				char *e;
				long x = strtol(v, &e, 10);
				if (e == v || *e || x < 1 || x > 64)
					return line_fail(d, err, file, l, "sox %s needs a number in [1, 64], got '%s'", o, v);
				*(o[1] == 'b' ? &in_bits : &in_ch) = (int)x;
			} else {
				return line_fail(d, err, file, l,
						 "sox input option '%s' is not supported (sox is not executed): expected "
						 "'sox [-t raw -r N -e ENC -b BITS [-c N] [-L|-B]] FILE -t wav [-r N] - |'",
						 o);
			}
			i += 2;
		}
		if (i < nf && f[i][0] != '-')
			p = f[i++];
		if (!p)
			return line_fail(d, err, file, l, "sox command without an input file: expected 'sox FILE -t wav - |'");
		if (in_raw) {
			const char *why = NULL;
			if (!in_rate || !in_enc || !in_bits)
				return line_fail(d, err, file, l,
						 "sox -t raw input needs -r RATE, -e ENCODING and -b BITS before the file");
			if (vpa_rawfmt_sox(in_enc, in_bits, in_big, in_rate, in_ch, raw, &why))
				return line_fail(d, err, file, l, "sox -t raw -e %s -b %d: %s", in_enc, in_bits, why);
		} else if (in_rate || in_enc || in_bits || in_ch != 1 || in_big) {
			return line_fail(d, err, file, l,
					 "sox -r/-e/-b/-c/-L/-B before the input file apply to '-t raw' input only "
					 "(a file with a header gives its own)");
		}
		for (; i < nf; i++) {
			const char *o = f[i], *v = i + 1 < nf ? f[i + 1] : NULL;
			if (!strcmp(o, "-") && i == nf - 1) {
				dash = 1;
			} else if (!strcmp(o, "-")) {
				return line_fail(d, err, file, l,
						 "sox effect '%s' is not supported (sox is not executed): expected 'sox FILE -t wav [-r N] [-b 16] [-e signed-integer] [-c 1] - |'",
						 f[i + 1]);
			} else if (!strcmp(o, "-t") && v) {
				if (strcmp(v, "wav"))
					return line_fail(d, err, file, l, "sox output type '%s' is not supported: expected '-t wav'", v);
				out_wav = 1, i++;
			} else if (!strcmp(o, "-r") && v) {
				char *e;
				double r = strtod(v, &e);
				if (*e == 'k')
					r *= 1000, e++;
				if (e == v || *e || !(r > 0) || !isfinite(r))
					return line_fail(d, err, file, l, "sox -r needs a rate, got '%s'", v);
				*rate = r, i++;
			} else if (!strcmp(o, "-b") && v) {
				if (strcmp(v, "16"))
					return line_fail(d, err, file, l, "sox -b %s is not supported: expected -b 16", v);
				i++;
			} else if (!strcmp(o, "-e") && v) {
				if (strcmp(v, "signed-integer") && strcmp(v, "signed"))
					return line_fail(d, err, file, l, "sox -e %s is not supported: expected -e signed-integer", v);
				i++;
			} else if (!strcmp(o, "-c") && v) {
				if (strcmp(v, "1"))
					return line_fail(d, err, file, l, "sox -c %s is not supported: expected -c 1", v);
				i++;
			} else {
				return line_fail(d, err, file, l,
						 "sox argument '%s' is not supported (sox is not executed): expected 'sox FILE -t wav [-r N] [-b 16] [-e signed-integer] [-c 1] - |'",
						 o);
			}
		}
		if (!out_wav || !dash)
			return line_fail(d, err, file, l, "sox command must write '-t wav -': expected 'sox FILE -t wav - |'");
	} else if (!strcmp(base, "sph2pipe")) {
		int fw = 0;
		for (int i = 1; i < nf; i++) {
			if (!strcmp(f[i], "-f") && i + 1 < nf) {
				if (strcmp(f[i + 1], "wav") && strcmp(f[i + 1], "rif"))
					return line_fail(d, err, file, l, "sph2pipe -f %s is not supported: expected -f wav", f[i + 1]);
				fw = 1, i++;
			} else if (!strcmp(f[i], "-p")) {
				;
			} else if (!strcmp(f[i], "-c") && i + 1 < nf) {
				char *e;
				long c = strtol(f[i + 1], &e, 10);
				if (e == f[i + 1] || *e || c < 1 || c > 64)
					return line_fail(d, err, file, l, "sph2pipe -c needs a channel 1, 2, ..., got '%s'", f[i + 1]);
				*channel = (int)c - 1, i++;
			} else if (f[i][0] == '-') {
				return line_fail(d, err, file, l, "sph2pipe option '%s' is not supported: expected 'sph2pipe -f wav [-p] [-c N] FILE |'", f[i]);
			} else if (p) {
				return line_fail(d, err, file, l, "sph2pipe command names two files: '%s' and '%s'", p, f[i]);
			} else {
				p = f[i];
			}
		}
		if (!fw)
			return line_fail(d, err, file, l, "sph2pipe command without -f wav");
	} else {
		return line_fail(d, err, file, l,
				 "command '%s' is not executed: only 'flac -c -d -s FILE |', "
				 "'sox FILE -t wav - |' and 'sph2pipe -f wav FILE |' are read",
				 cmd);
	}
	if (!p)
		return line_fail(d, err, file, l, "%s command without an input file", base);
	*path = xstrdup(p);
	return 0;
}

/*
 * The capacity for n elements: doubled when full, so that N lines cost
 * O(log N) reallocations of each array (one at a time, a 1M-line segments
 * file made nine reallocations a line).
 */
static size_t grow(size_t n, size_t cap)
{
	if (n <= cap)
		return cap;
	return cap ? xmul(cap, 2) : 64;
}

/*
 * A relative audio path is read against the current folder, as Kaldi does;
 * when nothing is there but the path exists next to the wav.scp (a data
 * directory whose paths are relative to itself), that file is read, so a
 * scenario runs from any folder (issue 31).  Takes path; returns the path to use.
 */
static char *beside_scp(const char *scp_name, char *path)
{
	struct stat st;
	const char *slash = scp_name ? strrchr(scp_name, '/') : NULL;
	if (path[0] == '/' || !slash || stat(path, &st) == 0)
		return path;
	size_t dl = (size_t)(slash - scp_name) + 1, pl = strlen(path);
	char *alt = xmalloc(dl + pl + 1);
	memcpy(alt, scp_name, dl);
	memcpy(alt + dl, path, pl + 1);
	if (stat(alt, &st) != 0) {
		free(alt);
		return path;
	}
	free(path);
	return alt;
}

static void add_rec(struct vpa_datadir *d, const char *id, char *path, int channel, double rate,
		    const struct vpa_rawfmt *raw, long line, const char *text)
{
	size_t n = d->n_rec + 1, cap = grow(n, d->rec_cap);
	if (cap != d->rec_cap) {
		d->rec_text = xrealloc(d->rec_text, xmul(cap, sizeof(char *)));
		d->rec = xrealloc(d->rec, xmul(cap, sizeof(char *)));
		d->rec_path = xrealloc(d->rec_path, xmul(cap, sizeof(char *)));
		d->rec_channel = xrealloc(d->rec_channel, xmul(cap, sizeof(int)));
		d->rec_rate = xrealloc(d->rec_rate, xmul(cap, sizeof(double)));
		d->rec_line = xrealloc(d->rec_line, xmul(cap, sizeof(long)));
		d->rec_raw = xrealloc(d->rec_raw, xmul(cap, sizeof(struct vpa_rawfmt)));
		d->rec_cap = cap;
	}
	d->rec_text[d->n_rec] = text ? xstrdup(text) : NULL;
	d->rec[d->n_rec] = xstrdup(id);
	d->rec_path[d->n_rec] = path;
	d->rec_channel[d->n_rec] = channel;
	d->rec_rate[d->n_rec] = rate;
	if (raw)
		d->rec_raw[d->n_rec] = *raw;
	else
		memset(&d->rec_raw[d->n_rec], 0, sizeof(struct vpa_rawfmt));
	d->rec_line[d->n_rec] = line;
	d->n_rec = n;
}

/* seg_text NULL: no segments file (then no utterance of d has one). */
static void add_utt(struct vpa_datadir *d, const char *id, size_t rec, double s, double e,
		    int ch, long line, const char *seg_text)
{
	size_t n = d->n_utt + 1, cap = grow(n, d->utt_cap);
	int segs = seg_text != NULL;
	if (d->n_utt > 0 && segs != (d->seg_start != NULL))
		VPA_BUG("utterances with and without segments in one data directory");
	if (cap != d->utt_cap) {
		d->utt = xrealloc(d->utt, xmul(cap, sizeof(char *)));
		d->utt_rec = xrealloc(d->utt_rec, xmul(cap, sizeof(size_t)));
		d->utt_line = xrealloc(d->utt_line, xmul(cap, sizeof(long)));
		if (segs) {
			d->seg_start = xrealloc(d->seg_start, xmul(cap, sizeof(double)));
			d->seg_end = xrealloc(d->seg_end, xmul(cap, sizeof(double)));
			d->seg_text = xrealloc(d->seg_text, xmul(cap, sizeof(char *)));
			d->seg_channel = xrealloc(d->seg_channel, xmul(cap, sizeof(int)));
		}
		d->utt_cap = cap;
	}
	if (segs) {
		d->seg_channel[d->n_utt] = ch;
		d->seg_start[d->n_utt] = s;
		d->seg_end[d->n_utt] = e;
		d->seg_text[d->n_utt] = xstrdup(seg_text);
	}
	d->utt[d->n_utt] = xstrdup(id);
	d->utt_rec[d->n_utt] = rec;
	d->utt_line[d->n_utt] = line;
	d->n_utt = n;
}

static int parse_scp(struct vpa_datadir *d, const char *name, const char *buf, size_t len,
		     struct vpa_strmap *recs, struct vpa_err *err)
{
	size_t pos = 0;
	long no = 0;
	struct line l = {0};
	int rc = vpa_kaldi_check_bom(name, buf, len, err);
	if (rc)
		return rc;
	while (next_line(buf, len, &pos, &no, &l)) {
		uint32_t first;
		if (l.nf < 2) {
			rc = line_fail(d, err, name, &l, "expected 'RECORDING_ID PATH' or 'RECORDING_ID COMMAND |'");
			break;
		}
		if (l.nf > MAX_FIELDS) {
			rc = line_fail(d, err, name, &l, "more than %d fields", MAX_FIELDS);
			break;
		}
		if (vpa_strmap_get(recs, l.f[0], &first)) {
			rc = line_fail(d, err, name, &l, "duplicate recording '%s' (first on line %ld)",
				       l.f[0], d->rec_line[first]);
			break;
		}
		char *path = NULL;
		int ch = -1;
		double rate = 0;
		struct vpa_rawfmt raw = {0};
		if (!strcmp(l.f[l.nf - 1], "|")) {
			if (l.nf < 3) {
				rc = line_fail(d, err, name, &l, "empty command before '|'");
				break;
			}
			if ((rc = parse_command(d, name, &l, l.f + 1, l.nf - 2, &path, &ch, &rate, &raw, err)))
				break;
		} else if (l.f[l.nf - 1][strlen(l.f[l.nf - 1]) - 1] == '|') {
			rc = line_fail(d, err, name, &l,
				       "command '%s' is not executed: only 'flac -c -d -s FILE |', "
				       "'sox FILE -t wav - |' and 'sph2pipe -f wav FILE |' are read",
				       l.f[1]);
			break;
		} else if (l.nf != 2) {
			rc = line_fail(d, err, name, &l,
				       "expected 'RECORDING_ID PATH', found %d fields (a command must end with '|')",
				       l.nf);
			break;
		} else {
			path = xstrdup(l.f[1]);
		}
		path = beside_scp(name, path);
		add_rec(d, l.f[0], path, ch, rate, &raw, l.no, l.text);
		/* keys are borrowed from d->rec, which is stable once added */
		vpa_strmap_put(recs, d->rec[d->n_rec - 1], (uint32_t)(d->n_rec - 1), NULL);
		line_free(&l);
	}
	line_release(&l);
	if (!rc && d->n_rec == 0)
		rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: no recordings", name);
	return rc;
}

static int parse_num(const char *s, double *x)
{
	char *e;
	errno = 0;
	*x = strtod(s, &e);
	return e == s || *e || errno == ERANGE || !isfinite(*x);
}

static int parse_segments(struct vpa_datadir *d, const char *name, const char *buf, size_t len,
			  const struct vpa_strmap *recs, struct vpa_err *err)
{
	size_t pos = 0;
	long no = 0;
	struct line l = {0};
	int rc = vpa_kaldi_check_bom(name, buf, len, err);
	if (rc)
		return rc;
	struct vpa_strmap utts;
	vpa_strmap_init(&utts);
	while (next_line(buf, len, &pos, &no, &l)) {
		uint32_t r, first;
		double s, e;
		if (l.nf != 4 && l.nf != 5) {
			rc = line_fail(d, err, name, &l, "expected 'UTTERANCE_ID RECORDING_ID START END [CHANNEL]', found %d fields", l.nf);
			break;
		}
		if (vpa_strmap_get(&utts, l.f[0], &first)) {
			rc = line_fail(d, err, name, &l, "duplicate utterance '%s' (first on line %ld)",
				       l.f[0], d->utt_line[first]);
			break;
		}
		if (!vpa_strmap_get(recs, l.f[1], &r)) {
			rc = line_fail(d, err, name, &l, "recording '%s' is not in wav.scp", l.f[1]);
			break;
		}
		if (parse_num(l.f[2], &s) || s < 0) {
			rc = line_fail(d, err, name, &l, "start time must be a number >= 0, got '%s'", l.f[2]);
			break;
		}
		if (parse_num(l.f[3], &e) || (e != -1 && e <= s)) {
			rc = line_fail(d, err, name, &l, "end time must be a number > start (%s) or -1, got '%s'",
				       l.f[2], l.f[3]);
			break;
		}
		long ch = -1;
		if (l.nf == 5) {
			char *end;
			ch = strtol(l.f[4], &end, 10);
			if (end == l.f[4] || *end || ch < 0 || ch > 1024) {
				rc = line_fail(d, err, name, &l, "channel must be an integer >= 0 (0-based), got '%s'", l.f[4]);
				break;
			}
		}
		add_utt(d, l.f[0], r, s, e, (int)ch, l.no, l.text);
		vpa_strmap_put(&utts, d->utt[d->n_utt - 1], (uint32_t)(d->n_utt - 1), NULL);
		line_free(&l);
	}
	line_release(&l);
	vpa_strmap_release(&utts);
	if (!rc && d->n_utt == 0)
		rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: no segments", name);
	return rc;
}

int vpa_datadir_parse(struct vpa_datadir *d, const char *scp_name, const char *scp, size_t scp_len,
		      const char *seg_name, const char *seg, size_t seg_len, struct vpa_err *err)
{
	struct vpa_strmap recs;
	vpa_strmap_init(&recs);
	int rc = parse_scp(d, scp_name, scp, scp_len, &recs, err);
	if (!rc && seg) {
		rc = parse_segments(d, seg_name, seg, seg_len, &recs, err);
		if (!rc) {
			free(d->seg_file);
			d->seg_file = xstrdup(seg_name);
		}
	} else if (!rc) {
		for (size_t i = 0; i < d->n_rec; i++)
			add_utt(d, d->rec[i], i, 0, 0, -1, d->rec_line[i], NULL);
	}
	if (!rc) {
		free(d->scp);
		d->scp = xstrdup(scp_name);
	}
	vpa_strmap_release(&recs);
	return rc;
}

/* ---- the other lists ----------------------------------------------------- */

static char *join(const char *dir, const char *name)
{
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_buf_printf(&b, "%s/%s", dir, name);
	return b.data;
}

static int exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The line of a list entry, for the echo. */
static int list_fail(struct vpa_datadir *d, struct vpa_err *err, const struct vpa_kaldi_list *L,
		     size_t row, const char *fmt, const char *a, const char *b)
{
	struct vpa_buf t;
	vpa_buf_init(&t);
	for (size_t c = 0; c < L->ncols; c++)
		vpa_buf_printf(&t, "%s%s", c ? " " : "", L->f[row * L->ncols + c]);
	struct line l = {.text = t.data ? t.data : "", .no = L->line[row]};
	int rc = line_fail(d, err, L->name, &l, fmt, a, b);
	vpa_buf_release(&t);
	return rc;
}

/* Read a list file with Kaldi's own reader (an error there has no echo). */
static int read_list(const char *path, size_t ncols, struct vpa_kaldi_list *L, struct vpa_err *err)
{
	vpa_kaldi_list_init(L);
	return vpa_kaldi_read_list(path, ncols, L, err);
}

/* What the list checks share. */
struct lists {
	struct vpa_datadir *d;
	const char *dir;
	struct vpa_strmap utts;   /* utterance id -> index */
	struct vpa_strmap spks;   /* speakers of utt2spk */
	const char *src, *src_base; /* segments or wav.scp: where utterances come from */
};

/* utt2spk: every utterance exactly once, no unknown one. */
static int check_utt2spk(struct lists *c, const char *p, struct vpa_err *err)
{
	struct vpa_datadir *d = c->d;
	struct vpa_kaldi_list L;
	int rc = read_list(p, 2, &L, err);
	if (rc)
		return rc;
	long *seen = xcalloc(d->n_utt, sizeof(long));
	d->utt_spk = xcalloc(d->n_utt, sizeof(char *));
	for (size_t k = 0; k < L.n && !rc; k++) {
		uint32_t u;
		const char *utt = L.f[2 * k], *spk = L.f[2 * k + 1];
		if (!vpa_strmap_get(&c->utts, utt, &u)) {
			rc = list_fail(d, err, &L, k, "utterance '%s' is not in %s", utt, c->src_base);
		} else if (seen[u]) {
			char first[32];
			snprintf(first, sizeof(first), "%ld", seen[u]);
			rc = list_fail(d, err, &L, k, "duplicate utterance '%s' (first on line %s)", utt, first);
		} else {
			seen[u] = L.line[k];
			d->utt_spk[u] = xstrdup(spk);
		}
	}
	free(seen);
	for (size_t i = 0; i < d->n_utt && !rc; i++)
		if (!d->utt_spk[i]) {
			struct line l = {.text = d->utt[i], .no = d->utt_line[i]};
			rc = line_fail(d, err, c->src, &l, "utterance '%s' has no speaker in utt2spk", d->utt[i]);
		}
	for (size_t i = 0; i < d->n_utt && !rc; i++)
		vpa_strmap_put(&c->spks, d->utt_spk[i], 0, NULL);
	vpa_kaldi_list_release(&L);
	return rc;
}

/* spk2utt: the inverse of utt2spk (every utterance listed under its speaker). */
static int check_spk2utt(struct lists *c, const char *p, struct vpa_err *err)
{
	struct vpa_datadir *d = c->d;
	char *buf;
	size_t len, pos = 0, count = 0;
	long no = 0;
	struct line l = {0};
	int rc = vpa_read_file(p, &buf, &len, err);
	if (rc)
		return rc;
	rc = vpa_kaldi_check_bom(p, buf, len, err);
	while (!rc && next_line(buf, len, &pos, &no, &l)) {
		for (int k = 1; k < l.nf && !rc; k++) {
			uint32_t u;
			if (!vpa_strmap_get(&c->utts, l.f[k], &u))
				rc = line_fail(d, err, p, &l, "utterance '%s' is not in %s", l.f[k], c->src_base);
			else if (strcmp(d->utt_spk[u], l.f[0]))
				rc = line_fail(d, err, p, &l, "utterance '%s' has speaker '%s' in utt2spk",
					       l.f[k], d->utt_spk[u]);
			else
				count++;
		}
		line_free(&l);
	}
	line_release(&l);
	free(buf);
	if (!rc && count != d->n_utt)
		rc = vpa_fail(err, VPA_EINPUT, NULL,
			      "%s: lists %zu utterances, utt2spk %zu: the files disagree", p, count,
			      d->n_utt);
	return rc;
}

static int check_spk2gender(struct lists *c, const char *p, struct vpa_err *err)
{
	struct vpa_kaldi_list L;
	int rc = read_list(p, 2, &L, err);
	for (size_t k = 0; !rc && k < L.n; k++) {
		const char *g = L.f[2 * k + 1];
		if (strcmp(g, "m") && strcmp(g, "f"))
			rc = list_fail(c->d, err, &L, k, "gender must be m or f, got '%s'%s", g, "");
		else if (c->d->utt_spk && !vpa_strmap_get(&c->spks, L.f[2 * k], NULL))
			rc = list_fail(c->d, err, &L, k, "speaker '%s' is not in utt2spk%s", L.f[2 * k], "");
	}
	vpa_kaldi_list_release(&L);
	return rc;
}

/* text (any words), utt2dur (seconds >= 0), enrolls (one id): known utterances. */
static int check_utt_list(struct lists *c, const char *p, int kind, struct vpa_err *err)
{
	char *buf;
	size_t len, pos = 0;
	long no = 0;
	struct line l = {0};
	int rc = vpa_read_file(p, &buf, &len, err);
	if (rc)
		return rc;
	rc = vpa_kaldi_check_bom(p, buf, len, err);
	while (!rc && next_line(buf, len, &pos, &no, &l)) {
		double x;
		if (!vpa_strmap_get(&c->utts, l.f[0], NULL))
			rc = line_fail(c->d, err, p, &l, "utterance '%s' is not in %s", l.f[0], c->src_base);
		else if (kind == 1 && (l.nf != 2 || parse_num(l.f[1], &x) || x < 0))
			rc = line_fail(c->d, err, p, &l, "expected 'UTTERANCE_ID DURATION' (seconds >= 0)");
		else if (kind == 2 && l.nf != 1)
			rc = line_fail(c->d, err, p, &l, "expected one utterance id per line");
		line_free(&l);
	}
	line_release(&l);
	free(buf);
	return rc;
}

static int check_trials(struct lists *c, const char *p, struct vpa_err *err)
{
	struct vpa_kaldi_trials T;
	vpa_kaldi_trials_init(&T);
	int rc = vpa_kaldi_read_trials(p, &T, err);
	for (size_t i = 0; !rc && i < T.n; i++)
		if (!vpa_strmap_get(&c->utts, T.test[i], NULL)) {
			struct vpa_buf t;
			vpa_buf_init(&t);
			vpa_buf_printf(&t, "%s %s %s", T.enroll[i], T.test[i],
				       T.target[i] ? "target" : "nontarget");
			struct line l = {.text = t.data, .no = T.line[i]};
			rc = line_fail(c->d, err, p, &l, "test utterance '%s' is not in %s", T.test[i],
				       c->src_base);
			vpa_buf_release(&t);
		}
	vpa_kaldi_trials_release(&T);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lists beside wav.scp, in a fixed order (trials* sorted by name). */
static int check_lists(struct vpa_datadir *d, const char *dir, struct vpa_err *err)
{
	static const char *const fixed[] = {"utt2spk", "spk2utt", "spk2gender", "text", "utt2dur",
					    "enrolls"};
	struct lists c = {.d = d, .dir = dir};
	char **names = NULL;
	size_t nn = 0;
	int rc = 0;
	vpa_strmap_init(&c.utts);
	vpa_strmap_init(&c.spks);
	for (size_t i = 0; i < d->n_utt; i++)
		vpa_strmap_put(&c.utts, d->utt[i], (uint32_t)i, NULL);
	c.src = d->seg_file ? d->seg_file : d->scp;
	c.src_base = strrchr(c.src, '/') ? strrchr(c.src, '/') + 1 : c.src;

	for (size_t t = 0; t < sizeof(fixed) / sizeof(fixed[0]); t++)
		names = xrealloc(names, xmul(nn + 1, sizeof(char *))), names[nn++] = xstrdup(fixed[t]);
	DIR *dh = opendir(dir);
	struct dirent *de;
	size_t first_trials = nn;
	while (dh && (de = readdir(dh)))
		if (!strncmp(de->d_name, "trials", 6))
			names = xrealloc(names, xmul(nn + 1, sizeof(char *))), names[nn++] = xstrdup(de->d_name);
	if (dh)
		closedir(dh);
	qsort(names + first_trials, nn - first_trials, sizeof(char *), cmp_str);
	for (size_t k = 0; k < nn && !rc; k++) {
		char *p = join(dir, names[k]);
		if (!exists(p))
			;
		else if (k == 0)
			rc = check_utt2spk(&c, p, err);
		else if (k == 1)
			rc = d->utt_spk ? check_spk2utt(&c, p, err) : 0;
		else if (k == 2)
			rc = check_spk2gender(&c, p, err);
		else if (k < first_trials)
			rc = check_utt_list(&c, p, (int)k - 3, err);
		else
			rc = check_trials(&c, p, err);
		free(p);
	}
	for (size_t k = 0; k < nn; k++)
		free(names[k]);
	free(names);
	vpa_strmap_release(&c.utts);
	vpa_strmap_release(&c.spks);
	return rc;
}

int vpa_datadir_open(struct vpa_datadir *d, const char *path, int channel, struct vpa_err *err)
{
	struct stat st;
	char *scp = NULL, *seg = NULL, *sbuf = NULL, *gbuf = NULL, *dir = NULL;
	size_t slen = 0, glen = 0;
	int rc = 0;
	d->channel = channel;
	if (stat(path, &st) != 0)
		return vpa_fail(err, VPA_EIO, NULL, "cannot open '%s': %s", path, strerror(errno));
	if (S_ISDIR(st.st_mode)) {
		dir = xstrdup(path);
		scp = join(path, "wav.scp");
		seg = join(path, "segments");
		if (!exists(seg)) {
			free(seg);
			seg = NULL;
		}
	} else {
		scp = xstrdup(path);
	}
	if ((rc = vpa_read_file(scp, &sbuf, &slen, err)))
		goto out;
	if (seg && (rc = vpa_read_file(seg, &gbuf, &glen, err)))
		goto out;
	if ((rc = vpa_datadir_parse(d, scp, sbuf, slen, seg, gbuf, glen, err)))
		goto out;
	if (dir)
		rc = check_lists(d, dir, err);
out:
	free(scp), free(seg), free(sbuf), free(gbuf), free(dir);
	return rc;
}

int vpa_datadir_from_files(struct vpa_datadir *d, char *const *paths, size_t n, int channel,
			   struct vpa_err *err)
{
	struct vpa_strmap ids;
	int rc = 0;
	vpa_strmap_init(&ids);
	d->channel = channel;
	for (size_t i = 0; i < n && !rc; i++) {
		const char *s = strrchr(paths[i], '/');
		s = s ? s + 1 : paths[i];
		char *id = xstrdup(s);
		char *dot = strrchr(id, '.');
		if (dot && dot != id)
			*dot = 0;
		uint32_t first;
		if (!*id || strpbrk(id, " \t\n\r\v\f"))
			rc = vpa_fail(err, VPA_EINPUT, NULL,
				      "'%s': the utterance id '%s' (the file name) is empty or has white space: use a wav.scp",
				      paths[i], id);
		else if (vpa_strmap_get(&ids, id, &first))
			rc = vpa_fail(err, VPA_EINPUT, NULL,
				      "'%s' and '%s' give the same utterance id '%s'", d->rec_path[first],
				      paths[i], id);
		else {
			add_rec(d, id, xstrdup(paths[i]), -1, 0, d->raw.sf_format ? &d->raw : NULL, 0, NULL);
			add_utt(d, id, d->n_rec - 1, 0, 0, -1, 0, NULL);
			vpa_strmap_put(&ids, d->rec[d->n_rec - 1], (uint32_t)(d->n_rec - 1), NULL);
		}
		free(id);
	}
	vpa_strmap_release(&ids);
	return rc;
}

/* ---- loading one utterance ---------------------------------------------- */

int vpa_datadir_load(const struct vpa_datadir *d, size_t i, struct vpa_wave *out,
		     const char **line, struct vpa_err *err)
{
	size_t r0 = d->utt_rec[i];
	if (line) /* the wav.scp line unless a segments line is blamed below */
		*line = d->rec_text[r0];
	struct vpa_err e1;
	struct vpa_wave w;
	size_t r = d->utt_rec[i];
	int ch = d->seg_channel && d->seg_channel[i] >= 0 ? d->seg_channel[i]
		 : d->rec_channel[r] >= 0			 ? d->rec_channel[r]
								 : d->channel;
	vpa_err_init(&e1);
	vpa_wave_init(&w);
	double dur = 0, s0 = d->seg_start ? d->seg_start[i] : 0, e0 = d->seg_end ? d->seg_end[i] : -1;
	const struct vpa_rawfmt *raw = &d->rec_raw[r];
	int rc = d->seg_start ? vpa_audio_read_part_fmt(d->rec_path[r], raw, ch, s0, e0, &w, &dur, &e1)
			      : vpa_audio_read_fmt(d->rec_path[r], raw, ch, &w, &e1);
	if (d->seg_start && (rc == 0 || dur > 0)) {
		/* past the end: extract-segments cuts an overshoot of at most 0.5 s */
		struct vpa_loc loc = {d->seg_file, d->utt_line[i], 0};
		const char *what = s0 >= dur ? "starts" : e0 - dur > 0.5 ? "ends" : NULL;
		if (what) {
			if (line)
				*line = d->seg_text[i];
			vpa_wave_release(&w);
			return vpa_fail(err, VPA_EINPUT, &loc,
					"segment '%s' %s at %g s, past the end of recording '%s' (%g s)",
					d->utt[i], what, !strcmp(what, "starts") ? s0 : e0, d->rec[r], dur);
		}
	}
	if (rc) {
		if (d->rec_line[r]) {
			struct vpa_loc loc = {d->scp, d->rec_line[r], 0};
			return vpa_fail(err, e1.status, &loc, "%s", e1.msg);
		}
		return vpa_fail(err, e1.status, NULL, "%s", e1.msg);
	}
	/* sox's output -r: what the pipe would give, resampled by us (Kaldi runs the pipe) */
	if (d->rec_rate[r] > 0 && d->rec_rate[r] != w.rate)
		rc = vpa_wave_resample(&w, d->rec_rate[r], d->rec_path[r], &e1);
	if (!rc && d->to_rate > 0 && w.rate != d->to_rate) {
		int dir = w.rate > d->to_rate ? VPA_ALLOW_DOWN : VPA_ALLOW_UP;
		if (d->allow & dir)
			rc = vpa_wave_resample(&w, d->to_rate, d->rec_path[r], &e1);
		else
			rc = vpa_fail(&e1, VPA_EINPUT, NULL, "'%s' is at %g Hz, expected %g Hz%s%s",
				      d->rec_path[r], w.rate, d->to_rate,
				      d->hints ? ": resample it with " : "",
				      !d->hints ? "" : dir == VPA_ALLOW_DOWN ? "--allow-downsample" : "--allow-upsample");
	}
	if (rc) {
		vpa_wave_release(&w);
		if (d->rec_line[r]) {
			struct vpa_loc loc = {d->scp, d->rec_line[r], 0};
			return vpa_fail(err, e1.status, &loc, "%s", e1.msg);
		}
		return vpa_fail(err, e1.status, NULL, "%s", e1.msg);
	}
	*out = w;
	return 0;
}

void vpa_datadir_set_rate(struct vpa_datadir *d, double rate, int allow, int hints)
{
	d->to_rate = rate;
	d->allow = allow;
	d->hints = hints;
}
