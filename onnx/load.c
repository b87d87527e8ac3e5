/*
 * onnx/load.c - ModelProto -> struct vpa_onnx_model: values, initializers
 * (external data too), nodes checked against the operator table, Kahn's
 * topological order, the last reader of every value (so a run frees each
 * intermediate as soon as it is dead).
 */
#include <stdlib.h>
#include <string.h>

#include "onnx/conv.h"
#include "onnx/internal.h"
#include "onnx/onnx.pb-c.h"

static char *keep(struct vpa_onnx_model *m, const char *s)
{
	m->strings = xrealloc(m->strings, (m->n_strings + 1) * sizeof(char *));
	return m->strings[m->n_strings++] = xstrdup(s);
}

static int add_value(struct vpa_onnx_model *m, const char *name, int kind, size_t *cap)
{
	if (m->n_values == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		m->values = xrealloc(m->values, *cap * sizeof(*m->values));
	}
	struct ox_value *v = &m->values[m->n_values];
	memset(v, 0, sizeof(*v));
	v->name = xstrdup(name);
	v->kind = kind;
	v->last_use = v->last_data = -1;
	return (int)m->n_values++;
}

static int find_value(const struct vpa_onnx_model *m, const char *name)
{
	uint32_t id;
	return vpa_strmap_get(&m->names, name, &id) ? (int)id : -1;
}

static void value_info(struct vpa_onnx_model *m, const Onnx__ValueInfoProto *vi,
		       struct vpa_onnx_value_info *out)
{
	memset(out, 0, sizeof(*out));
	out->name = keep(m, vi->name ? vi->name : "");
	if (!vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
		return;
	const Onnx__TypeProto__Tensor *tt = vi->type->tensor_type;
	out->dtype = tt->has_elem_type ? tt->elem_type : 0;
	if (!tt->shape || tt->shape->n_dim > VPA_ONNX_MAX_DIMS)
		return;
	out->has_shape = 1;
	out->ndim = tt->shape->n_dim;
	for (size_t i = 0; i < out->ndim; i++) {
		const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
		out->dims[i] = -1;
		if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
		    d->dim_value >= 0)
			out->dims[i] = d->dim_value;
		else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
			 d->dim_param && *d->dim_param)
			out->dim_names[i] = keep(m, d->dim_param);
	}
}

