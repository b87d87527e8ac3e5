#!/usr/bin/python3
"""tests/golden/anon/gen_mcadams.py - golden outputs of the McAdams anonymiser
for tests/unit/test_anon.c.

Provenance
  command   /usr/bin/python3 tests/golden/anon/gen_mcadams.py   (from the repo root)
  packages  Debian 12: python3-numpy 1:1.24.2, python3-scipy 1.10.1
  audio     tests/golden/audio/g16.wav, g8.wav (synthetic speech: espeak-ng, flite;
            made by tests/golden/audio/make_audio.sh)

anonym_v2() below is OUR NumPy/SciPy transcription of the VoicePrivacy Challenge
2022 baseline B2 (`anonym_v2`, Patino et al., Interspeech 2021), written from the
published algorithm: librosa.util.frame (complete frames only), sqrt(hann/K)
windows with K = sum(hann)/shift, the float32 eps added, librosa.lpc, poles by
scipy.signal.tf2zpk (np.roots: companion eigenvalues), the angle of every
non-real pole phi -> sign(phi)|phi|^alpha (the published code raises the
positive-angle member of each conjugate pair and mirrors it on the other: the
same poles), np.poly, residual and resynthesis by scipy.signal.lfilter,
overlap-add, /max*32766, astype(int16).  librosa is not packaged in Debian, so
lpc_burg() is a pure-Python transcription of librosa.lpc (librosa 0.8-0.10
`__lpc`, Burg's method).  It is independent of the C code in so far as a second
transcription is.

Outputs (committed): cases.txt (NAME INPUT ALPHA WIN_MS SHIFT_MS LP_ORDER) and
NAME.wav (16-bit PCM, the int16 output at the input rate).
"""
import numpy as np
import scipy.io.wavfile
import scipy.signal

HERE = "tests/golden/anon/"


def lpc_burg(y, order):
    """librosa.lpc (librosa/core/audio.py `__lpc`), transcribed."""
    dtype = y.dtype.type
    ar_coeffs = np.zeros(order + 1, dtype=y.dtype)
    ar_coeffs[0] = dtype(1)
    ar_coeffs_prev = np.zeros(order + 1, dtype=y.dtype)
    ar_coeffs_prev[0] = dtype(1)
    fwd_pred_error = y[1:]
    bwd_pred_error = y[:-1]
    den = np.dot(fwd_pred_error, fwd_pred_error) + np.dot(bwd_pred_error, bwd_pred_error)
    for i in range(order):
        if den <= 0:
            raise FloatingPointError("numerical error, input ill-conditioned?")
        reflect_coeff = dtype(-2) * np.dot(bwd_pred_error, fwd_pred_error) / dtype(den)
        ar_coeffs_prev, ar_coeffs = ar_coeffs, ar_coeffs_prev
        for j in range(1, i + 2):
            ar_coeffs[j] = ar_coeffs_prev[j] + reflect_coeff * ar_coeffs_prev[i - j + 1]
        fwd_pred_error_tmp = fwd_pred_error
        fwd_pred_error = fwd_pred_error + reflect_coeff * bwd_pred_error
        bwd_pred_error = bwd_pred_error + reflect_coeff * fwd_pred_error_tmp
        q = dtype(1) - reflect_coeff ** 2
        den = q * den - bwd_pred_error[-1] ** 2 - fwd_pred_error[0] ** 2
        fwd_pred_error = fwd_pred_error[1:]
        bwd_pred_error = bwd_pred_error[:-1]
    return ar_coeffs


def frame(x, frame_length, hop_length):
    """librosa.util.frame on a 1-D signal, transposed: (n_frames, frame_length)."""
    n_frames = 1 + (len(x) - frame_length) // hop_length
    return np.stack([x[t * hop_length:t * hop_length + frame_length] for t in range(n_frames)])


def anonym_v2(freq, samples, winLengthinms=20, shiftLengthinms=10, lp_order=20, mcadams=0.8):
    eps = np.finfo(np.float32).eps
    samples = samples + eps
    winlen = np.floor(winLengthinms * 0.001 * freq).astype(int)
    shift = np.floor(shiftLengthinms * 0.001 * freq).astype(int)
    length_sig = len(samples)
    wPR = np.hanning(winlen)
    K = np.sum(wPR) / shift
    win = np.sqrt(wPR / K)
    sig_rec = np.zeros([length_sig])
    frames = frame(samples, winlen, shift)
    windowed = np.multiply(frames, win)
    for k in range(len(windowed)):
        f = windowed[k]
        a_lpc = lpc_burg(f + eps, lp_order)
        poles = scipy.signal.tf2zpk(np.array([1]), a_lpc)[1]
        new_poles = poles.copy()
        for j in np.where(np.isreal(poles) == False)[0]:
            phi = np.angle(poles[j])
            new_poles[j] = np.abs(poles[j]) * np.exp(1j * np.sign(phi) * np.abs(phi) ** mcadams)
        a_lpc_new = np.real(np.poly(new_poles))
        res = scipy.signal.lfilter(a_lpc, np.array(1), f)
        frame_rec = scipy.signal.lfilter(np.array([1]), a_lpc_new, res)
        frame_rec = frame_rec * win
        sig_rec[k * shift:k * shift + winlen] += frame_rec
    sig_rec = (sig_rec / np.max(np.abs(sig_rec)) * (np.iinfo(np.int16).max - 1)).astype(np.int16)
    return sig_rec


CASES = [
    ("m16_a080", "tests/golden/audio/g16.wav", 0.8, 20, 10, 20),
    ("m16_a050", "tests/golden/audio/g16.wav", 0.5, 20, 10, 20),
    ("m16_a120_w25_o12", "tests/golden/audio/g16.wav", 1.2, 25, 10, 12),
    ("m8_a090", "tests/golden/audio/g8.wav", 0.9, 20, 10, 20),
]

if __name__ == "__main__":
    with open(HERE + "cases.txt", "w") as out:
        for name, path, alpha, win, sh, order in CASES:
            rate, x = scipy.io.wavfile.read(path)
            assert x.dtype == np.int16
            sig = x.astype(np.float32) / np.float32(32768)  # librosa.load(sr=None)
            y = anonym_v2(rate, sig, win, sh, order, alpha)
            scipy.io.wavfile.write(HERE + name + ".wav", rate, y)
            out.write("%s %s %g %g %g %d\n" % (name, path, alpha, win, sh, order))
            print(name, len(y), int(np.abs(y).max()))
