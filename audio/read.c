/*
 * audio/read.c - audio files through libsndfile, at Kaldi's int16 scale.
 *
 * libsndfile normalises every format to [-1, 1) (16-bit: v / 32768), so
 * multiplying by 32768 gives 16-bit PCM values exactly and puts 8/24/32-bit
 * and float files on the same scale.  We read in blocks so that a long
 * multi-channel file never needs more than one block of interleaved doubles.
 * libsndfile accepts a WAV whose header promises more data than the file
 * holds (it reads what is there); its parse log says "data : N (should be
 * M)", which we turn into an error: a cut file must not pass silently.
 * It also believes the length of a NIST SPHERE file over the header's
 * sample_count, so we read that count ourselves and refuse a file that holds
 * fewer samples.  A FLAC whose STREAMINFO gives 0 samples has an unknown
 * length (the FLAC format's convention; libsndfile says SF_COUNT_MAX frames):
 * it is read to its end.
 *
 * Provenance: while a run records its inputs (base/inputs.h), a file read
 * here for the first time is opened through audio/read_hash.c's virtual I/O,
 * which hashes its bytes as libsndfile reads them: every audio file a run
 * reads is in results.json's inputs with its size and SHA-256.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <sndfile.h>

#include "audio/audio.h"
#include "audio/read_int.h"
#include "base/inputs.h"

void vpa_wave_init(struct vpa_wave *w)
{
	memset(w, 0, sizeof(*w));
}

void vpa_wave_release(struct vpa_wave *w)
{
	free(w->x);
	vpa_wave_init(w);
}

/* libsndfile's virtual I/O over a memory buffer. */
struct membuf {
	const unsigned char *p;
	sf_count_t len, pos;
};
static sf_count_t m_len(void *u)
{
	return ((struct membuf *)u)->len;
}
static sf_count_t m_seek(sf_count_t off, int whence, void *u)
{
	struct membuf *m = u;
	sf_count_t p = whence == SEEK_SET ? off : whence == SEEK_CUR ? m->pos + off : m->len + off;
	if (p < 0 || p > m->len)
		return -1;
	m->pos = p;
	return p;
}
static sf_count_t m_read(void *dst, sf_count_t n, void *u)
{
	struct membuf *m = u;
	if (n > m->len - m->pos)
		n = m->len - m->pos;
	if (n <= 0)
		return 0;
	memcpy(dst, m->p + m->pos, (size_t)n);
	m->pos += n;
	return n;
}
static sf_count_t m_write(const void *src, sf_count_t n, void *u)
{
	(void)src, (void)n, (void)u;
	return 0;
}
static sf_count_t m_tell(void *u)
{
	return ((struct membuf *)u)->pos;
}

/* The part of libsndfile's message after its own "Error : " prefix, if any. */
static const char *sf_msg(SNDFILE *s)
{
	const char *m = sf_strerror(s);
	if (!strncmp(m, "Error : ", 8))
		m += 8;
	return m;
}

/*
 * The sample_count of a NIST SPHERE header: "NIST_1A\n   1024\n", then
 * "KEY -TYPE VALUE" lines up to "end_head".  0 with *count = -1 when h is not
 * SPHERE or has no sample_count; -1 when the value is not a count (then bad
 * gets it, for the message).  Never reads past len.
 */
static int sphere_count(const unsigned char *h, size_t len, long long *count, char *bad,
			size_t badcap)
{
	*count = -1;
	if (len < 8 || memcmp(h, "NIST_1A\n", 8))
		return 0;
	size_t pos = 8, lineno = 0;
	while (pos < len) {
		size_t e = pos;
		while (e < len && h[e] != '\n')
			e++;
		char line[256];
		size_t l = e - pos < sizeof(line) - 1 ? e - pos : sizeof(line) - 1;
		memcpy(line, h + pos, l);
		line[l] = 0;
		pos = e + 1;
		if (lineno++ == 0) /* the header's size */
			continue;
		char key[64], type[8], val[128];
		int nf = sscanf(line, "%63s %7s %127s", key, type, val);
		if (nf >= 1 && !strcmp(key, "end_head"))
			break;
		if (nf < 1 || strcmp(key, "sample_count"))
			continue;
		char *end;
		errno = 0;
		long long c = nf == 3 && !strcmp(type, "-i") ? strtoll(val, &end, 10) : -1;
		if (nf != 3 || strcmp(type, "-i") || end == val || *end || errno || c < 0) {
			snprintf(bad, badcap, "%s", nf == 3 ? val : "");
			return -1;
		}
		*count = c;
		return 0;
	}
	return 0;
}

