/*
 * tests/unit/test_vpc_utility.c - issue 30 item 3: the utility rows of the
 * VoicePrivacy text files (reports/vpc_format.c) from a hand-made results
 * DOM: result_for_rank.txt's "---- SER results ----" first, as VoicePAT's
 * save_result_summary writes it (columns of its evaluate_ser summary:
 * dataset split ser UAR ACC_<label>, percent, 3 decimals, anon before
 * original), the recogniser named under the ASR rows and in the VPC 2022 ASR
 * blocks, and the VPC 2022 pitch-correlation line of local/pitch_correlation.py
 * ("Pitch correlation for DATA: mean=M std=S"); nothing of this without
 * `ser:` / rho_F0 / a recogniser.  Expected texts written by hand.
 */
#include "harness.h"

#include "base/json.h"
#include "reports/report.h"

#include <stdlib.h>
#include <string.h>

static const char results_text[] =
	"{\"targets\": ["
	" {\"id\": \"libri\", \"kind\": \"anonymised_speech\", \"info\": {\"audio\": {"
	"   \"wer_orig\": {\"wer\": 0.05251, \"ref_words\": 39783, \"ins\": 172, \"del\": 250, "
	"\"sub\": 1667, \"recogniser\": {\"name\": \"pocketsphinx\", \"version\": \"5prealpha\", "
	"\"model\": \"en-us\"}},"
	"   \"wer_anon\": {\"wer\": 0.1, \"ref_words\": 100, \"ins\": 1, \"del\": 2, \"sub\": 7, "
	"\"asr\": \"ctc:model.onnx\"},"
	"   \"rho_f0\": 0.77124, \"rho_f0_std\": 0.09126,"
	"   \"ser\": {\"data\": \"data/iemocap_dev/\", \"labels\": [\"ang\", \"hap\", \"neu\", \"sad\"],"
	"     \"uar_orig\": 0.6523, \"uar_anon\": 0.361111,"
	"     \"original\": {\"uar\": 0.6, \"recall\": {\"ang\": 0, \"hap\": 0, \"neu\": 0, \"sad\": 0},"
	"       \"recall_folds\": {\"ang\": 0.7, \"hap\": 0.55, \"neu\": 0.8, \"sad\": 0.559}},"
	"     \"anonymised\": {\"uar\": 0.361111, \"recall\": {\"ang\": 0.5, \"hap\": 0.25, "
	"\"neu\": null, \"sad\": 0.3333333}}}}}}],"
	" \"attacks\": [{\"id\": \"dev\", \"kind\": \"linkage\", \"target\": \"libri\"}],"
	" \"records\": ["
	" {\"attack\": \"dev\", \"sub\": \"semi_informed\", \"metrics\": {\"eer\": 0.12910}}]}";

/* pandas 1.5.3's to_string of VoicePAT's frame with the same values (the
 * groupby/agg/reset_index/sort_values of evaluate_ser.py and run_evaluation.py,
 * run with Debian's python3-pandas on the percentages 100 * x below;
 * tests/golden/ser/gen_vpc_table.py prints it, output in vpc_tables.txt) */
static const char ser_expect[] =
	"---- SER results ----\n"
	"  dataset        split       ser      UAR ACC_ang ACC_hap ACC_neu   ACC_sad\n"
	"                                     mean    mean    mean    mean      mean\n"
	"0   libri  iemocap_dev      anon  36.1111    50.0    25.0     NaN  33.33333\n"
	"1   libri  iemocap_dev  original  65.2300    70.0    55.0    80.0  55.90000\n"
	"\n"
	"---- ASR results ----\n";

static const char asr_expect[] =
	"---- ASR results ----\n"
	"  dataset split      asr     WER\n"
	"0   libri trial original   5.251\n"
	"1   libri trial     anon  10.000\n"
	"\n"
	"ASR recogniser libri original: pocketsphinx 5prealpha (en-us)\n"
	"ASR recogniser libri anon: ctc:model.onnx\n"
	"\n";

static const char v22_expect[] =
	"ASR-libri_trials\n"
	"  %WER 5.25 [ 2089 / 39783, 172 ins, 250 del, 1667 sub ]\n"
	"  recogniser: pocketsphinx 5prealpha (en-us)\n"
	"ASR-libri_trials_anon\n"
	"  %WER 10.00 [ 10 / 100, 1 ins, 2 del, 7 sub ]\n"
	"  recogniser: ctc:model.onnx\n"
	"Pitch correlation for libri_trials: mean=0.7712 std=0.0913\n";

static void test_utility_rows(void)
{
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_json *r = vpa_json_parse("r.json", results_text, strlen(results_text), &err);
	CHECK(r != NULL);
	if (!r)
		return;
	struct vpa_buf rank, v22;
	vpa_buf_init(&rank);
	vpa_buf_init(&v22);
	CHECK(vpa_report_vpc(r, &rank, &v22) == 1);
	const char *rk = vpa_buf_str(&rank), *v = vpa_buf_str(&v22);
	/* the SER block first (VoicePAT writes it before ASV), then the rest */
	CHECK(!strncmp(rk, ser_expect, strlen(ser_expect)));
	CHECK(strstr(rk, asr_expect) != NULL);
	CHECK(strstr(v, v22_expect) != NULL);
	if (strncmp(rk, ser_expect, strlen(ser_expect)) || !strstr(rk, asr_expect) ||
	    !strstr(v, v22_expect))
		printf("# got:\n%s\n# and:\n%s\n", rk, v);
	vpa_buf_release(&rank);
	vpa_buf_release(&v22);
	vpa_json_free(r);
}

/* without ser / rho_F0 / a recogniser: none of these lines */
static void test_absent(void)
{
	static const char t[] =
		"{\"targets\": [{\"id\": \"l\", \"kind\": \"anonymised_speech\", \"info\": {\"audio\": "
		"{\"wer_orig\": {\"wer\": 0.1, \"ref_words\": 10, \"ins\": 0, \"del\": 1, \"sub\": 0}}}}],"
		" \"attacks\": [{\"id\": \"d\", \"kind\": \"linkage\", \"target\": \"l\"}],"
		" \"records\": [{\"attack\": \"d\", \"sub\": \"ignorant\", \"metrics\": {\"eer\": 0.3}}]}";
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_json *r = vpa_json_parse("r.json", t, strlen(t), &err);
	struct vpa_buf a, b;
	vpa_buf_init(&a);
	vpa_buf_init(&b);
	CHECK(vpa_report_vpc(r, &a, &b) == 1);
	CHECK(!strstr(vpa_buf_str(&a), "SER") && !strstr(vpa_buf_str(&a), "recogniser"));
	CHECK(!strstr(vpa_buf_str(&b), "recogniser") && !strstr(vpa_buf_str(&b), "Pitch"));
	CHECK(strstr(vpa_buf_str(&b), "ASR-l_trials\n  %WER 10.00 [ 1 / 10, 0 ins, 1 del, 0 sub ]\n") !=
	      NULL);
	vpa_buf_release(&a);
	vpa_buf_release(&b);
	vpa_json_free(r);
}

int main(void)
{
	RUN(test_utility_rows);
	RUN(test_absent);
	return DONE();
}
