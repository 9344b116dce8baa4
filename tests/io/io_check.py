"""What the io test files must contain: the formulas of io_frames.c, the manifest, and small checking helpers.

Shared by the readers that verify the files test_io_files wrote (io_check_vtk_order.py, io_check_vtu.py,
io_check_hdf5.py with /usr/bin/python3, io_check_paraview.py with pvpython). The map and the point functions are
evaluated in the same order of operations as in io_frames.c, so values agree to a few units in the last place.
"""
import functools
import itertools
import json
import math
import os
import sys

try:  # the scripts call need(["numpy"]) first, which skips cleanly where numpy is missing
    import numpy as np
except ImportError:
    np = None

SKIP = 77
REL_TOL = 1e-14
GEOMETRY_TOL = 1e-10
SHAPE_DIM = {"line": 1, "triangle": 2, "quadrilateral": 2, "tetrahedron": 3, "hexahedron": 3}
TENSOR = {"line", "quadrilateral", "hexahedron"}
VTK_LINEAR = {"line": 3, "triangle": 5, "quadrilateral": 9, "tetrahedron": 10, "hexahedron": 12}
VTK_LAGRANGE = {"line": 68, "triangle": 69, "quadrilateral": 70, "tetrahedron": 71, "hexahedron": 72}
TENSOR_NAMES = ["XX", "YY", "ZZ", "XY", "YZ", "XZ"]
# XDMF's Tensor6 order (XX XY XZ YY YZ ZZ), which the .h5 and .xdmf use: TENSOR_NAMES[k] for k in TO_XDMF
TO_XDMF = [0, 3, 5, 1, 4, 2]
XDMF_TENSOR_NAMES = [TENSOR_NAMES[k] for k in TO_XDMF]


def in_xdmf_order(arrays):
    """The expected arrays with every 6-component one in XDMF's Tensor6 order."""
    return {k: (v[:, TO_XDMF] if v.ndim == 2 and v.shape[1] == 6 else v) for k, v in arrays.items()}


def need(module_names):
    """Imports the modules or exits with the skip code, saying which is missing."""
    mods = []
    for name in module_names:
        try:
            mods.append(__import__(name))
        except ImportError as e:
            print(f"skipped: {sys.executable} cannot import {name} ({e})")
            sys.exit(SKIP)
    return mods


class Checker:
    """Counts failures and prints each; exit() returns the process status."""

    def __init__(self):
        self.failures = 0
        self.checks = 0

    def expect(self, ok, what):
        self.checks += 1
        if not ok:
            self.failures += 1
            print("FAIL:", what)
        return ok

    def close(self, name, got, want, rel_tol=REL_TOL):
        """Arrays equal to rel_tol relative to the largest magnitude of the expected values."""
        want = np.asarray(want, dtype=float)
        got = np.asarray(got, dtype=float)
        if not self.expect(got.shape == want.shape, f"{name}: shape {got.shape}, want {want.shape}"):
            return False
        scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
        err = float(np.max(np.abs(got - want))) if want.size else 0.0
        return self.expect(err <= rel_tol * scale, f"{name}: max error {err:.3e} (scale {scale:.3e})")

    def exit(self, what):
        print(f"{what}: {self.checks} checks, {self.failures} failures")
        sys.exit(1 if self.failures else 0)


def load_manifest(outdir):
    path = os.path.join(outdir, "manifest.json")
    if not os.path.exists(path):
        print(f"FAIL: {path} missing (test_io_files did not run)")
        sys.exit(1)
    with open(path) as f:
        return json.load(f)


def map_point(p, dim, xi):
    """io_test_map: x = F(xi), degree p, for a cell of order p."""
    a, b, c = xi
    x = a + 0.2 * b + 0.1 * c + 0.15 * math.pow(b, p) / p
    y = 0.1 * a + b + 0.2 * c + 0.1 * math.pow(a, p) / p
    z = 0.05 * a + 0.1 * b + c + 0.12 * math.pow(a, p) / p if dim == 3 else 0.0
    return (x, y, z)


def map_jacobian(p, dim, xi):
    a, b, c = xi
    da = a ** (p - 1) if p > 1 else 1.0
    db = b ** (p - 1) if p > 1 else 1.0
    J = [[1.0, 0.2 + 0.15 * db, 0.1], [0.1 + 0.1 * da, 1.0, 0.2], [0.05 + 0.12 * da, 0.1, 1.0]]
    if dim == 2:
        J[2] = [0.0, 0.0, 0.0]
    return J


