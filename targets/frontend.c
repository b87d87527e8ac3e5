/*
 * targets/frontend.c - a scenario's list of Kaldi front-end options
 * ('--name=value', as `vpaudit features`) into struct vpa_feat_opts: the
 * `options:` of an ONNX extractor (targets/anon_onnx.c) and the
 * `feature_options:` of an Indicator set given as audio (targets/fl_am.c).
 */
#include "targets/targets.h"
#include "audio/audio.h"

#include <stdlib.h>
#include <string.h>

int vpa_target_frontend_strs(const char *file, const struct vpa_strs *l, const char *example,
			     const char *const *reserved, struct vpa_feat_opts *fo,
			     struct vpa_err *err)
{
	for (size_t i = 0; l && i < l->n; i++) {
		const char *v = l->v[i];
		struct vpa_loc loc = vpa_mark_loc(file, l->marks[i]);
		if (strncmp(v, "--", 2) || !v[2])
			return vpa_fail(err, VPA_EINPUT, &loc,
					"expected a front-end option '--name=value' (e.g. %s)", example);
		char name[64];
		const char *eq = strchr(v + 2, '=');
		size_t nl = eq ? (size_t)(eq - v - 2) : strlen(v + 2);
		if (nl >= sizeof(name))
			return vpa_fail(err, VPA_EINPUT, &loc, "unknown option '%s'", v);
		memcpy(name, v + 2, nl);
		name[nl] = 0;
		for (size_t k = 0; reserved && reserved[k]; k++)
			if (!strcmp(name, reserved[k]))
				return vpa_fail(err, VPA_EINPUT, &loc,
						"'--%s' is a key of the extractor: write `%s: ...` next "
						"to `model`", name, name);
		struct vpa_err e2;
		vpa_err_init(&e2);
		if (vpa_feat_opts_set(fo, name, eq ? eq + 1 : "true", &e2))
			return vpa_fail(err, VPA_EINPUT, &loc, "%s", e2.msg);
	}
	return 0;
}
