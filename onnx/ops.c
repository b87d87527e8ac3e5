/*
 * onnx/ops.c - the operator table: the union of the per-file tables, looked
 * up by op_type at load time.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/internal.h"

static const struct ox_op *const tables[] = {ox_ops_math, ox_ops_nn, ox_ops_shape,
					     ox_ops_reduce, ox_ops_rnn,
					     ox_ops_signal};

const struct ox_op *ox_find_op(const char *name)
{
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		for (const struct ox_op *op = tables[t]; op->name; op++)
			if (!strcmp(op->name, name))
				return op;
	return NULL;
}

/*
 * The opset from which the ONNX definition an operator has at opsets 11-17
 * holds (same inputs, attributes and semantics, the later versions adding
 * element types or attributes whose absence means the old behaviour); a
 * model of an older opset may use the operator only from this version on.
 * From the operator changelog (onnx/docs/Changelog.md); not listed: 11.
 */
static const struct {
	const char *name;
	int since;
} since_table[] = {
	{"Abs", 6}, {"Add", 7}, {"And", 7}, {"ArgMax", 1}, {"ArgMin", 1}, {"AveragePool", 7},
	{"BatchNormalization", 7}, {"Cast", 6}, {"Ceil", 6}, {"Concat", 4}, {"Constant", 1},
	{"ConstantOfShape", 9}, {"Conv", 1}, {"ConvTranspose", 1}, {"Cos", 7}, {"Div", 7},
	{"Dropout", 7}, {"Elu", 6}, {"Equal", 7}, {"Erf", 9}, {"Exp", 6}, {"Expand", 8},
	{"Flatten", 1}, {"Floor", 6}, {"GRU", 7}, {"Gather", 1}, {"Gemm", 7},
	{"GlobalAveragePool", 1}, {"GlobalMaxPool", 1}, {"Greater", 7}, {"HardSigmoid", 6},
	{"Identity", 1}, {"InstanceNormalization", 6}, {"LSTM", 7}, {"LeakyRelu", 6},
	{"Less", 7}, {"Log", 6}, {"LogSoftmax", 1}, {"MatMul", 1}, {"Max", 6}, {"MaxPool", 1},
	{"Mean", 6}, {"Min", 6}, {"Mul", 7}, {"Neg", 6}, {"Not", 1}, {"Or", 7}, {"PRelu", 7},
	{"Pow", 7}, {"Reciprocal", 6}, {"ReduceL1", 1}, {"ReduceL2", 1}, {"ReduceLogSum", 1},
	{"ReduceLogSumExp", 1}, {"ReduceMax", 1}, {"ReduceMean", 1}, {"ReduceMin", 1},
	{"ReduceProd", 1}, {"ReduceSum", 1}, {"ReduceSumSquare", 1}, {"Relu", 6},
	{"Reshape", 5}, {"Selu", 6}, {"Shape", 1}, {"Sigmoid", 6}, {"Sign", 9}, {"Sin", 7},
	{"Size", 1}, {"Slice", 10}, {"Softmax", 1}, {"Softplus", 1}, {"Softsign", 1},
	{"Split", 2}, {"Sqrt", 6}, {"Squeeze", 1}, {"Sub", 7}, {"Sum", 6}, {"Tanh", 6},
	{"ThresholdedRelu", 10}, {"Tile", 6}, {"Transpose", 1}, {"Unsqueeze", 1}, {"Where", 9},
	{"Xor", 7}, {"GreaterOrEqual", 12}, {"LessOrEqual", 12}, {"HardSwish", 14},
	{"LayerNormalization", 17},
	/* the signal operators first appear at opset 17 (ops_signal.c) */
	{"DFT", 17}, {"STFT", 17}, {"MelWeightMatrix", 17}, {"HannWindow", 17},
	{"HammingWindow", 17}, {"BlackmanWindow", 17},
};

int ox_op_since(const char *name)
{
	for (size_t i = 0; i < sizeof(since_table) / sizeof(since_table[0]); i++)
		if (!strcmp(since_table[i].name, name))
			return since_table[i].since;
	return OX_OPSET_MIN;
}

int vpa_onnx_op_supported(const char *op_type)
{
	return ox_find_op(op_type) != NULL;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

const char *vpa_onnx_supported_ops(void)
{
	/* Comma-separated without spaces (it must fit an error line).  Built once; the table is constant, so concurrent first calls agree. */
	static char buf[4096];
	static int done;
	if (__atomic_load_n(&done, __ATOMIC_ACQUIRE))
		return buf;
	const char *names[256];
	size_t n = 0;
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		for (const struct ox_op *op = tables[t]; op->name && n < 256; op++)
			names[n++] = op->name;
	qsort(names, n, sizeof(names[0]), cmp_str);
	char tmp[4096];
	size_t off = 0;
	for (size_t i = 0; i < n && off < sizeof(tmp); i++)
		off += (size_t)snprintf(tmp + off, sizeof(tmp) - off, "%s%s", i ? "," : "", names[i]);
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&lock);
	if (!done) {
		memcpy(buf, tmp, sizeof(buf));
		__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&lock);
	return buf;
}
