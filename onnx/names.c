/*
 * onnx/names.c - the values of a graph nearest to a name that is not one
 * (vpa_onnx_nearest_values): what run.c, the CLI, embed/ and the targets
 * append to a "no value" error.  Reads only the model's value table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/internal.h"

/* Levenshtein distance (insertions, deletions, substitutions), two rows. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t *prev = xmalloc((lb + 1) * sizeof(size_t)), *cur = xmalloc((lb + 1) * sizeof(size_t));
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
			cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
		}
		size_t *t = prev;
		prev = cur;
		cur = t;
	}
	size_t d = prev[lb];
	free(prev);
	free(cur);
	return d;
}

const char *vpa_onnx_nearest_values(const struct vpa_onnx_model *m, const char *name, char *buf,
				    size_t cap)
{
	enum { K = 3 };
	size_t best[K], bd[K], nb = 0;
	if (cap)
		buf[0] = '\0';
	for (size_t v = 0; v < m->n_values; v++) {
		if (m->values[v].kind == OX_V_INIT) /* parameters: not what a layer name means */
			continue;
		/* names up to 512 characters compared (a longer one is no typo of a short one) */
		if (strlen(m->values[v].name) > 512 || strlen(name) > 512)
			continue;
		size_t d = edit_distance(name, m->values[v].name), k = nb < K ? nb++ : K;
		/* insertion into the sorted top K; equal distances keep graph order */
		while (k > 0 && bd[k - 1] > d) {
			if (k < K) {
				best[k] = best[k - 1];
				bd[k] = bd[k - 1];
			}
			k--;
		}
		if (k < K) {
			best[k] = v;
			bd[k] = d;
		}
	}
	size_t off = 0;
	for (size_t i = 0; i < nb && off < cap; i++)
		off += (size_t)snprintf(buf + off, cap - off, "%s'%s'%s", i ? ", " : " (nearest: ",
					m->values[best[i]].name, i + 1 == nb ? ")" : "");
	return buf;
}
