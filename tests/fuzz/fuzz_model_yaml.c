/*
 * tests/fuzz/fuzz_model_yaml.c - vpa_nn_parse_yaml on arbitrary bytes.  On
 * error the message must name the file; on success the topology must survive
 * vpa_nn_yaml -> parse -> vpa_nn_yaml unchanged.  Parsing never allocates the
 * tensors it describes (sizes up to 2^24 are accepted), so hostile sizes
 * cannot exhaust memory here.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "learn/nn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_nn *net = NULL;
	if (vpa_nn_parse_yaml("model.yaml", (const char *)data, size, &net, &err) != 0) {
		if (net || strncmp(err.msg, "model.yaml", 10) != 0)
			abort();
		return 0;
	}
	struct vpa_buf a, b;
	vpa_buf_init(&a);
	vpa_buf_init(&b);
	vpa_nn_yaml(net, &a);
	struct vpa_nn *again = NULL;
	vpa_err_init(&err);
	if (vpa_nn_parse_yaml("again.yaml", a.data, a.len, &again, &err) != 0)
		abort();
	vpa_nn_yaml(again, &b);
	if (a.len != b.len || memcmp(a.data, b.data, a.len) != 0)
		abort();
	vpa_buf_release(&a);
	vpa_buf_release(&b);
	vpa_nn_free(again);
	vpa_nn_free(net);
	return 0;
}
