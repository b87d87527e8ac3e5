/*
 * cli/cmd_classify.c - `vpaudit classify DATA --onnx M --labels MAP`: an
 * utterance classifier (speech emotion recognition as in the VoicePrivacy
 * Challenge 2024, or any other) on a labelled data directory, and on its
 * anonymised copy: UAR, accuracy, per-class recall, confusion matrix
 * (embed/classify.h runs the model, metrics/classify.c scores it).
 *
 * Everything is computed before anything is printed, so an error leaves
 * stdout empty.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "embed/classify.h"
#include "metrics/metrics.h"
#include "targets/anon.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vpaudit classify DATA (--onnx MODEL.onnx | --folds FOLDS) --labels MAP [OPTIONS]\n"
		"\n"
		"An utterance classifier (e.g. the VoicePrivacy Challenge's speech emotion\n"
		"recogniser) on a labelled Kaldi data directory: unweighted average recall (UAR,\n"
		"the mean of the per-class recalls, the VPC's SER measure), accuracy, per-class\n"
		"recall and the confusion matrix; with --anon, the same on the anonymised copy\n"
		"of DATA and the change of UAR.  The answer is the argmax of the model's output\n"
		"(the first class on a tie), which must be logits [1, C] or [C], C the number\n"
		"of labels in MAP.\n"
		"\n"
		"DATA    a Kaldi data directory (wav.scp, optional segments and utt2spk)\n"
		"MAP     the label map: one label per line, line k = output k\n"
		"\n"
		"options (--name=value or --name value):\n"
		"  --onnx=MODEL           the classifier (ONNX)\n"
		"  --folds=FILE           per-speaker folds (the VPC protocol): lines\n"
		"                         `SPEAKER MODEL.onnx`; each utterance is classified by\n"
		"                         its speaker's model (utt2spk); the UAR is then the VPC's:\n"
		"                         each speaker's macro recall (sklearn recall_score), averaged\n"
		"  --labels=MAP           the label map (required)\n"
		"  --utt2label=FILE       the true labels, lines `UTT LABEL` (default DATA/utt2emo);\n"
		"                         every utterance of DATA must have one\n"
		"  --anon=DATA2           the anonymised data directory (same utterance ids)\n"
		"  --anon-utt2label=FILE  its labels (default DATA2/utt2emo)\n"
		"  --input-kind=wave|fbank|mfcc  what the model takes (default wave: the\n"
		"                         waveform (1, samples), samples / 32768 as\n"
		"                         torchaudio.load gives; fbank|mfcc: (1, T, F) features)\n"
		"  --cmn=true|false       features: subtract their mean over time (default false)\n"
		"  --sample-frequency=HZ  the rate the model takes (default 16000); other rates\n"
		"                         are resampled\n"
		"  --input=NAME           graph input (default: the only one)\n"
		"  --output=NAME          value read as logits (default: the first graph output)\n"
		"  --json                 one JSON object instead of the text\n"
		"  --threads=N            utterances in parallel (default: online CPUs); the\n"
		"                         results do not depend on it\n"
		"\nfeature options for fbank/mfcc (--name=value; `vpaudit features fbank --help`).\n"
		"\nExit status: 0 ok, 1 bad input, 2 usage.\n");
}

struct cargs {
	struct vpa_cls_opts o;
	const char *data, *onnx, *folds, *labels, *u2l, *anon, *anon_u2l;
	int json;
};

static int takes_value(const char *name)
{
	static const char *const v[] = {"onnx",  "folds",  "labels",     "utt2label",
					"anon",  "anon-utt2label", "input-kind", "cmn",
					"input", "output", "threads",    NULL};
	for (size_t i = 0; v[i]; i++)
		if (!strcmp(name, v[i]))
			return 1;
	return 0;
}

static int parse_args(int argc, char **argv, struct cargs *a)
{
	struct vpa_err err;
	vpa_err_init(&err);
	int kind = VPA_CLS_WAVE;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 1;
		}
		const char *v = NULL;
		if (!strncmp(argv[i], "--input-kind=", 13))
			v = argv[i] + 13;
		else if (!strcmp(argv[i], "--input-kind") && i + 1 < argc)
			v = argv[i + 1];
		if (v) {
			if (!strcmp(v, "wave"))
				kind = VPA_CLS_WAVE;
			else if (!strcmp(v, "fbank"))
				kind = VPA_CLS_FBANK;
			else if (!strcmp(v, "mfcc"))
				kind = VPA_CLS_MFCC;
			else
				return cli_usage_error("classify",
						       "--input-kind must be wave, fbank or mfcc, got '%s'", v);
		}
	}
	vpa_cls_opts_init(&a->o, kind);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	a->o.threads = ncpu > 0 ? (int)(ncpu > 256 ? 256 : ncpu) : 1;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (strncmp(arg, "--", 2) || !arg[2]) {
			if (arg[0] == '-' && arg[1])
				return cli_usage_error("classify", "unknown option '%s'", arg);
			if (a->data)
				return cli_usage_error("classify", "one DATA only, got '%s' and '%s'",
						       a->data, arg);
			a->data = arg;
			continue;
		}
		char name[64];
		const char *eq = strchr(arg + 2, '=');
		size_t nl = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
		if (nl >= sizeof(name))
			return cli_usage_error("classify", "unknown option '%s'", arg);
		memcpy(name, arg + 2, nl);
		name[nl] = 0;
		const char *val;
		if (takes_value(name)) {
			if (eq)
				val = eq + 1;
			else if (i + 1 < argc)
				val = argv[++i];
			else
				return cli_usage_error("classify", "option '--%s' needs a value", name);
		} else {
			val = eq ? eq + 1 : "true";
		}
		if (!strcmp(name, "input-kind"))
			continue; /* done above */
		else if (!strcmp(name, "onnx"))
			a->onnx = val;
		else if (!strcmp(name, "folds"))
			a->folds = val;
		else if (!strcmp(name, "labels"))
			a->labels = val;
		else if (!strcmp(name, "utt2label"))
			a->u2l = val;
		else if (!strcmp(name, "anon"))
			a->anon = val;
		else if (!strcmp(name, "anon-utt2label"))
			a->anon_u2l = val;
		else if (!strcmp(name, "input"))
			a->o.input = val;
		else if (!strcmp(name, "output"))
			a->o.output = val;
		else if (!strcmp(name, "json") || !strcmp(name, "cmn")) {
			if (strcmp(val, "true") && strcmp(val, "false"))
				return cli_usage_error("classify", "--%s must be true or false, got '%s'",
						       name, val);
			*(!strcmp(name, "json") ? &a->json : &a->o.cmn) = !strcmp(val, "true");
		} else if (!strcmp(name, "threads")) {
			unsigned long v;
			if (cli_ulong("--threads", val, 1, 256, &v))
				return 2;
			a->o.threads = (int)v;
		} else if (vpa_feat_opts_set(&a->o.feat, name, val, &err)) {
			return cli_usage_error("classify", "%s", err.msg);
		}
	}
	if (!a->data)
		return cli_usage_error("classify", "missing DATA (a Kaldi data directory)");
	if (!a->onnx == !a->folds)
		return cli_usage_error("classify", "give one of --onnx MODEL and --folds FILE");
	if (!a->labels)
		return cli_usage_error("classify", "missing --labels MAP (one label per line)");
	if (a->anon_u2l && !a->anon)
		return cli_usage_error("classify", "--anon-utt2label needs --anon DATA2");
	return 0;
}

