"""Opens the io test files with ParaView's own readers (pvpython): the series' PVD and every XDMF file.

Run from a working directory other than the files' folder, to prove that the XDMF's reference to its HDF5 file
resolves wherever ParaView starts; the series is also opened by absolute path and, from inside the folder, as
"./series.xdmf" (VTK's XDMF3 reader joins the relative HDF5 name to a bare "series.xdmf" textually, see
io/hdf5_out.c). Stress read from an XDMF is in XDMF's Tensor6 order, from the PVD in VTK's. For every file: the time steps the reader reports
(reader.TimestepValues), and at each time the arrays and their values (to 1e-14 relative); the cells ParaView
builds must reproduce the map F (XDMF's quadratic cells, where Hexahedron_27's node order is checked) or, where
high orders were subdivided for XDMF, be p^d linear cells of positive measure each.

Usage: pvpython --force-offscreen-rendering io_check_paraview.py OUTDIR
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import io_check as ic  # noqa: E402

(np,) = ic.need(["numpy"])
try:
    from paraview import simple as pv
    from vtkmodules.util.numpy_support import vtk_to_numpy
    import vtk
except ImportError as e:
    print(f"skipped: not ParaView's python ({e})")
    sys.exit(ic.SKIP)

# What ParaView's XDMF3 reader makes of XDMF's cells (VTK type numbers)
XDMF_VTK_TYPE = {
    ("line", 1): (3, 4), ("line", 2): (21,), ("triangle", 1): (5,), ("triangle", 2): (22,),
    ("quadrilateral", 1): (9,), ("quadrilateral", 2): (28,), ("tetrahedron", 1): (10,), ("tetrahedron", 2): (24,),
    ("hexahedron", 1): (12,), ("hexahedron", 2): (29,),
}


def output_at(reader, t):
    if t is None:
        reader.UpdatePipeline()
    else:
        reader.UpdatePipeline(t)
    return reader.GetClientSideObject().GetOutputDataObject(0)


def evaluate(cell, xi):
    x = [0.0, 0.0, 0.0]
    cell.EvaluateLocation(vtk.reference(0), list(xi), x, [0.0] * cell.GetNumberOfPoints())
    return np.array(x)


def check_values(chk, what, grid, case, t, parents, xdmf=False):
    points = vtk_to_numpy(grid.GetPoints().GetData())
    pd, cd = grid.GetPointData(), grid.GetCellData()
    want_point = ic.expected_point_arrays(points, 0.0 if t is None else t)
    for name, want in (ic.in_xdmf_order(want_point) if xdmf else want_point).items():
        a = pd.GetArray(name)
        if t is None:
            chk.expect(a is None, f"{what}: no {name} without steps")
            continue
        if chk.expect(a is not None, f"{what}: point array {name}"):
            chk.close(f"{what}:{name}", vtk_to_numpy(a), want)
    cells = ic.expected_cell_arrays(case, 0.0 if t is None else t)
    for name in ("region", "cell_value"):
        a = cd.GetArray(name)
        if t is None and name == "cell_value":
            continue
        if chk.expect(a is not None, f"{what}: cell array {name}"):
            chk.close(f"{what}:{name}", vtk_to_numpy(a), cells[name][parents])


def xdmf_splits(case, shape, p):
    """Cells the XDMF shows subdivided: orders above 2, and quadratic hexahedra among several blocks (ParaView
    misreads Hexahedron_27 inside a Mixed topology)."""
    return p > 2 or (p == 2 and shape == "hexahedron" and len(case["blocks"]) > 1)


def check_xdmf_cells(chk, what, grid, case):
    """XDMF's cells: quadratic and linear ones reproduce F; subdivided ones tile their parents."""
    layout = ic.cell_layout(case)
    per = [p ** ic.SHAPE_DIM[s] if xdmf_splits(case, s, p) else 1 for (_, _, s, p) in layout]
    parents = np.repeat(np.arange(len(layout)), per)
    if not chk.expect(grid.GetNumberOfCells() == len(parents), f"{what}: {grid.GetNumberOfCells()} cells"):
        return None
    for k, parent in enumerate(parents):
        b, c, shape, p = layout[parent]
        cell = grid.GetCell(k)
        if xdmf_splits(case, shape, p):
            chk.expect(cell.GetCellType() in XDMF_VTK_TYPE[(shape, 1)], f"{what} cell {k}: linear subcell")
            chk.expect(shape == "line" or corner_jacobian_sign(cell) > 0, f"{what} cell {k}: positive subcell")
            continue
        chk.expect(cell.GetCellType() in XDMF_VTK_TYPE[(shape, p)], f"{what} cell {k}: type {cell.GetCellType()}")
        worst = max(float(np.max(np.abs(evaluate(cell, xi) - ic.cell_position(case, b, c, shape, p, xi)))) for xi in
                    ic.sample_points(shape, 4) + ic.corner_points(shape))
        chk.expect(worst < ic.GEOMETRY_TOL, f"{what} cell {k} ({shape} p{p}): ParaView's cell is {worst:.2e} off F")
    return parents