/* Graph inputs and outputs must be tensors (no sequence, map or optional). */
static int tensor_typed(struct vpa_onnx_model *m, const char *what, const Onnx__ValueInfoProto *vi,
			int lenient, struct vpa_err *err)
{
	if (!vi->type || vi->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
		return 0;
	char why[300];
	snprintf(why, sizeof(why), "graph %s '%.200s' is not a tensor (sequence, map and optional "
		 "types are not supported)", what, vi->name ? vi->name : "");
	if (lenient) {
		if (!m->unsupported)
			m->unsupported = xstrdup(why);
		return 0;
	}
	struct vpa_loc loc = {m->name, 0, 0};
	return vpa_fail(err, VPA_EINPUT, &loc, "%s", why);
}

static int copy_attr(const char *file, const struct ox_node *n, int64_t opset,
		     const Onnx__AttributeProto *a, struct ox_attr *out, struct vpa_err *err)
{
	memset(out, 0, sizeof(*out));
	out->name = xstrdup(a->name ? a->name : "");
	out->type = a->has_type ? (int)a->type : 0;
	if (a->ref_attr_name && *a->ref_attr_name)
		return ox_check_fail(file, n, opset, err,
				     "attribute '%s' refers to a function attribute", out->name);
	switch (out->type) {
	case OX_A_FLOAT: out->f = a->f; break;
	case OX_A_INT: out->i = a->i; break;
	case OX_A_STRING:
		out->s = xmalloc(a->s.len + 1);
		if (a->s.len)
			memcpy(out->s, a->s.data, a->s.len);
		out->s[a->s.len] = '\0';
		break;
	case OX_A_TENSOR:
		if (!a->t)
			return ox_check_fail(file, n, opset, err, "attribute '%s' has no tensor",
					     out->name);
		if (ox_tensor_from_proto(file, out->name, a->t, NULL, &out->t, err))
			return err->status;
		{
			char what[400]; /* as ox_check_fail names the node */
			snprintf(what, sizeof(what), "node '%.100s' (%.60s, opset %lld): attribute "
				 "'%.100s'", n->name, n->op_type, (long long)opset, out->name);
			return ox_tensor_check_finite(file, what, &out->t, err);
		}
	case OX_A_FLOATS:
		out->n = a->n_floats;
		out->floats = xmalloc((a->n_floats + 1) * sizeof(float));
		if (a->n_floats)
			memcpy(out->floats, a->floats, a->n_floats * sizeof(float));
		break;
	case OX_A_INTS:
		out->n = a->n_ints;
		out->ints = xmalloc((a->n_ints + 1) * sizeof(int64_t));
		if (a->n_ints)
			memcpy(out->ints, a->ints, a->n_ints * sizeof(int64_t));
		break;
	case OX_A_STRINGS:
		out->n = a->n_strings;
		out->strings = xcalloc(a->n_strings + 1, sizeof(char *));
		for (size_t i = 0; i < a->n_strings; i++) {
			out->strings[i] = xmalloc(a->strings[i].len + 1);
			if (a->strings[i].len)
				memcpy(out->strings[i], a->strings[i].data, a->strings[i].len);
			out->strings[i][a->strings[i].len] = '\0';
		}
		break;
	default:
		return ox_check_fail(file, n, opset, err,
				     "attribute '%s' has an unsupported type (%d)", out->name,
				     out->type);
	}
	return 0;
}

/* The operator, input/output counts and attribute names of node n. */
static int check_node(const char *file, struct ox_node *n, const char *domain, int64_t opset,
		      struct vpa_err *err)
{
	if (domain && *domain && strcmp(domain, "ai.onnx"))
		return ox_check_fail(file, n, opset, err,
				     "operator of domain '%s' is not supported (only the default "
				     "ONNX domain)", domain);
	const struct ox_op *op = ox_find_op(n->op_type);
	if (!op)
		return ox_check_fail(file, n, opset, err,
				     "unsupported operator (supported: %s)", vpa_onnx_supported_ops());
	if (opset < ox_op_since(op->name))
		return ox_check_fail(file, n, opset, err,
				     "%s of opset %lld is not supported (vpaudit implements its definition "
				     "of opsets %d-%d; re-export with opset_version=%d)", op->name,
				     (long long)opset, ox_op_since(op->name), OX_OPSET_MAX, OX_OPSET_MAX);
	if ((int)n->n_in < op->min_in || (int)n->n_in > op->max_in)
		return ox_check_fail(file, n, opset, err, "%zu inputs (expected %d to %d)",
				     n->n_in, op->min_in, op->max_in);
	if ((int)n->n_out < op->min_out || (int)n->n_out > op->max_out)
		return ox_check_fail(file, n, opset, err, "%zu outputs (expected %d to %d)",
				     n->n_out, op->min_out, op->max_out);
	for (int i = 0; i < op->min_in; i++)
		if (n->in[i] < 0)
			return ox_check_fail(file, n, opset, err, "required input %d is empty", i);
	for (size_t a = 0; a < n->n_attr; a++) {
		int ok = 0;
		for (const char *const *p = op->attrs; p && *p; p++)
			ok |= !strcmp(*p, n->attrs[a].name);
		if (!ok) {
			struct vpa_buf b;
			vpa_buf_init(&b);
			for (const char *const *p = op->attrs; p && *p; p++)
				vpa_buf_printf(&b, "%s%s", p == op->attrs ? "" : ", ", *p);
			int rc = ox_check_fail(file, n, opset, err,
					       "unsupported attribute '%s' (supported: %s)",
					       n->attrs[a].name, b.len ? b.data : "none");
			vpa_buf_release(&b);
			return rc;
		}
	}
	if (op->check) {
		int rc = op->check(file, n, opset, err);
		if (rc)
			return rc;
	}
	n->op = op;
	return 0;
}

/* The operator first (so that If/Loop fail as operators), then the attributes. */
static int setup_node(const char *file, struct ox_node *n, const Onnx__NodeProto *np,
		      int64_t opset, struct vpa_err *err)
{
	if (!ox_find_op(n->op_type) || (np->domain && *np->domain && strcmp(np->domain, "ai.onnx")))
		return check_node(file, n, np->domain, opset, err);
	n->attrs = xcalloc(np->n_attribute + 1, sizeof(*n->attrs));
	for (size_t a = 0; a < np->n_attribute; a++) {
		n->n_attr = a + 1;
		int rc = copy_attr(file, n, opset, np->attribute[a], &n->attrs[a], err);
		if (rc)
			return rc;
	}
	return check_node(file, n, np->domain, opset, err);
}

/* Kahn's algorithm; nodes in the file's order break ties (stable). */
static int topo_sort(struct vpa_onnx_model *m, const int *producer, struct vpa_err *err)
{
	size_t nn = m->n_nodes;
	int *indeg = xcalloc(nn + 1, sizeof(int));
	int *order = xmalloc((nn + 1) * sizeof(int));
	int *done = xcalloc(nn + 1, sizeof(int));
	size_t k = 0;
	int rc = 0;
	for (size_t i = 0; i < nn; i++)
		for (size_t j = 0; j < m->nodes[i].n_in; j++)
			if (m->nodes[i].in[j] >= 0 && producer[m->nodes[i].in[j]] >= 0)
				indeg[i]++;
	/* O(n^2) in the worst case but simple; graphs have thousands of nodes at most. */
	while (k < nn) {
		size_t before = k;
		for (size_t i = 0; i < nn; i++) {
			if (done[i] || indeg[i])
				continue;
			done[i] = 1;
			order[k++] = (int)i;
			for (size_t o = 0; o < m->nodes[i].n_out; o++) {
				int v = m->nodes[i].out[o];
				if (v < 0)
					continue;
				for (size_t c = 0; c < nn; c++)
					for (size_t j = 0; j < m->nodes[c].n_in; j++)
						if (m->nodes[c].in[j] == v)
							indeg[c]--;
			}
		}
		if (k == before) {
			struct vpa_loc loc = {m->name, 0, 0};
			for (size_t i = 0; i < nn; i++)
				if (!done[i]) {
					rc = vpa_fail(err, VPA_EINPUT, &loc,
						      "the graph has a cycle through node '%s' (%s)",
						      m->nodes[i].name, m->nodes[i].op_type);
					break;
				}
			goto out;
		}
	}
	struct ox_node *sorted = xmalloc((nn + 1) * sizeof(*sorted));
	for (size_t i = 0; i < nn; i++)
		sorted[i] = m->nodes[order[i]];
	free(m->nodes);
	m->nodes = sorted;
out:
	free(indeg);
	free(order);
	free(done);
	return rc;
}

static int build(struct vpa_onnx_model *m, const Onnx__ModelProto *mp, const char *dir,
		 int lenient, struct vpa_err *err)
{
	struct vpa_loc loc = {m->name, 0, 0};
	const Onnx__GraphProto *g = mp->graph;
	int *producer = NULL;
	size_t cap = 0;
	int rc = 0;
	if (!g)
		return vpa_fail(err, VPA_EINPUT, &loc, "the model has no graph");
	m->opset = -1;
	int imported = 0;
	for (size_t i = 0; i < mp->n_opset_import; i++) {
		const Onnx__OperatorSetIdProto *o = mp->opset_import[i];
		if (!o->domain || !*o->domain || !strcmp(o->domain, "ai.onnx")) {
			m->opset = o->has_version ? o->version : -1;
			imported = 1;
		}
	}
	if (m->opset < 1 || m->opset > OX_OPSET_MAX) {
		char why[200];
		if (m->opset == -1)
			snprintf(why, sizeof(why),
				 "the model %s (expected an opset_import of domain '' with a "
				 "version %d-%d)", imported ? "imports the default domain without a "
				 "version" : "imports no opset of the default domain", OX_OPSET_MIN,
				 OX_OPSET_MAX);
		else
			snprintf(why, sizeof(why),
				 "opset %lld of the default domain is not supported (supported: %d-%d; "
				 "re-export with opset_version=%d)", (long long)m->opset, OX_OPSET_MIN,
				 OX_OPSET_MAX, OX_OPSET_MAX);
		if (!lenient)
			return vpa_fail(err, VPA_EINPUT, &loc, "%s", why);
		m->unsupported = xstrdup(why);
	}
	{
		struct vpa_buf p;
		vpa_buf_init(&p);
		vpa_buf_printf(&p, "%s%s%s", mp->producer_name ? mp->producer_name : "",
			       mp->producer_version && *mp->producer_version ? " " : "",
			       mp->producer_version ? mp->producer_version : "");
		m->producer = xstrdup(p.len ? p.data : "");
		vpa_buf_release(&p);
	}
	/* Initializers, then graph inputs that are not initializers. */
	for (size_t i = 0; i < g->n_initializer; i++) {
		const Onnx__TensorProto *tp = g->initializer[i];
		const char *name = tp->name ? tp->name : "";
		if (!*name)
			return vpa_fail(err, VPA_EINPUT, &loc, "initializer %zu has no name", i);
		if (find_value(m, name) >= 0)
			return vpa_fail(err, VPA_EINPUT, &loc, "initializer '%s' given twice", name);
		int id = add_value(m, name, OX_V_INIT, &cap);
		vpa_strmap_put(&m->names, m->values[id].name, (uint32_t)id, NULL);
		if ((rc = ox_tensor_from_proto(m->name, name, tp, dir, &m->values[id].init, err)))
			return rc;
		char what[300];
		snprintf(what, sizeof(what), "initializer '%.200s'", name);
		if ((rc = ox_tensor_check_finite(m->name, what, &m->values[id].init, err)))
			return rc;
		m->n_params += vpa_onnx_numel(&m->values[id].init);
	}
	m->input_ids = xmalloc((g->n_input + 1) * sizeof(int));
	m->input_info = xmalloc((g->n_input + 1) * sizeof(*m->input_info));
	for (size_t i = 0; i < g->n_input; i++) {
		const char *name = g->input[i]->name ? g->input[i]->name : "";
		int id = find_value(m, name);
		if (id >= 0 && m->values[id].kind == OX_V_INIT)
			continue;
		if (id >= 0 || !*name)
			return vpa_fail(err, VPA_EINPUT, &loc, "graph input '%s' %s", name,
					*name ? "given twice" : "has no name");
		if ((rc = tensor_typed(m, "input", g->input[i], lenient, err)))
			return rc;
		id = add_value(m, name, OX_V_INPUT, &cap);
		vpa_strmap_put(&m->names, m->values[id].name, (uint32_t)id, NULL);
		m->input_ids[m->n_inputs] = id;
		value_info(m, g->input[i], &m->input_info[m->n_inputs]);
		m->n_inputs++;
	}
	/* Nodes: outputs first (a node may be listed before its producers). */
	m->nodes = xcalloc(g->n_node + 1, sizeof(*m->nodes));
	m->n_nodes = g->n_node;
	for (size_t i = 0; i < g->n_node; i++) {
		const Onnx__NodeProto *np = g->node[i];
		struct ox_node *n = &m->nodes[i];
		char nm[32];
		snprintf(nm, sizeof(nm), "#%zu", i);
		n->name = xstrdup(np->name && *np->name ? np->name : nm);
		n->op_type = xstrdup(np->op_type ? np->op_type : "");
		n->n_in = np->n_input;
		n->n_out = np->n_output;
		n->in = xmalloc((np->n_input + 1) * sizeof(int));
		n->out = xmalloc((np->n_output + 1) * sizeof(int));
		for (size_t o = 0; o < np->n_output; o++) {
			const char *name = np->output[o] ? np->output[o] : "";
			n->out[o] = -1;
			if (!*name)
				continue;
			if (find_value(m, name) >= 0)
				return vpa_fail(err, VPA_EINPUT, &loc,
						"value '%s' is produced twice (again by node '%s')", name,
						n->name);
			int id = add_value(m, name, OX_V_NODE, &cap);
			vpa_strmap_put(&m->names, m->values[id].name, (uint32_t)id, NULL);
			n->out[o] = id;
		}
	}
	producer = xmalloc((m->n_values + 1) * sizeof(int));
	for (size_t v = 0; v < m->n_values; v++)
		producer[v] = -1;
	for (size_t i = 0; i < m->n_nodes; i++)
		for (size_t o = 0; o < m->nodes[i].n_out; o++)
			if (m->nodes[i].out[o] >= 0)
				producer[m->nodes[i].out[o]] = (int)i;
	m->runnable = m->unsupported == NULL;
	for (size_t i = 0; i < g->n_node; i++) {
		const Onnx__NodeProto *np = g->node[i];
		struct ox_node *n = &m->nodes[i];
		for (size_t j = 0; j < np->n_input; j++) {
			const char *name = np->input[j] ? np->input[j] : "";
			n->in[j] = *name ? find_value(m, name) : -1;
			if (*name && n->in[j] < 0) {
				rc = vpa_fail(err, VPA_EINPUT, &loc,
					      "node '%s' (%s): input '%s' is not a graph input, an "
					      "initializer or the output of a node", n->name, n->op_type,
					      name);
				goto out;
			}
		}
		struct vpa_err e2;
		vpa_err_init(&e2);
		if (setup_node(m->name, n, np, m->opset, lenient ? &e2 : err)) {
			if (!lenient) {
				rc = err->status;
				goto out;
			}
			/* Keep the reason without the "file: node ... :" prefix. */
			const char *r = strstr(e2.msg, "): ");
			n->unsupported = xstrdup(r ? r + 3 : e2.msg);
			m->runnable = 0;
		}
	}
	if ((rc = topo_sort(m, producer, err)))
		goto out;
	for (size_t i = 0; i < m->n_nodes; i++)
		for (size_t j = 0; j < m->nodes[i].n_in; j++)
			if (m->nodes[i].in[j] >= 0) {
				struct ox_value *v = &m->values[m->nodes[i].in[j]];
				v->last_use = (int)i;
				if (ox_reads_data(&m->nodes[i]))
					v->last_data = (int)i;
			}
	m->output_ids = xmalloc((g->n_output + 1) * sizeof(int));
	m->output_info = xmalloc((g->n_output + 1) * sizeof(*m->output_info));
	for (size_t i = 0; i < g->n_output; i++) {
		const char *name = g->output[i]->name ? g->output[i]->name : "";
		int id = find_value(m, name);
		if (id < 0) {
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "graph output '%s' is not produced by the graph", name);
			goto out;
		}
		if ((rc = tensor_typed(m, "output", g->output[i], lenient, err)))
			goto out;
		m->values[id].is_output = 1;
		m->output_ids[i] = id;
		value_info(m, g->output[i], &m->output_info[i]);
		m->n_outputs++;
	}
	if (m->unsupported)
		m->runnable = 0;
out:
	free(producer);
	return rc;
}