/* sphere_count of the file at path (SPHERE headers are at most a few KiB). */
static int sphere_count_file(const char *path, long long *count, char *bad, size_t badcap)
{
	unsigned char h[65536];
	FILE *f = fopen(path, "rb");
	*count = -1;
	if (!f)
		return 0; /* libsndfile opened it: a race; the read reports it */
	size_t n = fread(h, 1, sizeof(h), f);
	fclose(f);
	return sphere_count(h, n, count, bad, badcap);
}

/* The SPHERE check: an error when the header announces more samples than the file holds. */
static int sphere_check(const char *name, const SF_INFO *info, int rc_count, long long count,
			const char *bad, struct vpa_err *err)
{
	if ((info->format & SF_FORMAT_TYPEMASK) != SF_FORMAT_NIST)
		return 0;
	if (rc_count)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"%s: the SPHERE header's sample_count '%s' is not a count of samples",
				name, bad);
	if (count > info->frames)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"%s: truncated: the SPHERE header announces %lld samples, the file holds %lld",
				name, count, (long long)info->frames);
	return 0;
}

/*
 * Frames [first, first + count) (count < 0: to the end) of an open file.
 * The caller has checked first <= info->frames.
 */
static int read_frames(SNDFILE *s, const SF_INFO *info, const char *name, int channel,
		       sf_count_t first, sf_count_t count, struct vpa_wave *out, struct vpa_err *err)
{
	enum { BLOCK = 4096 };
	int rc = 0, nch = info->channels;
	double *blk = NULL;
	float *x = NULL;
	size_t n = 0, cap = 0;
	char log[2048];

	if (info->samplerate <= 0 || nch <= 0)
		return vpa_fail(err, VPA_EINPUT, NULL, "%s: not an audio file (no rate or channels)",
				name);
	if (channel < 0 && nch != 1)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"%s: %d channels: pick one with --channel N (0-based)", name, nch);
	if (channel >= nch)
		return vpa_fail(err, VPA_EINPUT, NULL, "%s: has %d channel%s, no channel %d (0-based)",
				name, nch, nch == 1 ? "" : "s", channel);
	if (channel < 0)
		channel = 0;
	/* A WAV whose data chunk is longer than the file: libsndfile logs it. */
	log[0] = 0;
	sf_command(s, SFC_GET_LOG_INFO, log, sizeof(log));
	const char *d = strstr(log, "\ndata : ");
	if (d && strstr(d, "(should be") && strstr(d, "(should be") < strchr(d + 1, '\n'))
		return vpa_fail(err, VPA_EINPUT, NULL,
				"%s: truncated: the data chunk is longer than the file", name);
	/* -1: read to the end (a FLAC of unknown length: SF_COUNT_MAX frames) */
	sf_count_t want = count >= 0 ? count : info->frames == SF_COUNT_MAX ? -1 : info->frames - first;
	if (first > 0 && sf_seek(s, first, SEEK_SET) != first)
		return vpa_fail(err, VPA_EINPUT, NULL, "%s: cannot seek to sample %lld: %s", name,
				(long long)first, sf_msg(s));
	blk = xmalloc(xmul((size_t)BLOCK * (size_t)nch, sizeof(double)));
	/* the header's length is a hint, not a promise: at most 2^22 samples up front */
	if (want > 0) {
		cap = want < ((sf_count_t)1 << 22) ? (size_t)want : (size_t)1 << 22;
		x = xmalloc(xmul(cap, sizeof(float)));
	}
	for (;;) {
		sf_count_t ask = BLOCK;
		if (count >= 0 && (sf_count_t)n + ask > count)
			ask = count - (sf_count_t)n;
		if (ask <= 0)
			break;
		sf_count_t got = sf_readf_double(s, blk, ask);
		if (got <= 0)
			break;
		if (n + (size_t)got > cap) {
			cap = (n + (size_t)got) * 2;
			x = xrealloc(x, xmul(cap, sizeof(float)));
		}
		for (sf_count_t k = 0; k < got; k++) {
			double v = blk[(size_t)k * (size_t)nch + (size_t)channel];
			float y = (float)(v * 32768.0);
			if (!isfinite(y)) { /* NaN, inf, or a float sample beyond float range at our scale */
				rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: sample %zu is not finite%s",
					      name, first > 0 ? (size_t)first + n + (size_t)k + 1 : n + (size_t)k + 1,
					      isfinite(v) ? " at the int16 scale" : "");
				goto out;
			}
			x[n + (size_t)k] = y;
		}
		n += (size_t)got;
	}
	if (sf_error(s) != SF_ERR_NO_ERROR) {
		rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: corrupt audio after %zu samples: %s", name,
			      n, sf_msg(s));
		goto out;
	}
	if (want > 0 && (sf_count_t)n < want) {
		rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: truncated: %lld samples announced, %lld read",
			      name, (long long)info->frames, (long long)(first + (sf_count_t)n));
		goto out;
	}
	if (n == 0) {
		rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: no audio samples", name);
		goto out;
	}
	out->x = x;
	out->n = n;
	out->rate = info->samplerate;
	x = NULL;
