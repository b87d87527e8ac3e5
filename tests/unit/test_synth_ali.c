/*
 * tests/unit/test_synth_ali.c - the phone-name rule and the segments of
 * audio/synth_ali.c on hand-made synthesiser timing, the expected boundaries
 * worked out by hand (raw time / scale x output rate, rounded to a sample).
 */
#include "harness.h"
#include "audio/synth_ali.h"

static void test_names(void)
{
	char o[VPA_PHONE_MAX];
	/* espeak-ng: stress marks and the length mark go, pauses are SIL */
	vpa_synth_phone_name("'aI2", 0, o);
	CHECK_STR(o, "aI2");
	vpa_synth_phone_name(",oU", 0, o);
	CHECK_STR(o, "oU");
	vpa_synth_phone_name("3:", 0, o);
	CHECK_STR(o, "3");
	vpa_synth_phone_name("%@", 0, o);
	CHECK_STR(o, "@");
	vpa_synth_phone_name("r-", 0, o);
	CHECK_STR(o, "r-");
	vpa_synth_phone_name("t#", 0, o);
	CHECK_STR(o, "t#");
	vpa_synth_phone_name("_:", 0, o);
	CHECK_STR(o, "SIL");
	vpa_synth_phone_name("_", 0, o);
	CHECK_STR(o, "SIL");
	vpa_synth_phone_name("'", 0, o);
	CHECK_STR(o, ""); /* a bare mark of -x: nothing */
	/* flite: pau is SIL, the rest as printed (':' is its separator, never in a name) */
	vpa_synth_phone_name("pau", 1, o);
	CHECK_STR(o, "SIL");
	vpa_synth_phone_name("ax", 1, o);
	CHECK_STR(o, "ax");
	vpa_synth_phone_name("pau", 0, o); /* not an espeak-ng pause */
	CHECK_STR(o, "pau");
}

static int seg(const char *raw, int flite, double scale, double rate, size_t n, const char *want)
{
	struct vpa_buf b;
	vpa_buf_init(&b);
	struct vpa_err err;
	vpa_err_init(&err);
	int rc = vpa_synth_segments(raw, flite, scale, rate, n, &b, &err);
	if (want)
		CHECK_STR(rc ? err.msg : vpa_buf_str(&b), want);
	vpa_buf_release(&b);
	return rc;
}

static void test_flite(void)
{
	/* ends 0.184 0.236 0.270 0.400 0.500 0.700 s, scale 1.25, 16 kHz: starts at
	 * 0.184 / 1.25 x 16000 = 2355.2 -> 2355, 3020.8 -> 3021, 3456, 5120, 6400;
	 * the last pau would end at 8960 but the audio has 8000 samples (kal16's
	 * cut final pause): it ends there */
	seg("pau:0.184 dh:0.236 ax:0.270 pau:0.400 k:0.500 pau:0.700 \n", 1, 1.25, 16000, 8000,
	    "SIL 0 2355\ndh 2355 3021\nax 3021 3456\nSIL 3456 5120\nk 5120 6400\nSIL 6400 8000\n");
	/* audio longer than the segments: the last SIL goes on to its end */
	seg("pau:0.1 k:0.2 pau:0.3\n", 1, 1, 16000, 6000, "SIL 0 1600\nk 1600 3200\nSIL 3200 6000\n");
	/* errors */
	CHECK(seg("pau:0.5 k:0.3\n", 1, 1, 16000, 16000, NULL) != 0);
	CHECK(seg("pau:0.6 k:0.9 pau:1.0\n", 1, 1, 16000, 8000, NULL) != 0); /* k after the end */
	CHECK(seg("\n", 1, 1, 16000, 8000, NULL) != 0);
}

static void test_espeak(void)
{
	/* starts 12 62 165 ms at 22050 Hz, scale 1: 264.6 -> 265, 1367.1 -> 1367,
	 * 3638.25 -> 3638; "_:" at 300 ms -> 6615, "_" at 308 ms merged into it */
	seg("D 12\n@2 62\nk 165\n_: 300\n_ 308\nEND 7000 22050\n", 0, 1, 22050, 7000,
	    "SIL 0 265\nD 265 1367\n@2 1367 3638\nk 3638 6615\nSIL 6615 7000\n");
	/* a first phone at 0 ms: no empty leading SIL; scale 0.9 to 16 kHz:
	 * 100 / 0.9 x 16 = 1777.8 -> 1778 */
	seg("h 0\ni: 100\n_: 200\nEND 4410 22050\n", 0, 0.9, 16000, 3200,
	    "h 0 1778\ni 1778 3200\n");
	/* zero-length phones are kept (the synthesiser said they are there) */
	seg("a 0\nb 10\nc 10\n", 0, 1, 1000, 20, "a 0 10\nb 10 10\nc 10 20\n");
	CHECK(seg("a 5\nb 3\n", 0, 1, 1000, 20, NULL) != 0); /* backwards */
}

int main(void)
{
	RUN(test_names);
	RUN(test_flite);
	RUN(test_espeak);
	return DONE();
}
