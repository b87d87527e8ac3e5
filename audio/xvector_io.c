/*
 * audio/xvector_io.c - saving and loading the extractors vpaudit trains.  See
 * xvector_io.h for the folder and why it is not ONNX.
 */
#include "audio/xvector_io.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FORMAT "vpaudit-extractor 1"

void vpa_xvec_meta_init(struct vpa_xvec_meta *m)
{
	memset(m, 0, sizeof(*m));
}

static char *join(const char *a, const char *b)
{
	struct vpa_buf p;
	vpa_buf_init(&p);
	vpa_buf_printf(&p, "%s/%s", a, b);
	char *s = xstrdup(vpa_buf_str(&p));
	vpa_buf_release(&p);
	return s;
}

static char *net_dir(const char *dir, size_t i)
{
	char n[32];
	snprintf(n, sizeof(n), "net%zu", i);
	return join(dir, n);
}

static size_t n_nets(struct vpa_xvec *x)
{
	return x->ecapa ? vpa_ecapa_n_nets(x->ecapa) : 1;
}

static struct vpa_nn *net_of(struct vpa_xvec *x, size_t i)
{
	return x->ecapa ? vpa_ecapa_net(x->ecapa, i) : x->net;
}

static void meta_text(const struct vpa_xvec *x, const struct vpa_xvec_meta *m, size_t nets,
		      struct vpa_buf *b)
{
	vpa_buf_puts(b, "# an extractor trained by vpaudit (audio/xvector_io.h): its network is in "
			"the net* model folders (learn/NN.md)\n");
	vpa_buf_printf(b, "format: %s\n", FORMAT);
	vpa_buf_printf(b, "role: %s\n", m->role[0] ? m->role : "asv_eval");
	vpa_buf_printf(b, "architecture: %s\n", vpa_xvec_arch_name(x->arch));
	vpa_buf_printf(b, "input_dim: %zu\n", vpa_xvec_input_dim(x));
	vpa_buf_printf(b, "emb_dim: %zu\n", x->emb_dim);
	if (x->ecapa) {
		const struct vpa_ecapa_opts *e = vpa_ecapa_opts(x->ecapa);
		vpa_buf_printf(b, "channels: %zu\nres2_scale: %zu\nse_dim: %zu\natt_dim: %zu\n"
				  "mfa_dim: %zu\n",
			       e->channels, e->scale, e->se_dim, e->att_dim, e->mfa_dim);
	} else {
		vpa_buf_printf(b, "hidden: %zu\n", m->hidden);
	}
	vpa_buf_printf(b, "features: %s\nnum_mel_bins: %ld\nnum_ceps: %ld\ncmvn: %s\nvad: %s\n",
		       m->features, m->num_mel_bins, m->num_ceps, m->cmvn,
		       m->vad ? "true" : "false");
	vpa_buf_printf(b, "sample_frequency: %.17g\nframe_length: %.17g\nframe_shift: %.17g\n",
		       m->sample_frequency, m->frame_length, m->frame_shift);
	vpa_buf_printf(b, "loss: %s\nepochs: %ld\nfinal_loss: %.17g\n", m->loss, m->epochs,
		       m->final_loss);
	if (m->semi_informed[0])
		vpa_buf_printf(b, "semi_informed: %s\n", m->semi_informed);
	vpa_buf_printf(b, "nets: %zu\n", nets);
}

