#!/usr/bin/env python3
"""PyTorch side of attn-bench-cuda-recurrent (tests/bench/cuda-recurrent.cu): nn.LSTM and nn.GRU
on the GPU (cuDNN's RNN) at the same sizes, in exact f32 (TF32 off, as attnc's layers), a
layer's forward then backward, timed the same way (CUDA events, median after warm-up), one
JSON line per size. scripts/gpu-check.sh runs both and prints the ratios.

    python3 tests/bench/cuda-recurrent.py [--json FILE] [--repeat N]
"""
import json
import sys

import cuda_bench


def main():
    a, torch = cuda_bench.setup(__doc__, repeat=10)
    if torch is None:
        return 77
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

    def median_ms(f):
        return cuda_bench.median_ms(torch, f, a.repeat)

    B, T = 64, 128
    out = open(a.json, "w") if a.json else None
    print(f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, "
          f"{torch.cuda.get_device_name()}")
    print(f"{'cell':5} {'H':>5} {'f+b ms':>10} {'TFLOP/s':>8}")
    for name, layer in (("lstm", torch.nn.LSTM), ("gru", torch.nn.GRU)):
        for H in (512, 1024):
            G = (4 if name == "lstm" else 3) * H
            rnn = layer(H, H, batch_first=True, device="cuda")
            x = torch.rand(B, T, H, device="cuda", requires_grad=True)
            g = torch.rand(B, T, H, device="cuda")

            def fwd_bwd():
                y, _ = rnn(x)
                y.backward(g)

            ms = median_ms(fwd_bwd)
            tflops = 3 * 2.0 * B * T * (2 * H) * G / (ms * 1e-3) / 1e12
            print(f"{name:5} {H:5} {ms:10.3f} {tflops:8.2f}")
            if out:
                out.write(json.dumps({"cell": name, "H": H, "fwd_bwd_ms": round(ms, 3),
                                      "tflops": round(tflops, 3)}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
