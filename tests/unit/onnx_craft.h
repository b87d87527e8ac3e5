/*
 * tests/unit/onnx_craft.h - hand-made ONNX protobufs for the hostile-file tests
 * (issue 26): a ModelProto nested D messages deep, a model without a
 * default-domain opset, initializers with external data or given values.
 * Used by tests/unit/test_onnx.c (in memory) and tests/golden/onnx/gen_hostile.c
 * (the committed files).  Header-only, static inline functions; needs no vpaudit code.
 *
 * A message is written back to front, so that a length is known when its
 * varint is written: write a message's fields last first, then pb_end.
 *
 *   struct pb b = {0};
 *   size_t m = pb_mark(&b);
 *   pb_int(&b, 2, 13);          // OperatorSetIdProto.version = 13
 *   pb_end(&b, 8, m);           // ... as ModelProto.opset_import (field 8)
 *   pb_int(&b, 1, 8);           // ModelProto.ir_version = 8
 *   fwrite(pb_data(&b), 1, b.len, f);  free(b.buf);
 */
#ifndef VPA_ONNX_CRAFT_H
#define VPA_ONNX_CRAFT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct pb {
	unsigned char *buf; /* the bytes are buf[cap - len .. cap), owned */
	size_t cap, len;
};

static inline void pb_put(struct pb *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n)
			cap *= 2;
		unsigned char *nb = malloc(cap);
		if (!nb)
			abort();
		if (b->len)
			memcpy(nb + cap - b->len, b->buf + b->cap - b->len, b->len);
		free(b->buf);
		b->buf = nb;
		b->cap = cap;
	}
	b->len += n;
	if (n && p)
		memcpy(b->buf + b->cap - b->len, p, n);
}

static const unsigned char *pb_data(const struct pb *b) { return b->buf + b->cap - b->len; }

static inline void pb_varint(struct pb *b, uint64_t v)
{
	unsigned char t[10];
	size_t k = 0;
	do {
		t[k] = (unsigned char)(v & 0x7f);
		v >>= 7;
		if (v)
			t[k] |= 0x80;
		k++;
	} while (v);
	pb_put(b, t, k);
}

static inline void pb_key(struct pb *b, unsigned field, unsigned wire) { pb_varint(b, (uint64_t)field << 3 | wire); }
static inline void pb_int(struct pb *b, unsigned field, uint64_t v) { pb_varint(b, v); pb_key(b, field, 0); }

static inline void pb_bytes(struct pb *b, unsigned field, const void *p, size_t n)
{
	pb_put(b, p, n);
	pb_varint(b, n);
	pb_key(b, field, 2);
}

static inline void pb_str(struct pb *b, unsigned field, const char *s) { pb_bytes(b, field, s, strlen(s)); }
static inline size_t pb_mark(const struct pb *b) { return b->len; }

/* Close the message whose fields were written since mark, as field `field`. */
static inline void pb_end(struct pb *b, unsigned field, size_t mark)
{
	pb_varint(b, b->len - mark);
	pb_key(b, field, 2);
}

/* ModelProto fields: ir_version 8, opset_import {version} (none when opset < 0). */
static inline void craft_model_head(struct pb *b, int opset)
{
	if (opset >= 0) {
		size_t m = pb_mark(b);
		pb_int(b, 2, (uint64_t)opset); /* OperatorSetIdProto.version; domain "" */
		pb_end(b, 8, m);
	}
	pb_int(b, 1, 8);
}

/*
 * A ModelProto whose messages nest `depth` (>= 2) levels: Model > Graph > Node
 * (an If) > Attribute (then_branch) > Graph > Node > ...; the deepest message
 * is empty (12,000 levels: 126 KB).
 */
static inline void craft_deep(struct pb *b, int depth)
{
	/* Back to front, every message of the chain starts where the deepest does. */
	size_t m = pb_mark(b);
	for (int d = depth - 1; d >= 2; d--) {
		int kind = (d - 2) % 3; /* the message at depth d: 0 Graph, 1 Node, 2 Attribute */
		pb_end(b, kind == 0 ? 1 : kind == 1 ? 5 : 6, m); /* encloses the one at d + 1 */
		if (kind == 1)
			pb_str(b, 4, "If");
		if (kind == 2) {
			pb_int(b, 20, 5); /* type GRAPH */
			pb_str(b, 1, "then_branch");
		}
	}
	pb_end(b, 7, m);
	craft_model_head(b, 13);
}

/*
 * A graph with one float initializer 'w' of shape (n,) that is also the graph
 * output.  location NULL: the values are raw_data (vals); else external data
 * at `location` (vals unused).
 */
static inline void craft_init_model(struct pb *b, int opset, size_t n, const float *vals,
			     const char *location)
{
	size_t g = pb_mark(b), vi = pb_mark(b);
	pb_str(b, 1, "w");
	pb_end(b, 12, vi); /* GraphProto.output */
	size_t t = pb_mark(b);
	if (location) {
		pb_int(b, 14, 1); /* data_location EXTERNAL */
		size_t e = pb_mark(b);
		pb_str(b, 2, location);
		pb_str(b, 1, "location");
		pb_end(b, 13, e);
	} else {
		pb_bytes(b, 9, vals, n * sizeof(float));
	}
	pb_str(b, 8, "w");
	pb_int(b, 2, 1); /* FLOAT */
	pb_int(b, 1, n);
	pb_end(b, 5, t); /* GraphProto.initializer */
	pb_str(b, 2, "craft");
	pb_end(b, 7, g);
	craft_model_head(b, opset);
}

#endif
