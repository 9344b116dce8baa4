#!/usr/bin/env python3
"""The result files of a run over 2 MPI ranks, read back with VTK and h5py, against a one-process run.

usage: test_mpi_output.py FEMTO_APP INPUTS WORK MPIEXEC [MPIEXEC FLAGS...]

For a few samples (heat on tetrahedra; elasticity on quadratic hexahedra with a stress tensor; a 2D plate at
order 3, whose cells the XDMF subdivides) and heat on a square of quadrilaterals and triangles (two cell blocks:
an XDMF Mixed topology, at order 2 with its quadratic cells, at order 3 of subcells), with CG + Jacobi solved to rtol 1e-15 so that both runs reach the
same solution to round-off, the one-process run and the 2-rank run must give:
  - files: one process NAME_0000.vtu and no piece; 2 ranks NAME_0000.pvtu, NAME_0000_p0000.vtu and
    NAME_0000_p0001.vtu, the .pvd naming the .pvtu;
  - VTU: the .pvtu through vtkXMLPUnstructuredGridReader has the one-process cells; its points, merged by
    their "global_node" ids, are every one-process point once, copies of a shared point agree exactly, and
    points and every point array equal the one-process VTU's to 1e-12 (relative to the array's largest
    value); each piece's "rank" cell array is its rank;
  - HDF5 (h5py): the same datasets, numbers equal to 1e-12 in the same global order, strings equal; written
    by every rank (contiguous datasets) where femto-app's HDF5 has MPI, else, or with FEMTO_HDF5_RANK0=1, by
    rank 0 alone from the pieces gathered to it (compressed, as one process writes them);
  - XDMF: ParaView's XDMF3 reader (vtkXdmf3Reader) reads the same grid and point arrays from both;
  - the 2-rank run's verbose output says "halo: staged through host" (the CPU device);
  - a one-process run into the 2-rank run's folder replaces its set whole: no .pvtu or piece is left.
Needs VTK's Python modules (python3-paraview), numpy and h5py."""
import glob
import os
import subprocess
import sys

import h5py
from test_mpi_app import script_args, variant
import numpy as np
from vtkmodules.util.numpy_support import vtk_to_numpy
from vtkmodules.vtkIOXdmf3 import vtkXdmf3Reader
from vtkmodules.vtkIOXML import vtkXMLPUnstructuredGridReader, vtkXMLUnstructuredGridReader

CASES = [("heat-wall-3d", "wall", None), ("cantilever", "cantilever", 1), ("plate-hole-2d", "plate", 3),
         ("mixed", "mixed", 2), ("mixed", "mixed", 3)]
MIXED = """<?xml version="1.0" encoding="UTF-8"?>
<femto>
  <mesh file="{geo}"/>
  <heat>
    <material region="quads" conductivity="1" source="1000"/>
    <material region="tris" conductivity="3" source="2000"/>
    <temperature boundary="boundary" value="300"/>
  </heat>
  <solver><linear type="cg" preconditioner="jacobi" rtol="1e-15" max-iterations="20000"/>
          <newton rtol="1e-15"/></solver>
  <output directory="results" basename="mixed"><plots enabled="false"/></output>
</femto>
"""
TOL = 1e-12


def run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=100,
                              env=dict(os.environ, OMP_NUM_THREADS="1"))
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, "timeout", "", "the run did not end within 100 s")


def tight_variant(work, sample, name, inputs):
    """The sample with CG + Jacobi to rtol 1e-15 (Newton too), its mesh named by absolute path."""
    return variant(work, sample, name, inputs, rtol="1e-15", newton_rtol="1e-15",
                          extra=' type="cg" max-iterations="20000"', tag="tight")


def grid_arrays(grid):
    """Copies: the arrays belong to the reader, which goes away with the caller's frame."""
    pd, cd = grid.GetPointData(), grid.GetCellData()
    copy = lambda a: np.array(vtk_to_numpy(a), copy=True)
    return (copy(grid.GetPoints().GetData()), grid.GetNumberOfCells(),
            {pd.GetArrayName(i): copy(pd.GetArray(i)) for i in range(pd.GetNumberOfArrays())},
            {cd.GetArrayName(i): copy(cd.GetArray(i)) for i in range(cd.GetNumberOfArrays())})