out:
	free(blk);
	free(x);
	return rc;
}

static int read_all(SNDFILE *s, const SF_INFO *info, const char *name, int channel,
		    struct vpa_wave *out, struct vpa_err *err)
{
	return read_frames(s, info, name, channel, 0, -1, out, err);
}

/* ---- headerless PCM ---------------------------------------------------- */

static const struct {
	const char *name;
	int fmt;
	int bytes;
} raw_encs[] = {
	{"s8", SF_FORMAT_PCM_S8, 1},
	{"u8", SF_FORMAT_PCM_U8, 1},
	{"s16le", SF_FORMAT_PCM_16 | SF_ENDIAN_LITTLE, 2},
	{"s16be", SF_FORMAT_PCM_16 | SF_ENDIAN_BIG, 2},
	{"s24le", SF_FORMAT_PCM_24 | SF_ENDIAN_LITTLE, 3},
	{"s24be", SF_FORMAT_PCM_24 | SF_ENDIAN_BIG, 3},
	{"s32le", SF_FORMAT_PCM_32 | SF_ENDIAN_LITTLE, 4},
	{"s32be", SF_FORMAT_PCM_32 | SF_ENDIAN_BIG, 4},
	{"f32le", SF_FORMAT_FLOAT | SF_ENDIAN_LITTLE, 4},
	{"f32be", SF_FORMAT_FLOAT | SF_ENDIAN_BIG, 4},
	{"f64le", SF_FORMAT_DOUBLE | SF_ENDIAN_LITTLE, 8},
	{"f64be", SF_FORMAT_DOUBLE | SF_ENDIAN_BIG, 8},
};
#define N_RAW_ENCS (sizeof(raw_encs) / sizeof(raw_encs[0]))

/* Bytes per sample of a raw format (its subtype and endianness). */
static int raw_bytes(int sf_format)
{
	for (size_t i = 0; i < N_RAW_ENCS; i++)
		if ((SF_FORMAT_RAW | raw_encs[i].fmt) == sf_format)
			return raw_encs[i].bytes;
	VPA_BUG("raw format 0x%x not in the table", sf_format);
	return 1;
}

