#!/usr/bin/env python3
"""femto-app's behaviour at its edges: exit codes, the one-sentence messages, and no results after a failure.

usage: test_cli.py FEMTO_APP INPUTS_DIR WORK_DIR
Each case runs femto-app and checks the exit code, the text on stderr (exactly, after the work directory is
replaced by @WORK@ and the inputs directory by @INPUTS@) or a part of stdout, and what the output directory
holds. Standard library only."""
import glob
import os
import re
import shutil
import subprocess
import sys

from harness import Harness, line_of

app, inputs, work = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
h = Harness(app, inputs, work)
case, write = h.case, h.write

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


def fin(region="fin", boundary="faces", probe=""):
    return FIN.replace("{region}", region).replace("{boundary}", boundary).replace("{probe}", probe)


# usage errors: exit 1
case("no arguments", [], 1, stdout_has=None)
case("unknown command", ["frobnicate", "x.xml"], 1,
     "femto-app: unknown command 'frobnicate' (expected run, check, info or schema)\nTry 'femto-app --help'.")
case("order out of range", ["run", "x.xml", "--order", "9"], 1,
     "femto-app: --order needs an element order from 1 to 8, not '9'\nTry 'femto-app run --help'.")
case("device name", ["run", "x.xml", "--device", "tpu"], 1,
     "femto-app: --device must be cpu, cuda or auto, not 'tpu'\nTry 'femto-app run --help'.")
