"""What the PyTorch sides of the GPU benchmarks share (cuda-attention.py, cuda-recurrent.py):
their flags (--json FILE, --repeat N, as the C++ sides'), importing torch with a GPU (or the
skip, 77), and the timing protocol of tests/bench/CudaBench.cuh (CUDA events, the median of
--repeat runs after three untimed ones).
"""

import argparse


def setup(doc, repeat):
    """(args, torch), or (None, None) after saying why where there is no torch or no GPU."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--json")
    ap.add_argument("--repeat", type=int, default=repeat)
    args = ap.parse_args()
    try:
        import torch
    except ImportError as e:
        print(f"skipped: {e}")
        return None, None
    if not torch.cuda.is_available():
        print("skipped: no CUDA device")
        return None, None
    return args, torch


def median_ms(torch, f, repeat):
    for _ in range(3):
        f()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        f()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return sorted(times)[len(times) // 2]
