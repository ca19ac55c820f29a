#!/usr/bin/env python3
"""Runs a command and reports its wall time and the peak memory of its whole process tree.

Usage: measure.py RESULTS_FILE LABEL -- COMMAND...

Peak memory is the largest sum of resident set sizes (VmRSS) of the command and all its
descendants, sampled every 10 ms from /proc (Linux). At that peak, the memory is also kept per
process name (`cargo`, `rustc`, `rust-lld`, the build script, ...; processes of one name
summed), so that a report can say where the peak is.

With WEBNN_BENCH_PSS=1 it also samples each process's proportional set size (Pss in
/proc/PID/smaps_rollup: a page mapped by n processes counts 1/n in each), whose sum counts
the pages two processes share (a library mapped by both rustc and the linker) once. Off by
default: the kernel walks every page table of the tree for it, which takes CPU time from the
build being measured (most from the largest one).

Appends one JSON line {"label", "seconds", "peak_bytes", "peak_by_process", "status"} (and
"peak_pss_bytes" with WEBNN_BENCH_PSS=1) to RESULTS_FILE and prints a summary on stderr. The
command's stdout and stderr pass through.
"""
import json
import os
import subprocess
import sys
import time


def children_map():
    kids = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # the command name may contain spaces; fields after the last ')' are fixed
        rest = stat[stat.rfind(b")") + 2:].split()
        kids.setdefault(int(rest[1]), []).append(int(name))
    return kids


def name_and_rss(pid):
    """The process's name and VmRSS in bytes (None when it is gone)."""
    name, rss = None, 0
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"Name:"):
                    name = line.split(b":", 1)[1].strip().decode(errors="replace")
                elif line.startswith(b"VmRSS:"):
                    rss = int(line.split()[1]) * 1024
    except OSError:
        return None
    return name, rss


def pss(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
            for line in f:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def tree(root, with_pss):
    """[(name, rss, pss)] of ROOT and all its descendants."""
    kids = children_map()
    out, stack = [], [root]
    while stack:
        pid = stack.pop()
        found = name_and_rss(pid)
        if found is not None:
            out.append((*found, pss(pid) if with_pss else 0))
        stack.extend(kids.get(pid, []))
    return out


def main():
    results, label, sep, *cmd = sys.argv[1:]
    assert sep == "--" and cmd, __doc__
    with_pss = os.environ.get("WEBNN_BENCH_PSS") == "1"
    start = time.monotonic()
    proc = subprocess.Popen(cmd)
    peak, peak_pss, by_process = 0, 0, {}
    while proc.poll() is None:
        sample = tree(proc.pid, with_pss)
        total = sum(rss for _, rss, _ in sample)
        if total > peak:
            peak, by_process = total, {}
            for name, rss, _ in sample:
                by_process[name] = by_process.get(name, 0) + rss
        peak_pss = max(peak_pss, sum(p for _, _, p in sample))
        time.sleep(0.01)
    seconds = time.monotonic() - start
    record = {"label": label, "seconds": seconds, "peak_bytes": peak,
              "peak_by_process": by_process, "status": proc.returncode}
    if with_pss:
        record["peak_pss_bytes"] = peak_pss
    with open(results, "a") as f:
        f.write(json.dumps(record) + "\n")
    print(f"  {label}: {seconds:.2f} s, peak {peak / 1e9:.2f} GB, exit {proc.returncode}",
          file=sys.stderr)
    sys.exit(proc.returncode)


main()
