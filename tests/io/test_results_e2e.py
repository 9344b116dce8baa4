#!/usr/bin/python3
"""femto's real results, read back by real readers: VTK (VTU, PVD), h5py (HDF5) and ParaView (PVD and XDMF as
time series). Each sample's numbers are compared with what femto itself reported in NAME_summary.txt.

usage: /usr/bin/python3 test_results_e2e.py FEMTO_APP INPUTS_DIR WORK_DIR
Needs Debian's python3-paraview (vtkmodules) and python3-h5py; the ParaView part needs pvpython and is
skipped (with a line saying so) when it is missing."""
import math
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import h5py
import numpy as np
from vtkmodules.util.numpy_support import vtk_to_numpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from result_files import Checks, empty_folder, point_array, read_vtk as read_vtu  # noqa: E402

app, inputs, work = sys.argv[1], os.path.abspath(sys.argv[2]), empty_folder(sys.argv[3])
check = Checks()


def run(xml, outdir, *extra):
    r = subprocess.run([app, "run", xml, "--output-dir", outdir, "-q", "--device", "cpu", *extra],
                       capture_output=True, text=True)
    if r.returncode:
        print(r.stdout, r.stderr)
        sys.exit(1)
    summary = {}
    for f in os.listdir(outdir):
        if f.endswith("_summary.txt"):
            for line in open(os.path.join(outdir, f)):
                if not line.startswith("#"):
                    k, v = line.split()[:2]
                    summary[k] = float(v)
    return summary


def field_string(grid, name):
    a = grid.GetFieldData().GetAbstractArray(name)
    return None if a is None else a.GetValue(0)


# ---- transient heat (3D hexahedra, p = 2): PVD times, VTU arrays, HDF5 agreeing with the VTU
out = os.path.join(work, "slab")
s = run(os.path.join(inputs, "heat-transient-slab", "slab.xml"), out)
pvd = ET.parse(os.path.join(out, "slab.pvd")).getroot()
sets = pvd.findall(".//DataSet")
times = [float(d.get("timestep")) for d in sets]
check(times == [60.0 * k for k in range(11)], f"slab.pvd lists 11 outputs at 0, 60, ..., 600 s: {times}")
last = read_vtu(os.path.join(out, sets[-1].get("file")))
T = point_array(last, "temperature")
check(last.GetCellType(0) == 72 and last.GetCell(0).GetNumberOfPoints() == 27,
      "slab cells are VTK Lagrange hexahedra of order 2 (type 72, 27 nodes)")
# the summary prints 12 significant digits (%.12g): the VTU's minimum rounded so must be it exactly
check(T is not None and float(f"{T.min():.12g}") == s["temperature_min"],
      f"slab: the last VTU's minimum temperature {T.min():.12g} K is the summary's {s['temperature_min']:.12g} K")
flux = point_array(last, "heat_flux")
check(flux is not None and flux.shape == (last.GetNumberOfPoints(), 3), "slab: heat_flux is a 3-vector per point")
check(field_string(last, "femto_version") == "0.1.0" and "slab.xml" in (field_string(last, "problem_file") or ""),
      "slab: field data carry femto's version and the problem file")
check("heated" in (field_string(last, "physical_groups") or ""), "slab: field data name the physical groups")
region = vtk_to_numpy(last.GetCellData().GetArray("region"))
quality = vtk_to_numpy(last.GetCellData().GetArray("quality"))
check(region.shape[0] == last.GetNumberOfCells() and np.all(quality > 0.99),
      "slab: cell data region and quality (1 for these undistorted hexahedra)")
with h5py.File(os.path.join(out, "slab.h5"), "r") as h5:
    check(np.allclose(h5["times"][:], times, rtol=0, atol=1e-12), "slab.h5 /times equals the PVD's times")
    steps = sorted(h5["fields/temperature"].keys())
    check(len(steps) == 11, f"slab.h5 holds 11 temperature steps ({len(steps)})")
    pts = h5["mesh/points"][:]
    vtk_pts = vtk_to_numpy(last.GetPoints().GetData())
    check(pts.shape == vtk_pts.shape and np.array_equal(pts, vtk_pts), "slab.h5 points equal the VTU's points")
    h5T = h5["fields/temperature"][steps[-1]][:].reshape(-1)
    check(np.array_equal(h5T, T), "slab.h5's last temperature field equals the last VTU's, value for value")
    check("slab" in h5["problem"][()].decode() if isinstance(h5["problem"][()], bytes) else "slab" in h5["problem"][()],
          "slab.h5 stores the problem file's text")

