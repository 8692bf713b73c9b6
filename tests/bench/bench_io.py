"""What the PyTorch sides of the train-step benchmarks share: the flags the C++ side passes,
importing torch, reading the C++ side's safetensors file, and the timing protocol.

With --serve the script prints `blas <GFLOP/s> <library and core>` (its f32 GEMM calibration,
see gemm_calibration), then `ready <torch version> <loss of step 1> <loss after warm-up>`,
then answers each `rep` line on stdin with `<seconds> <user> <system>`: the wall-clock, user
CPU and system CPU seconds per step of `iters` steps (getrusage of this process, so that a
baseline that spends its time in page faults shows itself), and ends with `median <seconds>`;
the C++ benchmark interleaves these repetitions with its own.
"""

import argparse
import ctypes
import json
import os
import resource
import struct
import sys
import time


def parse_args(doc, batches, warmup, reps, iters, **flags):
    """The command line: the flags every PyTorch side takes, with the C++ benchmark's defaults
    for --batches, --warmup, --reps and --iters, plus the model's own `flags`, name=default
    (--name-with-dashes, typed as the default; a tuple lists the choices, the first the
    default)."""
    p = argparse.ArgumentParser(description=doc.split("\n")[0])
    p.add_argument("--data")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--batches", type=int, default=batches)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--warmup", type=int, default=warmup)
    p.add_argument("--reps", type=int, default=reps)
    p.add_argument("--iters", type=int, default=iters)
    p.add_argument("--serve", action="store_true")
    p.add_argument("--precision", choices=("f32", "bf16", "int8"), default="f32")
    # The GPU's side of scripts/gpu-check.sh: the same step on CUDA, its median written as
    # {"ms_per_step": ...} to --json.
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--json")
    for name, default in flags.items():
        flag = "--" + name.replace("_", "-")
        if isinstance(default, tuple):
            p.add_argument(flag, choices=default, default=default[0])
        else:
            p.add_argument(flag, type=type(default), default=default)
    return p.parse_args()


def import_torch(a):
    """(numpy, torch), torch set to `a.threads` threads and seed 0. If they cannot be imported:
    prints the "error: ..." line that the C++ side shows as its note and exits with status 3."""
    try:
        import numpy as np
        import torch
    except ImportError as e:
        print(f"error: {sys.executable} cannot import torch/numpy ({e})", flush=True)
        sys.exit(3)
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    return np, torch


def blas_description():
    """The BLAS that torch's GEMMs run on, as OpenBLAS names it: "OpenBLAS <config> core <core>"
    (the core is what OPENBLAS_CORETYPE forces; the C++ side starts this process with it
    unset), or the library's path when it is not OpenBLAS."""
    libs = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if "blas" in os.path.basename(path) or "openblas" in path:
                libs.add(path)
    for path in sorted(libs):
        try:
            lib = ctypes.CDLL(path)
            lib.openblas_get_corename.restype = ctypes.c_char_p
            lib.openblas_get_config.restype = ctypes.c_char_p
        except (OSError, AttributeError):
            continue
        config = lib.openblas_get_config().decode().strip()  # "OpenBLAS 0.3.21 ... "
        return f"{config} core {lib.openblas_get_corename().decode()}"
    return "BLAS " + (", ".join(sorted(libs)) or "unknown (no BLAS library mapped)")


def gemm_calibration(torch, n=1024, reps=7):
    """torch's f32 GEMM throughput for n x n x n at its thread count: the best of `reps`
    products after a warm-up, in GFLOP/s."""
    a, b = torch.rand(n, n), torch.rand(n, n)
    c = torch.mm(a, b)
    best = float("inf")
    for _ in range(reps):
        start = time.perf_counter()
        torch.mm(a, b, out=c)
        best = min(best, time.perf_counter() - start)
    return 2.0 * n ** 3 / best / 1e9


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


