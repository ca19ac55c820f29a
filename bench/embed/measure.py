#!/usr/bin/env python3
"""Runs a command and reports its wall time and the peak memory of its whole process tree.

Usage: measure.py RESULTS_FILE LABEL -- COMMAND...

Peak memory is the largest sum of resident set sizes (VmRSS) of the command and all its
descendants, sampled every 10 ms from /proc (Linux). Appends one JSON line
{"label", "seconds", "peak_bytes", "status"} to RESULTS_FILE and prints a summary on stderr.
The command's stdout and stderr pass through.
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


def rss(pid):
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def tree_rss(root):
    kids = children_map()
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += rss(pid)
        stack.extend(kids.get(pid, []))
    return total


def main():
    results, label, sep, *cmd = sys.argv[1:]
    assert sep == "--" and cmd, __doc__
    start = time.monotonic()
    proc = subprocess.Popen(cmd)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, tree_rss(proc.pid))
        time.sleep(0.01)
    seconds = time.monotonic() - start
    with open(results, "a") as f:
        f.write(json.dumps({"label": label, "seconds": seconds, "peak_bytes": peak,
                            "status": proc.returncode}) + "\n")
    print(f"  {label}: {seconds:.2f} s, peak {peak / 1e9:.2f} GB, exit {proc.returncode}",
          file=sys.stderr)
    sys.exit(proc.returncode)


main()