# ---- elasticity (3D, p = 2): displacement, the six stress components in ParaView's order, von Mises, energy
out = os.path.join(work, "cantilever")
s = run(os.path.join(inputs, "cantilever", "cantilever.xml"), out)
g = read_vtu(os.path.join(out, "cantilever_0000.vtu"))
u, sigma, vm = point_array(g, "displacement"), point_array(g, "stress"), point_array(g, "von_mises")
check(u is not None and u.shape[1] == 3, "cantilever: displacement is a 3-vector")
names = [g.GetPointData().GetArray("stress").GetComponentName(i) for i in range(6)]
check(sigma is not None and sigma.shape[1] == 6 and names == ["XX", "YY", "ZZ", "XY", "YZ", "XZ"],
      f"cantilever: stress has 6 components named {names}")
check(abs(vm.max() - s["max_von_mises"]) <= 1e-9 * s["max_von_mises"],
      f"cantilever: largest von Mises {vm.max():.9g} Pa is the summary's {s['max_von_mises']:.9g} Pa")
check(abs(np.linalg.norm(u, axis=1).max() - s["max_displacement"]) <= 1e-9 * s["max_displacement"],
      "cantilever: largest |displacement| is the summary's")
# nodal values are averages over the cells sharing a node, and the average of von Mises stresses is not the von
# Mises stress of the averaged tensor: compare only where it is exact, the upper bound sqrt(3/2) |dev sigma|
# per cell holds for averages too (the norm is convex)
dev = sigma[:, :3] - sigma[:, :3].mean(axis=1, keepdims=True)
bound = np.sqrt(1.5 * ((dev ** 2).sum(axis=1) + 2 * (sigma[:, 3:] ** 2).sum(axis=1)))
check(np.all(np.isfinite(vm)) and np.all(vm >= 0) and np.all(bound <= vm * (1 + 1e-12) + 1e-6),
      "cantilever: von Mises is finite, non-negative and bounds the von Mises of the averaged tensor (convexity)")
check(point_array(g, "strain_energy_density") is not None, "cantilever: strain-energy density is written")

# ---- 2D: the fin (Lagrange quadrilaterals) and the plate with subdivided linear cells
out = os.path.join(work, "fin")
s = run(os.path.join(inputs, "heat-fin-2d", "fin.xml"), out)
g = read_vtu(os.path.join(out, "fin_0000.vtu"))
check(g.GetCellType(0) == 70 and g.GetCell(0).GetNumberOfPoints() == 9, "fin cells are Lagrange quadrilaterals of order 2")
check(abs(point_array(g, "temperature").min() - s["temperature_min"]) < 1e-9, "fin: the VTU's minimum is the summary's")
xml = open(os.path.join(inputs, "plate-hole-2d", "plate.xml")).read().replace(
    'file="plate.msh"', f'file="{inputs}/plate-hole-2d/plate.msh"').replace(
    '<output directory="results" basename="plate">', '<output directory="results" basename="plate"><vtu subdivide="true"/>')
path = os.path.join(work, "plate_sub.xml")
open(path, "w").write(xml)
out = os.path.join(work, "plate")
s = run(path, out)
g = read_vtu(os.path.join(out, "plate_0000.vtu"))
check(g.GetCellType(0) == 9 and g.GetNumberOfCells() == 4 * 509, f"plate, subdivided: 4 linear quads per cell ({g.GetNumberOfCells()})")

# ---- p = 3 on tetrahedra: the wall's exact temperature is piecewise linear in x; femto's output points (the
# equispaced lattice, interpolated from its GLL nodes) must carry it exactly
# (solved to a tight linear tolerance: the default, 1e-8 relative, leaves ~1e-6 K of solver error in 263 K)
out = os.path.join(work, "wall")
xml = open(os.path.join(inputs, "heat-wall-3d", "wall.xml")).read().replace(
    'file="wall.msh"', f'file="{inputs}/heat-wall-3d/wall.msh"').replace(
    '</heat>', '</heat>\n  <solver><linear rtol="1e-12"/></solver>')