def read_xml(path, reader_class):
    r = reader_class()
    r.SetFileName(path)
    r.Update()
    return grid_arrays(r.GetOutput())


def close(a, b, report=[]):
    """|a - b| <= TOL * max|a| (exactly equal for integers)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype.kind in "iu":
        return bool((a == b).all())
    rel = abs(a - b).max(initial=0.0) / max(abs(a).max(initial=0.0), 1e-300)
    if rel > TOL:
        print(f"    relative difference {rel:.3g}")
    return bool(rel <= TOL)


def check_files(one, two, name):
    problems = []
    if not os.path.exists(os.path.join(one, f"{name}_0000.vtu")) or glob.glob(os.path.join(one, "*.pvtu")) \
            or glob.glob(os.path.join(one, "*_p0*.vtu")):
        problems.append(f"one process: not exactly {name}_0000.vtu without pieces: {sorted(os.listdir(one))}")
    want = {f"{name}_0000.pvtu", f"{name}_0000_p0000.vtu", f"{name}_0000_p0001.vtu"}
    have = {f for f in os.listdir(two) if f.endswith("vtu")}
    if have != want:
        problems.append(f"2 ranks: VTK files {sorted(have)}, want {sorted(want)}")
    if f'file="{name}_0000.pvtu"' not in open(os.path.join(two, f"{name}.pvd")).read():
        problems.append("the .pvd does not name the .pvtu")
    return problems


def check_vtu(one, two, name):
    problems = []
    p1, c1, a1, _ = read_xml(os.path.join(one, f"{name}_0000.vtu"), vtkXMLUnstructuredGridReader)
    p2, c2, a2, ce2 = read_xml(os.path.join(two, f"{name}_0000.pvtu"), vtkXMLPUnstructuredGridReader)
    gid = a2.get("global_node", np.zeros(0)).astype(np.int64)
    if c1 != c2:
        problems.append(f"{c2} cells over 2 ranks, {c1} in one process")
    if len(gid) != len(p2) or sorted(set(gid.tolist())) != list(range(len(p1))):
        return problems + ["global_node does not cover every one-process point"]
    first = np.full(len(p1), -1)
    first[gid[::-1]] = np.arange(len(gid))[::-1]  # the first copy of each point
    merged = {"points": p2[first]}
    merged.update({k: v[first] for k, v in a2.items()})
    for k, v in [("points", p2)] + list(a2.items()):
        if not (v == merged[k][gid]).all():
            problems.append(f"copies of shared points disagree in {k}")
    if not close(p1, merged["points"]):
        problems.append("points differ from one process")
    for k, a in a1.items():
        if k not in merged or not close(a, merged[k]):
            problems.append(f"point array {k} differs from one process")
    if sorted(set(a1) | {"global_node"}) != sorted(a2):
        problems.append(f"point arrays {sorted(a2)} over 2 ranks, {sorted(a1)} in one process")
    if sorted(np.unique(ce2.get("rank", [])).tolist()) != [0, 1]:
        problems.append("the rank cell array is not 0 and 1")
    for r in (0, 1):
        _, _, _, ce = read_xml(os.path.join(two, f"{name}_0000_p{r:04d}.vtu"), vtkXMLUnstructuredGridReader)
        if not (ce["rank"] == r).all():
            problems.append(f"piece {r}: rank array is not {r}")
    print(f"  VTU: {len(p1)} points ({len(p2) - len(p1)} shared copies), {c1} cells, {len(a1)} point arrays")
    return problems


def datasets(path):
    out = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda n, o: out.__setitem__(n, o[()]) if isinstance(o, h5py.Dataset) else None)
    return out


def check_hdf5(one, two, name):
    d1, d2 = datasets(os.path.join(one, f"{name}.h5")), datasets(os.path.join(two, f"{name}.h5"))
    problems = [] if sorted(d1) == sorted(d2) else [f"datasets differ: {sorted(set(d1) ^ set(d2))}"]
    for k in sorted(set(d1) & set(d2)):
        x, y = d1[k], d2[k]
        numeric = isinstance(x, np.ndarray) and x.dtype.kind in "fiu"
        if not (close(x, y) if numeric else x == y):
            problems.append(f"HDF5 dataset {k} differs")
    # who wrote the 2-rank file: all ranks through MPI-IO store contiguous datasets; rank 0 alone (HDF5 without
    # MPI, or FEMTO_HDF5_RANK0=1) compresses them, as one process does
    alone = os.environ.get("FEMTO_HDF5_RANK0") == "1" or not PARALLEL_HDF5
    with h5py.File(os.path.join(two, f"{name}.h5"), "r") as f:
        if (f["mesh/points"].compression == "gzip") != alone:
            problems.append(f"/mesh/points compression {f['mesh/points'].compression}: "
                            f"{'rank 0 alone' if alone else 'every rank'} should have written the file")
    print(f"  HDF5: {len(d1)} datasets compared, written by {'rank 0 alone' if alone else 'every rank'}")
    return problems



def read_xdmf(path):
    r = vtkXdmf3Reader()
    r.SetFileName(path)
    r.Update()
    return grid_arrays(r.GetOutputDataObject(0))


def check_xdmf(one, two, name):
    # vtkXdmf3Reader resolves the .h5 against the XDMF's path textually: give it a directory
    (p1, c1, a1, _), (p2, c2, a2, _) = [read_xdmf(os.path.join(d, f"{name}.xdmf")) for d in (one, two)]
    problems = [] if c1 == c2 and c1 > 0 and close(p1, p2) else ["XDMF grids differ (or are empty)"]
    for k, a in a1.items():
        if k not in a2 or not close(a, a2[k]):
            problems.append(f"XDMF point array {k} differs")
    if sorted(a1) != sorted(a2) or not a1:
        problems.append(f"XDMF point arrays {sorted(a2)} over 2 ranks, {sorted(a1)} in one process")
    print(f"  XDMF: {c1} cells, {len(a1)} point arrays")
    return problems


def main():
    args = script_args(__doc__)
    if args is None:
        return 2
    app, inputs, work, mpi = args
    global PARALLEL_HDF5  # whether femto-app's HDF5 is built for MPI (its --version says so)
    PARALLEL_HDF5 = "parallel HDF5" in subprocess.run([app, "--version"], capture_output=True, text=True).stdout
    failures = 0
    for sample, name, order in CASES:
        if sample == "mixed":  # the test meshes' square of quadrilaterals and triangles
            xml = os.path.join(work, "mixed.xml")
            geo = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "meshes", "square_mixed.geo")
            open(xml, "w").write(MIXED.format(geo=os.path.abspath(geo)))
        else:
            xml = tight_variant(work, sample, name, inputs)
        one, two = (os.path.join(work, f"{name}{order or ''}-{n}") for n in (1, 2))
        extra = ["--order", str(order)] if order else []
        r1 = run([app, "run", xml, "--output-dir", one, "-q", "--device", "cpu"] + extra)
        r2 = run(mpi + ["-n", "2", app, "run", xml, "--output-dir", two, "-v", "--device", "cpu"] + extra)
        print(f"{name}{f' (order {order})' if order else ''}:")
        if r1.returncode or r2.returncode:
            problems = [f"exit {r1.returncode} and {r2.returncode}: {r1.stderr}{r2.stderr}"]
        else:
            problems = check_files(one, two, name)
            if "halo: staged through host" not in r2.stdout:
                problems.append("the verbose run does not say that the halo is staged through the host")
            for check in (check_vtu, check_hdf5, check_xdmf):
                problems += check(one, two, name)
            r3 = run([app, "run", xml, "--output-dir", two, "-q", "--device", "cpu"] + extra)
            left = [f for f in os.listdir(two) if f.endswith(".pvtu") or "_p0" in f]
            if r3.returncode or left:
                problems.append(f"one process into the 2-rank folder: exit {r3.returncode}, left {left}")
        print(("ok   " if not problems else "FAIL ") + f"{sample}: one process and 2 ranks write the same results")
        for p in problems:
            print("  " + p)
        failures += bool(problems)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