/*
 * libprotobuf-c unpacks nested messages recursively, a few KB of stack per
 * level: a crafted chain Graph > Node > Attribute(g) > Graph ... of 4,000
 * levels (126 KB) overflowed the 8 MB stack.  So the wire format is walked
 * first, with the message descriptors telling which length-delimited fields
 * are messages, and a nesting deeper than VPA_ONNX_MAX_NESTING is refused.
 * The walk recurses at most that deep and reads each byte once.  Bytes it
 * cannot parse are left to the unpacker, which refuses them as corrupt (a
 * corrupt tail cannot hide a deeper chain: the unpacker stops there too).
 * Returns 1 and *where (the byte offset of the message beyond the limit)
 * when too deep, else 0.
 */
static int read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 70 && *p < end; shift += 7) {
		uint8_t c = *(*p)++;
		if (shift < 64)
			*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return 1;
	}
	return 0;
}

static int too_deep(const ProtobufCMessageDescriptor *desc, const uint8_t *base,
		    const uint8_t *p, const uint8_t *end, int depth, size_t *where)
{
	if (depth > VPA_ONNX_MAX_NESTING) {
		*where = (size_t)(p - base);
		return 1;
	}
	while (p < end) {
		uint64_t key, v;
		if (!read_varint(&p, end, &key))
			return 0;
		switch (key & 7) {
		case 0:
			if (!read_varint(&p, end, &v))
				return 0;
			break;
		case 1:
		case 5: {
			size_t n = (key & 7) == 1 ? 8 : 4;
			if ((size_t)(end - p) < n)
				return 0;
			p += n;
			break;
		}
		case 2: {
			if (!read_varint(&p, end, &v) || v > (uint64_t)(end - p))
				return 0;
			const ProtobufCFieldDescriptor *f =
				key >> 3 <= UINT32_MAX
					? protobuf_c_message_descriptor_get_field(desc, (unsigned)(key >> 3))
					: NULL;
			if (f && f->type == PROTOBUF_C_TYPE_MESSAGE &&
			    too_deep(f->descriptor, base, p, p + v, depth + 1, where))
				return 1;
			p += v;
			break;
		}
		default: /* groups and invalid wire types: the unpacker refuses them */
			return 0;
		}
	}
	return 0;
}

