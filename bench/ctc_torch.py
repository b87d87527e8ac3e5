#!/usr/bin/python3
"""bench/ctc_torch.py - the PyTorch side of bench/ctc.sh (issue 30: the ONNX CTC
recogniser's real-time factor against PyTorch CPU).

    /usr/bin/python3 bench/ctc_torch.py DIR ROUNDS THREADS [--no-export] [--arch hubert|conformer]

Builds torchaudio's wav2vec2-base architecture (torchaudio.models.wav2vec2_base:
7 conv feature layers, 12 transformer layers of 768, 94.4M parameters) with a
32-token CTC head (aux_num_out), random weights (seed 0; the head x 8 so frames
have clear winners), exports it to DIR/w2v_base.onnx (opset 17, dynamic samples
axis; raw waveform [1, samples] in, logits [1, T, 32] out), writes DIR/tokens.txt
and DIR/data (a Kaldi data directory: 3 utterances of 2.5, 4.0 and 5.5 s, noise
and tones, 16 kHz 16-bit), PyTorch's logits of each (DIR/logits_UTT.npy) and its
greedy CTC transcripts with the VPC normalisation (DIR/hyp.txt); then times
ROUNDS passes over the utterances (one at a time, each in one pass, as vpaudit
does) under torch.inference_mode() with torch.set_num_threads(THREADS) and
prints "torch THREADS RTF" (wall seconds / audio seconds, the best round).
--no-export: reuse DIR's files and only time.
--arch hubert: torchaudio's hubert_base instead (the same file names, so
bench_ctc checks it); --arch conformer: a Conformer-CTC on features
(torchaudio.models.Conformer, 12 layers of 256, 4 heads, kernel 31, after a 4x
Conv1d subsampling) fed torchaudio's Kaldi fbank (80 bins, dither 0) of the
int16-scale samples as (1, T, 80); bench_ctc DIR T R features checks it.
"""
import os
import sys
import time
import wave

import numpy as np
import torch
import torchaudio

TOKENS = ["<pad>", "<s>", "</s>", "<unk>", "|"] + [chr(ord("A") + i) for i in range(26)] + ["'"]


class W(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(x)[0]


class ConformerCTC(torch.nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.sub = torch.nn.Conv1d(80, 256, 4, 4)
        self.enc = torchaudio.models.Conformer(256, 4, 1024, 12, 31, dropout=0.0)
        self.head = torch.nn.Linear(256, vocab)

    def forward(self, f):
        x = self.sub((f - f.mean(dim=1, keepdim=True)).transpose(1, 2)).transpose(1, 2)
        # torchaudio's Conformer.forward(x, lengths) with every frame valid,
        # written out: its padding mask takes max(lengths).item(), which the
        # ONNX export traces as the example's length (the exported model then
        # failed on any other length at a Reshape); the mask built from x's
        # shape stays dynamic, and MultiheadAttention still turns it into a
        # -inf attention mask in the graph (what issue 30's engine change is for)
        mask = torch.zeros_like(x[:, :, 0]).to(torch.bool)
        y = x.transpose(0, 1)
        for layer in self.enc.conformer_layers:
            y = layer(y, mask)
        return self.head(y.transpose(0, 1))


def fbank(x):
    return torchaudio.compliance.kaldi.fbank(x * 32768.0, num_mel_bins=80, dither=0.0).unsqueeze(0)


def greedy(logits):
    best, out, prev = logits.argmax(-1).tolist(), [], -1
    for k in best:
        if k != prev and k != 0:
            out.append(TOKENS[k])
        prev = k
    text = "".join(out).replace("|", " ")
    # VPC normalisation as audio/wer.c (upper case; punctuation but an inner apostrophe)
    norm = []
    for i, c in enumerate(text):
        if c.isascii() and " " < c < "\x7f" and not c.isalnum():
            keep = c == "'" and 0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum()
            c = c if keep else " "
        norm.append(c.upper())
    return " ".join("".join(norm).split())


def main():
    d, rounds, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    export = "--no-export" not in sys.argv[4:]
    arch = sys.argv[sys.argv.index("--arch") + 1] if "--arch" in sys.argv else "wav2vec2"
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    if arch == "conformer":
        model = ConformerCTC(len(TOKENS)).eval()
        head = model.head
    else:
        make = torchaudio.models.hubert_base if arch == "hubert" else torchaudio.models.wav2vec2_base
        model = W(make(aux_num_out=len(TOKENS))).eval()
        head = model.m.aux
    with torch.no_grad():
        head.weight.mul_(8.0)
    os.makedirs(os.path.join(d, "data"), exist_ok=True)
    rng = np.random.default_rng(0)
    utts = []
    for i, secs in enumerate((2.5, 4.0, 5.5)):
        utt, n = "w%d" % i, int(secs * 16000)
        path = os.path.join(d, "data", utt + ".wav")
        if export:
            t = np.arange(n) / 16000.0
            sig = 5000 * np.sin(2 * np.pi * (180 + 60 * i) * t) * np.sin(2 * np.pi * 2 * t) + rng.normal(0, 2000, n)
            x16 = np.clip(np.round(sig), -32768, 32767).astype(np.int16)
            with wave.open(path, "wb") as w:
                w.setnchannels(1)
                w.setsampwidth(2)
                w.setframerate(16000)
                w.writeframes(x16.astype("<i2").tobytes())
        with wave.open(path) as w:
            x16 = np.frombuffer(w.readframes(w.getnframes()), "<i2")
        x = torch.from_numpy(x16.astype(np.float32) / 32768.0).unsqueeze(0)
        utts.append((utt, path, fbank(x) if arch == "conformer" else x))
    if export:
        name = "feats" if arch == "conformer" else "wav"
        torch.onnx.export(model, utts[0][2], os.path.join(d, "w2v_base.onnx"), opset_version=17,
                          input_names=[name], output_names=["logits"],
                          dynamic_axes={name: {1: "samples"}, "logits": {1: "frames"}})
        with open(os.path.join(d, "tokens.txt"), "w") as f:
            f.write("".join(t + "\n" for t in TOKENS))
        with open(os.path.join(d, "data", "wav.scp"), "w") as f:
            f.write("".join("%s %s\n" % (u, p) for u, p, _ in utts))
        hyp = []
        with torch.inference_mode():
            for u, _, x in utts:
                logits = model(x)[0]
                np.save(os.path.join(d, "logits_%s.npy" % u), logits.numpy().astype("<f4"))
                hyp.append(("%s %s" % (u, greedy(logits))).rstrip() + "\n")
        with open(os.path.join(d, "hyp.txt"), "w") as f:
            f.write("".join(hyp))
    audio = 0.0
    for _, p, _ in utts:
        with wave.open(p) as w:
            audio += w.getnframes() / 16000.0
    best = None
    with torch.inference_mode():
        model(utts[0][2])  # warm-up
        for _ in range(rounds):
            t0 = time.perf_counter()
            for _, _, x in utts:
                model(x)
            dt = time.perf_counter() - t0
            best = dt if best is None or dt < best else best
    print("torch %d %.5f" % (threads, best / audio), flush=True)


if __name__ == "__main__":
    main()