static void raw_set(struct vpa_rawfmt *f, size_t i, double rate, int channels)
{
	memset(f, 0, sizeof(*f));
	f->sf_format = SF_FORMAT_RAW | raw_encs[i].fmt;
	f->rate = rate;
	f->channels = channels;
	snprintf(f->name, sizeof(f->name), "%s", raw_encs[i].name);
}

int vpa_rawfmt_parse(const char *spec, struct vpa_rawfmt *f, struct vpa_err *err)
{
	static const char expect[] = "expected ENCODING:RATE[:CHANNELS] with ENCODING one of "
				     "s8 u8 s16le s16be s24le s24be s32le s32be f32le f32be f64le f64be";
	const char *c = strchr(spec, ':');
	if (!c)
		return vpa_fail(err, VPA_EINPUT, NULL, "--raw-format '%s': %s", spec, expect);
	size_t i, l = (size_t)(c - spec);
	for (i = 0; i < N_RAW_ENCS; i++)
		if (strlen(raw_encs[i].name) == l && !strncmp(raw_encs[i].name, spec, l))
			break;
	if (i == N_RAW_ENCS)
		return vpa_fail(err, VPA_EINPUT, NULL, "--raw-format '%s': unknown encoding '%.*s': %s",
				spec, (int)l, spec, expect);
	char *e;
	errno = 0;
	long r = strtol(c + 1, &e, 10);
	if (e == c + 1 || (*e && *e != ':') || errno || r < 1 || r > 1000000)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"--raw-format '%s': the rate must be a whole number of Hz in [1, 1000000]: %s",
				spec, expect);
	long ch = 1;
	if (*e == ':') {
		const char *q = e + 1;
		ch = strtol(q, &e, 10);
		if (e == q || *e || ch < 1 || ch > 64)
			return vpa_fail(err, VPA_EINPUT, NULL,
					"--raw-format '%s': the channel count must be in [1, 64]: %s", spec,
					expect);
	}
	raw_set(f, i, (double)r, (int)ch);
	return 0;
}

int vpa_rawfmt_sox(const char *enc, int bits, int big, double rate, int channels,
		   struct vpa_rawfmt *f, const char **why)
{
	char name[8];
	char k;
	if (!strcmp(enc, "signed-integer") || !strcmp(enc, "signed"))
		k = 's';
	else if (!strcmp(enc, "unsigned-integer") || !strcmp(enc, "unsigned"))
		k = 'u';
	else if (!strcmp(enc, "floating-point") || !strcmp(enc, "float"))
		k = 'f';
	else {
		*why = "expected -e signed-integer, unsigned-integer or floating-point";
		return -1;
	}
	if (bits == 8)
		snprintf(name, sizeof(name), "%c8", k);
	else
		snprintf(name, sizeof(name), "%c%d%s", k, bits, big ? "be" : "le");
	for (size_t i = 0; i < N_RAW_ENCS; i++)
		if (!strcmp(raw_encs[i].name, name)) {
			if (rate != floor(rate) || rate < 1 || rate > 1000000) {
				*why = "the rate must be a whole number of Hz in [1, 1000000]";
				return -1;
			}
			raw_set(f, i, rate, channels);
			return 0;
		}
	*why = k == 'u' ? "unsigned raw PCM is read as 8-bit only (-b 8)"
	       : k == 'f' ? "floating-point raw PCM is -b 32 or -b 64"
			  : "signed raw PCM is -b 8, 16, 24 or 32";
	return -1;
}

/* Open path for reading (info filled); NULL and err set when it cannot be:
 * a plain "No such file" message first, then libsndfile's.  raw (may be NULL)
 * describes a headerless file.  With hio non-NULL and the run recording its
 * inputs, the file is read through a vpa_hashio (*hio, for close_audio);
 * else *hio is NULL. */
