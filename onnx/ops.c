/*
 * onnx/ops.c - the operator table: the union of the per-file tables, looked
 * up by op_type at load time.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/internal.h"

static const struct ox_op *const tables[] = {ox_ops_math, ox_ops_nn, ox_ops_shape,
					     ox_ops_reduce, ox_ops_rnn};

const struct ox_op *ox_find_op(const char *name)
{
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		for (const struct ox_op *op = tables[t]; op->name; op++)
			if (!strcmp(op->name, name))
				return op;
	return NULL;
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
