#!/usr/bin/python3
"""tests/golden/wavein/gen.py - waveform-input speaker extractors exported from
PyTorch with their front-end inside the graph, and PyTorch's embeddings, for
tests/unit/test_wavein.c and tests/e2e/test_wavein.sh (issue 31 item 8).

Regenerate (from the repository root; Debian 12's python3-torch 1.13,
python3-torchaudio 0.13.1, python3-onnx 1.12.0, python3-numpy, python3-scipy;
CPU, seed 0):

    /usr/bin/python3 tests/golden/wavein/gen.py

The extractor (random weights, tiny): torch.stft (n_fft 512, hop 160, a
400-sample periodic Hann window made in forward by torch.hann_window (the
tracer records it as a constant), centre padding by reflection), power spectrum, torchaudio's mel filterbank (24
bands, a constant), log, mean subtraction over time, a TDNN of two dilated
Conv1d layers, statistics pooling (mean, std) and a Linear layer: a 16-dim
embedding.  Exported at opset 17.

Debian's PyTorch 1.13 has no ONNX symbolic for aten::stft nor aten::hann_window
(torch.onnx added the STFT one in 2.0): the two symbolics below are
registered for the export (hann_symbolic is used only if a tracer records
the window's call).  stft_symbolic is PyTorch 2.0's
torch/onnx/symbolic_opset17.py `stft` (the window centred in n_fft by zeros
through Concat, STFT, Transpose to torch's (batch, bins, frames, 2)); the Hann
one emits HannWindow.  What the graph then holds is what a newer exporter
writes: Pad (reflect), Concat, STFT, Transpose, Pow, ReduceSum, MatMul, Log,
ReduceMean, Sub, Conv, Relu, Sqrt, Gemm, ... (the window generators and
MelWeightMatrix are checked by libonnx-testdata's node tests instead).

Writes:
  wavein.onnx        input 'wav' (batch, time) with a dynamic time axis
  wavein_fixed.onnx  the same model exported with a fixed (1, 16000) input
  wavein_conv.onnx   an older export's framing: the STFT as a Conv1d whose
                     kernels are the windowed DFT basis (cos and -sin rows),
                     input 'wav' (batch, 1, time), same back-end
  data/              a Kaldi data directory: wav.scp (paths relative to it),
                     utt2spk, spk2gender, three 16-bit 16 kHz WAV files of 1.30, 0.83 and
                     2.11 s (noise and chirps, seeded)
  emb.txt            PyTorch's embeddings of wavein.onnx's model for each
                     utterance, samples / 32768 as float32, whole utterance
                     (text: `utt  [ v1 ... v16 ]`, %.9g)
  emb_fixed.txt      wavein_fixed: chunks of 16000 samples as vpaudit's --chunk
                     (WeSpeaker's rule: a last partial chunk completed with the
                     first samples; a shorter utterance repeated), averaged
  emb_conv.txt       wavein_conv, whole utterance
  signal.onnx        the signal operators alone (onnx.helper): STFT of 'x'
                     (1, T, 1) with frame_step 160, a 512-point window input
                     'win' and frame_length 512; HannWindow(400) and
                     BlackmanWindow(400), periodic and symmetric; DFT of a
                     complex float64 'z' (1, N, 2) to 'Z' and back to 'zz'
  chain.onnx         ReduceMean over the frames of 'feats' (T, 20): for
                     `vpaudit features ... -o DIR/` chained into `onnx run`
  windows.npy        torch.hann_window(400), torch.blackman_window(400) with
                     periodic=True then False: (4, 400) float32
  stft_win.npy       the 400-point Hann window centred in 512 points (float32)
  stft_x.npy         utterance u1's first 4000 samples / 32768 (1, 4000, 1)
  stft_ref.npy       torch.stft of utterance u1's first 4000 samples
                     (center=False, the same window padded to 512):
                     (bins 257, frames 22, 2) float32,
                     for the STFT operator's own check in test_wavein
"""
import os

