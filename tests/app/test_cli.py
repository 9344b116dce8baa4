#!/usr/bin/env python3
"""femto-app's behaviour at its edges: exit codes, the one-sentence messages, and no results after a failure.

usage: test_cli.py FEMTO_APP INPUTS_DIR WORK_DIR
Each case runs femto-app and checks the exit code, the text on stderr (exactly, after the work directory is
replaced by @WORK@ and the inputs directory by @INPUTS@) or a part of stdout, and what the output directory
holds. Standard library only."""
import os
import re
import shutil
import subprocess
import sys

app, inputs, work = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
failures = 0

FIN = f"""<?xml version="1.0" encoding="UTF-8"?>
<femto>
  <mesh file="{inputs}/heat-fin-2d/fin.msh"/>
  <discretization order="2"/>
  <heat>
    <material region="{{region}}" conductivity="200"/>
    <temperature boundary="base" value="373.15"/>
    <convection boundary="{{boundary}}" h="25" ambient="293.15"/>
  </heat>
  <output directory="{work}/out" basename="fin">{{probe}}</output>
</femto>
"""
BAR = open(os.path.join(inputs, "heat-kt-bar", "bar.xml")).read().replace(
    'file="bar.msh"', f'file="{inputs}/heat-kt-bar/bar.msh"').replace(
    '</heat>', '</heat>\n  <solver><newton max-iterations="1"/></solver>').replace(
    'directory="results"', f'directory="{work}/out-bar"')


def write(name, text):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def fin(region="fin", boundary="faces", probe=""):
    return FIN.replace("{region}", region).replace("{boundary}", boundary).replace("{probe}", probe)


def line_of(text, needle):
    return text.splitlines().index(next(l for l in text.splitlines() if needle in l)) + 1


def case(name, args, code, stderr=None, stdout_has=None, no_results_in=None):
    global failures
    run = subprocess.run([app] + args, capture_output=True, text=True)
    err = run.stderr.replace(work, "@WORK@").replace(inputs, "@INPUTS@").strip()
    problems = []
    if run.returncode != code:
        problems.append(f"exit code {run.returncode}, expected {code}")
    if stderr is not None and (err != stderr if isinstance(stderr, str) else not re.fullmatch(stderr, err)):
        problems.append(f"stderr\n    {err!r}\n  expected\n    {stderr if isinstance(stderr, str) else stderr.pattern!r}")
    if stdout_has and stdout_has not in run.stdout:
        problems.append(f"stdout lacks {stdout_has!r}:\n{run.stdout}")
    if no_results_in and os.path.isdir(no_results_in):
        left = [f for f in os.listdir(no_results_in) if re.search(r"\.(vtu|pvd|h5|xdmf|txt)$", f)]
        if left:
            problems.append(f"results left behind after the failure: {left}")
    print(("ok   " if not problems else "FAIL ") + name)
    for p in problems:
        print("  " + p)
    failures += bool(problems)


# usage errors: exit 1
case("no arguments", [], 1, stdout_has=None)
case("unknown command", ["frobnicate", "x.xml"], 1,
     "femto-app: unknown command 'frobnicate' (expected run, check or info)\nTry 'femto-app --help'.")
case("order out of range", ["run", "x.xml", "--order", "9"], 1,
     "femto-app: --order needs an element order from 1 to 8\nTry 'femto-app --help'.")
case("device name", ["run", "x.xml", "--device", "tpu"], 1,
     "femto-app: --device must be cpu, cuda or auto, not 'tpu'\nTry 'femto-app --help'.")
case("no file", ["run"], 1, "femto-app: 'run' needs a file\nTry 'femto-app --help'.")
case("version", ["--version"], 0, "", stdout_has="femto 0.1.0")
case("help of run", ["run", "--help"], 0, "", stdout_has="leaves the previous results in the directory as they were")