int vpa_xvec_save(struct vpa_xvec *x, const struct vpa_xvec_meta *m, const char *dir,
		  struct vpa_err *err)
{
	if (!vpa_xvec_trained(x))
		return vpa_fail(err, VPA_EINPUT, NULL, "%s: no trained extractor to save", dir);
	char suffix[48];
	snprintf(suffix, sizeof(suffix), ".tmp.%ld", (long)getpid());
	struct vpa_buf tb;
	vpa_buf_init(&tb);
	vpa_buf_printf(&tb, "%s%s", dir, suffix);
	char *tmp = xstrdup(vpa_buf_str(&tb));
	vpa_buf_release(&tb);
	struct vpa_buf y;
	vpa_buf_init(&y);
	char *yp = NULL;
	int rc;
	/* the folders above dir first: vpa_mkdir_new makes them, then the temporary */
	vpa_tmp_register(tmp, 1);
	if ((rc = vpa_mkdir_new(tmp, err)))
		goto out;
	if (x->net) {
		/* hidden is the caller's word (the trunk does not keep it): checked
		 * against the trunk, so that the folder always loads as what it is */
		struct vpa_nn *ref = vpa_xvec_tdnn_new(vpa_xvec_input_dim(x), m->hidden, x->emb_dim);
		struct vpa_buf a, b;
		vpa_buf_init(&a);
		vpa_buf_init(&b);
		vpa_nn_yaml(ref, &a);
		vpa_nn_yaml(x->net, &b);
		int same = !strcmp(vpa_buf_str(&a), vpa_buf_str(&b));
		vpa_buf_release(&a);
		vpa_buf_release(&b);
		vpa_nn_free(ref);
		if (!same) {
			rc = vpa_fail(err, VPA_EINPUT, NULL,
				      "%s: the x-vector trunk is not the TDNN of hidden size %zu", dir,
				      m->hidden);
			goto out;
		}
	}
	size_t nn = n_nets(x);
	for (size_t i = 0; i < nn && rc == 0; i++) {
		char *d = net_dir(tmp, i);
		rc = vpa_nn_save(net_of(x, i), d, err);
		free(d);
	}
	if (rc)
		goto out;
	struct vpa_xvec_meta mm = *m;
	meta_text(x, &mm, nn, &y);
	yp = join(tmp, "extractor.yaml");
	struct vpa_atomic a;
	FILE *f = vpa_atomic_open(yp, &a, err);
	if (!f) {
		rc = err->status ? err->status : VPA_EIO;
		goto out;
	}
	if (fwrite(y.data, 1, y.len, f) != y.len) {
		vpa_atomic_abort(&a);
		struct vpa_loc l = {yp, 0, 0};
		rc = vpa_fail(err, VPA_EIO, &l, "write error");
		goto out;
	}
	if ((rc = vpa_atomic_commit(&a, err)))
		goto out;
	/* the complete new folder replaces the old one (a reuse of an earlier run's
	 * folder never sees half of each) */
	struct stat st;
	if (lstat(dir, &st) == 0 && vpa_rm_tree(dir) != 0) {
		struct vpa_loc l = {dir, 0, 0};
		rc = vpa_fail(err, VPA_EIO, &l, "cannot replace the folder: %s", strerror(errno));
		goto out;
	}
	if (rename(tmp, dir) != 0) {
		struct vpa_loc l = {dir, 0, 0};
		rc = vpa_fail(err, VPA_EIO, &l, "cannot rename %s to it: %s", tmp, strerror(errno));
		goto out;
	}
out:
	if (rc)
		vpa_rm_tree(tmp);
	vpa_tmp_unregister(tmp);
	free(tmp);
	free(yp);
	vpa_buf_release(&y);
	return rc;
}

/* ---------------------------------------------------------------- reading */