int vpa_onnx_load_mem(const char *name, const void *buf, size_t len, const char *dir,
		      const struct vpa_onnx_load_opts *opts, struct vpa_onnx_model **out,
		      struct vpa_err *err)
{
	struct vpa_loc loc = {name, 0, 0};
	*out = NULL;
	size_t where;
	if (too_deep(&onnx__model_proto__descriptor, buf, buf, (const uint8_t *)buf + len, 1, &where))
		return vpa_fail(err, VPA_EINPUT, &loc,
				"protobuf messages nested more than %d levels deep (at byte %zu; "
				"at most %d are accepted)", VPA_ONNX_MAX_NESTING, where,
				VPA_ONNX_MAX_NESTING);
	Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, buf);
	if (!mp)
		return vpa_fail(err, VPA_EINPUT, &loc,
				"not a valid ONNX model (truncated or corrupt protobuf)");
	struct vpa_onnx_model *m = xcalloc(1, sizeof(*m));
	m->cache = ox_pool_cache_new();
	if (!opts || !opts->no_plan)
		m->plans = ox_plan_cache_new();
	m->name = xstrdup(name);
	vpa_strmap_init(&m->names);
	int rc = build(m, mp, dir, opts ? opts->lenient : 0, err);
	onnx__model_proto__free_unpacked(mp, NULL);
	if (rc) {
		vpa_onnx_free(m);
		return rc;
	}
	if (!opts || !opts->no_fuse)
		ox_fuse(m);
	m->wino = ox_wino_cache_new(m->n_values); /* after the fusions: their folded weights too */
	*out = m;
	return 0;
}

