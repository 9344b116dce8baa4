"""Reads back every VTU and PVD file of the io tests with VTK and compares with what io_frames.c put in.

For each frame: the file header (version 2.2, UInt64 headers, little-endian, zlib when compressed), point and cell
counts, every array's name, component count, component names (XX YY ZZ XY YZ XZ for the 6-tensor) and values (to
1e-14 relative, from the formulas evaluated at the points read back), field data as vtkStringArrays with the exact
text; compressed and uncompressed files must hold identical bits. Subdivided files must have p^d linear cells per
cell, all of positive measure, with cell arrays repeated; the series' PVD must list its times and relative names.

Usage: /usr/bin/python3 io_check_vtu.py OUTDIR
"""
import os
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import io_check as ic  # noqa: E402

np, vtk = ic.need(["numpy", "vtk"])
from vtkmodules.util.numpy_support import vtk_to_numpy  # noqa: E402

FIELD_DATA = {"group 1": ['left wall & <inlet> "quoted"'], "empty": [""],
              "units": ["temperature [K]", "displacement [m]", "stress [Pa]", "cell_value [W]"]}


def read(path):
    r = vtk.vtkXMLUnstructuredGridReader()
    r.SetFileName(path)
    r.Update()
    return r.GetOutput()


def header(path):
    with open(path, "rb") as f:
        head = f.read(400).split(b"\n")[1].decode()
    return head


def arrays(data):
    return {data.GetArrayName(i): data.GetArray(i) for i in range(data.GetNumberOfArrays())}


def check_frame(chk, case, path, t, compressed):
    head = header(path)
    for attr in ['type="UnstructuredGrid"', 'version="2.2"', 'byte_order="LittleEndian"', 'header_type="UInt64"']:
        chk.expect(attr in head, f"{path}: header has {attr}")
    chk.expect(("vtkZLibDataCompressor" in head) == compressed, f"{path}: compressor attribute {compressed}")
    grid = read(path)
    if not chk.expect(grid.GetPoints() is not None, f"{path}: VTK read no points"):
        return grid
    npoints = sum(b["ncells"] * ic.lattice_count(b["shape"], b["order"]) for b in case["blocks"])
    ncells = sum(b["ncells"] for b in case["blocks"])
    chk.expect(grid.GetNumberOfPoints() == npoints, f"{path}: {grid.GetNumberOfPoints()} points, want {npoints}")
    chk.expect(grid.GetNumberOfCells() == ncells, f"{path}: {grid.GetNumberOfCells()} cells, want {ncells}")
    points = vtk_to_numpy(grid.GetPoints().GetData())
    point = arrays(grid.GetPointData())
    chk.expect(sorted(point) == ["displacement", "stress", "temperature"], f"{path}: point arrays {sorted(point)}")
    for name, want in ic.expected_point_arrays(points, t).items():
        if name in point:
            ncomp = 1 if want.ndim == 1 else want.shape[1]
            chk.expect(point[name].GetNumberOfComponents() == ncomp, f"{path}: {name} has {ncomp} components")
            chk.close(f"{path}:{name}", vtk_to_numpy(point[name]), want)
    if "stress" in point:
        names = [point["stress"].GetComponentName(c) for c in range(6)]
        chk.expect(names == ic.TENSOR_NAMES, f"{path}: stress component names {names}")
    cell = arrays(grid.GetCellData())
    chk.expect(sorted(cell) == ["cell_value", "region"], f"{path}: cell arrays {sorted(cell)}")
    for name, want in ic.expected_cell_arrays(case, t).items():
        if name in cell:
            chk.close(f"{path}:{name}", vtk_to_numpy(cell[name]), want)
    fd = grid.GetFieldData()
    found = {}
    for i in range(fd.GetNumberOfArrays()):
        a = fd.GetAbstractArray(i)
        chk.expect(a.GetClassName() == "vtkStringArray", f"{path}: field {a.GetName()} is {a.GetClassName()}")
        found[a.GetName()] = [a.GetValue(k) for k in range(a.GetNumberOfValues())]
    want_fd = dict(FIELD_DATA, femto_version=[case["version"]])
    chk.expect(found == want_fd, f"{path}: field data {found}")
    return grid


