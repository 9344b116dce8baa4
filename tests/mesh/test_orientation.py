#!/usr/bin/env python3
"""2D cell orientation end to end: steady heat through the unit square, k = 1 W/(m K), 400 K on 'left' and 300 K
on 'right', whose exact heat flow is 100 W/m (the linear temperature is in every element space, so femto must
match it to rounding).

usage: test_orientation.py FEMTO_APP MESH_DIR BAD_DIR WORK_DIR
- orientation/square_cw.msh (every triangle clockwise, as Gmsh writes a surface with a downward normal) and
  orientation/square_one_cw.msh (one triangle clockwise among counter-clockwise ones, still a valid mesh):
  accepted, 100 W/m in and out, and every cell's quality 1 in the VTU (read back with VTK when available);
- bad/tangled_triangles.msh (node 6 dragged across its neighbour's edge, which turns triangle 15 over): refused
  with exit 2 and the message naming element 15, where femto used to turn the triangle back on its own and
  report a wrong heat flow with exit 0."""
import os
import subprocess
import sys

app, meshes, bad, work = sys.argv[1], *map(os.path.abspath, sys.argv[2:5])
os.makedirs(work, exist_ok=True)
PROBLEM = """<?xml version="1.0" encoding="UTF-8"?>
<femto>
  <mesh file="{mesh}"/>
  <heat>
    <material region="square" conductivity="1"/>
    <temperature boundary="left" value="400"/>
    <temperature boundary="right" value="300"/>
  </heat>
  <output directory="{out}" basename="square"><hdf5 enabled="false"/><vtu compress="false"/></output>
</femto>
"""
failures = 0


def check(name, ok, detail=""):
    global failures
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))
    failures += not ok


def run(mesh):
    out = os.path.join(work, os.path.basename(mesh) + ".out")
    xml = os.path.join(work, os.path.basename(mesh) + ".xml")
    with open(xml, "w") as f:
        f.write(PROBLEM.format(mesh=mesh, out=out))
    return subprocess.run([app, "run", xml, "-q", "--device", "cpu"], capture_output=True, text=True), out


def qualities(vtu):
    try:
        from vtkmodules.vtkIOXML import vtkXMLUnstructuredGridReader
        from vtkmodules.util.numpy_support import vtk_to_numpy
    except ImportError:
        return None
    r = vtkXMLUnstructuredGridReader()
    r.SetFileName(vtu)
    r.Update()
    return list(vtk_to_numpy(r.GetOutput().GetCellData().GetArray("quality")))


for name in ["square_cw.msh", "square_one_cw.msh"]:
    result, out = run(os.path.join(meshes, name))
    check(f"{name}: accepted", result.returncode == 0, result.stderr)
    if result.returncode:
        continue
    summary = dict(l.split()[:2] for l in open(os.path.join(out, "square_summary.txt")) if not l.startswith("#"))
    flows = float(summary["heat_in:left"]), float(summary["heat_in:right"])
    check(f"{name}: 100 W/m in through 'left' and out through 'right' (got {flows})",
          abs(flows[0] - 100) < 1e-6 and abs(flows[1] + 100) < 1e-6)  # the solver's tolerance: 1e-8 relative
    q = qualities(os.path.join(out, "square_0000.vtu"))
    if q is None:
        print(f"skip {name}: quality (no VTK in this Python)")
    else:
        check(f"{name}: quality 1 in all {len(q)} cells", len(q) == 18 and all(abs(v - 1) < 1e-12 for v in q), q)

result, out = run(os.path.join(bad, "tangled_triangles.msh"))
expected = (f"femto-app: {os.path.join(bad, 'tangled_triangles.msh')}: element 15 (tri3) is inverted: its nodes run "
            "clockwise where its neighbours' run counter-clockwise, so it folds over element 16 across their shared "
            "edge between nodes 6 and 11: the mesh is tangled\n")
check("tangled_triangles.msh: refused with exit 2", result.returncode == 2, result.returncode)
check("tangled_triangles.msh: the message names the inverted element", result.stderr == expected, result.stderr)
check("tangled_triangles.msh: no results", not os.path.exists(os.path.join(out, "square_summary.txt")))
print(f"{failures} failure(s)")
sys.exit(1 if failures else 0)