case("no file", ["run"], 1, "femto-app: 'run' needs a file\nTry 'femto-app run --help'.")
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
     re.compile(r"femto-app: the heat solve did not converge: reached the iteration limit \(1\) with \|R\| = \S+, above the "
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
p = write("capped.xml", BEAM.replace('</elasticity>', '</elasticity>\n  <solver><linear max-iterations="40" preconditioner="jacobi"/></solver>'))
case("capped linear solve", ["run", p, "--device", "cpu"], 3,
     re.compile(r"warning: 1 linear solve stopped at the cap of 40 iterations without converging \(raise <linear "
                r"max-iterations> or choose a stronger preconditioner\)\n"
                r"femto-app: the elasticity solve did not converge: the linear solver stopped at its cap of 40 "
                r"iterations \(\|r\|/\|b\| = \S+, needed 1\.0e-08\), and restarting it does not reduce \|R\|; raise "
                r"<linear max-iterations> or use a stronger preconditioner"),
     no_results_in=os.path.join(work, "out-beam"))

# a nonlinear run that cannot converge ends (bounded cutbacks, a floor on the increment) with exit 3 and why: one
# Newton iteration a step is too few for this beam at any increment (three were, until the line search followed
# the energy's slope and the smallest increments converged in three)
NH = open(os.path.join(inputs, "cantilever-neohookean", "beam.xml")).read().replace(
    'file="beam.msh"', f'file="{inputs}/cantilever-neohookean/beam.msh"').replace(
    'directory="results"', f'directory="{work}/out-nh"').replace(
    '<newton load-steps="20"/>', '<newton load-steps="1" max-iterations="1"/>')
p = write("nh_fails.xml", NH)
case("nonlinear load stepping gives up", ["run", p, "--device", "cpu", "-q"], 3,
     re.compile(r"femto-app: the elasticity solve did not converge: the load step from 0 to 0\.0009766 of the full load failed 11 times in a row \(the "
                r"increment cannot be cut further\): reached the iteration limit \(1\) with .*"),
     no_results_in=os.path.join(work, "out-nh"))

# output paths: a file where a directory should be, exit 2, nothing half written
blocker = write("not-a-dir", "x")
case("output under a regular file", ["run", p.replace("bar_fails", "good"), "--output-dir",
                                     os.path.join(blocker, "out"), "-q"], 2,
     "femto-app: cannot create output directory '@WORK@/not-a-dir/out': Not a directory")
case("output directory created", ["run", os.path.join(work, "good.xml"), "--output-dir",
                                  os.path.join(work, "new", "deeper"), "-q", "--device", "cpu"], 0, "")
made = sorted(os.listdir(os.path.join(work, "new", "deeper")))
expect = ["fin.h5", "fin.pvd", "fin.xdmf", "fin_0000.vtu", "fin_convergence.csv", "fin_summary.txt"]
if any(l.split()[:2] == ["plots", "1"] for l in open(os.path.join(work, "new", "deeper", "fin_summary.txt"))):
    expect = sorted(expect + ["fin_convergence.png"])  # femto built with PLplot
if made != expect:
    h.report(f"output files: {made}, expected {expect}", ["differ"])
if any(f.startswith(".") for f in made):
    h.report(f"temporary files left: {made}", ["temporary files"])

# --device cuda: a clear device error (exit 4) where there is no GPU, a run where there is one
run = subprocess.run([app, "run", os.path.join(work, "good.xml"), "--device", "cuda", "-q", "--output-dir",
                      os.path.join(work, "cuda")], capture_output=True, text=True)
if run.returncode == 4 and re.match(r"femto-app: (no CUDA device is available|this femto-app was built without CUDA)",
                                    run.stderr):
    print("ok   --device cuda without a GPU: " + run.stderr.strip())
elif run.returncode == 0:
    print("ok   --device cuda ran on a GPU")
else:
    h.report(f"--device cuda: exit {run.returncode}, {run.stderr.strip()}", ["unexpected"])

# option parsing (getopt_long): every spelling a user tries, and one sentence with exit 1 for what is wrong
good = os.path.join(work, "good.xml")
try_run = "\nTry 'femto-app run --help'."
case("--order=1 is --order 1", ["check", good, "--order=1"], 0, "", stdout_has="consistent")
case("options before the file", ["check", "--order", "2", good], 0, "", stdout_has="consistent")
case("-q and -v combine (-qv: the last wins)", ["check", good, "-qv"], 0, "", stdout_has="consistent")
case("-vq: the last wins", ["check", good, "-vq"], 0, "", stdout="")
case("--threads 0 means all cores", ["run", good, "--threads", "0", "-q", "--device", "cpu", "--output-dir",
                                     os.path.join(work, "threads0")], 0, "")
case("--threads=3", ["run", good, "--threads=3", "-q", "--device", "cpu", "--output-dir",
                     os.path.join(work, "threads3")], 0, "")
case("--threads -1", ["run", good, "--threads", "-1"], 1,
     "femto-app: --threads needs a thread count from 0 (all cores) to 4096, not '-1'" + try_run)
case("--order without its value", ["run", good, "--order"], 1, "femto-app: --order needs a value" + try_run)
case("abbreviated option", ["run", good, "--outp", os.path.join(work, "abbrev"), "-q", "--device", "cpu"], 0, "")
case("ambiguous abbreviation", ["run", good, "--o", "2"], 1,
     "femto-app: option '--o' is ambiguous; spell it out" + try_run)
case("flag given a value", ["run", good, "--quiet=yes"], 1, "femto-app: option '--quiet' takes no value" + try_run)
case("unknown long option", ["run", good, "--order2"], 1, "femto-app: unknown option '--order2'" + try_run)
case("unknown short option in a group", ["run", good, "-qx"], 1, "femto-app: unknown option '-x'" + try_run)
case("an option the command does not take", ["info", good, "--order", "2"], 1,
     "femto-app: 'info' does not take --order\nTry 'femto-app info --help'.")
case("check takes run's options, so a run's line can be checked as is", ["check", good, "--device", "cpu",
                                                                         "--threads", "2", "-q"], 0, "", stdout="")
case("schema takes no option", ["schema", "--order", "2"], 1,
     "femto-app: 'schema' does not take --order\nTry 'femto-app schema --help'.")
case("two files", ["check", good, good], 1,
     f"femto-app: one file at a time: unexpected '{good.replace(work, '@WORK@')}'\nTry 'femto-app check --help'.")
case("an option before the command", ["-q", "run", good], 1,
     "femto-app: expected a command (run, check, info or schema) before '-q'\nTry 'femto-app --help'.")
case("--force is accepted", ["check", good, "--force", "-q"], 0, "", stdout="")
case("-- ends the options", ["check", "-q", "--", good], 0, "", stdout="")
for command in ["run", "check", "info", "schema"]:
    text = subprocess.run([app, command, "--help"], capture_output=True, text=True).stdout
    case(f"help {command} is {command} --help", ["help", command], 0, "", stdout=text)
    if not text.startswith(f"usage: femto-app {command}"):
        h.report(f"{command} --help starts with its usage line", [text[:80]])
case("--help", ["--help"], 0, "", stdout_has=["femto-app schema [FILE]", "--threads N", "exit codes:"])

# femto-app schema: the embedded XSD, byte for byte the one in the source tree
xsd = open(os.path.join(os.path.dirname(inputs), "io", "problem.xsd")).read()
case("schema prints the XSD", ["schema"], 0, "", stdout=xsd)
written = os.path.join(work, "problem.xsd")
case("schema FILE writes it", ["schema", written], 0, "", stdout="")
if open(written).read() != xsd:
    h.report("schema FILE holds the XSD", ["the written file differs from io/problem.xsd"])
case("schema into a missing folder", ["schema", os.path.join(work, "no", "such.xsd")], 2,
     "femto-app: cannot write the schema to '@WORK@/no/such.xsd': No such file or directory")
case("schema takes one file", ["schema", "a.xsd", "b.xsd"], 1,
     "femto-app: one file at a time: unexpected 'b.xsd'\nTry 'femto-app schema --help'.")
# every sample names the schema for editors, at a path that exists from the repository, and is valid against it
xmllint = shutil.which("xmllint")
for xml in sorted(glob.glob(os.path.join(inputs, "*", "*.xml"))):
    text = open(xml).read()
    m = re.search(r'xsi:noNamespaceSchemaLocation="([^"]+)"', text)
    where = os.path.normpath(os.path.join(os.path.dirname(xml), m.group(1))) if m else None
    if not m or not os.path.isfile(where):
        h.report(f"{os.path.relpath(xml, inputs)} names the schema", [f"location {m and m.group(1)!r}"])
    elif xmllint:
        run = subprocess.run([xmllint, "--noout", "--schema", written, xml], capture_output=True, text=True)
        h.report(f"{os.path.relpath(xml, inputs)} is valid against femto-app schema's output",
                 [run.stderr.strip()] if run.returncode else [])

# femto-app info PROBLEM.xml: every setting of the problem, then the mesh
cantilever = os.path.join(inputs, "cantilever", "cantilever.xml")
case("info shows the whole problem", ["info", cantilever], 0, "", stdout_has=[
    f"problem {cantilever}\n  mesh: {os.path.join(inputs, 'cantilever', 'cantilever.msh')}\n",
    "  discretization: element order 2, femto's quadrature degree 2p + g - 1",
    "  elasticity: linear (small strain)",
    "    material 'beam' (line 8): E = 2.1e+11 Pa, nu = 0.3 (lambda = 1.21154e+11 Pa, mu = 8.07692e+10 Pa); "
    "density 7850 kg/m^3; expansion 0 1/K from 293.15 K\n",
    "    boundary 'clamp' (line 9): fixed x y z\n",
    "    boundary 'tip' (line 10): traction (0, 0, -1e+06) Pa\n",
    "    every other boundary: traction-free\n",
    "  time: steady (no <time>)\n",
    "  solver: Newton rtol 1e-08 (of the residual's scale), atol 0, stol 1e-10, at most 25 iterations, line search "
    "on, 1 load step, preconditioner reused while it serves\n",
    "preconditioner p-multigrid, rtol 1e-08, at most 2000 iterations, GMRES restart 50\n",
    "          multigrid: levels down to order 1, Chebyshev smoothing of degree 3, coarse solver auto (cuDSS on a GPU "
    "when built in, else CHOLMOD when small, over MPI ranks MUMPS, else BoomerAMG), 3 AMG cycles per coarse "
    "solve\n",
    "          cuDSS's factor: double precision (single where double would not fit in GPU memory), applied as its "
    "explicit inverse on time-dependent linear problems (up to 2 GB of a GPU)\n",
    f"  output: {os.path.join(inputs, 'cantilever', 'results', 'cantilever')}.*\n",
    "          probe 'tip' (line 13) at (1, 0.05, 0.05) m\n",
    "  device: auto (CUDA when a GPU is present, else CPU), gather (deterministic) assembly, all CPU cores\n",
    "mesh ", "physical groups:"])
case("info on a transient heat problem", ["info", os.path.join(inputs, "heat-transient-slab", "slab.xml")], 0, "",
     stdout_has=["  heat: transient\n", "  time: BDF2 from 0 s to 600 s, step 5 s (120 steps)"])

sys.exit(h.finish())
