#!/usr/bin/env python3
"""PyTorch side of attn-bench-cuda-attention (tests/bench/cuda-attention.cu): the same sizes
through torch.nn.functional.scaled_dot_product_attention restricted to its FlashAttention-2
backend, timed the same way (CUDA events, median after warm-up), one JSON line per size.
scripts/gpu-check.sh runs both and prints the ratios.

    python3 tests/bench/cuda-attention.py [--json FILE] [--repeat N]
"""
import json
import sys

import cuda_bench


def main():
    a, torch = cuda_bench.setup(__doc__, repeat=20)
    if torch is None:
        return 77
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError as e:  # a PyTorch before 2.3
        print(f"skipped: {e}")
        return 77

    def median_ms(f):
        return cuda_bench.median_ms(torch, f, a.repeat)

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
