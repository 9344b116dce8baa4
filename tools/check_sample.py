#!/usr/bin/env python3
"""Runs one sample problem and compares its key numbers with the expected values kept beside it.

usage: check_sample.py FEMTO_APP SAMPLE.xml EXPECTED.txt OUTPUT_DIR [femto-app options...]

EXPECTED.txt holds one line per number:  key  expected  rel_tol  abs_tol  source...
A number passes when |actual - expected| <= max(rel_tol * |expected|, abs_tol). The actual numbers come
from OUTPUT_DIR/NAME_summary.txt, which femto-app writes at the end of a run. A run that warns (the summary's
`warnings` count) fails unless EXPECTED.txt lists that key. Standard library only.
"""
import glob
import os
import subprocess
import sys


def main():
    if len(sys.argv) < 5:
        print(__doc__)
        return 2
    app, xml, expected_path, outdir = sys.argv[1:5]
    extra = sys.argv[5:]
    os.makedirs(outdir, exist_ok=True)
    for old in glob.glob(os.path.join(outdir, "*_summary.txt")):
        os.remove(old)
    run = subprocess.run([app, "run", xml, "--output-dir", outdir, "-q"] + extra, capture_output=True, text=True)
    if run.returncode != 0:
        print(f"femto-app exited with {run.returncode}:\n{run.stdout}{run.stderr}")
        return 1
    summaries = glob.glob(os.path.join(outdir, "*_summary.txt"))
    if len(summaries) != 1:
        print(f"expected one *_summary.txt in {outdir}, found {summaries}")
        return 1
    actual = {}
    for line in open(summaries[0]):
        if line.startswith("#") or not line.strip():
            continue
        parts = line.split()
        actual[parts[0]] = float(parts[1])
    failures = 0
    # a sample is a trustworthy answer: it must not trip femto's plausibility warnings unless it says so
    listed = any(line.split()[:1] == ["warnings"] for line in open(expected_path))
    if not listed and actual.get("warnings", 0) != 0:
        print(f"FAIL warnings: the run warned {actual['warnings']:g} time(s):\n{run.stderr}")
        failures += 1
    for line in open(expected_path):
        if line.startswith("#") or not line.strip():
            continue
        key, value, rtol, atol = line.split()[:4]
        value, rtol, atol = float(value), float(rtol), float(atol)
        if key not in actual:
            print(f"FAIL {key}: not in the run's summary ({sorted(actual)})")
            failures += 1
            continue
        got = actual[key]
        err = abs(got - value)
        ok = err <= max(rtol * abs(value), atol)
        print(f"{'ok  ' if ok else 'FAIL'} {key}: {got:.10g} (expected {value:.10g}, |diff| {err:.3g}, "
              f"allowed {max(rtol * abs(value), atol):.3g})")
        failures += not ok
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