import numpy as np
import onnx
import scipy.io.wavfile
import torch
import torch.nn as nn
import torchaudio
from torch.onnx import register_custom_op_symbolic, symbolic_helper

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(0)
rng = np.random.default_rng(0)
N_FFT, HOP, WIN, MELS = 512, 160, 400, 24


@symbolic_helper.parse_args("v", "i", "i", "i", "v", "b", "b", "b")
def stft_symbolic(g, input, n_fft, hop_length=None, win_length=None, window=None,
                  normalized=False, onesided=True, return_complex=False):
    """PyTorch 2.0's torch/onnx/symbolic_opset17.py stft, trimmed of its
    branches this model does not take (no complex output, no normalisation,
    a given window, a 2-D signal)."""
    assert not return_complex and not normalized
    step = g.op("Constant", value_t=torch.tensor(hop_length, dtype=torch.int64))
    length = g.op("Constant", value_t=torch.tensor(n_fft, dtype=torch.int64))
    n_win = symbolic_helper._get_tensor_dim_size(window, dim=0)
    if n_win is None:
        n_win = win_length
    if n_win < n_fft:  # centre the window in n_fft samples, as torch.stft does
        left = (n_fft - n_win) // 2
        right = n_fft - n_win - left
        window = g.op("Concat", g.op("Constant", value_t=torch.zeros(left)), window,
                      g.op("Constant", value_t=torch.zeros(right)), axis_i=0)
    result = g.op("STFT", signal_unsq(g, input), step, window, length,
                  onesided_i=1 if onesided is None or onesided else 0)
    return g.op("Transpose", result, perm_i=[0, 2, 1, 3])


def signal_unsq(g, x):
    # ONNX's STFT wants (batch, length, 1) for a real signal
    return g.op("Unsqueeze", x, g.op("Constant", value_t=torch.tensor([2])))


@symbolic_helper.parse_args("i", "b", "v", "v", "v", "v")
def hann_symbolic(g, window_length, periodic=True, dtype=None, layout=None, device=None,
                  pin_memory=None):
    return g.op("HannWindow", g.op("Constant", value_t=torch.tensor(window_length)),
                periodic_i=int(periodic), output_datatype_i=1)


register_custom_op_symbolic("::stft", stft_symbolic, 17)
register_custom_op_symbolic("::hann_window", hann_symbolic, 17)


