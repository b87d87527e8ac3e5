/*
 * onnx/ops_rnn.c - LSTM and GRU as PyTorch exports them.
 */
#include "onnx/internal.h"

const struct ox_op ox_ops_rnn[] = {
	{NULL, NULL, NULL, NULL, 0, 0, 0, 0},
};
