/* tests/unit/test_anon.c - audio/anon.h: McAdams against the NumPy goldens,
 * warping, YIN pitch and rho_F0 on synthetic signals, WER on hand-counted
 * alignments. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audio/anon.h"
#include "tests/unit/harness.h"

#define GOLD "tests/golden/anon/"

/* McAdams: every golden case of gen_mcadams.py, sample by sample.  The
 * int16 truncation of two float computations may differ by one step where a
 * value lies near an integer; the tolerance is 2 steps and nearly all must be
 * exact. */
static void test_mcadams_golden(void)
{
	FILE *f = fopen(GOLD "cases.txt", "r");
	CHECK(f != NULL);
	if (!f)
		return;
	char name[64], in[256];
	double alpha, win, sh;
	int order, ncase = 0;
	while (fscanf(f, "%63s %255s %lf %lf %lf %d", name, in, &alpha, &win, &sh, &order) == 6) {
		struct vpa_err err;
		vpa_err_init(&err);
		struct vpa_wave x, g;
		vpa_wave_init(&x);
		vpa_wave_init(&g);
		char gp[512];
		snprintf(gp, sizeof gp, GOLD "%s.wav", name);
		CHECK(vpa_audio_read(in, -1, &x, &err) == 0);
		CHECK(vpa_audio_read(gp, -1, &g, &err) == 0);
		struct vpa_mcadams_opts o;
		vpa_mcadams_opts_init(&o);
		o.alpha = alpha;
		o.win_ms = win;
		o.shift_ms = sh;
		o.lp_order = order;
		float *y = NULL;
		CHECK(vpa_mcadams(x.x, x.n, x.rate, &o, &y, &err) == 0);
		CHECK(g.n == x.n);
		if (y && g.n == x.n) {
			size_t off = 0;
			double md = 0;
			for (size_t i = 0; i < x.n; i++) {
				double d = fabs(y[i] - g.x[i]);
				if (d > md)
					md = d;
				off += d != 0;
			}
			printf("#   %s: max |diff| %g, %zu of %zu samples differ\n", name, md, off, x.n);
			CHECK(md <= 2);
			CHECK(off * 100 <= x.n);
		}
		free(y);
		vpa_wave_release(&x);
		vpa_wave_release(&g);
		ncase++;
	}
	fclose(f);
	CHECK(ncase == 4);
}

static void test_mcadams_bad(void)
{
	struct vpa_err err;
	struct vpa_mcadams_opts o;
	vpa_mcadams_opts_init(&o);
	float x[100] = {0};
	float *y = NULL;
	vpa_err_init(&err);
	CHECK(vpa_mcadams(x, 100, 16000, &o, &y, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "signal of 100 samples is shorter than one 320-sample frame");
	CHECK(y == NULL);
	o.alpha = 3;
	vpa_err_init(&err);
	CHECK(vpa_mcadams(x, 100, 16000, &o, &y, &err) == VPA_EINPUT);
	CHECK_STR(err.msg, "McAdams alpha must be in (0, 2], got 3");
}

int main(void)
{
	RUN(test_mcadams_golden);
	RUN(test_mcadams_bad);
	return DONE();
}
