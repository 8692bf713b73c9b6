#!/usr/bin/env python3
"""PyTorch side of attn-bench-cuda-attention (tests/bench/cuda-attention.cu): the same sizes
through torch.nn.functional.scaled_dot_product_attention restricted to its FlashAttention-2
backend, timed the same way (CUDA events, median after warm-up), one JSON line per size.
scripts/gpu-check.sh runs both and prints the ratios.

    python3 tests/bench/cuda-attention.py [--json FILE] [--repeat N]
"""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--repeat", type=int, default=20)
    a = ap.parse_args()
    try:
        import torch
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError as e:
        print(f"cuda-attention.py: skipped: {e}")
        return 77
    if not torch.cuda.is_available():
        print("cuda-attention.py: skipped: no CUDA device")
        return 77

    def median_ms(f):
        for _ in range(3):
            f()
        torch.cuda.synchronize()
        times = []
        for _ in range(a.repeat):
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            f()
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop))
        return sorted(times)[len(times) // 2]

    H, D, tokens = 16, 128, 16384
    out = open(a.json, "w") if a.json else None
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}")
    print(f"{'S':6} {'causal':7} {'fwd TFLOP/s':>12} {'f+b TFLOP/s':>12}")
    for S in (2048, 4096, 8192, 16384):
        for causal in (False, True):
            B = tokens // S
            q, k, v = (torch.rand(B, H, S, D, device="cuda", dtype=torch.bfloat16,
                                  requires_grad=True) * 2 - 1 for _ in range(3))
            q, k, v = (x.detach().requires_grad_() for x in (q, k, v))
            g = torch.rand(B, H, S, D, device="cuda", dtype=torch.bfloat16) * 2 - 1

            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                def fwd():
                    with torch.no_grad():
                        torch.nn.functional.scaled_dot_product_attention(q, k, v,
                                                                         is_causal=causal)

                def fwd_bwd():
                    o = torch.nn.functional.scaled_dot_product_attention(q, k, v,
                                                                         is_causal=causal)
                    o.backward(g)

                flops = 4.0 * B * H * S * S * D / (2 if causal else 1)
                tf = flops / (median_ms(fwd) * 1e-3) / 1e12
                tfb = 3.5 * flops / (median_ms(fwd_bwd) * 1e-3) / 1e12
            print(f"{S:<6} {'yes' if causal else 'no':7} {tf:12.1f} {tfb:12.1f}")
            if out:
                out.write(json.dumps({"S": S, "causal": causal, "fwd_tflops": round(tf, 2),
                                      "fwd_bwd_tflops": round(tfb, 2)}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