enum { K_STR, K_SIZE, K_LONG, K_NUM, K_BOOL };
struct mkey {
	const char *name;
	int type;
	int required; /* 1: always; 2: x-vector; 3: ECAPA */
	long long lo, hi;
	size_t off;  /* into struct vpa_xvec_meta, or (size_t)-1: handled by the caller */
	size_t cap;  /* strings: buffer size */
};
#define OFF(f) offsetof(struct vpa_xvec_meta, f)
#define NONE ((size_t)-1)
static const struct mkey mkeys[] = {
	{"format", K_STR, 1, 0, 0, NONE, 0},
	{"role", K_STR, 1, 0, 0, OFF(role), sizeof(((struct vpa_xvec_meta *)0)->role)},
	{"architecture", K_STR, 1, 0, 0, NONE, 0},
	{"input_dim", K_SIZE, 1, 1, 1 << 20, OFF(input_dim), 0},
	{"emb_dim", K_SIZE, 1, 2, 4096, OFF(emb_dim), 0},
	{"hidden", K_SIZE, 2, 4, 4096, OFF(hidden), 0},
	{"channels", K_SIZE, 3, 2, 65536, OFF(ecapa.channels), 0},
	{"res2_scale", K_SIZE, 3, 1, VPA_ECAPA_MAX_SCALE, OFF(ecapa.scale), 0},
	{"se_dim", K_SIZE, 3, 1, 65536, OFF(ecapa.se_dim), 0},
	{"att_dim", K_SIZE, 3, 1, 65536, OFF(ecapa.att_dim), 0},
	{"mfa_dim", K_SIZE, 3, 1, 1 << 20, OFF(ecapa.mfa_dim), 0},
	{"features", K_STR, 1, 0, 0, OFF(features), sizeof(((struct vpa_xvec_meta *)0)->features)},
	{"num_mel_bins", K_LONG, 1, 3, 1024, OFF(num_mel_bins), 0},
	{"num_ceps", K_LONG, 1, 0, 1024, OFF(num_ceps), 0},
	{"cmvn", K_STR, 1, 0, 0, OFF(cmvn), sizeof(((struct vpa_xvec_meta *)0)->cmvn)},
	{"vad", K_BOOL, 1, 0, 0, OFF(vad), 0},
	{"sample_frequency", K_NUM, 1, 0, 0, OFF(sample_frequency), 0},
	{"frame_length", K_NUM, 1, 0, 0, OFF(frame_length), 0},
	{"frame_shift", K_NUM, 1, 0, 0, OFF(frame_shift), 0},
	{"loss", K_STR, 1, 0, 0, OFF(loss), sizeof(((struct vpa_xvec_meta *)0)->loss)},
	{"epochs", K_LONG, 1, 1, 100000, OFF(epochs), 0},
	{"final_loss", K_NUM, 1, 0, 0, OFF(final_loss), 0},
	{"semi_informed", K_STR, 0, 0, 0, OFF(semi_informed),
	 sizeof(((struct vpa_xvec_meta *)0)->semi_informed)},
	{"nets", K_SIZE, 1, 1, 64, NONE, 0},
};
#define N_MKEYS (sizeof(mkeys) / sizeof(mkeys[0]))

/* A value shown in a message: at most 40 bytes, control characters as '?'. */
static void shown(const char *v, char *b, size_t sz)
{
	size_t j = 0;
	for (size_t i = 0; v[i] && j + 4 < sz && i < 40; i++)
		b[j++] = (unsigned char)v[i] < 32 || v[i] == 127 ? '?' : v[i];
	if (strlen(v) > 40 && j + 4 < sz) {
		memcpy(b + j, "...", 3);
		j += 3;
	}
	b[j] = 0;
}

static int choice(const char *v, const char *a, const char *b)
{
	return !strcmp(v, a) || !strcmp(v, b);
}