def signed_measures(grid):
    """Signed length/area/volume of each linear cell from its corners; hexahedra: the smallest corner Jacobian."""
    pts = vtk_to_numpy(grid.GetPoints().GetData())
    out = []
    for k in range(grid.GetNumberOfCells()):
        ids = [grid.GetCell(k).GetPointId(v) for v in range(grid.GetCell(k).GetNumberOfPoints())]
        x = pts[ids]
        t = grid.GetCellType(k)
        if t == 3:
            out.append(np.linalg.norm(x[1] - x[0]))
        elif t in (5, 9):  # shoelace: counterclockwise corners give a positive area
            xs, ys = x[:, 0], x[:, 1]
            out.append(0.5 * np.sum(xs * np.roll(ys, -1) - np.roll(xs, -1) * ys))
        elif t == 10:
            out.append(np.linalg.det(np.array([x[1] - x[0], x[2] - x[0], x[3] - x[0]])) / 6.0)
        else:  # corner c's three edges, in the right-handed order of the reference cube
            nb = {0: (1, 3, 4), 1: (2, 0, 5), 2: (3, 1, 6), 3: (0, 2, 7), 4: (7, 5, 0), 5: (4, 6, 1), 6: (5, 7, 2),
                  7: (6, 4, 3)}
            out.append(min(np.linalg.det(np.array([x[a] - x[c], x[b] - x[c], x[e] - x[c]]))
                           for c, (a, b, e) in nb.items()))
    return np.array(out)


def check_subdivided(chk, case, path, parent_grid):
    grid = read(path)
    layout = ic.cell_layout(case)
    per = [b_order ** ic.SHAPE_DIM[shape] for (_, _, shape, b_order) in layout]
    chk.expect(grid.GetNumberOfCells() == sum(per), f"{path}: {grid.GetNumberOfCells()} cells, want {sum(per)}")
    chk.expect(grid.GetNumberOfPoints() == parent_grid.GetNumberOfPoints(), f"{path}: same points")
    if grid.GetNumberOfCells() != sum(per):
        return
    parent = np.repeat(np.arange(len(layout)), per)
    types = np.array([grid.GetCellType(k) for k in range(grid.GetNumberOfCells())])
    want_types = np.array([ic.VTK_LINEAR[layout[p][2]] for p in parent])
    chk.expect(np.array_equal(types, want_types), f"{path}: linear cell types")
    for name in ("region", "cell_value"):
        got = vtk_to_numpy(grid.GetCellData().GetArray(name))
        want = vtk_to_numpy(parent_grid.GetCellData().GetArray(name))[parent]
        chk.expect(np.array_equal(got, want), f"{path}: {name} repeated on subcells")
    chk.expect(np.array_equal(vtk_to_numpy(grid.GetPointData().GetArray("stress")),
                              vtk_to_numpy(parent_grid.GetPointData().GetArray("stress"))), f"{path}: point data")
    m = signed_measures(grid)
    chk.expect(m.min() > 0, f"{path}: smallest subcell measure {m.min():.3g} (inverted or degenerate)")
    for k, (_, _, shape, p) in enumerate(layout):
        if shape == "hexahedron":
            continue  # corner Jacobians, not volumes: positivity checked above
        total = m[parent == k].sum()
        exact = ic.exact_measure(shape, p, case["dim"])
        tol = 1e-12 if p == 1 else 0.05  # the subcells interpolate the curved cell linearly
        chk.expect(abs(total - exact) <= tol * exact,
                   f"{path} cell {k}: subcells measure {total:.6g}, exact {exact:.6g}")


def check_series(chk, outdir, case):
    pvd = os.path.join(outdir, "series.pvd")
    root = ET.parse(pvd).getroot()
    chk.expect(root.get("type") == "Collection" and root.get("version") == "1.0", f"{pvd}: a Collection, version 1.0")
    sets = root.findall("./Collection/DataSet")
    times = [float(d.get("timestep")) for d in sets]
    chk.expect(times == case["times"], f"{pvd}: times {times}, want {case['times']}")
    for d, t in zip(sets, case["times"]):
        f = d.get("file")
        chk.expect(not os.path.isabs(f), f"{pvd}: {f} relative")
        check_frame(chk, case, os.path.join(outdir, f), t, True)


def main():
    outdir = sys.argv[1]
    manifest = ic.load_manifest(outdir)
    chk = ic.Checker()
    for case in manifest["cases"]:
        case["version"] = manifest["version"]
        name = case["name"]
        grid = check_frame(chk, case, os.path.join(outdir, f"{name}.vtu"), 0.0, True)
        raw = check_frame(chk, case, os.path.join(outdir, f"{name}_raw.vtu"), 0.0, False)
        if grid.GetPoints() is None or raw.GetPoints() is None:
            continue
        for a in ("temperature", "displacement", "stress"):
            chk.expect(np.array_equal(vtk_to_numpy(grid.GetPointData().GetArray(a)),
                                      vtk_to_numpy(raw.GetPointData().GetArray(a))), f"{name}: {a} raw == compressed")
        check_subdivided(chk, case, os.path.join(outdir, f"{name}_sub.vtu"), grid)
    big, big_raw = (os.path.getsize(os.path.join(outdir, f"cell_hexahedron_p8{s}.vtu")) for s in ("", "_raw"))
    chk.expect(big < 0.8 * big_raw, f"compression pays: {big} bytes against {big_raw}")
    manifest["series"]["version"] = manifest["version"]
    check_series(chk, outdir, manifest["series"])
    chk.exit("VTU and PVD")


if __name__ == "__main__":
    main()