# bad references between the problem and the mesh: exit 2, file and line
text = fin(boundary="fins")
p = write("bad_boundary.xml", text)
case("boundary the mesh lacks", ["check", p], 2,
     f"femto-app: @WORK@/bad_boundary.xml:{line_of(text, 'fins')}: the mesh '@INPUTS@/heat-fin-2d/fin.msh' has no "
     "boundary named 'fins' (a 1D physical group); it has: 'base', 'faces', 'tip'")
text = fin(region="aluminium")
p = write("bad_region.xml", text)
case("region the mesh lacks", ["check", p], 2,
     f"femto-app: @WORK@/bad_region.xml:{line_of(text, 'aluminium')}: the mesh '@INPUTS@/heat-fin-2d/fin.msh' has "
     "no region named 'aluminium' (a 2D physical group); it has: 'fin'")
text = fin(probe='<probe name="far" x="1" y="1"/>')
p = write("bad_probe.xml", text)
case("probe outside the mesh", ["check", p], 2,
     f"femto-app: @WORK@/bad_probe.xml:{line_of(text, 'probe')}: probe 'far' at (1, 1, 0) m lies outside the mesh "
     "'@INPUTS@/heat-fin-2d/fin.msh'")
p = write("good.xml", fin())
case("order beyond the triangles' 3 on a quad mesh is fine", ["check", p, "--order", "5"], 0, "")
case("check passes", ["check", p], 0, "", stdout_has="the problem and its mesh are consistent")
case("info on a problem file", ["info", p], 0, "", stdout_has="physical groups:")
case("mesh file missing", ["info", os.path.join(work, "nothere.msh")], 2,
     "femto-app: cannot open mesh file '@WORK@/nothere.msh': No such file or directory")

# a solver that fails: exit 3, the reason, and no results
p = write("bar_fails.xml", BAR)
case("Newton iteration limit", ["run", p, "--device", "cpu", "-q"], 3,
     re.compile(r"femto-app: Newton did not converge: reached the iteration limit \(1\) with \|R\| = \S+, above the "
                r"tolerance \S+ \(\S+ of the residual scale \S+\)"), no_results_in=os.path.join(work, "out-bar"))

# problems without a unique solution are refused before solving, by check and by run (issue 11)
BEAM = open(os.path.join(inputs, "cantilever", "cantilever.xml")).read().replace(
    'file="cantilever.msh"', f'file="{inputs}/cantilever/cantilever.msh"').replace(
    'directory="results"', f'directory="{work}/out-beam"')
text = BEAM.replace('<fixed boundary="clamp"/>', '')
p = write("floating.xml", text)
for cmd in ("check", "run"):
    case(f"elastic body with no support ({cmd})", [cmd, p, "--device", "cpu"], 2,
         "femto-app: @WORK@/floating.xml: the elastic body has no support (no <fixed> or <displacement> boundary), "
         "so nothing holds it in place and its displacement is not determined; add a support",
         no_results_in=os.path.join(work, "out-beam"))
p = write("rolling.xml", BEAM.replace('<fixed boundary="clamp"/>', '<fixed boundary="clamp" components="x"/>'))
case("supports that leave rigid motions free", ["run", p, "--device", "cpu"], 2,
     "femto-app: @WORK@/rolling.xml: the supports leave the elastic body free to move (translation along y, "
     "translation along z, rotation about the x axis), so its displacement is not determined; constrain more "
     "components or add a support", no_results_in=os.path.join(work, "out-beam"))
p = write("roller_and_pin.xml", BEAM.replace('<fixed boundary="clamp"/>', '<fixed boundary="clamp" components="xz"/>'))
case("supports that leave one translation free", ["check", p], 2,
     "femto-app: @WORK@/roller_and_pin.xml: the supports leave the elastic body free to move (translation along y), "
     "so its displacement is not determined; constrain more components or add a support")
text = fin().replace('<temperature boundary="base" value="373.15"/>', '<flux boundary="base" value="1000"/>').replace(
    '<convection boundary="faces" h="25" ambient="293.15"/>', '')
