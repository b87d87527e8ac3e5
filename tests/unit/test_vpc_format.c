/*
 * tests/unit/test_vpc_format.c - the VoicePrivacy text formats
 * (reports/vpc_format.c) of a hand-made results DOM, compared with texts
 * written by hand from the layouts of the VPC 2022 results.txt
 * (baseline/RESULTS_baseline_tts_joint_hifigan of the VPC 2022 repository)
 * and the VPC 2024 result_for_rank (results/result_for_rank_mcadams of the
 * VPC 2024 repository).
 */
#include "harness.h"

#include "base/json.h"
#include "reports/report.h"

#include <stdlib.h>

static const char results_text[] =
	"{\"targets\": ["
	" {\"id\": \"libri\", \"kind\": \"anonymised_speech\", \"info\": {\"audio\": {"
	"   \"wer_orig\": {\"wer\": 0.05251, \"ref_words\": 39783, \"ins\": 172, \"del\": 250, "
	"\"sub\": 1667},"
	"   \"wer_anon\": {\"wer\": 0.1, \"ref_words\": 100, \"ins\": 1, \"del\": 2, \"sub\": 7}}}},"
	" {\"id\": \"sc\", \"kind\": \"scores\"}],"
	" \"attacks\": ["
	" {\"id\": \"dev\", \"kind\": \"linkage\", \"target\": \"libri\"},"
	" {\"id\": \"ev\", \"kind\": \"evaluate\", \"target\": \"sc\"}],"
	" \"records\": ["
	" {\"attack\": \"ev\", \"sub\": \"baseline\", \"metrics\": {\"eer\": 0.5}},"
	" {\"attack\": \"dev\", \"sub\": \"baseline\", \"metrics\": {\"eer\": 0.086, \"n_target\": 20, "
	"\"eer_sweep\": 0.08665, \"cllr\": 42.857, \"cllr_min\": 0.304, \"linkability\": 0.801426,"
	" \"zebra\": {\"dece\": 0.492, \"log10_lr_worst\": 3.829, \"category\": \"C\"}, \"gvd\": 0}},"
	" {\"attack\": \"dev\", \"sub\": \"baseline/trials_f\", \"trials\": \"trials_f\", "
	"\"gender\": \"f\", \"metrics\": {\"eer\": 0.10511, \"eer_sweep\": 0.5, \"cllr\": 1,"
	" \"cllr_min\": 0.9996, \"linkability\": null, \"zebra\": {\"dece\": 0.0002, "
	"\"log10_lr_worst\": 0.145, \"category\": \"A\"}, \"gvd\": 0}},"
	" {\"attack\": \"dev\", \"sub\": \"lazy_informed/trials_f\", \"trials\": \"trials_f\", "
	"\"gender\": \"f\", \"metrics\": {\"eer\": 0.3, \"eer_sweep\": 0.2966, \"cllr\": 20.081,"
	" \"cllr_min\": 0.806, \"linkability\": 0.347361, \"zebra\": {\"dece\": 0, "
	"\"log10_lr_worst\": 2.502, \"category\": \"C\"}, \"gvd\": -5.85031}},"
	" {\"attack\": \"dev\", \"sub\": \"semi_informed\", \"metrics\": {\"eer\": 0.12910, "
	"\"eer_sweep\": 0.13, \"cllr\": 5.327, \"cllr_min\": 0.627, \"linkability\": 0.504589,"
	" \"zebra\": {\"dece\": 0.258, \"log10_lr_worst\": 1.825, \"category\": \"B\"}}},"
	/* issue 25 item 4b: 14 mated scores make one histogram bin, where the
	 * VoicePrivacy linkability is 0 whatever the scores: not printed as 0 */
	" {\"attack\": \"dev\", \"sub\": \"informed\", \"metrics\": {\"eer\": 0.02, "
	"\"n_target\": 14, \"eer_sweep\": 0.02, \"cllr\": 0.5, \"cllr_min\": 0.1, \"linkability\": 0,"
	" \"zebra\": {\"dece\": 0.6, \"log10_lr_worst\": 2, \"category\": \"C\"}}}"
	"]}";

static const char rank_expect[] =
	"---- ASV_eval results ----\n"
	"  dataset split gender enrollment    trial     EER\n"
	"0   libri   dev    all   original original   8.600\n"
	"1   libri   dev      f   original original  10.511\n"
	"2   libri   dev      f       anon     anon  30.000\n"
	"\n"
	"---- ASR results ----\n"
	"  dataset split      asr     WER\n"
	"0   libri trial original   5.251\n"
	"1   libri trial     anon  10.000\n"
	"\n"
	"---- ASV_eval^anon results ----\n"
	"  dataset split gender enrollment trial     EER\n"
	"0   libri   dev    all       anon  anon  12.910\n"
	"1   libri   dev    all   informed  anon   2.000\n"
	"\n";

