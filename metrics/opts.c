/*
 * metrics/opts.c - the defaults of struct vpa_metrics_opts, which every
 * file that takes the options (all.c, reliability.c, reversal.c) falls back
 * on when given NULL.  Alone at the bottom so that all.c calls
 * reliability.c and not the other way round as well.
 */
#include "metrics.h"

void vpa_metrics_opts_init(struct vpa_metrics_opts *o)
{
	o->omega = 1;
	o->bins = 0;
	o->p_target = 0.01;
	o->c_miss = 1;
	o->c_fa = 1;
	o->threads = 1;
}