static SNDFILE *open_audio_fmt(const char *path, const struct vpa_rawfmt *raw, SF_INFO *info,
			       struct vpa_hashio **hio, struct vpa_err *err)
{
	memset(info, 0, sizeof(*info));
	if (hio)
		*hio = NULL;
	FILE *probe = fopen(path, "rb"); /* for a plain "No such file" message */
	if (!probe) {
		vpa_fail(err, VPA_EIO, NULL, "cannot open '%s': %s", path, strerror(errno));
		return NULL;
	}
	if (raw && raw->sf_format) {
		/* libsndfile drops a trailing partial frame silently: a cut file must not pass */
		long long size = fseeko(probe, 0, SEEK_END) == 0 ? (long long)ftello(probe) : -1;
		long long fb = (long long)raw_bytes(raw->sf_format) * raw->channels;
		if (size >= 0 && size % fb) {
			fclose(probe);
			vpa_fail(err, VPA_EINPUT, NULL,
				 "%s: %lld bytes is not a whole number of %s frames of %d channel%s",
				 path, size, raw->name, raw->channels, raw->channels == 1 ? "" : "s");
			return NULL;
		}
		rewind(probe); /* the hashing reader starts at the first byte */
		info->format = raw->sf_format;
		info->samplerate = (int)raw->rate;
		info->channels = raw->channels;
	}
	SNDFILE *s = NULL;
	struct vpa_hashio *h = NULL;
	if (hio && vpa_input_wanted(path))
		s = vpa_hashio_open(path, probe, info, &h); /* takes probe */
	else {
		fclose(probe);
		s = sf_open(path, SFM_READ, info);
	}
	if (!s) {
		vpa_fail(err, VPA_EINPUT, NULL, "%s: not a readable audio file: %s", path,
			 sf_msg(NULL));
		return NULL;
	}
	if ((info->format & SF_FORMAT_TYPEMASK) == SF_FORMAT_NIST) {
		long long count;
		char bad[128] = "";
		int rc = sphere_count_file(path, &count, bad, sizeof(bad));
		if (sphere_check(path, info, rc, count, bad, err)) {
			sf_close(s);
			vpa_hashio_close(h);
			return NULL;
		}
	}
	if (hio)
		*hio = h;
	return s;
}

static void close_audio(SNDFILE *s, struct vpa_hashio *h)
{
	sf_close(s);
	vpa_hashio_close(h);
}

static SNDFILE *open_audio(const char *path, SF_INFO *info, struct vpa_hashio **hio,
			   struct vpa_err *err)
{
	return open_audio_fmt(path, NULL, info, hio, err);
}

int vpa_audio_read_part(const char *path, int channel, double start, double end,
			struct vpa_wave *out, double *dur, struct vpa_err *err)
{
	return vpa_audio_read_part_fmt(path, NULL, channel, start, end, out, dur, err);
}

int vpa_audio_read_part_fmt(const char *path, const struct vpa_rawfmt *raw, int channel,
			    double start, double end, struct vpa_wave *out, double *dur,
			    struct vpa_err *err)
{
	SF_INFO info;
	struct vpa_hashio *h;
	*dur = 0;
	SNDFILE *s = open_audio_fmt(path, raw, &info, &h, err);
	if (!s)
		return err->status;
	int rc = 0;
	if (info.samplerate <= 0 || info.frames <= 0) {
		rc = read_all(s, &info, path, channel, out, err); /* gives the right message */
		if (!rc)
			VPA_BUG("audio without frames read");
		goto out;
	}
	if (info.frames == SF_COUNT_MAX) { /* unknown length: read it all, then cut */
		struct vpa_wave all;
		vpa_wave_init(&all);
		if ((rc = read_all(s, &info, path, channel, &all, err)))
			goto out;
		*dur = (double)all.n / info.samplerate;
		sf_count_t a = (sf_count_t)llround(start * info.samplerate), n = (sf_count_t)all.n;
		sf_count_t b = end < 0 ? n : (sf_count_t)llround(end * info.samplerate);
		if (b > n)
			b = n;
		if (a >= b) {
			rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: no samples between %g and %g s (%g s long)",
				      path, start, end, *dur);
		} else {
			out->n = (size_t)(b - a);
			out->x = xmalloc(xmul(out->n, sizeof(float)));
			memcpy(out->x, all.x + a, out->n * sizeof(float));
			out->rate = all.rate;
		}
		vpa_wave_release(&all);
		goto out;
	}
	*dur = (double)info.frames / info.samplerate;
	sf_count_t a = (sf_count_t)llround(start * info.samplerate);
	sf_count_t b = end < 0 ? info.frames : (sf_count_t)llround(end * info.samplerate);
	if (b > info.frames)
		b = info.frames;
	if (a >= b) {
		rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: no samples between %g and %g s (%g s long)",
			      path, start, end, *dur);
		goto out;
	}
	rc = read_frames(s, &info, path, channel, a, b - a, out, err);