static void run_text(const char *title, const char *data, const struct vpa_cls_run *r,
		     const struct vpa_cls_metrics *m)
{
	size_t w = 5;
	for (size_t c = 0; c < r->C; c++)
		if (strlen(r->labels[c]) > w)
			w = strlen(r->labels[c]);
	printf("%s: %s (%zu utterances)\n", title, data, m->n);
	if (r->group) {
		double u, *cm = xcalloc(r->C, sizeof(double));
		size_t ng;
		struct vpa_err err;
		vpa_err_init(&err);
		if (!vpa_cls_fold_uar(r->truth, r->pred, r->group, r->n, r->C, r->n_groups, &u, cm,
				      &ng, &err))
			printf("  UAR       %.4f (VPC: the mean over %zu speaker folds of each "
			       "fold's macro recall)\n", u, ng);
		free(cm);
		printf("  pooled    %.4f (all utterances, %zu of %zu classes present)\n", m->uar,
		       m->n_present, r->C);
	} else {
		printf("  UAR       %.4f (%zu of %zu classes present)\n", m->uar, m->n_present, r->C);
	}
	printf("  accuracy  %.4f\n", m->accuracy);
	printf("  %-*s %7s %7s\n", (int)w, "class", "recall", "support");
	for (size_t c = 0; c < r->C; c++) {
		if (isnan(m->recall[c]))
			printf("  %-*s %7s %7zu\n", (int)w, r->labels[c], "-", m->support[c]);
		else
			printf("  %-*s %7.4f %7zu\n", (int)w, r->labels[c], m->recall[c],
			       m->support[c]);
	}
	printf("  confusion (rows: true class, columns: answer)\n  %-*s", (int)w, "");
	for (size_t k = 0; k < r->C; k++)
		printf(" %*s", (int)w, r->labels[k]);
	printf("\n");
	for (size_t c = 0; c < r->C; c++) {
		printf("  %-*s", (int)w, r->labels[c]);
		for (size_t k = 0; k < r->C; k++)
			printf(" %*zu", (int)w, m->confusion[c * r->C + k]);
		printf("\n");
	}
}