p = write("floating_level.xml", text)
for cmd in ("check", "run"):
    case(f"steady heat with fluxes only ({cmd})", [cmd, p], 2,
         "femto-app: @WORK@/floating_level.xml: the steady heat problem has nothing that fixes the temperature level "
         "(no <temperature>, <convection> or <radiation> boundary with a positive coefficient), so its temperature is "
         "determined only up to a constant; add one")

# a linear solve that stops at its cap is reported: a warning line and exit 3 with the reason (restarting a
# truncated CG from scratch cannot reach what one uninterrupted solve would); no results
p = write("capped.xml", BEAM.replace('</elasticity>', '</elasticity>\n  <solver><linear max-iterations="40"/></solver>'))
case("capped linear solve", ["run", p, "--device", "cpu"], 3,
     re.compile(r"warning: 1 linear solve stopped at the cap of 40 iterations without converging \(raise <linear "
                r"max-iterations> or choose a stronger preconditioner\)\n"
                r"femto-app: the linear elasticity solve did not converge: the linear solver stopped at its cap of 40 "
                r"iterations \(\|r\|/\|b\| = \S+, needed 1\.0e-08\), and restarting it does not reduce \|R\|; raise "
                r"<linear max-iterations> or use a stronger preconditioner"),
     no_results_in=os.path.join(work, "out-beam"))

# a nonlinear run that cannot converge ends (bounded cutbacks, a floor on the increment) with exit 3 and why
NH = open(os.path.join(inputs, "cantilever-neohookean", "beam.xml")).read().replace(
    'file="beam.msh"', f'file="{inputs}/cantilever-neohookean/beam.msh"').replace(
    'directory="results"', f'directory="{work}/out-nh"').replace(
    '<newton load-steps="20"/>', '<newton load-steps="1" max-iterations="3"/>')
p = write("nh_fails.xml", NH)
case("nonlinear load stepping gives up", ["run", p, "--device", "cpu", "-q"], 3,
     re.compile(r"femto-app: the load step from 0 to 0\.0009766 of the full load failed 11 times in a row \(the "
                r"increment cannot be cut further\): reached the iteration limit \(3\) with .*"),
     no_results_in=os.path.join(work, "out-nh"))

# output paths: a file where a directory should be, exit 2, nothing half written
blocker = write("not-a-dir", "x")
case("output under a regular file", ["run", p.replace("bar_fails", "good"), "--output-dir",
                                     os.path.join(blocker, "out"), "-q"], 2,
     "femto-app: cannot create output directory '@WORK@/not-a-dir/out': Not a directory")
case("output directory created", ["run", os.path.join(work, "good.xml"), "--output-dir",
                                  os.path.join(work, "new", "deeper"), "-q", "--device", "cpu"], 0, "")
made = sorted(os.listdir(os.path.join(work, "new", "deeper")))
expect = ["fin.h5", "fin.pvd", "fin.xdmf", "fin_0000.vtu", "fin_summary.txt"]
if made != expect:
    print(f"FAIL output files: {made}, expected {expect}")
    failures += 1
if any(f.startswith(".") for f in made):
    print(f"FAIL temporary files left: {made}")
    failures += 1

# --device cuda: a clear device error (exit 4) where there is no GPU, a run where there is one
run = subprocess.run([app, "run", os.path.join(work, "good.xml"), "--device", "cuda", "-q", "--output-dir",
                      os.path.join(work, "cuda")], capture_output=True, text=True)
if run.returncode == 4 and re.match(r"femto-app: (no CUDA device is available|this femto-app was built without CUDA)",
                                    run.stderr):
    print("ok   --device cuda without a GPU: " + run.stderr.strip())
elif run.returncode == 0:
    print("ok   --device cuda ran on a GPU")
else:
    print(f"FAIL --device cuda: exit {run.returncode}, {run.stderr.strip()}")
    failures += 1

print(f"{failures} failure(s)")
sys.exit(1 if failures else 0)