int vpa_xvec_meta_read(const char *dir, struct vpa_xvec_meta *m, struct vpa_err *err)
{
	vpa_xvec_meta_init(m);
	char *path = join(dir, "extractor.yaml");
	char *text = NULL;
	size_t len = 0;
	int rc = 0;
	long line_of[N_MKEYS] = {0};
	size_t nets = 0;
	struct stat st;
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		struct vpa_loc l = {dir, 0, 0};
		rc = vpa_fail(err, VPA_EINPUT, &l,
			      "expected a folder of an extractor saved by vpaudit (extractor.yaml, "
			      "net0, ...): %s",
			      stat(dir, &st) != 0 ? strerror(errno) : "not a folder");
		goto out;
	}
	if ((rc = vpa_read_file(path, &text, &len, err)))
		goto out;
	if (memchr(text, 0, len)) {
		struct vpa_loc l = {path, 0, 0};
		rc = vpa_fail(err, VPA_EINPUT, &l, "a NUL byte: expected `key: value` lines");
		goto out;
	}
	char arch[16] = "";
	long ln = 0;
	for (char *p = text; p && *p;) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = 0;
		ln++;
		char *l = p;
		p = nl ? nl + 1 : NULL;
		size_t ll = strlen(l);
		if (ll && l[ll - 1] == '\r')
			l[--ll] = 0;
		if (!*l || *l == '#')
			continue;
		struct vpa_loc loc = {path, ln, 0};
		char b[64];
		char *colon = strstr(l, ": ");
		if (!colon) {
			shown(l, b, sizeof(b));
			rc = vpa_fail(err, VPA_EINPUT, &loc, "expected `key: value`, got '%s'", b);
			goto out;
		}
		*colon = 0;
		const char *v = colon + 2;
		size_t k = 0;
		while (k < N_MKEYS && strcmp(mkeys[k].name, l))
			k++;
		if (k == N_MKEYS) {
			shown(l, b, sizeof(b));
			rc = vpa_fail(err, VPA_EINPUT, &loc, "unknown key '%s'", b);
			goto out;
		}
		if (line_of[k]) {
			rc = vpa_fail(err, VPA_EINPUT, &loc, "'%s' given twice (first on line %ld)",
				      mkeys[k].name, line_of[k]);
			goto out;
		}
		line_of[k] = ln;
		const struct mkey *K = &mkeys[k];
		char *base = (char *)m;
		shown(v, b, sizeof(b));
		if (K->type == K_STR) {
			const char *want = NULL;
			if (!strcmp(K->name, "format") && strcmp(v, FORMAT))
				want = "'" FORMAT "'";
			else if (!strcmp(K->name, "architecture") && !choice(v, "xvector", "ecapa"))
				want = "xvector or ecapa";
			else if (!strcmp(K->name, "role") && !choice(v, "asv_eval", "asv_eval_anon"))
				want = "asv_eval or asv_eval_anon";
			else if (!strcmp(K->name, "features") && !choice(v, "fbank", "mfcc"))
				want = "fbank or mfcc";
			else if (!strcmp(K->name, "cmvn") && !choice(v, "utt", "none"))
				want = "utt or none";
			else if (!strcmp(K->name, "loss") && !choice(v, "aam", "softmax"))
				want = "aam or softmax";
			else if (!strcmp(K->name, "semi_informed") && !choice(v, "retrain", "finetune"))
				want = "retrain or finetune";
			if (want) {
				rc = vpa_fail(err, VPA_EINPUT, &loc, "'%s' must be %s, got '%s'", K->name,
					      want, b);
				goto out;
			}
			if (!strcmp(K->name, "architecture"))
				snprintf(arch, sizeof(arch), "%s", v);
			else if (K->off != NONE)
				snprintf(base + K->off, K->cap, "%s", v);
			continue;
		}
		if (K->type == K_BOOL) {
			if (!choice(v, "true", "false")) {
				rc = vpa_fail(err, VPA_EINPUT, &loc, "'%s' must be true or false, got '%s'",
					      K->name, b);
				goto out;
			}
			*(int *)(base + K->off) = !strcmp(v, "true");
			continue;
		}
		char *e;
		errno = 0;
		if (K->type == K_NUM) {
			double d = strtod(v, &e);
			if (e == v || *e || errno || !isfinite(d)) {
				rc = vpa_fail(err, VPA_EINPUT, &loc, "'%s' must be a finite number, got '%s'",
					      K->name, b);
				goto out;
			}
			*(double *)(base + K->off) = d;
			continue;
		}
		long long n = strtoll(v, &e, 10);
		if (e == v || *e || errno || n < K->lo || n > K->hi) {
			rc = vpa_fail(err, VPA_EINPUT, &loc, "'%s' must be an integer in [%lld, %lld], got '%s'",
				      K->name, K->lo, K->hi, b);
			goto out;
		}
		if (!strcmp(K->name, "nets"))
			nets = (size_t)n;
		else if (K->type == K_SIZE)
			*(size_t *)(base + K->off) = (size_t)n;
		else
			*(long *)(base + K->off) = (long)n;
	}
	m->arch = !strcmp(arch, "ecapa") ? VPA_XVEC_ECAPA : VPA_XVEC_TDNN;
	for (size_t k = 0; k < N_MKEYS; k++) {
		int need = mkeys[k].required == 1 ||
			   (mkeys[k].required == 2 && arch[0] && m->arch == VPA_XVEC_TDNN) ||
			   (mkeys[k].required == 3 && m->arch == VPA_XVEC_ECAPA);
		if (need && !line_of[k]) {
			struct vpa_loc l = {path, 0, 0};
			rc = vpa_fail(err, VPA_EINPUT, &l, "the key '%s' is missing", mkeys[k].name);
			goto out;
		}
	}
	if (!(m->sample_frequency > 0)) {
		struct vpa_loc l = {path, 0, 0};
		rc = vpa_fail(err, VPA_EINPUT, &l, "'sample_frequency' must be positive, got %g",
			      m->sample_frequency);
		goto out;
	}
	size_t want_nets = 1;
	if (m->arch == VPA_XVEC_ECAPA) {
		/* the count the network of these sizes has (its own answer, not a copy of it) */
		struct vpa_ecapa *e;
		m->ecapa.emb_dim = m->emb_dim;
		if ((rc = vpa_ecapa_new(m->input_dim, &m->ecapa, &e, err))) {
			/* its message has no place: this file is the place */
			struct vpa_loc l = {path, 0, 0};
			char msg[sizeof(err->msg)];
			snprintf(msg, sizeof(msg), "%s", err->msg);
			vpa_err_init(err);
			rc = vpa_fail(err, VPA_EINPUT, &l, "%s", msg);
			goto out;
		}
		want_nets = vpa_ecapa_n_nets(e);
		vpa_ecapa_free(e);
	}
	if (nets != want_nets) {
		struct vpa_loc l = {path, 0, 0};
		rc = vpa_fail(err, VPA_EINPUT, &l, "'nets' is %zu, the %s network has %zu", nets, arch,
			      want_nets);
		goto out;
	}
