"""VTK's own interpolation proves femto's VTK node order (io/vtk_order.c), for every shape and order.

Each cell of the test files has its points at the equispaced lattice mapped through F, a polynomial of the
cell's order, so VTK's cell of that order reproduces F exactly: at any parametric point, VTK's
cell.EvaluateLocation must give F(xi) (to 1e-10) when, and only when, the permutation is right. VTK's parametric
coordinates are [0,1]^d and the unit simplex for all these cell types, as femto's reference cells. Each cell must
also report a positive length/area/volume (vtkCellSizeFilter) close to the exact one, and a positive Jacobian.

Usage: /usr/bin/python3 io_check_vtk_order.py OUTDIR
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import io_check as ic  # noqa: E402

np, vtk = ic.need(["numpy", "vtk"])


def read(path):
    r = vtk.vtkXMLUnstructuredGridReader()
    r.SetFileName(path)
    r.Update()
    return r.GetOutput()


def evaluate(cell, xi):
    x = [0.0, 0.0, 0.0]
    weights = [0.0] * cell.GetNumberOfPoints()
    sub = vtk.reference(0)
    cell.EvaluateLocation(sub, list(xi), x, weights)
    return np.array(x)


def jacobian_det(cell, xi, d):
    """det of d x/d xi by central differences of VTK's own interpolation (the xy block in 2D)."""
    h = 1e-6
    cols = []
    for a in range(d):
        e = np.zeros(3)
        e[a] = h
        cols.append((evaluate(cell, xi + e) - evaluate(cell, xi - e)) / (2 * h))
    J = np.array(cols).T
    if d == 1:
        return np.linalg.norm(J[:, 0])
    return np.linalg.det(J[:2, :2]) if d == 2 else np.linalg.det(J)


def check_file(chk, case, path):
    grid = read(path)
    cells = ic.cell_layout(case)
    if not chk.expect(grid.GetNumberOfCells() == len(cells), f"{path}: {grid.GetNumberOfCells()} cells"):
        return
    sizes = vtk.vtkCellSizeFilter()
    sizes.SetInputData(grid)
    sizes.Update()
    measure_name = {1: "Length", 2: "Area", 3: "Volume"}
    for k, (b, c, shape, p) in enumerate(cells):
        cell = grid.GetCell(k)
        want_type = ic.VTK_LINEAR[shape] if p == 1 else ic.VTK_LAGRANGE[shape]
        chk.expect(cell.GetCellType() == want_type, f"{path} cell {k}: type {cell.GetCellType()}, want {want_type}")
        d = ic.SHAPE_DIM[shape]
        worst = 0.0
        # the corners too: there a wrong corner order shows even when the sample points are lucky
        for xi in ic.sample_points(shape) + ic.corner_points(shape):
            got = evaluate(cell, xi)
            want = np.array(ic.cell_position(case, b, c, shape, p, xi))
            worst = max(worst, float(np.max(np.abs(got - want))))
        chk.expect(worst < ic.GEOMETRY_TOL,
                   f"{path} cell {k} ({shape} p{p}): VTK places parametric points {worst:.2e} away from F(xi)")
        dets = [jacobian_det(cell, xi, d) for xi in ic.sample_points(shape, 4)]
        chk.expect(min(dets) > 0.1, f"{path} cell {k} ({shape} p{p}): Jacobian determinant {min(dets):.3g}")
        size = sizes.GetOutput().GetCellData().GetArray(measure_name[d]).GetValue(k)
        exact = ic.exact_measure(shape, p, case["dim"])
        # VTK measures curved cells on their linear sub-cells: exact for p = 1, close otherwise
        tol = 1e-12 if p == 1 else 0.05
        chk.expect(size > 0 and abs(size - exact) <= tol * exact,
                   f"{path} cell {k} ({shape} p{p}): VTK measure {size:.6g}, exact {exact:.6g}")


def main():
    outdir = sys.argv[1]
    manifest = ic.load_manifest(outdir)
    chk = ic.Checker()
    for case in manifest["cases"] + [manifest["series"]]:
        name = case["name"]
        files = [f"{name}.vtu", f"{name}_raw.vtu"] if name != "series" else ["series/series_0000.vtu"]
        for f in files:
            check_file(chk, case, os.path.join(outdir, f))
    chk.exit("VTK node order")


if __name__ == "__main__":
    main()