int cmd_classify(int argc, char **argv)
{
	struct cargs a;
	struct vpa_err err;
	struct vpa_cls_run r[2];
	struct vpa_cls_metrics m[2];
	memset(&a, 0, sizeof(a));
	memset(r, 0, sizeof(r));
	memset(m, 0, sizeof(m));
	vpa_err_init(&err);
	int rc = parse_args(argc, argv, &a);
	if (rc)
		return rc == 1 ? 0 : rc;
	int n_sets = a.anon ? 2 : 1;
	for (int s = 0; s < n_sets && !rc; s++) {
		if (vpa_classify_dir(s ? a.anon : a.data, a.onnx, a.folds, a.labels,
				     s ? a.anon_u2l : a.u2l, &a.o, &r[s], &err) ||
		    vpa_cls_metrics(r[s].truth, r[s].pred, r[s].n, r[s].C, &m[s], &err))
			rc = cli_error(&err);
	}
	if (!rc) {
		const char *model = a.onnx ? a.onnx : a.folds;
		if (a.json) {
			struct vpa_json *o = vpa_json_obj(), *labs = vpa_json_arr();
			vpa_json_set_str(o, "model", model);
			vpa_json_set_str(o, "protocol", a.folds ? "folds" : "one model");
			for (size_t c = 0; c < r[0].C; c++)
				vpa_json_push(labs, vpa_json_str(r[0].labels[c]));
			vpa_json_set(o, "labels", labs);
			struct vpa_json *so = vpa_anon_cls_json(&r[0], &m[0]);
			double uo = vpa_anon_cls_uar(so);
			vpa_json_set(o, "original", so);
			vpa_json_set_num(o, "uar_orig", uo);
			if (a.anon) {
				struct vpa_json *sa = vpa_anon_cls_json(&r[1], &m[1]);
				double ua = vpa_anon_cls_uar(sa);
				vpa_json_set(o, "anonymised", sa);
				vpa_json_set_num(o, "uar_anon", ua);
				vpa_json_set_num(o, "uar_change", ua - uo);
			}
			struct vpa_buf b;
			vpa_buf_init(&b);
			vpa_json_write(&b, o, 2);
			fputs(vpa_buf_str(&b), stdout);
			fputs("\n", stdout);
			vpa_buf_release(&b);
			vpa_json_free(o);
		} else {
			printf("classifier: %s%s (%zu labels)\n", model,
			       a.folds ? " (per-speaker folds)" : "", r[0].C);
			run_text("original", a.data, &r[0], &m[0]);
			if (a.anon) {
				run_text("anonymised", a.anon, &r[1], &m[1]);
				double uo = m[0].uar, ua = m[1].uar;
			if (r[0].group) { /* the VPC's numbers, as printed above */
				struct vpa_json *so = vpa_anon_cls_json(&r[0], &m[0]);
				struct vpa_json *sa = vpa_anon_cls_json(&r[1], &m[1]);
				uo = vpa_anon_cls_uar(so);
				ua = vpa_anon_cls_uar(sa);
				vpa_json_free(so);
				vpa_json_free(sa);
			}
			printf("UAR change (anonymised - original): %+.4f\n", ua - uo);
			}
		}
	}
	for (int s = 0; s < 2; s++) {
		vpa_cls_run_release(&r[s]);
		vpa_cls_metrics_release(&m[s]);
	}
	return rc;
}