int vpa_onnx_load(const char *path, const struct vpa_onnx_load_opts *opts,
		  struct vpa_onnx_model **out, struct vpa_err *err)
{
	char *data;
	size_t len;
	*out = NULL;
	int rc = vpa_read_file(path, &data, &len, err);
	if (rc)
		return rc;
	char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		strcpy(dir, ".");
	rc = vpa_onnx_load_mem(path, data, len, dir, opts, out, err);
	free(dir);
	free(data);
	return rc;
}

static void free_attr(struct ox_attr *a)
{
	free(a->name);
	free(a->s);
	free(a->ints);
	free(a->floats);
	for (size_t i = 0; a->strings && i < a->n; i++)
		free(a->strings[i]);
	free(a->strings);
	vpa_onnx_tensor_release(&a->t);
}

void vpa_onnx_free(struct vpa_onnx_model *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n_nodes; i++) {
		struct ox_node *n = &m->nodes[i];
		free(n->name);
		free(n->op_type);
		free(n->unsupported);
		free(n->in);
		free(n->out);
		for (size_t a = 0; a < n->n_attr; a++)
			free_attr(&n->attrs[a]);
		free(n->attrs);
	}
	free(m->nodes);
	for (size_t v = 0; v < m->n_values; v++) {
		free(m->values[v].name);
		vpa_onnx_tensor_release(&m->values[v].init);
	}
	free(m->values);
	for (size_t i = 0; i < m->n_strings; i++)
		free(m->strings[i]);
	free(m->strings);
	free(m->input_ids);
	free(m->output_ids);
	free(m->input_info);
	free(m->output_info);
	free(m->producer);
	free(m->unsupported);
	free(m->name);
	vpa_strmap_release(&m->names);
	ox_pool_cache_free(m->cache);
	ox_plan_cache_free(m->plans);
	ox_wino_cache_free(m->wino);
	ox_fuse_free(m->fnodes, m->n_fnodes);
	free(m->gone);
	free(m->f_last_use);
	free(m->f_last_data);
	free(m);
}