class Backend(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv1d(MELS, 32, 5)
        self.c2 = nn.Conv1d(32, 32, 3, dilation=2)
        self.lin = nn.Linear(64, 16)

    def forward(self, f):  # f: (B, T, MELS) log mel
        f = f - f.mean(1, keepdim=True)
        h = torch.relu(self.c2(torch.relu(self.c1(f.transpose(1, 2)))))
        st = torch.cat([h.mean(-1), h.std(-1)], 1)
        return self.lin(st)


class StftExtractor(nn.Module):
    def __init__(self, back):
        super().__init__()
        self.register_buffer("mel", torchaudio.functional.melscale_fbanks(
            N_FFT // 2 + 1, 0.0, 8000.0, MELS, 16000))
        self.back = back

    def forward(self, wav):  # (B, T)
        win = torch.hann_window(WIN, periodic=True)
        X = torch.stft(wav, N_FFT, hop_length=HOP, win_length=WIN, window=win, center=True,
                       pad_mode="reflect", normalized=False, onesided=True,
                       return_complex=False)  # (B, 257, frames, 2)
        p = X.pow(2).sum(-1)
        m = torch.matmul(p.transpose(1, 2), self.mel)
        return self.back(torch.log(m + 1e-6))


class ConvExtractor(nn.Module):
    """The framing of older exports: a strided Conv1d with the windowed DFT basis."""

    def __init__(self, back, mel):
        super().__init__()
        n = torch.arange(N_FFT, dtype=torch.float64)
        k = torch.arange(N_FFT // 2 + 1, dtype=torch.float64)
        w = torch.zeros(N_FFT, dtype=torch.float64)
        left = (N_FFT - WIN) // 2
        w[left:left + WIN] = torch.hann_window(WIN, periodic=True, dtype=torch.float64)
        ang = 2 * np.pi * torch.outer(k, n) / N_FFT
        basis = torch.cat([torch.cos(ang) * w, -torch.sin(ang) * w], 0).float()
        self.conv = nn.Conv1d(1, basis.shape[0], N_FFT, stride=HOP, bias=False)
        self.conv.weight.data = basis.unsqueeze(1)
        self.register_buffer("mel", mel)
        self.back = back

    def forward(self, wav):  # (B, 1, T)
        y = self.conv(nn.functional.pad(wav, (N_FFT // 2, N_FFT // 2), mode="reflect"))
        re, im = y[:, :N_FFT // 2 + 1], y[:, N_FFT // 2 + 1:]
        p = re * re + im * im
        m = torch.matmul(p.transpose(1, 2), self.mel)
        return self.back(torch.log(m + 1e-6))


def wav_chunks(x, C):
    """vpaudit's --chunk on samples (WeSpeaker's rule, embed/embed.h)."""
    T = len(x)
    if T < C:
        return [np.resize(x, C)]
    full, rest = T // C, T % C
    out = [x[k * C:(k + 1) * C] for k in range(full)]
    if rest:
        out.append(np.concatenate([x[full * C:], x[:C - rest]]))
    return out


def write_txt(path, rows):
    with open(path, "w") as f:
        for u, v in rows:
            f.write("%s  [ %s ]\n" % (u, " ".join("%.9g" % a for a in v)))


def main():
    back = Backend().eval()
    model = StftExtractor(back).eval()
    conv = ConvExtractor(back, model.mel).eval()
    # data: noise with chirps at int16 scale
    os.makedirs(os.path.join(HERE, "data"), exist_ok=True)
    utts = [("u1", "s1", 20800), ("u2", "s1", 13280), ("u3", "s2", 33760)]
    waves = {}
    for i, (u, s, n) in enumerate(utts):
        t = np.arange(n) / 16000.0
        f0 = 150 + 60 * i
        sig = 3000 * np.sin(2 * np.pi * (f0 * t + 200 * t * t)) + 800 * rng.standard_normal(n)
        x16 = np.clip(np.round(sig), -32768, 32767).astype(np.int16)
        scipy.io.wavfile.write(os.path.join(HERE, "data", u + ".wav"), 16000, x16)
        waves[u] = (x16.astype(np.float32) / 32768.0)
    with open(os.path.join(HERE, "data", "wav.scp"), "w") as f:
        for u, _, _ in utts:
            f.write("%s %s.wav\n" % (u, u))
    with open(os.path.join(HERE, "data", "utt2spk"), "w") as f:
        for u, s, _ in utts:
            f.write("%s %s\n" % (u, s))
    with open(os.path.join(HERE, "data", "spk2gender"), "w") as f:
        f.write("s1 m\ns2 m\n")  # one gender: same-gender trials of both speakers

    ex = torch.zeros(1, 16000)
    torch.onnx.export(model, ex, os.path.join(HERE, "wavein.onnx"), opset_version=17,
                      input_names=["wav"], output_names=["emb"],
                      dynamic_axes={"wav": {0: "batch", 1: "time"}})
    torch.onnx.export(model, ex, os.path.join(HERE, "wavein_fixed.onnx"), opset_version=17,
                      input_names=["wav"], output_names=["emb"])
    torch.onnx.export(conv, ex.unsqueeze(1), os.path.join(HERE, "wavein_conv.onnx"),
                      opset_version=17, input_names=["wav"], output_names=["emb"],
                      dynamic_axes={"wav": {0: "batch", 2: "time"}})
    g = onnx.load(os.path.join(HERE, "wavein.onnx"))
    print("wavein.onnx operators:", sorted(set(n.op_type for n in g.graph.node)))

    with torch.inference_mode():
        rows, rows_f, rows_c = [], [], []
        for u, _, _ in utts:
            x = torch.from_numpy(waves[u])
            rows.append((u, model(x[None]).double().numpy()[0]))
            ch = [model(torch.from_numpy(c)[None]).double().numpy()[0]
                  for c in wav_chunks(waves[u], 16000)]
            rows_f.append((u, np.mean(ch, 0)))
            rows_c.append((u, conv(x[None, None]).double().numpy()[0]))
        write_txt(os.path.join(HERE, "emb.txt"), rows)
        write_txt(os.path.join(HERE, "emb_fixed.txt"), rows_f)
        write_txt(os.path.join(HERE, "emb_conv.txt"), rows_c)
        win = torch.hann_window(WIN, periodic=True)
        X = torch.stft(torch.from_numpy(waves["u1"][:4000]), N_FFT, hop_length=HOP, win_length=WIN,
                       window=win, center=False, onesided=True, return_complex=False)
        np.save(os.path.join(HERE, "stft_ref.npy"), X.numpy().astype(np.float32))
        left = (N_FFT - WIN) // 2
        w512 = np.zeros(N_FFT, np.float32)
        w512[left:left + WIN] = win.numpy()
        np.save(os.path.join(HERE, "stft_win.npy"), w512)
        np.save(os.path.join(HERE, "stft_x.npy"), waves["u1"][:4000].reshape(1, 4000, 1))
        np.save(os.path.join(HERE, "windows.npy"), np.stack([
            torch.hann_window(WIN, periodic=True).numpy(),
            torch.blackman_window(WIN, periodic=True).numpy(),
            torch.hann_window(WIN, periodic=False).numpy(),
            torch.blackman_window(WIN, periodic=False).numpy()]).astype(np.float32))
    signal_model()


def signal_model():
    from onnx import TensorProto, helper
    I64 = TensorProto.INT64
    nodes = [
        helper.make_node("Constant", [], ["step"],
                         value=helper.make_tensor("s", I64, [], [HOP])),
        helper.make_node("Constant", [], ["len"],
                         value=helper.make_tensor("l", I64, [], [N_FFT])),
        helper.make_node("Constant", [], ["wl"],
                         value=helper.make_tensor("w", I64, [], [WIN])),
        helper.make_node("STFT", ["x", "step", "win", "len"], ["spec"], onesided=1),
        helper.make_node("DFT", ["z"], ["Z"], axis=1),
        helper.make_node("DFT", ["Z"], ["zz"], axis=1, inverse=1),
        helper.make_node("HannWindow", ["wl"], ["hann_p"]),
        helper.make_node("BlackmanWindow", ["wl"], ["blackman_p"]),
        helper.make_node("HannWindow", ["wl"], ["hann_s"], periodic=0),
        helper.make_node("BlackmanWindow", ["wl"], ["blackman_s"], periodic=0),
    ]
    F = TensorProto.FLOAT
    g = helper.make_graph(
        nodes, "signal",
        [helper.make_tensor_value_info("x", F, [1, "T", 1]),
         helper.make_tensor_value_info("win", F, [N_FFT]),
         helper.make_tensor_value_info("z", TensorProto.DOUBLE, [1, "N", 2])],
        [helper.make_tensor_value_info("spec", F, [1, "frames", N_FFT // 2 + 1, 2]),
         helper.make_tensor_value_info("Z", TensorProto.DOUBLE, [1, "N", 2]),
         helper.make_tensor_value_info("zz", TensorProto.DOUBLE, [1, "N", 2])] +
        [helper.make_tensor_value_info(n, F, [WIN])
         for n in ("hann_p", "blackman_p", "hann_s", "blackman_s")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="tests/golden/wavein/gen.py")
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, "signal.onnx"))
    # a model on a features matrix (T, 20) as `vpaudit features` writes it
    g = helper.make_graph(
        [helper.make_node("ReduceMean", ["feats"], ["mean"], axes=[0], keepdims=0)], "chain",
        [helper.make_tensor_value_info("feats", F, ["T", 20])],
        [helper.make_tensor_value_info("mean", F, [20])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="tests/golden/wavein/gen.py")
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, "chain.onnx"))


if __name__ == "__main__":
    main()
