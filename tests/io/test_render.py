#!/usr/bin/env python3
"""The README's picture is reproducible: femto solves the cantilever sample, then
`pvpython tools/render-cantilever.py RESULTS OUT.png` renders it without an X display (the script starts its own
Xvfb, since Debian's ParaView cannot render offscreen without one), and the PNG read back with VTK is
1200 x 560 pixels, mostly white background, with the deformed beam coloured by von Mises stress: both ends of
the Turbo colour map present (dark red at the clamp, dark blue at the tip).

usage: test_render.py FEMTO_APP SOURCE_DIR WORK_DIR      (exit 77: no pvpython or Xvfb here)"""
import os
import shutil
import subprocess
import sys

app, source, work = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
pvpython = shutil.which("pvpython")
if not pvpython or not shutil.which("Xvfb"):
    print("pvpython or Xvfb not found: skipped")
    sys.exit(77)
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
results, png = os.path.join(work, "results"), os.path.join(work, "cantilever.png")
run = subprocess.run([app, "run", os.path.join(source, "inputs", "cantilever", "cantilever.xml"), "-q",
                      "--device", "cpu", "--output-dir", results], capture_output=True, text=True)
if run.returncode:
    sys.exit(f"femto-app failed: {run.stderr}")
env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
render = subprocess.run([pvpython, os.path.join(source, "tools", "render-cantilever.py"), results, png],
                        capture_output=True, text=True, env=env, timeout=300)
if render.returncode or not os.path.isfile(png):
    sys.exit(f"render-cantilever.py failed with exit {render.returncode}:\n{render.stdout}{render.stderr}")

from vtkmodules.util.numpy_support import vtk_to_numpy  # noqa: E402
from vtkmodules.vtkIOImage import vtkPNGReader  # noqa: E402

reader = vtkPNGReader()
reader.SetFileName(png)
reader.Update()
image = reader.GetOutput()
nx, ny, _ = image.GetDimensions()
rgb = vtk_to_numpy(image.GetPointData().GetScalars())[:, :3].astype(int)
white = ((rgb > 240).all(axis=1)).mean()
red = ((rgb[:, 0] > 100) & (rgb[:, 1] < 40) & (rgb[:, 2] < 40)).sum()
blue = ((rgb[:, 2] > 60) & (rgb[:, 0] < 60) & (rgb[:, 1] < 60)).sum()
print(f"{png}: {nx} x {ny}, {white:.0%} white, {red} dark red and {blue} dark blue pixels")
problems = []
if (nx, ny) != (1200, 560):
    problems.append(f"size {nx} x {ny}, expected 1200 x 560")
if not 0.5 < white < 0.95:
    problems.append(f"{white:.0%} white: expected a white background around a beam")
if red < 500 or blue < 500:
    problems.append("expected both ends of the stress colour map (dark red at the clamp, dark blue at the tip)")
for p in problems:
    print("FAIL " + p)
sys.exit(1 if problems else 0)
