"""Reads back every HDF5 results file of the io tests with h5py and checks the layout documented in
io/hdf5_out.c: root attributes, the problem text, times, points, one group per cell block with its connectivity in
VTK node order (proved by building VTK cells from it and comparing VTK's interpolation with the map F), mesh cell
arrays and field data, and every field at every step (values to 1e-14 relative, units, centre, time attributes,
chunked and deflated). Also checks that no temporary file is left in the folder.

Usage: /usr/bin/python3 io_check_hdf5.py OUTDIR
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import io_check as ic  # noqa: E402

np, h5py, vtk = ic.need(["numpy", "h5py", "vtk"])
from vtkmodules.util.numpy_support import numpy_to_vtk  # noqa: E402

PROBLEM = "<problem>\n  <!-- text of the problem file -->\n</problem>\n"
UNITS = {"temperature": "K", "displacement": "m", "stress": "Pa", "cell_value": "W"}


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def check_geometry(chk, case, path, points, blocks):
    """VTK cells built from the stored connectivity reproduce F: the connectivity is in VTK node order."""
    layout = ic.cell_layout(case)
    k = 0
    for (b, c, shape, p) in layout:
        conn = blocks[b][c]
        cell_type = ic.VTK_LINEAR[shape] if p == 1 else ic.VTK_LAGRANGE[shape]
        grid = vtk.vtkUnstructuredGrid()
        pts = vtk.vtkPoints()
        pts.SetData(numpy_to_vtk(np.ascontiguousarray(points[conn]), deep=True))
        grid.SetPoints(pts)
        ids = vtk.vtkIdList()
        for v in range(len(conn)):
            ids.InsertNextId(v)
        grid.InsertNextCell(cell_type, ids)
        cell = grid.GetCell(0)
        worst = 0.0
        for xi in ic.sample_points(shape, 4) + ic.corner_points(shape):
            x = [0.0, 0.0, 0.0]
            cell.EvaluateLocation(vtk.reference(0), list(xi), x, [0.0] * len(conn))
            want = ic.cell_position(case, b, c, shape, p, xi)
            worst = max(worst, max(abs(x[a] - want[a]) for a in range(3)))
        chk.expect(worst < ic.GEOMETRY_TOL, f"{path} cell {k} ({shape} p{p}): geometry off by {worst:.2e}")
        k += 1


def check_file(chk, outdir, case, version):
    path = os.path.join(outdir, case["name"] + ".h5")
    with h5py.File(path, "r") as f:
        chk.expect(text(f.attrs["femto_version"]) == version, f"{path}: femto_version")
        chk.expect(int(f.attrs["dimension"]) == case["dim"], f"{path}: dimension")
        chk.expect(text(f["problem"][()]) == PROBLEM, f"{path}: problem text")
        chk.expect(list(f["times"][()]) == case["times"], f"{path}: times {list(f['times'][()])}")
        points = f["mesh/points"][()]
        npoints = sum(b["ncells"] * ic.lattice_count(b["shape"], b["order"]) for b in case["blocks"])
        chk.expect(points.shape == (npoints, 3) and points.dtype == np.float64, f"{path}: points {points.shape}")
        # blocks: one group each, in order, named shape_p<order> with _2, _3 for repeats
        seen, blocks, first = {}, [], 0
        for b, blk in enumerate(case["blocks"]):
            base = f"{blk['shape']}_p{blk['order']}"
            seen[base] = seen.get(base, 0) + 1
            name = base if seen[base] == 1 else f"{base}_{seen[base]}"
            g = f.get(f"mesh/{name}")
            if not chk.expect(g is not None, f"{path}: group /mesh/{name}"):
                return
            conn = g["connectivity"][()]
            chk.expect(conn.dtype == np.int64 and conn.shape[0] == blk["ncells"], f"{path}: {name} connectivity")
            chk.expect(int(g.attrs["order"]) == blk["order"] and int(g.attrs["ncells"]) == blk["ncells"] and
                       int(g.attrs["first_cell"]) == first and text(g.attrs["shape"]) == blk["shape"],
                       f"{path}: {name} attributes")
            want_type = ic.VTK_LINEAR[blk["shape"]] if blk["order"] == 1 else ic.VTK_LAGRANGE[blk["shape"]]
            chk.expect(int(g.attrs["vtk_type"]) == want_type, f"{path}: {name} vtk_type")
            blocks.append(conn)
            first += blk["ncells"]
        check_geometry(chk, case, path, points, blocks)
        region = f["mesh/cell_data/region"]
        chk.close(f"{path}:region", region[()], ic.expected_cell_arrays(case, 0.0)["region"])
        chk.expect(text(region.attrs["center"]) == "Cell", f"{path}: region centre")
        fd = {k: text(v[()]) for k, v in f["mesh/field_data"].items()}
        chk.expect(fd == {"femto_version": version, "group 1": 'left wall & <inlet> "quoted"', "empty": ""},
                   f"{path}: field data {fd}")
        for s, t in enumerate(case["times"]):
            want_point = ic.in_xdmf_order(ic.expected_point_arrays(points, t))
            want_cell = ic.expected_cell_arrays(case, t)
            for name, want in list(want_point.items()) + [("cell_value", want_cell["cell_value"])]:
                g = f[f"fields/{name}"]
                ds = g[f"{s:06d}"]
                chk.close(f"{path}:{name}/{s}", ds[()], want)
                chk.expect(float(ds.attrs["time"]) == t and int(ds.attrs["step"]) == s, f"{path}: {name}/{s} time")
                chk.expect(ds.compression == "gzip" and ds.shuffle and ds.chunks is not None,
                           f"{path}: {name}/{s} chunked and deflated")
                if s == 0:
                    chk.expect(text(g.attrs["units"]) == UNITS[name], f"{path}: {name} units")
                    chk.expect(text(g.attrs["center"]) == ("Cell" if name == "cell_value" else "Node"),
                               f"{path}: {name} centre")
            if s == 0:
                chk.expect(text(f["fields/stress"].attrs["components"]) == " ".join(ic.XDMF_TENSOR_NAMES),
                           f"{path}: stress components")
        nsteps = len(case["times"])
        chk.expect(all(len(f[f"fields/{n}"]) == nsteps for n in f["fields"]), f"{path}: {nsteps} steps per field")


def main():
    outdir = sys.argv[1]
    manifest = ic.load_manifest(outdir)
    chk = ic.Checker()
    for case in manifest["cases"] + [manifest["series"], manifest["nosteps"]]:
        check_file(chk, outdir, case, manifest["version"])
    left = [n for n in os.listdir(outdir) if n.startswith(".") and ".tmp." in n]
    chk.expect(not left, f"temporary files left: {left}")
    chk.exit("HDF5")


if __name__ == "__main__":
    main()
