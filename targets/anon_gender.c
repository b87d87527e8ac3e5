/*
 * targets/anon_gender.c - the name of an anonymised_speech target's trials
 * list, for the per-gender records of attacks/linkage_gender.c (contract in
 * targets/anon.h).
 */
#include "targets/anon.h"

#include <stdlib.h>
#include <string.h>

/* The name path gives (into *b, length returned): see vpa_anon_trials_name. */
static size_t stem(const char *p, const char **b)
{
	size_t n = strlen(p);
	while (n > 1 && p[n - 1] == '/')
		n--;
	size_t s = n;
	while (s > 0 && p[s - 1] != '/')
		s--;
	if (n - s == 6 && !strncmp(p + s, "trials", 6) && s > 1) {
		/* a file named `trials`: its folder's name */
		size_t e = s - 1;
		while (e > 0 && p[e - 1] == '/')
			e--;
		size_t s2 = e;
		while (s2 > 0 && p[s2 - 1] != '/')
			s2--;
		if (e > s2 && !(e - s2 == 1 && p[s2] == '.') &&
		    !(e - s2 == 2 && !strncmp(p + s2, "..", 2)))
			s = s2, n = e;
	}
	/* a list already named after one gender (VoicePrivacy trials_f) gives its stem */
	if (n - s > 2 && p[n - 2] == '_' && (p[n - 1] == 'f' || p[n - 1] == 'm'))
		n -= 2;
	*b = p + s;
	return n - s;
}

char *vpa_anon_trials_name(const struct vpa_anon_opts *o)
{
	int audio = o->source && !strcmp(o->source, "audio");
	/* the trials list(s) as written: import.trials (a path), audio.trials
	   (a path or a list), else audio.trial when it names several folders */
	const struct vpa_strs *au = audio ? &o->audio.trials : NULL;
	if (au && !au->n && o->audio.trial.n > 1)
		au = &o->audio.trial;
	const char *one = audio ? (au && au->n == 1 && !au->seq ? au->v[0] : NULL) : o->import.trials;
	const struct vpa_strs *many = au && (au->seq || au->n > 1) ? au : NULL;
	const char *b = NULL;
	size_t n = 0;
	if (one) {
		n = stem(one, &b);
	} else if (many) {
		for (size_t i = 0; i < many->n; i++) {
			const char *bi;
			size_t ni = stem(many->v[i], &bi);
			if (!b) {
				b = bi, n = ni;
				continue;
			}
			size_t c = 0;
			while (c < n && c < ni && b[c] == bi[c])
				c++;
			n = c;
		}
		while (n > 0 && b[n - 1] == '_')
			n--;
	}
	if (!b || !n) {
		b = "trials";
		n = 6;
	}
	char *s = xmalloc(n + 1);
	memcpy(s, b, n);
	s[n] = 0;
	return s;
}
