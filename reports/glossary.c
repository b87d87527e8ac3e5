/*
 * reports/glossary.c - the glossary: each metric, what a good and a bad
 * value mean for privacy, and the reference that defines it.
 */
#include <string.h>

#include "reports/doc.h"

static const struct {
	const char *term, *means, *reading, *ref;
} terms[] = {
	{"EER (equal error rate)",
	 "The error rate of an attacker's same-speaker/different-speaker decisions at the threshold "
	 "where misses and false alarms are equally frequent.",
	 "For privacy, higher is better: 50% is chance (the attacker learns nothing), unless the "
	 "scores are anti-correlated with identity (below); below about 20% speakers are told "
	 "apart most of the time; near 0% the identity is not protected.",
	 "NIST speaker recognition evaluations; Tomashenko et al. 2020 (VoicePrivacy evaluation plan)"},
	{"Anti-correlated scores (eer_flipped)",
	 "Scores where a higher value means a different speaker (a distance, or an anonymiser that "
	 "pushes each voice away from its source). The EER, Cllr_min and min DCF read them as "
	 "chance; vpaudit calls a score set anti-correlated when its threshold-sweep EER is above "
	 "50% with all of its 95% bootstrap interval, and gives the EER, Cllr_min and min DCF an "
	 "attacker reaches who reverses the scores (eer_flipped, cllr_min_flipped, "
	 "min_dcf_flipped).",
	 "For privacy, an anti-correlated score set is a leak, not chance: read eer_flipped as its "
	 "EER. A gate on the EER, Cllr_min or min DCF of such a set fails unless it says "
	 "allow_anti_correlated.",
	 "Fawcett 2006, An introduction to ROC analysis (a classifier below the diagonal, negated, "
	 "lies above it)"},
	{"Cllr / Cllr_min",
	 "The log-likelihood-ratio cost in bits: how much the scores say about identity, "
	 "calibration included (Cllr) or after the best calibration (Cllr_min).",
	 "For privacy, higher is better: 1 bit (Cllr_min) means the scores carry no information; "
	 "near 0 they carry it all. A Cllr above 1 bit only says the scores are not calibrated "
	 "log-likelihood ratios: read Cllr_min.",
	 "Brümmer and du Preez 2006, Application-independent evaluation of speaker detection"},
	{"Linkability (D<->sys)",
	 "How well two recordings can be linked to the same person, from the overlap of same-person "
	 "and different-person score distributions; between 0 and 1.",
	 "For privacy, lower is better: 0 means recordings cannot be linked, 1 fully linkable.",
	 "Gomez-Barrero et al. 2017, General framework to evaluate unlinkability in biometric "
	 "template protection systems"},
	{"ZEBRA (D_ECE, worst case, category A-F)",
	 "The expected privacy disclosure of a system (D_ECE, in bits), the worst-case strength of "
	 "evidence one trial can give (log10 LR), and a category from A (full privacy) to F.",
	 "For privacy, lower D_ECE and a worst case near 0 are better; category A or B is good, "
	 "E or F means some trials disclose identity strongly.",
	 "Nautsch et al. 2020, The Privacy ZEBRA: Zero Evidence Biometric Recognition Assessment"},
	{"min DCF",
	 "The minimum detection cost at a target prior (p_target): the best trade-off of misses "
	 "and false alarms an attacker with that prior can reach, normalised so 1 is a useless "
	 "system.",
	 "For privacy, higher is better: 1 means the attacker does no better than always "
	 "guessing; near 0 it decides almost without errors.",
	 "NIST SRE evaluation plans (detection cost function)"},
	{"Exposure",
	 "How far up the model ranks an inserted secret (canary) among all candidates of the same "
	 "format, in bits: log2(candidates) - log2(rank).",
	 "For privacy, lower is better: near 0-1 bits the canary is not singled out; at the maximum "
	 "(log2 of the number of candidates) the model reproduces it first.",
	 "Carlini et al. 2019, The Secret Sharer"},
	{"d-exposure",
	 "Exposure for a sequence tagger: how the tagger's confidence in the label of a word "
	 "inserted in training ranks among words of the same class, in bits "
	 "(-log2 of the fraction of those words labelled at least as confidently).",
	 "For privacy, lower is better: close to the unseen controls means nothing was memorised.",
	 "COMPRISE D2.3 2021 (transformation library, privacy guarantees), d-exposure"},
	{"epsilon / delta",
	 "The differential-privacy guarantee of a mechanism: adding or removing one person's data "
	 "changes the probability of any outcome by at most a factor e^epsilon, plus delta. It "
	 "covers what its regime releases, against anyone who sees that: central DP the trained "
	 "model (not the updates a server sees before it adds the noise), local DP each update a "
	 "device sends.",
	 "Lower epsilon is stronger. For a central epsilon over a whole training, about 1 or less "
	 "is strong and above 10 weak; a local epsilon per user or per update is on another scale "
	 "(local DP needs far more noise for the same value), so the report puts no adjective on "
	 "either. delta should be far below 1 / (number of users). Undefined: no DP was applied.",
	 "Dwork and Roth 2014, The Algorithmic Foundations of Differential Privacy"},
	{"SNR (signal-to-noise ratio)",
	 "In DP federated training, the norm of the true update over the norm of the added noise.",
	 "For privacy, lower means more noise per update (more protection, slower learning); a "
	 "high SNR with a large epsilon means little protection.",
	 "Granqvist et al. 2020"},
	{"Rank / top-k",
	 "In identification, the position of the true speaker among the candidates (the normalised "
	 "rank is divided by the population), and how often the true speaker is among the first k.",
	 "For privacy, a normalised rank near 0.5 and a top-k near k / population (chance) are "
	 "good; a rank near 0 and a high top-1 mean the speaker is singled out.",
	 "COMPRISE large-population study (speaker identification in growing populations)"},
	{"G_VD (gain of voice distinctiveness)",
	 "How much anonymisation changes how distinguishable the voices are from one another, in "
	 "dB: 0 keeps the distinctiveness of the original voices, negative values lose some.",
	 "This is a utility measure: near 0 dB the anonymised voices stay as distinct as the "
	 "originals (good for voice quality); it says nothing by itself about privacy.",
	 "Noé et al. 2020, Speech pseudonymisation assessment using voice similarity matrices"},
	/* issue 30: the utility measures (reports/sec_utility.c) */
	{"WER (word error rate) and its increase",
	 "The share of words a speech recogniser gets wrong (substitutions, deletions and "
	 "insertions over the reference words), on the original and on the anonymised trials; "
	 "wer_increase is the anonymised minus the original, in percentage points.",
	 "A utility measure, lower is better: the WER cost is what the anonymisation takes from "
	 "speech recognition. Read it beside the EER: privacy bought at a large WER cost may not "
	 "be usable.",
	 "Tomashenko et al., VoicePrivacy 2024 Challenge evaluation plan (ASR_eval)"},
	{"UAR (unweighted average recall)",
	 "The mean over classes of the share of each class's utterances an emotion recogniser "
	 "labels correctly, so that a frequent class does not dominate; with per-speaker folds, "
	 "each speaker is scored alone and the UARs averaged, as the VoicePrivacy Challenge does.",
	 "A utility measure, higher is better: 1/C (C classes) is chance. A UAR that drops "
	 "after anonymisation means the emotion is not kept.",
	 "Schuller et al. 2009 (UAR); VoicePrivacy 2024 evaluation plan (SER on IEMOCAP)"},
	{"rho_F0 (pitch correlation)",
	 "The Pearson correlation of the pitch contour of each utterance with that of its "
	 "anonymised version, averaged over the utterances.",
	 "A utility measure: near 1 the intonation is kept; near 0 it is lost.",
	 "VoicePrivacy 2022 evaluation plan"},
	/* the Article 29 criteria (issue 29: reports/sec_legal.c) */
	{"Singling out, linkability, inference (Article 29 criteria)",
	 "The three questions by which European data-protection law judges anonymisation: can a "
	 "person be singled out (isolated in the data), can two records of one person be linked, "
	 "can an attribute of a person be inferred. Data that fail none of them is anonymous; the "
	 "report's \"Singling out / Linkability / Inference\" section answers them for the "
	 "strongest attacker, against chance.",
	 "For privacy, a measured value whose interval stays at or below its chance level is good "
	 "on that criterion; one above chance answers the question with yes. Values are unreliable "
	 "below 10 test speakers, and a gate on an unreliable value fails closed.",
	 "Article 29 Data Protection Working Party, Opinion 05/2014 on Anonymisation Techniques "
	 "(WP216); Vauquier, Srivastava, Hosseini, Vincent, Legally validated evaluation framework "
	 "for voice anonymization, Interspeech 2025"},
	{"pi_link (closed-set linkability)",
	 "The probability that an attacker, given one anonymised conversation and N' candidate "
	 "enrolment speakers (the true one and N'-1 others drawn at random), scores the true one "
	 "highest; computed exactly over every candidate set (no sampling), with chance 1/N'. It is "
	 "not the linkability D<->sys of Gomez-Barrero et al., which measures the overlap of "
	 "same-person and different-person score distributions over all pairs without a candidate "
	 "set: D<->sys can be near 0 while pi_link is far above 1/N' (the scores rank the true "
	 "speaker first without separating the two distributions at any one threshold), and "
	 "vpaudit reports both.",
	 "For privacy, lower is better: at 1/N' the attacker links no better than a guess; near 1 "
	 "a person's records are linked.",
	 "Vauquier et al., Interspeech 2025 (Legally validated evaluation framework for voice "
	 "anonymization); Article 29 WP Opinion 05/2014 (linkability)"},
	{"pi_sing (predicate singling out)",
	 "The probability that an attacker's predicate - one enrolment embedding and a threshold "
	 "calibrated to fire on 1/N of held-out conversations - fires on exactly one of N test "
	 "speakers' conversations, whoever that is. A predicate that ignores the voice does that "
	 "with probability (1-1/N)^(N-1), which falls to e^-1 = 0.368 for large N.",
	 "For privacy, lower is better: at the trivial level (1-1/N)^(N-1) the predicate isolates "
	 "no better than one that ignores the voice; above it the data lets a person be singled "
	 "out.",
	 "Cohen and Nissim 2020, Towards formalizing the GDPR's notion of singling out (PNAS); "
	 "Vauquier et al., Interspeech 2025; Article 29 WP Opinion 05/2014 (singling out)"},
	{"Inference accuracy (inference_acc, inference_bacc)",
	 "How often an attacker's classifier guesses a speaker attribute (gender, or the labels "
	 "given) of an anonymised utterance right; trained on the data the attacker's back-end is "
	 "trained on (anonymised for semi-informed and informed). Balanced accuracy averages the "
	 "per-class rates, so a large class cannot carry it.",
	 "For privacy, lower is better: at the majority-class share (accuracy) or 1/classes "
	 "(balanced) the attribute is not inferred beyond what the class sizes give away.",
	 "Article 29 WP Opinion 05/2014 (inference); Vauquier et al., Interspeech 2025"},
	/* DP audits and accountants (issue 28) */
	{"CP audit (Clopper-Pearson epsilon lower bound)",
	 "An empirical lower bound on epsilon from a distinguisher's errors on neighbouring "
	 "datasets: with the Clopper-Pearson upper bounds FPR_hi and FNR_hi of its false-positive "
	 "and false-negative rates, epsilon >= max(ln((1 - delta - FNR_hi) / FPR_hi), "
	 "ln((1 - delta - FPR_hi) / FNR_hi)), holding with the stated confidence.",
	 "A bound above the claimed epsilon proves the implementation or the accounting wrong; a "
	 "bound below it proves nothing about the claim (a stronger attack might show more).",
	 "Jagielski, Ullman, Oprea 2020, Auditing Differentially Private Machine Learning: How "
	 "Private is Private SGD?"},
	{"GDP audit",
	 "An epsilon lower bound that assumes the mechanism's trade-off curve is Gaussian: "
	 "mu = Phi^-1(1 - FPR_hi) - Phi^-1(FNR_hi), converted to (epsilon, delta) as mu-GDP "
	 "(Dong, Roth, Su 2019, Cor. 2.13).",
	 "Tighter than the CP audit with few trials, but valid only under its Gaussian "
	 "assumption; read it as an estimate, not a proof, when that assumption is in doubt.",
	 "Nasr et al. 2023, Tight Auditing of Differentially Private Machine Learning"},
	{"One-run audit",
	 "An epsilon lower bound from a single training run: m canaries are each included with "
	 "probability 1/2, the auditor guesses for some of them whether they were included, and "
	 "the number of correct guesses is tested against what (epsilon, delta)-DP allows; vpaudit "
	 "corrects for its choice of how many guesses to make.",
	 "A bound above the claimed epsilon proves a defect; with few canaries even a perfect "
	 "attack gives a small bound, so a small bound is weak evidence, never proof of privacy.",
	 "Steinke, Nasr, Jagielski 2023, Privacy Auditing with One (1) Training Run"},
	{"PLD accountant (privacy loss distribution)",
	 "An accountant that composes the privacy loss distribution of each training step (the "
	 "Poisson-subsampled Gaussian mechanism) exactly on a grid, by FFT, with a pessimistic "
	 "discretisation so that its epsilon is an upper bound.",
	 "Usually a tighter (smaller) valid epsilon than RDP for the same training; where both "
	 "apply the report claims the smaller and names the accountant.",
	 "Koskela, Jälkö, Honkela 2020, Computing Tight Differential Privacy Guarantees Using FFT; "
	 "Doroshenko et al. 2022, Connect the Dots: Tighter Discrete Approximations of Privacy "
	 "Loss Distributions"},
	{"RDP (Rényi differential privacy) accountant",
	 "An accountant that adds up Rényi divergences of each step at several orders and converts "
	 "the total to (epsilon, delta).",
	 "A valid upper bound on epsilon, often somewhat looser than PLD for DP-SGD.",
	 "Mironov 2017, Rényi Differential Privacy"},
};

void vpa_doc_glossary(const struct vpa_json *r, struct vpa_doc *d)
{
	(void)r;
	vpa_doc_head(d, 1, "glossary", "Glossary", 1);
	for (size_t i = 0; i < sizeof(terms) / sizeof(terms[0]); i++) {
		struct vpa_blk *b = vpa_doc_add(d, VPA_B_DEF);
		b->text = xstrdup(terms[i].term);
		vpa_doc_item(b, "%s", terms[i].means);
		vpa_doc_item(b, "%s", terms[i].reading);
		vpa_doc_item(b, "Reference: %s.", terms[i].ref);
	}
}
