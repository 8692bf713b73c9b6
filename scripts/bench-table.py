#!/usr/bin/env python3
"""Writes the current table of docs/benchmarks.md from one scripts/bench.sh run.

    scripts/bench-table.py bench-results > bench-results/table.md
    scripts/bench-table.py bench-results --paste docs/benchmarks.md   # the page's table, replaced

Reads the benchmarks' outputs in DIR (<benchmark>-<threads>t.txt, as scripts/bench.sh writes
them): their `table: | ... |` rows (BenchSupport.h, printTableRow), grouped by workload in the
order the benchmarks print them, one thread before two; their `calibration:` lines, for the
range of the GEMM peak at each thread count; and the machine, commit and library versions, so
that the page says what it was measured on.
"""

import collections
import glob
import os
import re
import subprocess
import sys

HEADER = ("| workload | threads | attnc | PyTorch at its best | PyTorch, glibc malloc | "
          "PyTorch / attnc | attnc % of peak | PyTorch % of peak | goal | met |")
ORDER = ["matmul-softmax", "rnn-sine-train-step", "recurrent-train-step", "attention-train-step",
         "tagger-train-step", "transformer", "attention-kernels", "convs2s"]  # as bench.sh


def run(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def machine():
    model = "unknown CPU"
    for line in run("lscpu").splitlines():
        if line.startswith("Model name:"):
            model = line.split(":", 1)[1].strip()
    return f"{model}, {os.cpu_count()} vCPUs"


def main(directory):
    """The table, as markdown text."""
    files = []
    for name in ORDER:
        for threads in (1, 2):
            path = os.path.join(directory, f"{name}-{threads}t.txt")
            if os.path.exists(path):
                files.append((name, threads, path))
    if not files:
        sys.exit(f"bench-table: no benchmark outputs in {directory}")
    rows = collections.OrderedDict()  # workload -> {threads: row}
    peaks = collections.defaultdict(list)
    blas, torch = set(), set()
    missing = []
    for name, threads, path in files:
        text = open(path, encoding="utf-8", errors="replace").read()
        found = False
        for line in text.splitlines():
            if line.startswith("table: |"):
                found = True
                row = line[len("table: "):]
                workload = row.split("|")[1].strip()
                rows.setdefault(workload, {})[threads] = row
            m = re.match(r"calibration: .* (\d+) threads?: .*; peak ([\d.]+) GFLOP/s", line)
            if m:
                peaks[int(m.group(1))].append(float(m.group(2)))
                b = re.search(r"PyTorch [\d.]+ GFLOP/s \(([^)]*)\)", line)
                if b:
                    blas.add(b.group(1))
            t = re.search(r"\(torch (\d+\.\d+[^\s,)]*)", line)
            if t:
                torch.add(t.group(1))
        if not found:
            missing.append(os.path.basename(path))
    commit = run("git", "log", "-1", "--format=%h (%s), %cs")
    dnnl = run("dpkg-query", "-W", "-f=${Version}", "libdnnl-dev") or "unknown"
    out = []
    out.append(f"Measured by `scripts/bench.sh` at commit {commit or 'unknown'}, on {machine()}; "
               f"torch {', '.join(sorted(torch)) or 'not found'}"
               f" on {', '.join(sorted(blas)) or 'no PyTorch BLAS reported'}; oneDNN {dnnl}.")
    peak_text = "; ".join(
        f"{t} thread{'s' if t > 1 else ''} {min(v):.0f}-{max(v):.0f} GFLOP/s"
        for t, v in sorted(peaks.items()))
    out.append(f"Peak: the faster of oneDNN's and PyTorch's f32 GEMM 1024^3, measured in each "
               f"benchmark's own run ({peak_text or 'no calibration line found'}). PyTorch at its "
               f"best: the faster of its glibc-malloc and tcmalloc runs, timed in the same "
               f"repetitions.")
    if missing:
        out.append(f"No table rows in: {', '.join(missing)} (see those files).")
    out.append("")
    out.append(HEADER)
    out.append("|" + "---|" * HEADER.count(" | ") + "---|")
    for workload, by_threads in rows.items():
        for threads in sorted(by_threads):
            out.append(by_threads[threads])
    return "\n".join(out)


BEGIN = "<!-- BEGIN bench-results/table.md"
END = "<!-- END bench-results/table.md -->"


def paste(table, page):
    """Replaces the lines between the page's BEGIN and END markers with `table`."""
    text = open(page, encoding="utf-8").read()
    begin, end = text.find(BEGIN), text.find(END)
    if begin < 0 or end < begin:
        sys.exit(f"bench-table: {page} has no '{BEGIN} ...' and '{END}' lines")
    begin = text.index("\n", begin) + 1
    with open(page, "w", encoding="utf-8") as f:
        f.write(text[:begin] + table + "\n" + text[end:])


if __name__ == "__main__":
    args = sys.argv[1:]
    directory = args[0] if args and not args[0].startswith("--") else "bench-results"
    table = main(directory)
    if "--paste" in args:
        paste(table, args[args.index("--paste") + 1])
    else:
        print(table)
