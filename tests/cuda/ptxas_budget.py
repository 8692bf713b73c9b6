#!/usr/bin/env python3
"""Compile-only check of the CUDA kernels' resources: every kernel of a .cu file, compiled for
sm_90, must use no stack frame and spill nothing (a spill puts a tile's accumulators in local
memory, many times slower), and stay under a register budget. Prints one line per kernel.

  ptxas_budget.py --nvcc NVCC --source FILE.cu --include DIR --expect N [--max-registers R]
"""
import argparse
import re
import subprocess
import sys


def demangle(names):
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True)
    if out.returncode != 0:
        return names
    return [re.sub(r"\(.*", "", n.replace("attn::cuda::(anonymous namespace)::", ""))
            for n in out.stdout.splitlines()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvcc", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--include", action="append", default=[])
    ap.add_argument("--expect", type=int, required=True, help="number of kernels")
    ap.add_argument("--max-registers", type=int, default=255)
    args = ap.parse_args()

    cmd = [args.nvcc, "-std=c++17", "-arch=sm_90", "--resource-usage", "-c", args.source,
           "-o", "/dev/null"] + ["-I" + d for d in args.include]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        print(run.stdout + run.stderr)
        print("ptxas_budget: nvcc failed: " + " ".join(cmd))
        return 1
    kernels, name = [], None
    for line in (run.stdout + run.stderr).splitlines():
        m = re.search(r"Function properties for (\S+)", line)
        if m:
            name = m.group(1)
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads",
                      line)
        if m and name:
            stack, spill_st, spill_ld = map(int, m.groups())
            continue
        m = re.search(r"Used (\d+) registers", line)
        if m and name:
            kernels.append((name, int(m.group(1)), stack, spill_st + spill_ld))
            name = None
    failures = 0
    for pretty, (_, regs, stack, spill) in zip(demangle([k[0] for k in kernels]), kernels):
        bad = stack or spill or regs > args.max_registers
        failures += bool(bad)
        print(f"{'FAIL' if bad else 'ok  '} {regs:4d} registers {stack:4d} B stack "
              f"{spill:4d} B spilled  {pretty}")
    if len(kernels) != args.expect:
        print(f"ptxas_budget: {len(kernels)} kernels compiled, expected {args.expect}")
        failures += 1
    print(f"ptxas_budget: {len(kernels)} kernels, {failures} over budget")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
