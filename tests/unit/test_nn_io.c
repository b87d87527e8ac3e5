/*
 * tests/unit/test_nn_io.c - model folders: save/load round trips give
 * identical outputs; model.yaml and tensor-file errors are exact.
 */
#include "learn/nn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <unistd.h>

#include "formats/io.h"
#include "harness.h"

static char tmpdir[256];

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void outputs_equal(struct vpa_nn *a, struct vpa_nn *b, const struct vpa_nn_batch *in)
{
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_nn_forward(a, in, VPA_NN_EVAL, &err) == 0);
	CHECK(vpa_nn_forward(b, in, VPA_NN_EVAL, &err) == 0);
	CHECK(vpa_nn_n_layers(a) == vpa_nn_n_layers(b));
	for (size_t i = 0; i < vpa_nn_n_layers(a); i++) {
		size_t ra, da, rb, db;
		const float *ya = vpa_nn_activation(a, i, &ra, &da);
		const float *yb = vpa_nn_activation(b, i, &rb, &db);
		CHECK(ra == rb && da == db);
		CHECK(memcmp(ya, yb, ra * da * sizeof(float)) == 0);
	}
}

static void test_roundtrip_xvector(void)
{
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_nn *net = vpa_nn_new(6);
	int c1[] = {-2, -1, 0, 1, 2}, c2[] = {-3, 0, 3};
	vpa_nn_add_tdnn(net, 8, c1, 5);
	vpa_nn_add_simple(net, VPA_NN_RELU);
	vpa_nn_add_simple(net, VPA_NN_BATCHNORM);
	vpa_nn_add_tdnn(net, 8, c2, 3);
	vpa_nn_add_simple(net, VPA_NN_SIGMOID);
	vpa_nn_add_dropout(net, 0.3f);
	vpa_nn_add_simple(net, VPA_NN_STATSPOOL);
	vpa_nn_add_dense(net, 5);
	vpa_nn_add_simple(net, VPA_NN_TANH);
	vpa_nn_add_dense(net, 3);
	vpa_nn_init_params(net, 5);
	float x[6 * 20];
	struct vpa_rng r;
	vpa_rng_seed(&r, 6);
	for (int i = 0; i < 120; i++)
		x[i] = (float)vpa_rng_normal(&r);
	size_t off[] = {0, 7, 20};
	struct vpa_nn_batch b = {2, off, x, NULL};
	/* a TRAIN forward moves the running statistics away from 0 / 1 */
	CHECK(vpa_nn_forward(net, &b, VPA_NN_TRAIN, &err) == 0);
	char dir[300];
	snprintf(dir, sizeof(dir), "%s/xvec", tmpdir);
	CHECK(vpa_nn_save(net, dir, &err) == 0);
	struct vpa_nn *back = NULL;
	CHECK(vpa_nn_load(dir, &back, &err) == 0);
	if (!back) {
		printf("# %s\n", err.msg);
		vpa_nn_free(net);
		return;
	}
	size_t n1, n2, s1, s2;
	const float *P1 = vpa_nn_params(net, &n1), *P2 = vpa_nn_params(back, &n2);
	CHECK(n1 == n2);
	CHECK(memcmp(P1, P2, n1 * sizeof(float)) == 0);
	const float *S1 = vpa_nn_state(net, &s1), *S2 = vpa_nn_state(back, &s2);
	CHECK(s1 == s2 && s1 == 16);
	CHECK(memcmp(S1, S2, s1 * sizeof(float)) == 0);
	CHECK(S2[0] != 0); /* the running mean moved */
	outputs_equal(net, back, &b);
	const struct vpa_nn_layer_spec *s = vpa_nn_layer(back, 3);
	CHECK(s->n_context == 3 && s->context[0] == -3 && s->context[2] == 3);
	CHECK_STR(s->name, "layer4");
	CHECK(vpa_nn_layer(back, 5)->p == 0.3f);
	/* the yaml text is stable: saving the loaded model gives the same text */
	struct vpa_buf y1, y2;
	vpa_buf_init(&y1);
	vpa_buf_init(&y2);
	vpa_nn_yaml(net, &y1);
	vpa_nn_yaml(back, &y2);
	CHECK_STR(vpa_buf_str(&y1), vpa_buf_str(&y2));
	vpa_buf_release(&y1);
	vpa_buf_release(&y2);
	vpa_nn_free(back);
	vpa_nn_free(net);
}