out:
	free(text);
	free(path);
	return rc;
}

int vpa_xvec_load(const char *dir, struct vpa_xvec *out, struct vpa_xvec_meta *mout,
		  struct vpa_err *err)
{
	struct vpa_xvec_meta m;
	vpa_xvec_init(out);
	int rc = vpa_xvec_meta_read(dir, &m, err);
	if (rc)
		return rc;
	struct vpa_xvec x;
	vpa_xvec_init(&x);
	x.arch = m.arch;
	x.emb_dim = m.emb_dim;
	x.final_loss = m.final_loss;
	if (m.arch == VPA_XVEC_ECAPA) {
		if ((rc = vpa_ecapa_new(m.input_dim, &m.ecapa, &x.ecapa, err)))
			return rc;
		if (vpa_ecapa_emb_dim(x.ecapa) != m.emb_dim) {
			vpa_xvec_release(&x);
			char *p = join(dir, "extractor.yaml");
			struct vpa_loc l = {p, 0, 0};
			rc = vpa_fail(err, VPA_EINPUT, &l, "'emb_dim' %zu differs from the network's %zu",
				      m.emb_dim, m.ecapa.emb_dim);
			free(p);
			return rc;
		}
	} else {
		x.net = vpa_xvec_tdnn_new(m.input_dim, m.hidden, m.emb_dim);
	}
	struct vpa_buf want, got;
	vpa_buf_init(&want);
	vpa_buf_init(&got);
	for (size_t i = 0; i < n_nets(&x) && rc == 0; i++) {
		char *d = net_dir(dir, i);
		struct vpa_nn *saved = NULL;
		struct vpa_nn *net = net_of(&x, i);
		rc = vpa_nn_load(d, &saved, err);
		if (rc == 0) {
			/* the same layers in the same order with the same sizes: compared as
			 * their model.yaml text (learn/nn's one description of a topology) */
			want.len = got.len = 0;
			vpa_nn_yaml(net, &want);
			vpa_nn_yaml(saved, &got);
			if (strcmp(vpa_buf_str(&want), vpa_buf_str(&got))) {
				char *p = join(d, "model.yaml");
				struct vpa_loc l = {p, 0, 0};
				rc = vpa_fail(err, VPA_EINPUT, &l,
					      "the layers differ from the %s network %s/extractor.yaml "
					      "describes",
					      vpa_xvec_arch_name(m.arch), dir);
				free(p);
			} else {
				vpa_nn_copy_params(net, saved);
			}
		}
		vpa_nn_free(saved);
		free(d);
	}
	vpa_buf_release(&want);
	vpa_buf_release(&got);
	if (rc) {
		vpa_xvec_release(&x);
		return rc;
	}
	*out = x;
	if (mout)
		*mout = m;
	return 0;
}
