#!/usr/bin/env python3
"""A mesh that crashes or hangs the Gmsh library must not take femto-app down.

usage: crash_check.py FEMTO_APP MESH.msh WORK_DIR
Runs `femto-app info MESH`, and `check` and `run` on a problem whose mesh is MESH. Each must exit with 2 (not a
signal, not the time limit of this test), print exactly one line on stderr that names the file and ends a
sentence, print nothing on stdout but the lines before the mesh (`run` and `check` name the problem first), and
finish within SECONDS (the reader's own time limit for a file this small is 20 s). Standard library only."""
import os
import shutil
import subprocess
import sys
import time

SECONDS = 10

app, mesh, work = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
problem = os.path.join(work, "problem.xml")
with open(problem, "w") as f:
    f.write(f"""<?xml version="1.0" encoding="UTF-8"?>
<femto>
  <mesh file="{mesh}"/>
  <heat>
    <material region="domain" conductivity="1"/>
    <temperature boundary="left" value="300"/>
  </heat>
  <output directory="{work}/out"/>
</femto>
""")

failures = 0
for args in (["info", mesh], ["check", problem], ["run", problem, "--device", "cpu"]):
    start = time.monotonic()
    try:
        run = subprocess.run([app] + args, capture_output=True, text=True, timeout=3 * SECONDS)
    except subprocess.TimeoutExpired:
        print(f"FAIL {args[0]}: still running after {3 * SECONDS} s")
        failures += 1
        continue
    seconds = time.monotonic() - start
    err = run.stderr.splitlines()
    problems = []
    if run.returncode != 2:
        what = f"signal {-run.returncode}" if run.returncode < 0 else f"exit code {run.returncode}"
        problems.append(f"{what}, expected exit code 2")
    # Gmsh's own messages end as they do ("Wrong node index 49"); what must not happen is a cut (": ", ",")
    if len(err) != 1 or not err[0].startswith("femto-app: ") or mesh not in err[0] or not (
            err[0][-1].isalnum() or err[0][-1] in ").'\""):
        problems.append(f"stderr is not one sentence naming the mesh: {run.stderr!r}")
    if any(not line.startswith("femto ") for line in run.stdout.splitlines()):
        problems.append(f"unexpected output on stdout: {run.stdout!r}")
    if seconds > SECONDS:
        problems.append(f"took {seconds:.1f} s (more than {SECONDS} s)")
    if os.path.exists(os.path.join(work, "out")):
        problems.append("an output folder was made")
    print(f"{'FAIL' if problems else 'ok  '} {args[0]} ({seconds:.2f} s): {err[0] if err else ''}")
    for p in problems:
        print(f"     {p}")
    failures += bool(problems)
sys.exit(1 if failures else 0)