def seq2seq_batches(d, a, torch):
    """The benchmark's seq2seq batches from its data file `d` (BenchSupport.h's
    writeSeq2SeqData): a.batches tuples (src, src_mask, tgt_in, tgt_out), ids as int64."""
    ids = lambda name: torch.from_numpy(d[name]).long()  # noqa: E731
    return [(ids(f"src{k}"), torch.from_numpy(d[f"src_mask{k}"]), ids(f"tgt_in{k}"),
             ids(f"tgt_out{k}")) for k in range(a.batches)]


def unused_weights(d, used, a):
    """The weights in the data file `d` that the PyTorch model did not take (`used`: their
    names), batches aside; a non-empty list means the two models differ."""
    batch_names = {f"{n}{k}" for n in ("src", "src_mask", "tgt_in", "tgt_out")
                   for k in range(a.batches)}
    return sorted(n for n in d if n not in used and n not in batch_names)


def seq2seq_loss(model, F):
    """loss_of for time_training: the cross-entropy of model(src, src_mask, tgt_in) [B, T, V]
    against tgt_out, padding (0) ignored, mean over the rest (attnc's @loss)."""
    def loss_of(src, src_mask, tgt_in, tgt_out):
        logits = model(src, src_mask, tgt_in)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1),
                               ignore_index=0)
    return loss_of


def autocast(a, torch, loss_of):
    """loss_of under torch.autocast('cpu', dtype=torch.bfloat16) with --precision bf16
    (PyTorch's mixed precision: the products in bf16; the loss, the weights and the optimizer in
    f32), else loss_of itself."""
    if a.precision != "bf16":
        return loss_of

    def mixed(*batch):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return loss_of(*batch).float()
    return mixed


def time_training(a, torch, opt, batches, loss_of, summary, after_backward=None):
    """Times training steps with time_steps; step s (1-based) trains on
    batches[(s - 1) % len(batches)], as the C++ side cycles them: zero the gradients (as a
    training loop must), loss_of(*batch), backward, after_backward() (gradient clipping, say),
    optimizer step. Without --serve it prints summary(median seconds per step). Returns 0, the
    script's exit status."""
    step = [0]

    def train_step():
        batch = batches[step[0] % len(batches)]
        step[0] += 1
        opt.zero_grad(set_to_none=True)
        loss = loss_of(*batch)
        loss.backward()
        if after_backward:
            after_backward()
        opt.step()
        return loss

    med = time_steps(train_step, a, torch.__version__)
    if not a.serve:
        print(summary(med))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"ms_per_step": med * 1e3, "torch": torch.__version__,
                       "device": a.device}, f)
            f.write("\n")
    return 0


def time_steps(train_step, a, torch_version):
    """Warm-up, then timed repetitions of `a.iters` calls of train_step (which returns the
    loss); returns the median seconds per step (`a.warmup`, `a.reps`, `a.serve` as above)."""

    import torch

    def rep():
        """(wall, user, system) seconds per step of a.iters steps."""
        before = resource.getrusage(resource.RUSAGE_SELF)
        start = time.perf_counter()
        for _ in range(a.iters):
            train_step()
        if a.device == "cuda":  # the steps are queued: time them done
            torch.cuda.synchronize()
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_SELF)
        return (wall / a.iters, (after.ru_utime - before.ru_utime) / a.iters,
                (after.ru_stime - before.ru_stime) / a.iters)

    first = float(train_step().detach())
    last = first
    for _ in range(a.warmup - 1):
        last = float(train_step().detach())
    times = []
    calibration = f"blas {gemm_calibration(torch):.1f} {blas_description()}"
    if a.serve:
        print(calibration, flush=True)
        print(f"ready {torch_version} {first:.9g} {last:.9g}", flush=True)
        for line in sys.stdin:
            if line.strip() != "rep":
                break
            wall, user, system = rep()
            times.append(wall)
            print(f"{wall:.9g} {user:.9g} {system:.9g}", flush=True)
    else:
        print(calibration)
        times = [rep()[0] for _ in range(a.reps)]
    times.sort()
    n = len(times)
    med = (times[n // 2] if n % 2 else 0.5 * (times[n // 2 - 1] + times[n // 2])) if n else float("nan")
    print(f"median {med:.9g}", flush=True)
    return med