static const char vpc2022_expect[] =
	"ASV-dev_enrolls-dev_trials\n"
	"  EER: 8.665%\n"
	"  Cllr (min/act): 0.304/42.857\n"
	"  ROCCH-EER: 8.600%\n"
	"  linkability: 0.801426\n"
	"  Population: 0.492 bit\n"
	"  Individual: 3.829 (C)\n"
	"ASV-dev_enrolls-dev_trials_f\n"
	"  EER: 50%\n"
	"  Cllr (min/act): 1.000/1.000\n"
	"  ROCCH-EER: 10.511%\n"
	"  linkability: undefined\n"
	"  Population: 2e-04 bit\n"
	"  Individual: 0.145 (A)\n"
	"ASV-dev_enrolls_anon-dev_trials_f_anon\n"
	"  EER: 29.66%\n"
	"  Cllr (min/act): 0.806/20.081\n"
	"  ROCCH-EER: 30.000%\n"
	"  linkability: 0.347361\n"
	"  Population: 0.000 bit\n"
	"  Individual: 2.502 (C)\n"
	"ASV_anon-dev_enrolls_anon-dev_trials_anon\n"
	"  EER: 13%\n"
	"  Cllr (min/act): 0.627/5.327\n"
	"  ROCCH-EER: 12.910%\n"
	"  linkability: 0.504589\n"
	"  Population: 0.258 bit\n"
	"  Individual: 1.825 (B)\n"
	"ASV_anon-dev_enrolls_informed-dev_trials_anon\n"
	"  EER: 2%\n"
	"  Cllr (min/act): 0.100/0.500\n"
	"  ROCCH-EER: 2.000%\n"
	"  linkability: not estimated (14 mated scores, fewer than 20)\n"
	"  Population: 0.600 bit\n"
	"  Individual: 2.000 (C)\n"
	"ASR-libri_trials\n"
	"  %WER 5.25 [ 2089 / 39783, 172 ins, 250 del, 1667 sub ]\n"
	"ASR-libri_trials_anon\n"
	"  %WER 10.00 [ 10 / 100, 1 ins, 2 del, 7 sub ]\n"
	"dev_trials_f\n"
	"  Gain of voice distinctiveness : -5.850310\n";

static void show_diff(const char *got, const char *want)
{
	if (strcmp(got, want))
		printf("# got:\n%s# expected:\n%s", got, want);
}

static void test_formats(void)
{
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_json *r = vpa_json_parse("r.json", results_text, strlen(results_text), &err);
	CHECK(r != NULL);
	if (!r) {
		printf("# %s\n", err.msg);
		return;
	}
	struct vpa_buf rank, v22;
	vpa_buf_init(&rank);
	vpa_buf_init(&v22);
	CHECK(vpa_report_vpc(r, &rank, &v22) == 1);
	CHECK(!strcmp(vpa_buf_str(&rank), rank_expect));
	show_diff(vpa_buf_str(&rank), rank_expect);
	CHECK(!strcmp(vpa_buf_str(&v22), vpc2022_expect));
	show_diff(vpa_buf_str(&v22), vpc2022_expect);
	vpa_buf_release(&rank);
	vpa_buf_release(&v22);
	vpa_json_free(r);
}

/* No linkage record of anonymised speech: nothing to write. */
static void test_none(void)
{
	static const char t[] = "{\"targets\": [{\"id\": \"sc\", \"kind\": \"scores\"}], "
				"\"attacks\": [{\"id\": \"ev\", \"kind\": \"evaluate\", \"target\": "
				"\"sc\"}], \"records\": [{\"attack\": \"ev\", \"sub\": \"baseline\", "
				"\"metrics\": {\"eer\": 0.5}}]}";
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_json *r = vpa_json_parse("r.json", t, strlen(t), &err);
	CHECK(r != NULL);
	struct vpa_buf a, b;
	vpa_buf_init(&a);
	vpa_buf_init(&b);
	CHECK(vpa_report_vpc(r, &a, &b) == 0);
	CHECK(a.len == 0 && b.len == 0);
	vpa_buf_release(&a);
	vpa_buf_release(&b);
	vpa_json_free(r);
}

int main(void)
{
	RUN(test_formats);
	RUN(test_none);
	return DONE();
}