static void test_roundtrip_lm(void)
{
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_nn *net = vpa_nn_new(0);
	vpa_nn_add_embedding(net, 11, 4);
	vpa_nn_add_lstm(net, 5, 1);
	vpa_nn_add_bilstm(net, 3);
	vpa_nn_add_dense(net, 11);
	vpa_nn_init_params(net, 7);
	char dir[300];
	snprintf(dir, sizeof(dir), "%s/lm", tmpdir);
	CHECK(vpa_nn_save(net, dir, &err) == 0);
	struct vpa_nn *back = NULL;
	CHECK(vpa_nn_load(dir, &back, &err) == 0);
	if (!back) {
		printf("# %s\n", err.msg);
		vpa_nn_free(net);
		return;
	}
	uint32_t ids[] = {1, 2, 3, 10, 0, 4, 4};
	size_t off[] = {0, 4, 7};
	struct vpa_nn_batch b = {2, off, NULL, ids};
	outputs_equal(net, back, &b);
	CHECK(vpa_nn_layer(back, 1)->reverse == 1);
	CHECK(vpa_nn_input_dim(back) == 0);
	vpa_nn_free(back);
	vpa_nn_free(net);
}

/* The first error message of parsing `text`. */
static const char *parse_err(const char *text)
{
	static struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_nn *net = NULL;
	int rc = vpa_nn_parse_yaml("model.yaml", text, strlen(text), &net, &err);
	if (rc == 0) {
		vpa_nn_free(net);
		return "(no error)";
	}
	CHECK(net == NULL);
	CHECK(rc == VPA_EINPUT);
	return err.msg;
}