out:
	close_audio(s, h);
	return rc;
}

int vpa_audio_read(const char *path, int channel, struct vpa_wave *out, struct vpa_err *err)
{
	return vpa_audio_read_fmt(path, NULL, channel, out, err);
}

int vpa_audio_read_fmt(const char *path, const struct vpa_rawfmt *raw, int channel,
		       struct vpa_wave *out, struct vpa_err *err)
{
	SF_INFO info;
	struct vpa_hashio *h;
	SNDFILE *s = open_audio_fmt(path, raw, &info, &h, err);
	if (!s)
		return err->status;
	int rc = read_all(s, &info, path, channel, out, err);
	close_audio(s, h);
	return rc;
}

int vpa_audio_rate(const char *path, double *rate, struct vpa_err *err)
{
	SF_INFO info;
	SNDFILE *s = open_audio(path, &info, NULL, err); /* the header only: not hashed */
	if (!s)
		return err->status;
	*rate = (double)info.samplerate;
	sf_close(s);
	return 0;
}

int vpa_audio_rate_ok(double rate, double want)
{
	/* a scenario resamples any positive rate to the front-end's (libsoxr,
	 * audio/resample.c): the one place that says which rates a run reads */
	return want <= 0 || rate == want || (rate > 0 && isfinite(rate));
}

int vpa_audio_probe(const char *path, struct vpa_audio_info *ai, struct vpa_err *err)
{
	SF_INFO info;
	memset(ai, 0, sizeof(*ai));
	SNDFILE *s = open_audio(path, &info, NULL, err); /* header (and SPHERE count) only */
	if (!s)
		return err->status;
	int rc = 0;
	char log[2048];
	log[0] = 0;
	sf_command(s, SFC_GET_LOG_INFO, log, sizeof(log));
	const char *d = strstr(log, "\ndata : ");
	if (info.samplerate <= 0 || info.channels <= 0)
		rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: not an audio file (no rate or channels)",
			      path);
	else if (d && strstr(d, "(should be") && strstr(d, "(should be") < strchr(d + 1, '\n'))
		rc = vpa_fail(err, VPA_EINPUT, NULL,
			      "%s: truncated: the data chunk is longer than the file", path);
	else if (info.frames <= 0)
		rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: no audio samples", path);
	ai->rate = info.samplerate;
	ai->channels = info.channels;
	ai->frames = info.frames == SF_COUNT_MAX ? -1 : (long long)info.frames;
	ai->format = info.format;
	sf_close(s);
	return rc;
}

int vpa_audio_parse(const char *name, const unsigned char *buf, size_t len, int channel,
		    struct vpa_wave *out, struct vpa_err *err)
{
	SF_VIRTUAL_IO io = {m_len, m_seek, m_read, m_write, m_tell};
	struct membuf m = {buf, (sf_count_t)len, 0};
	SF_INFO info;
	memset(&info, 0, sizeof(info));
	SNDFILE *s = sf_open_virtual(&io, SFM_READ, &info, &m);
	if (!s)
		return vpa_fail(err, VPA_EINPUT, NULL, "%s: not a readable audio file: %s", name,
				sf_msg(NULL));
	long long count;
	char bad[128] = "";
	int rc = sphere_count(buf, len, &count, bad, sizeof(bad));
	rc = sphere_check(name, &info, rc, count, bad, err);
	if (!rc)
		rc = read_all(s, &info, name, channel, out, err);
	sf_close(s);
	return rc;
}