def point_values(x, t):
    """temperature, displacement, stress at point x and time t (point_values in io_frames.c)."""
    px, py, pz = x
    g = 1.0 + t
    s = (1.5 + px - 2.0 * py + 0.25 * pz + px * py * pz) * g
    v = [px * py * g, (py - pz) * g, (2.0 * px + pz * pz) * g]
    ten = [px * g, py * g, pz * g, px * py * g, py * pz * g, (px * pz + 1.0) * g]
    return s, v, ten


def expected_point_arrays(points, t):
    vals = [point_values(tuple(x), t) for x in points]
    return {
        "temperature": np.array([v[0] for v in vals]),
        "displacement": np.array([v[1] for v in vals]),
        "stress": np.array([v[2] for v in vals]),
    }


def lattice_count(shape, p):
    """Nodes of a cell of order p (fem/element.c's lattice_count)."""
    d = SHAPE_DIM[shape]
    if shape in TENSOR:
        return (p + 1) ** d
    return (p + 1) * (p + 2) // 2 if d == 2 else (p + 1) * (p + 2) * (p + 3) // 6


def cell_layout(case):
    """(block, cell in block, shape, order) for each cell of the frame, block after block."""
    cells = []
    for b, blk in enumerate(case["blocks"]):
        for c in range(blk["ncells"]):
            cells.append((b, c, blk["shape"], blk["order"]))
    return cells


def expected_cell_arrays(case, t):
    cells = cell_layout(case)
    return {
        "region": np.array([b + 1.0 for (b, _, _, _) in cells]),
        "cell_value": np.array([(0.5 * k + 0.25) * (1.0 + t) for k in range(len(cells))]),
    }


def sample_points(shape, n=7):
    """Parametric points inside the reference cell (VTK's and femto's: [0,1]^d, unit simplex)."""
    rng = np.random.default_rng(12345)
    d = SHAPE_DIM[shape]
    pts = []
    while len(pts) < n:
        xi = rng.random(3)
        xi[d:] = 0.0
        if shape not in TENSOR and xi.sum() > 1.0:
            continue
        pts.append(xi)
    return pts


def corner_points(shape):
    """The reference cell's corners (parametric coordinates)."""
    d = SHAPE_DIM[shape]
    if shape in TENSOR:
        return [np.array(list(c) + [0.0] * (3 - d)) for c in itertools.product([0.0, 1.0], repeat=d)]
    return [np.zeros(3)] + [np.eye(3)[a] for a in range(d)]


def cell_position(case, block, cell, shape, order, xi):
    """Where the writer put parametric point xi of cell `cell` of block `block`: F(xi) + (3 cell, 3 block, 0)."""
    x = map_point(order, case["dim"], xi)
    return (x[0] + 3.0 * cell, x[1] + 3.0 * block, x[2])


@functools.lru_cache(maxsize=None)
def exact_measure(shape, order, dim):
    """Length, area or volume of F(reference cell), by Gauss quadrature of |det DF| (exact up to rounding for
    the polynomial cases, converged for the line's square root)."""
    g, w = np.polynomial.legendre.leggauss(12)
    g = 0.5 * (g + 1.0)
    w = 0.5 * w
    d = SHAPE_DIM[shape]
    total = 0.0
    for idx in np.ndindex(*([len(g)] * d)):
        u = [g[i] for i in idx] + [0.0] * (3 - d)
        weight = np.prod([w[i] for i in idx])
        if shape in TENSOR:
            xi, jac = u, 1.0
        elif d == 2:  # Duffy: (u, v) in the square to (u (1 - v), v) in the triangle
            xi, jac = [u[0] * (1 - u[1]), u[1], 0.0], 1 - u[1]
        else:
            xi = [u[0] * (1 - u[1]) * (1 - u[2]), u[1] * (1 - u[2]), u[2], ]
            jac = (1 - u[1]) * (1 - u[2]) ** 2
        J = np.array(map_jacobian(order, dim, xi))[:, :d]
        if d == 1:
            m = np.linalg.norm(J[:, 0])
        elif d == 2:
            m = np.linalg.det(J[:2, :2])
        else:
            m = np.linalg.det(J)
        total += weight * jac * m
    return total