static void test_yaml_errors(void)
{
	CHECK_STR(parse_err("input_dim: 40\nlayers:\n  - kind: conv\n    out: 5\n"),
		  "model.yaml:3:11: unknown layer kind 'conv': expected one of dense, tdnn, relu, "
		  "sigmoid, tanh, batchnorm, dropout, statspool, embedding, lstm, bilstm");
	CHECK_STR(parse_err("input_dim: 40\nlayers:\n  - kind: dense\n    outt: 5\n"),
		  "model.yaml:4:5: unknown key 'outt' in a dense layer: expected kind, name, out");
	CHECK_STR(parse_err("input_dim: 40\nlayers:\n  - kind: tdnn\n    out: 5\n"),
		  "model.yaml:3:5: tdnn layer needs 'context'");
	CHECK_STR(parse_err("input_dim: 40\nlayers:\n  - kind: dense\n"),
		  "model.yaml:3:5: dense layer needs 'out'");
	CHECK_STR(parse_err("input_dim: 40\nlayers:\n  - {kind: dense, out: abc}\n"),
		  "model.yaml:3:24: 'out' must be an integer from 1 to 16777216, got 'abc'");
	CHECK_STR(parse_err("input_dim: 40\nlayers:\n  - {kind: dense, out: 0}\n"),
		  "model.yaml:3:24: 'out' must be an integer from 1 to 16777216, got '0'");
	CHECK_STR(parse_err("input_dim: 40\nlayers:\n  - {kind: tdnn, out: 4, context: [1, 0]}\n"),
		  "model.yaml:3:35: 'context' must be strictly increasing");
	CHECK_STR(parse_err("input_dim: 40\nlayers:\n  - {kind: tdnn, out: 4, context: [a]}\n"),
		  "model.yaml:3:36: 'context' offsets must be integers from -1000 to 1000, got 'a'");
	CHECK_STR(parse_err("input_dim: 40\nlayers:\n  - {kind: tdnn, out: 4, context: 3}\n"),
		  "model.yaml:3:35: 'context' must be a list of offsets such as [-1, 0, 1], got '3'");
	CHECK_STR(parse_err("input_dim: 40\nlayers:\n  - {kind: dropout, p: 1.5}\n"),
		  "model.yaml:3:5: dropout 'p' must be in [0, 1)");
	CHECK_STR(parse_err("input_dim: 40\nlayers:\n  - {kind: lstm, hidden: 4, reverse: yes}\n"),
		  "model.yaml:3:38: 'reverse' must be true or false, got 'yes'");
	CHECK_STR(parse_err("input_dim: 40\nlayers:\n  - {out: 4}\n"),
		  "model.yaml:3:5: layer has no 'kind'");
	CHECK_STR(parse_err("input_dim: 40\nlayers:\n  - relu\n"),
		  "model.yaml:3:5: expected a layer as a mapping such as {kind: dense, out: 512}, got "
		  "'relu'");
	CHECK_STR(parse_err("input_dim: 40\nlayers: []\n"),
		  "model.yaml:2:9: 'layers' must be a non-empty list of layers");
	CHECK_STR(parse_err("input_dim: 40\n"), "model.yaml:1:1: missing key 'layers'");
	CHECK_STR(parse_err("layers:\n  - {kind: relu}\n"), "model.yaml:1:1: missing key 'input_dim'");
	CHECK_STR(parse_err("input_dim: 4\nlayers:\n  - {kind: embedding, vocab: 5, dim: 2}\n"),
		  "model.yaml:1:12: no 'input_dim' with an embedding as the first layer (its input is "
		  "token ids)");
	CHECK_STR(parse_err("input_dim: 4\nlayers:\n  - {kind: relu}\n  - {kind: embedding, vocab: 5, "
			    "dim: 2}\n"),
		  "model.yaml:4:5: an embedding must be the first layer of a network without input_dim");
	CHECK_STR(parse_err("input_dim: 4\nlayers:\n  - {kind: relu, name: a}\n  - {kind: relu, name: a}\n"),
		  "model.yaml:4:5: duplicate layer name 'a'");
	CHECK_STR(parse_err("input_dim: 4\nlayers:\n  - {kind: relu, name: 'a/b'}\n"),
		  "model.yaml:3:5: layer name 'a/b' may contain only letters, digits, '_' and '-'");
	CHECK_STR(parse_err("input_dim: 4\nlayers:\n  - {kind: relu, kind: relu}\n"),
		  "model.yaml:3:18: duplicate key 'kind'");
	CHECK_STR(parse_err("input_dim: 4\nlayer:\n  - {kind: relu}\n"),
		  "model.yaml:2:1: unknown key 'layer': expected input_dim, layers");
	CHECK_STR(parse_err("- 1\n- 2\n"),
		  "model.yaml:1:1: expected a mapping with 'input_dim' and 'layers'");
	CHECK_STR(parse_err(""), "model.yaml: empty model file: expected 'layers'");
	CHECK_STR(parse_err("input_dim: [4\n"),
		  "model.yaml:2:1: invalid YAML: did not find expected ',' or ']' while parsing a flow "
		  "sequence");
	/* a valid one, with every key */
	CHECK_STR(parse_err("input_dim: 4\nlayers:\n"
			    "  - {kind: tdnn, name: t1, out: 3, context: [-1, 0, 1]}\n"
			    "  - {kind: batchnorm, eps: 1e-3, momentum: 0.2}\n"
			    "  - {kind: dropout, p: 0.1}\n"
			    "  - {kind: statspool, variance_floor: 1e-8}\n"
			    "  - {kind: lstm, hidden: 2, reverse: false}\n"
			    "  - {kind: bilstm, hidden: 2}\n"
			    "  - {kind: dense, out: 2}\n"),
		  "(no error)");
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void test_load_errors(void)
{
	struct vpa_err err;
	char dir[300], p[400];
	snprintf(dir, sizeof(dir), "%s/bad", tmpdir);
	struct vpa_nn *net = vpa_nn_new(3);
	vpa_nn_add_dense(net, 2);
	vpa_nn_init_params(net, 1);
	vpa_err_init(&err);
	CHECK(vpa_nn_save(net, dir, &err) == 0);
	vpa_nn_free(net);
	struct vpa_nn *back = NULL;
	/* wrong shape: a (2, 4) weight where (2, 3) is expected */
	double w[8] = {0};
	size_t shape[2] = {2, 4};
	snprintf(p, sizeof(p), "%s/layer1.weight.npy", dir);
	CHECK(vpa_npy_write(p, w, 2, shape, &err) == 0);
	vpa_err_init(&err);
	CHECK(vpa_nn_load(dir, &back, &err) == VPA_EINPUT);
	CHECK(back == NULL);
	char want[1200];
	snprintf(want, sizeof(want),
		 "%s/layer1.weight.npy: expected shape (2, 3) for tensor 'weight' of layer 'layer1' "
		 "(%s/model.yaml:4:5), found (2, 4)", dir, dir);
	CHECK_STR(err.msg, want);
	/* a 1-D bias given as 2-D */
	shape[0] = 2;
	shape[1] = 3;
	CHECK(vpa_npy_write(p, w, 2, shape, &err) == 0);
	snprintf(p, sizeof(p), "%s/layer1.bias.npy", dir);
	shape[0] = 1;
	shape[1] = 2;
	CHECK(vpa_npy_write(p, w, 2, shape, &err) == 0);
	vpa_err_init(&err);
	CHECK(vpa_nn_load(dir, &back, &err) == VPA_EINPUT);
	snprintf(want, sizeof(want),
		 "%s/layer1.bias.npy: expected shape (2,) for tensor 'bias' of layer 'layer1' "
		 "(%s/model.yaml:4:5), found (1, 2)", dir, dir);
	CHECK_STR(err.msg, want);
	/* missing file */
	unlink(p);
	vpa_err_init(&err);
	CHECK(vpa_nn_load(dir, &back, &err) == VPA_EINPUT);
	snprintf(want, sizeof(want),
		 "%s/layer1.bias.npy: missing tensor file: expected 'bias' of layer 'layer1' "
		 "(%s/model.yaml:4:5), shape (2,)", dir, dir);
	CHECK_STR(err.msg, want);
	/* a non-finite value */
	double big[2] = {1, 1e300};
	size_t s1 = 2;
	CHECK(vpa_npy_write(p, big, 1, &s1, &err) == 0);
	vpa_err_init(&err);
	CHECK(vpa_nn_load(dir, &back, &err) == VPA_EINPUT);
	snprintf(want, sizeof(want), "%s/layer1.bias.npy: element 1 is not a finite float32 value",
		 dir);
	CHECK_STR(err.msg, want);
	/* model.yaml errors carry its path */
	snprintf(p, sizeof(p), "%s/model.yaml", dir);
	write_text(p, "input_dim: 3\nlayers:\n  - {kind: dense, out: 2, bias: false}\n");
	vpa_err_init(&err);
	CHECK(vpa_nn_load(dir, &back, &err) == VPA_EINPUT);
	snprintf(want, sizeof(want),
		 "%s/model.yaml:3:27: unknown key 'bias' in a dense layer: expected kind, name, out",
		 dir);
	CHECK_STR(err.msg, want);
	/* no folder */
	vpa_err_init(&err);
	snprintf(p, sizeof(p), "%s/nothing", tmpdir);
	CHECK(vpa_nn_load(p, &back, &err) == VPA_EIO);
	CHECK(strstr(err.msg, "nothing/model.yaml: cannot open") != NULL);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/vpa_test_nn_io.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_roundtrip_xvector);
	RUN(test_roundtrip_lm);
	RUN(test_yaml_errors);
	RUN(test_load_errors);
	nftw(tmpdir, rm_entry, 8, FTW_DEPTH | FTW_PHYS); /* remove the temporary folder */
	return DONE();
}