/* ------------------------------------------------------------ introspection */

int64_t vpa_onnx_opset(const struct vpa_onnx_model *m) { return m->opset; }
const char *vpa_onnx_producer(const struct vpa_onnx_model *m) { return m->producer; }
size_t vpa_onnx_n_inputs(const struct vpa_onnx_model *m) { return m->n_inputs; }
size_t vpa_onnx_n_outputs(const struct vpa_onnx_model *m) { return m->n_outputs; }
const struct vpa_onnx_value_info *vpa_onnx_input(const struct vpa_onnx_model *m, size_t i)
{
	return &m->input_info[i];
}
const struct vpa_onnx_value_info *vpa_onnx_output(const struct vpa_onnx_model *m, size_t i)
{
	return &m->output_info[i];
}
size_t vpa_onnx_n_nodes(const struct vpa_onnx_model *m) { return m->n_nodes; }
const char *vpa_onnx_node_op(const struct vpa_onnx_model *m, size_t i)
{
	return m->nodes[i].op_type;
}
const char *vpa_onnx_node_name(const struct vpa_onnx_model *m, size_t i)
{
	return m->nodes[i].name;
}
const char *vpa_onnx_node_unsupported(const struct vpa_onnx_model *m, size_t i)
{
	return m->nodes[i].unsupported ? m->nodes[i].unsupported : m->unsupported;
}
uint64_t vpa_onnx_n_params(const struct vpa_onnx_model *m) { return m->n_params; }
size_t vpa_onnx_n_fused(const struct vpa_onnx_model *m) { return m->n_fused; }
size_t vpa_onnx_n_bn_folded(const struct vpa_onnx_model *m) { return m->n_bn_folded; }
int vpa_onnx_has_value(const struct vpa_onnx_model *m, const char *name)
{
	return find_value(m, name) >= 0;
}
