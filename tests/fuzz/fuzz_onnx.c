/*
 * tests/fuzz/fuzz_onnx.c - the ONNX protobuf readers on arbitrary bytes:
 * vpa_onnx_load_mem (ModelProto, strict and lenient) and
 * vpa_onnx_tensor_parse (TensorProto).  No crash, no leak; an error is one
 * non-empty line and leaves nothing allocated; a loaded model answers every
 * accessor.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_err(const struct vpa_err *err)
{
	if (err->msg[0] == '\0' || strchr(err->msg, '\n'))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (int lenient = 0; lenient < 2; lenient++) {
		struct vpa_onnx_load_opts opts = {.lenient = lenient};
		struct vpa_onnx_model *m = NULL;
		struct vpa_err err;
		vpa_err_init(&err);
		if (vpa_onnx_load_mem("fuzz.onnx", data, size, NULL, &opts, &m, &err) == 0) {
			volatile size_t sink = 0;
			sink += (size_t)vpa_onnx_opset(m) + strlen(vpa_onnx_producer(m));
			for (size_t i = 0; i < vpa_onnx_n_inputs(m); i++)
				sink += strlen(vpa_onnx_input(m, i)->name) + vpa_onnx_input(m, i)->ndim;
			for (size_t i = 0; i < vpa_onnx_n_outputs(m); i++)
				sink += strlen(vpa_onnx_output(m, i)->name);
			for (size_t i = 0; i < vpa_onnx_n_nodes(m); i++) {
				sink += strlen(vpa_onnx_node_op(m, i)) + strlen(vpa_onnx_node_name(m, i));
				const char *u = vpa_onnx_node_unsupported(m, i);
				if (!lenient && u)
					abort(); /* a strict load never keeps an unsupported node */
				sink += u ? strlen(u) : 0;
			}
			sink += (size_t)vpa_onnx_n_params(m);
			(void)sink;
			vpa_onnx_free(m);
		} else {
			if (m)
				abort();
			check_err(&err);
		}
	}
	struct vpa_onnx_tensor t;
	char *name = NULL;
	struct vpa_err err;
	vpa_err_init(&err);
	if (vpa_onnx_tensor_parse("fuzz.pb", data, size, &t, &name, &err) == 0) {
		size_t n = vpa_onnx_numel(&t), es = vpa_onnx_dtype_size(t.dtype);
		volatile unsigned char sum = 0;
		for (size_t i = 0; i < n * es; i++)
			sum ^= ((unsigned char *)t.data)[i]; /* ASan checks the bounds */
		(void)sum;
		vpa_onnx_tensor_release(&t);
		free(name);
	} else {
		if (t.data || name)
			abort();
		check_err(&err);
	}
	return 0;
}
