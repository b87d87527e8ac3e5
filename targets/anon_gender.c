/*
 * targets/anon_gender.c - the name of an anonymised_speech target's trials
 * list, for the per-gender records of attacks/linkage_gender.c (contract in
 * targets/anon.h).
 */
#include "targets/anon.h"

#include <stdlib.h>
#include <string.h>

char *vpa_anon_trials_name(const struct vpa_ynode *target_cfg)
{
	const struct vpa_ynode *src = vpa_ymap_get(target_cfg, "source");
	const char *sec = src && !strcmp(src->str, "audio") ? "audio" : "import";
	const struct vpa_ynode *tr = vpa_ymap_get(vpa_ymap_get(target_cfg, sec), "trials");
	const char *p = tr && tr->type == VPA_YSCALAR ? tr->str : "trials";
	const char *b = strrchr(p, '/');
	b = b ? b + 1 : p;
	size_t n = strlen(b);
	/* a list already named after one gender (VoicePrivacy trials_f) gives its stem */
	if (n > 2 && b[n - 2] == '_' && (b[n - 1] == 'f' || b[n - 1] == 'm'))
		n -= 2;
	if (!n) {
		b = "trials";
		n = 6;
	}
	char *s = xmalloc(n + 1);
	memcpy(s, b, n);
	s[n] = 0;
	return s;
}