path = os.path.join(work, "wall_tight.xml")
open(path, "w").write(xml)
s = run(path, out, "--order", "3")
g = read_vtu(os.path.join(out, "wall_0000.vtu"))
check(g.GetCellType(0) == 71 and g.GetCell(0).GetNumberOfPoints() == 20, "wall at p = 3: Lagrange tetrahedra, 20 nodes")
x = vtk_to_numpy(g.GetPoints().GetData())[:, 0]
q = 30 / (0.2 / 0.72 + 0.1 / 0.04 + 1 / 25)
exact = np.where(x <= 0.2, 293.15 - q * x / 0.72, 293.15 - q * 0.2 / 0.72 - q * (x - 0.2) / 0.04)
err = np.abs(point_array(g, "temperature") - exact).max()
check(err < 1e-6, f"wall at p = 3: every output point carries the exact piecewise-linear temperature (max error {err:.2e} K)")

# ---- HDF5 written chunk by chunk on threads (shuffle + deflate by femto, H5Dwrite_chunk) reads back exactly as
# the raw file (<hdf5 compress="false">): a cube with more points than one chunk holds (21,845 rows of 3)
cube = os.path.join(os.path.dirname(inputs), "bench", "problems", "cube.geo")
datasets = {}
for compress in ("true", "false"):
    out = os.path.join(work, "cube-" + compress)
    os.makedirs(out, exist_ok=True)
    shutil.copy(cube, out)
    path = os.path.join(out, "cube.xml")
    open(path, "w").write(f"""<femto><mesh file="cube.geo" size="0.06"/><discretization order="2"/>
<heat><material region="cube" conductivity="15" source="1e5"/><temperature boundary="cold" value="300"/>
<convection boundary="sides" h="50" ambient="300"/></heat>
<output basename="cube"><vtu enabled="false"/><hdf5 compress="{compress}"/></output></femto>""")
    run(path, os.path.join(out, "results"), "--threads", "2")
    with h5py.File(os.path.join(out, "results", "cube.h5"), "r") as f:
        names = []
        f.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) and o.ndim and o.dtype.kind in "fi" else None)
        datasets[compress] = {n: (f[n][...], f[n].compression, f[n].chunks) for n in names}
on, off = datasets["true"], datasets["false"]
points = on.get("mesh/points")
check(points is not None and points[0].shape[0] > 21845 and points[2] == (21845, 3) and points[1] == "gzip",
      f"cube: {points[0].shape[0] if points else 0} points in gzip chunks of 21845 rows (the last one partial)")
check(all(off[n][1] is None for n in off), "compress=\"false\": no dataset is compressed")
same = sorted(on) == sorted(off) and all(np.array_equal(on[n][0], off[n][0]) for n in on)
check(same, f"every dataset ({len(on)}) reads back the same compressed in parallel chunks as raw")

# ---- ParaView: the transient series opens as an animation from the .pvd and from the .xdmf
pv = shutil.which("pvpython")
if not pv:
    print("skip ParaView checks: pvpython not found")
else:
    script = f"""
from paraview.simple import PVDReader, XDMFReader
for name, reader in (("pvd", PVDReader(FileName="{work}/slab/slab.pvd")),
                     ("xdmf", XDMFReader(FileNames=["{work}/slab/slab.xdmf"]))):
    reader.UpdatePipeline(600.0)
    arrays = reader.PointData.keys()
    print(name, len(reader.TimestepValues), reader.TimestepValues[-1], "temperature" in arrays)
"""
    r = subprocess.run([pv, "--force-offscreen-rendering", "-c", script], capture_output=True, text=True, cwd="/")
    lines = [l for l in r.stdout.splitlines() if re.match(r"^(pvd|xdmf) ", l)]
    check(lines == ["pvd 11 600.0 True", "xdmf 11 600.0 True"],
          f"ParaView reads the slab as 11 time steps to 600 s with temperature, from .pvd and .xdmf: {lines or r.stderr[-300:]}")

check.exit()
