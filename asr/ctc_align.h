/*
 * asr/ctc_align.h - frame labels for a corpus from a CTC acoustic model:
 * forced alignment of each utterance's transcript (a Kaldi `text`) to the
 * model's output frames (Viterbi over the CTC topology), then one label per
 * frame of another front end (issue 32: the targets of the FL acoustic
 * models of a user corpus without alignments of its own).  Depends on
 * asr/ctc.h.
 *
 * Units: the model's tokens (characters for wav2vec2's vocabularies,
 * phonemes for a phoneme CTC model, pieces for SentencePiece ones); a label
 * is the token's index (its line in the tokens file, from 0).
 *
 * Transcript to tokens (vpa_ctc_tokenize): the words as normalised by the
 * model's `norm` (the VPC's: upper case, punctuation removed), each word
 * spelled by greedy longest match against the tokens (the blank excluded;
 * among matches of one length the token of the same case first, ASCII
 * letters otherwise matched without case, so lower-case vocabularies
 * work).  With a word delimiter token (`|`): one before the first word,
 * one between words and one after the last, as the torchaudio alignment
 * tutorial writes "|I|HAD|THAT|" (the delimiter then labels the leading and
 * trailing silence); with SentencePiece's U+2581: the mark starts every
 * word's first piece.  Greedy longest match is one valid spelling, not
 * necessarily the one a SentencePiece model's own tokeniser picks: the
 * alignment is valid either way.
 *
 * Viterbi (vpa_ctc_viterbi): the scores are log-softmax normalised per
 * frame (logits and log-probabilities alike), the extended sequence blank,
 * l1, blank, l2, ..., lL, blank; a path moves 0, 1 or 2 states per frame (2
 * only onto a token that differs from the one two states back), starts in
 * state 0 or 1, ends in the last or second-to-last; the best path's score
 * is the largest sum of log-probabilities of any alignment that collapses
 * to the tokens.  Ties: the smaller move, then the last state.
 *
 * To the target's frames (vpa_ctc_frame_labels): a model frame's label is
 * its token's index; a blank frame takes the label of the token emitted
 * last before it (before the first token: the first token's), since a CTC
 * model emits a token once at its onset and blank while the sound goes on.
 * Target frame j of n takes model frame floor((j + 0.5) * T / n), i.e. the
 * two frame grids are taken to span the same audio (wav2vec2's 20 ms frames
 * and a 10 ms front end: two target frames per model frame).
 */
#ifndef VPA_ASR_CTC_ALIGN_H
#define VPA_ASR_CTC_ALIGN_H

#include "asr/ctc.h"

/*
 * Spell the words w[0..nw) with the tokens tok[0..V) as above: *ids
 * (caller frees) gets *L token indices.  Returns 0, or -1 with *bad_word
 * the index of a word with a character no token spells and *bad_at its
 * byte offset in that word.  delimiter: the word delimiter token's text
 * ("" none; "\xe2\x96\x81" SentencePiece).  A delimiter not in tok is
 * left out (a vocabulary without one).
 */
int vpa_ctc_tokenize(char *const *w, size_t nw, char *const *tok, size_t V, size_t blank,
		     const char *delimiter, uint32_t **ids /* OUT */, size_t *L /* OUT */,
		     size_t *bad_word /* OUT */, size_t *bad_at /* OUT */);

/*
 * The best alignment of the tokens lab[0..L) (none is the blank) to scores
 * x (T, V): path[t] the token index of frame t or `blank`; *score the sum
 * of its log-probabilities.  Returns 0, or -1 when no alignment exists (T
 * is smaller than L plus the number of equal neighbours, each of which
 * needs a blank between: *need gets that minimum).
 */
int vpa_ctc_viterbi(const float *x, size_t T, size_t V, size_t blank, const uint32_t *lab,
		    size_t L, uint32_t *path /* (T) OUT */, double *score /* OUT */,
		    size_t *need /* OUT */);

/* path (T model frames) to labels out[0..n) of n target frames, as above.
 * The path must hold at least one token (L >= 1). */
void vpa_ctc_frame_labels(const uint32_t *path, size_t T, size_t blank, uint32_t *out, size_t n);

/*
 * One utterance: the model's scores for w (vpa_ctc_wave), the words spelled,
 * aligned, and n labels written to out.  Errors, naming the utterance (and
 * the transcript's FILE:LINE `where`, NULL for none, for those of the text): a
 * character no token spells ("utterance 'u1': the word 'NAÏVE' has 'Ï' (byte
 * 2), which no token of T.txt spells"), no word, an output too short for the
 * transcript, those of vpa_ctc_wave.
 */
int vpa_ctc_align_wave(const struct vpa_ctc *c, const char *id, const struct vpa_wave *w,
		       char *const *words, size_t nw, const struct vpa_loc *where, size_t n,
		       uint32_t *out, struct vpa_err *err);

/*
 * Every utterance of the opened data directory d (its rate set to the
 * model's, vpa_ctc_rate) aligned to its transcript in the Kaldi `text` at
 * text_path (words normalised by the model's norm): (*lab)[i] gets n[i]
 * labels (caller frees each and the array).  grid NULL: n[i] given; else
 * n[i] is set to the frame count of grid's front end on the utterance's
 * samples (vpa_feat_num_frames: at the model's rate), for a caller that has
 * no features of its own (`vpaudit asr --align`).  Shared over threads and MPI
 * ranks; the labels do not depend on the count.  Errors: the text file's
 * (FILE:LINE), an utterance without a transcript ("text: no transcript for
 * utterance 'u3' of wav.scp"), each utterance's (vpa_ctc_align_wave).
 */
int vpa_ctc_align_dd(const struct vpa_ctc *c, int threads, const struct vpa_datadir *d,
		     const char *text_path, size_t *n, const struct vpa_feat *grid,
		     uint32_t ***lab /* OUT */, struct vpa_err *err);

#endif
