"""What the PyTorch sides of the train-step benchmarks share: reading the C++ side's
safetensors file, and the timing protocol.

With --serve the script prints `ready <torch version> <loss of step 1> <loss after warm-up>`,
then answers each `rep` line on stdin with the seconds per step of `iters` steps, and ends with
`median <seconds>`; the C++ benchmark interleaves these repetitions with its own.
"""

import json
import struct
import sys
import time


def read_safetensors(path, np):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    data = raw[8 + n:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        assert info["dtype"] == "F32", name
        begin, end = info["data_offsets"]
        out[name] = np.frombuffer(data[begin:end], dtype="<f4").reshape(info["shape"]).copy()
    return out


def time_steps(train_step, a, torch_version):
    """Warm-up, then timed repetitions of `a.iters` calls of train_step (which returns the
    loss); returns the median seconds per step (`a.warmup`, `a.reps`, `a.serve` as above)."""

    def rep():
        start = time.perf_counter()
        for _ in range(a.iters):
            train_step()
        return (time.perf_counter() - start) / a.iters

    first = float(train_step().detach())
    last = first
    for _ in range(a.warmup - 1):
        last = float(train_step().detach())
    times = []
    if a.serve:
        print(f"ready {torch_version} {first:.9g} {last:.9g}", flush=True)
        for line in sys.stdin:
            if line.strip() != "rep":
                break
            times.append(rep())
            print(f"{times[-1]:.9g}", flush=True)
    else:
        times = [rep() for _ in range(a.reps)]
    times.sort()
    n = len(times)
    med = (times[n // 2] if n % 2 else 0.5 * (times[n // 2 - 1] + times[n // 2])) if n else float("nan")
    print(f"median {med:.9g}", flush=True)
    return med
