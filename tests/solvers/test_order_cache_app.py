#!/usr/bin/env python3
"""The direct coarse solver's ordering kept in the mesh cache, as femto-app uses it (CPU: CHOLMOD).

usage: test_order_cache_app.py FEMTO_APP BENCH_PROBLEMS_DIR WORK_DIR

The benchmark's tetrahedral cantilever (.geo, p = 2, about 20k dofs) run four times with FEMTO_MESH_CACHE=WORK/cache:
  1. the first run orders the order-1 matrix and stores the ordering ("ordering cached", one order-*.perm file);
  2. the second reads it ("cached ordering") and gives the same CG count and displacements to 1e-12 relative;
  3. after the entry is damaged (truncated), a run ignores it, orders again and stores a fresh entry, same answers;
  4. with FEMTO_MESH_CACHE=off nothing is cached and the preconditioner line says no ordering came from a cache.
Exit 77 (skipped) when femto has no CHOLMOD. Standard library only."""
import glob
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from app_checks import Checks  # noqa: E402

app, problems, work = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
shutil.copy(os.path.join(problems, "cantilever-tet.geo"), work)
text = open(os.path.join(problems, "cantilever-tet.xml")).read()
xml = os.path.join(work, "beam.xml")
open(xml, "w").write(re.sub(r'size="[0-9.e-]+"', 'size="0.02"', text, count=1))
cache = os.path.join(work, "cache")
check = Checks()


def run(name, cache_env):
    out = os.path.join(work, name)
    env = dict(os.environ, FEMTO_MESH_CACHE=cache_env, OMP_NUM_THREADS="2")
    r = subprocess.run([app, "run", xml, "--device", "cpu", "-v", "--output-dir", out], capture_output=True,
                       text=True, timeout=300, env=env)
    line = next((l for l in r.stdout.splitlines() if l.strip().startswith("preconditioner:")), "")
    values = {}
    files = glob.glob(os.path.join(out, "*_summary.txt")) if r.returncode == 0 else []
    for l in open(files[0]) if files else []:
        parts = l.split()
        if len(parts) >= 2 and (parts[0] == "linear_iterations" or parts[0].startswith("displacement_")):
            values[parts[0]] = float(parts[1])
    return r, line, values


def same(a, b):
    return a.keys() == b.keys() and a and all(abs(a[k] - b[k]) <= 1e-12 * max(abs(a[k]), 1e-30) for k in a)


r1, line1, v1 = run("first", cache)
if r1.returncode == 0 and "coarse: CHOLMOD" not in line1:
    print("skipped: the coarse solver is not CHOLMOD here: " + line1)
    sys.exit(77)
entries = glob.glob(os.path.join(cache, "order-*.perm"))
check(r1.returncode == 0 and "ordering cached" in line1 and len(entries) == 1,
      f"the first run stores its ordering (exit {r1.returncode}, {len(entries)} entries): {line1.strip()[:200]}")
r2, line2, v2 = run("second", cache)
check(r2.returncode == 0 and "cached ordering" in line2, f"the second run reads it: {line2.strip()[:200]}")
check(same(v1, v2), f"the same CG count and displacements: {v1} / {v2}")
if entries:
    with open(entries[0], "r+b") as f:
        f.truncate(os.path.getsize(entries[0]) // 2)
r3, line3, v3 = run("damaged", cache)
check(r3.returncode == 0 and "ordering cached" in line3 and os.path.getsize(entries[0]) > 32 if entries else False,
      f"a damaged entry is ignored and stored afresh: {line3.strip()[:200]}")
check(same(v1, v3), "the same answers after the damaged entry")
r4, line4, v4 = run("off", "off")
check(r4.returncode == 0 and "cached" not in line4 and same(v1, v4), f"no cache: {line4.strip()[:200]}")
check.exit("test_order_cache_app")