def corner_jacobian_sign(cell):
    """Sign of a linear cell's Jacobian at its first corner (in the xy plane for 2D cells)."""
    x = [np.array(cell.GetPoints().GetPoint(v)) for v in range(cell.GetNumberOfPoints())]
    t = cell.GetCellType()
    if t == 5:
        a, b = x[1] - x[0], x[2] - x[0]
        return a[0] * b[1] - a[1] * b[0]
    if t == 9:
        a, b = x[1] - x[0], x[3] - x[0]
        return a[0] * b[1] - a[1] * b[0]
    if t == 10:
        return np.linalg.det(np.array([x[1] - x[0], x[2] - x[0], x[3] - x[0]]))
    return np.linalg.det(np.array([x[1] - x[0], x[3] - x[0], x[4] - x[0]]))


def check_xdmf(chk, case, path, reader_name="Xdmf3ReaderS"):
    reader = getattr(pv, reader_name)(FileName=[path])
    tv = reader.TimestepValues  # a bare float when there is one time
    times = [tv] if isinstance(tv, float) else list(tv)
    chk.expect(times == case["times"], f"{path} ({reader_name}): times {times}, want {case['times']}")
    for t in case["times"] or [None]:
        what = f"{os.path.basename(path)} t={t}"
        grid = output_at(reader, t)
        if not chk.expect(grid is not None and grid.IsA("vtkUnstructuredGrid"), f"{what}: an unstructured grid"):
            continue
        parents = check_xdmf_cells(chk, what, grid, case)
        if parents is not None:
            check_values(chk, what, grid, case, t, parents, xdmf=True)
    pv.Delete(reader)


def check_pvd(chk, case, path):
    reader = pv.PVDReader(FileName=path)
    times = list(reader.TimestepValues)
    chk.expect(times == case["times"], f"{path}: times {times}, want {case['times']}")
    for t in case["times"]:
        what = f"series.pvd t={t}"
        grid = output_at(reader, t)
        parents = np.arange(grid.GetNumberOfCells())
        check_values(chk, what, grid, case, t, parents)
        for k, (b, c, shape, p) in enumerate(ic.cell_layout(case)):
            cell = grid.GetCell(k)
            worst = max(float(np.max(np.abs(evaluate(cell, xi) - ic.cell_position(case, b, c, shape, p, xi))))
                        for xi in ic.sample_points(shape, 4))
            chk.expect(cell.GetCellType() == ic.VTK_LAGRANGE[shape] and worst < ic.GEOMETRY_TOL,
                       f"{what} cell {k}: Lagrange cell {worst:.2e} off F")
    pv.Delete(reader)


def main():
    outdir = os.path.abspath(sys.argv[1])
    manifest = ic.load_manifest(outdir)
    chk = ic.Checker()
    here = os.getcwd()
    chk.expect(here != outdir, "runs from a working directory other than the files' folder")
    rel = os.path.relpath(outdir, here)
    series = manifest["series"]
    check_pvd(chk, series, os.path.join(rel, "series.pvd"))
    for case in manifest["cases"] + [manifest["nosteps"]]:
        check_xdmf(chk, case, os.path.join(rel, case["name"] + ".xdmf"))
    check_xdmf(chk, series, os.path.join(rel, "series.xdmf"), "Xdmf3ReaderT")
    check_xdmf(chk, series, os.path.join(outdir, "series.xdmf"))
    os.chdir(outdir)  # not the bare name: VTK 9.2's XDMF3 reader resolves a relative HDF5 name wrongly from it
    check_xdmf(chk, series, "./series.xdmf")
    check_pvd(chk, series, "series.pvd")
    os.chdir(here)
    chk.exit("ParaView readers")


if __name__ == "__main__":
    main()
