#!/usr/bin/python3
"""femto's solver benchmark (issue 11): runs femto-app on the problems of bench/problems at the sizes and element
orders given on the command line, and prints one markdown table row per run (docs/PERFORMANCE.md, "Solver
benchmark", says what each column means).

    bench/solver-bench.py --device cuda --problem cantilever-tet --sizes 100k,750k,6M --markdown results.md

Sizes: a number >= 1 is a target dof count (suffixes k and M: 33k, 6M); a number < 1 is the cell size h in metres
(the problem's <mesh size="...">). For a dof target the script picks h from the mesh counts of
bench/problems/mesh-counts.json (vertices, edges, faces and cells that femto's mesher makes at a list of sizes,
interpolated between them; `--calibrate` remakes the file) or, for the structured hexahedral beam, from its exact
node count; the table reports the dofs the run had. Without --sizes each problem runs at its file's size.

Each run gets a temporary folder with its problem file (the benchmark problem with the size, the preconditioner
and, unless --with-output, VTU and HDF5 output turned off); femto-app meshes the .geo itself, so the machine needs
femto-app and its libraries only (no Gmsh command line). Standard library only. Exit status: 0 when every run
converged, 1 for a usage error, 3 when a run failed or timed out (its row says how).

Over MPI ranks (issue 15's scaling figures): --ranks 1,2,4 runs every case under `mpiexec -n R` (one rank runs
femto-app directly), and a second table gives each run's solve time, time per Krylov iteration and parallel
efficiency against the fewest ranks: strong scaling (the same mesh; efficiency T1 R1 / (TR R)) or, with --weak, weak
scaling (a dof target or cell size grows with the rank count, so every rank keeps its share; efficiency T1 / TR).

    bench/solver-bench.py --device cpu --threads 1 --ranks 1,2,4,8,16 --problem cantilever-tet --sizes 2M
    bench/solver-bench.py --device cuda --ranks 1,2 --weak --problem cantilever-tet --sizes 5M --coarse-solver boomeramg
"""

import argparse
import datetime
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PROBLEMS_DIR = os.path.join(HERE, "problems")
COUNTS_FILE = os.path.join(PROBLEMS_DIR, "mesh-counts.json")

# The benchmark problems: file, field components, and how a dof target becomes a cell size ("table": the mesh
# counts of mesh-counts.json; "beam-hex": the structured 1 x 0.1 x 0.1 m beam of cantilever-hex.geo).
PROBLEMS = {
    "cantilever-tet": {"xml": "cantilever-tet.xml", "ncomp": 3, "sizing": "table"},
    "cantilever-hex": {"xml": "cantilever-hex.xml", "ncomp": 3, "sizing": "beam-hex"},
    "heat-cube": {"xml": "heat-cube.xml", "ncomp": 1, "sizing": "table"},
}

# Cell sizes at which --calibrate counts each meshed geometry (from ~1e3 to ~1e7 dofs at order 2).
CALIBRATION_SIZES = {
    "cantilever-tet.geo": [0.05, 0.03, 0.02, 0.015, 0.012, 0.01, 0.008, 0.0065, 0.005, 0.004, 0.0033, 0.003],
    "cube.geo": [0.1, 0.07, 0.05, 0.035, 0.025, 0.019, 0.015, 0.012],
}

COLUMNS = ["problem", "cells", "p", "ranks", "dofs", "Newton", "Krylov", "preconditioner", "mesh s", "setup s", "precond s", "solve s",
           "run s", "device MB", "host MB", "device B/dof", "device", "commit", "date", "status"]


def fail(msg):
    print(f"solver-bench: {msg}", file=sys.stderr)
    sys.exit(1)


# ---------------------------------------------------------------- sizes

def parse_sizes(text):
    """'33k,0.02,6M' -> [('dofs', 33000), ('h', 0.02), ('dofs', 6000000)]"""
    out = []
    for item in filter(None, (s.strip() for s in text.split(","))):
        m = re.fullmatch(r"([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)([kKM]?)", item)
        if not m:
            fail(f"bad size '{item}': expected a cell size in m (0.02) or a dof count (33000, 33k, 6M)")
        value = float(m.group(1)) * {"": 1, "k": 1e3, "K": 1e3, "M": 1e6}[m.group(2)]
        if value <= 0:
            fail(f"bad size '{item}': sizes are positive")
        out.append(("dofs", value) if value >= 1 or m.group(2) else ("h", value))
    return out


def lagrange_nodes(counts, cell, p):
    """Nodes of the order-p Lagrange space on a mesh of V vertices, E edges, F faces and C cells."""
    V, E, F, C = (counts[k] for k in ("vertices", "edges", "faces", "cells"))
    if cell == "tet":
        return V + (p - 1) * E + (p - 1) * (p - 2) // 2 * F + (p - 1) * (p - 2) * (p - 3) // 6 * C
    return V + (p - 1) * E + (p - 1) ** 2 * F + (p - 1) ** 3 * C  # hexahedra


def table_curve(counts_table, geo, ncomp, p):
    """[(log h, log dofs)] at the counted sizes of one geometry (None when it has no counts)."""
    entry = counts_table.get(geo)
    if not entry:
        return None
    return [(math.log(r["size"]), math.log(ncomp * lagrange_nodes(r, entry["cell"], p))) for r in entry["sizes"]]


def interpolate(pts, x, xi, yi):
    """Piecewise-linear y(x) through pts (coordinates xi, yi of each point), extended by its end segments."""
    pts = sorted(pts, key=lambda q: q[xi])
    k = 1
    while k < len(pts) - 1 and pts[k][xi] < x:
        k += 1
    a, b = pts[k - 1], pts[k]
    t = (x - a[xi]) / (b[xi] - a[xi])
    return a[yi] + t * (b[yi] - a[yi])


def beam_hex_cells(h):
    """Cells along and across the structured beam at cell size h, as cantilever-hex.geo counts them."""
    def gmsh_round(x):  # half away from zero, like the .geo's Round()
        return int(math.floor(x + 0.5))
    return max(1, gmsh_round(1.0 / h)), max(1, gmsh_round(0.1 / h))


def beam_hex_dofs(h, p, ncomp):
    nx, ny = beam_hex_cells(h)
    return ncomp * (p * nx + 1) * (p * ny + 1) ** 2


def choose_size(problem, geo, counts_table, p, size, refine=0):
    """(cell size h, predicted dofs) for a size given as ('h', metres) or ('dofs', target); with `refine`
    refinements the structured beam's cells across are a multiple of 2^refine."""
    kind, value = size
    spec = PROBLEMS[problem]
    if spec["sizing"] == "beam-hex":
        if kind == "dofs":  # n cells across the 0.1 m side, 10 n along the beam
            n = min(range(2 ** refine, 400, 2 ** refine),
                    key=lambda k: abs(math.log(beam_hex_dofs(0.1 / k, p, spec["ncomp"]) / value)))
            value = float(f"{0.1 / n:.6g}")
        return value, beam_hex_dofs(value, p, spec["ncomp"])
    pts = table_curve(counts_table, geo, spec["ncomp"], p)
    if kind == "h":
        return value, round(math.exp(interpolate(pts, math.log(value), 0, 1))) if pts else None
    if not pts:
        fail(f"{COUNTS_FILE} has no counts for {geo}: run solver-bench.py --calibrate, or give sizes in metres")
    if not min(q[1] for q in pts) <= math.log(value) <= max(q[1] for q in pts):
        print(f"solver-bench: {value:,.0f} dofs of {problem} at p = {p} lies outside the sizes counted in "
              f"{os.path.basename(COUNTS_FILE)}: the cell size is extrapolated", file=sys.stderr)
    h = float(f"{math.exp(interpolate(pts, math.log(value), 1, 0)):.3g}")
    return h, round(math.exp(interpolate(pts, math.log(h), 0, 1)))


# ---------------------------------------------------------------- problem files

def problem_xml(problem, h, linear_attrs, with_output, folder, refine=0, length=1):
    """Writes the problem file of one run into folder, with linear_attrs ({name: value}) on <linear>; returns
    its path. refine > 0: meshed at 2^refine times h and refined that many times (cells of size h)."""
    src = os.path.join(PROBLEMS_DIR, PROBLEMS[problem]["xml"])
    tree = ET.parse(src)
    root = tree.getroot()
    mesh = root.find("mesh")
    mesh.set("file", os.path.join(PROBLEMS_DIR, mesh.get("file")))
    if length != 1:  # the structured beam made `length` times longer (L in its .geo), the same cells
        text = open(mesh.get("file")).read()
        if "L = 1.0;" not in text:
            fail(f"{mesh.get('file')} does not set L = 1.0: --weak-length cannot lengthen it")
        # kept between runs (not in the run's folder), so that femto's mesh cache beside it serves the next run
        keep = os.path.join(tempfile.gettempdir(), "femto-bench-geo")
        os.makedirs(keep, exist_ok=True)
        stem, ext = os.path.splitext(os.path.basename(mesh.get("file")))
        geo = os.path.join(keep, f"{stem}-L{length}{ext}")
        with open(geo, "w") as f:
            f.write(text.replace("L = 1.0;", f"L = {length!r};", 1))
        mesh.set("file", geo)
    if h is not None:
        mesh.set("size", repr(h * 2 ** refine))
    if refine:
        mesh.set("refine", str(refine))
    if linear_attrs:
        solver = root.find("solver")
        if solver is None:
            solver = ET.Element("solver")
            root.insert(list(root).index(root.find("output")), solver)
        linear = solver.find("linear")
        if linear is None:
            linear = ET.SubElement(solver, "linear")
        for k, v in linear_attrs.items():
            linear.set(k, v)
    output = root.find("output")
    for fmt in ("vtu", "hdf5"):
        el = output.find(fmt)
        if el is None:
            el = ET.SubElement(output, fmt)
        if not with_output:
            el.set("enabled", "false")
    path = os.path.join(folder, f"{problem}.xml")
    tree.write(path, encoding="UTF-8", xml_declaration=True)
    return path


def problem_geo(problem):
    return ET.parse(os.path.join(PROBLEMS_DIR, PROBLEMS[problem]["xml"])).getroot().find("mesh").get("file")


# ---------------------------------------------------------------- running femto-app

def run_femto(cmd, timeout, env):
    """(exit status or 'timeout', stdout, stderr, wall seconds). A run past its time gets SIGTERM (femto-app
    removes what it had written), then SIGKILL."""
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        out, err = proc.communicate(timeout=timeout)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        proc.terminate()
        try:
            out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        rc = "timeout"
    return rc, out, err, time.monotonic() - t0


def read_summary(path):
    """NAME_summary.txt as ({key: value}, device description)."""
    values, device = {}, ""
    if not os.path.exists(path):
        return values, device
    for line in open(path):
        if line.startswith("# device:"):
            device = line.split(":", 1)[1].strip()
        elif not line.startswith("#") and line.strip():
            k, v = line.split()[:2]
            values[k] = float(v)
    return values, device


def parse_stdout(out):
    """dofs, cell types and preconditioner from femto-app's lines (the mesh line and a physics' setup line)."""
    info = {"dofs": sum(int(d) for d in re.findall(r"^\w+(?: \(.*\))?: order \d+, (\d+) dofs", out, re.M))}
    m = re.search(r"^mesh .*? cells \(([^)]*)\)", out, re.M)
    info["cells"] = ", ".join(c.split()[-1] for c in m.group(1).split(",")) if m else "?"
    pcs = re.findall(r" with (.+?) preconditioning", out)
    info["preconditioner"] = ", ".join(dict.fromkeys(pcs)) or "?"
    return info


def mpi_prefix(args, ranks):
    """The mpiexec words before femto-app for a run over `ranks` ranks (none for one)."""
    if ranks == 1:
        return []
    flags = args.mpiexec_flags.split() if args.mpiexec_flags else []
    if os.geteuid() == 0 and "--allow-run-as-root" not in flags:
        flags.append("--allow-run-as-root")
    return [args.mpiexec, "-n", str(ranks)] + flags


def linear_attrs(args):
    attrs = {}
    if args.preconditioner:
        attrs["preconditioner"] = args.preconditioner
    if args.coarse_solver:
        attrs["coarse-solver"] = args.coarse_solver
    if args.coarse_inverse:
        attrs["coarse-inverse"] = args.coarse_inverse
    return attrs


def one_run(args, problem, p, h, predicted, ranks=1):
    """Runs one case; returns its table row as a dict."""
    folder = tempfile.mkdtemp(prefix=f"femto-bench-{problem}-p{p}-")
    try:
        length = ranks if args.weak_length else 1
        xml = problem_xml(problem, h, linear_attrs(args), args.with_output, folder, args.refine, length)
        results = os.path.join(folder, "results")
        cmd = mpi_prefix(args, ranks) + [args.femto, "run", xml, "--device", args.device, "--order", str(p),
                                         "--output-dir", results]
        if args.threads:
            cmd += ["--threads", str(args.threads)]
        note = f" (about {predicted:,} dofs)" if predicted else ""
        print(f"solver-bench: {problem} p = {p}, h = {h if h is not None else 'as in the file'}{note}, "
              f"{ranks} rank{'s' if ranks > 1 else ''} ...", file=sys.stderr, flush=True)
        env = dict(os.environ, **({"FEMTO_MESH_CACHE": "off"} if args.no_mesh_cache else {}))
        if args.threads:
            env["OMP_NUM_THREADS"] = str(args.threads)
        rc, out, err, wall = run_femto(cmd, args.timeout, env)
        summary, device = read_summary(os.path.join(results, f"{problem}_summary.txt"))
        row = dict(parse_stdout(out), problem=problem, p=p, h=h, ranks=ranks, predicted_dofs=predicted, wall=wall, rc=rc,
                   device=device, summary=summary, error=(err.strip().splitlines() or [""])[-1])
        print(f"solver-bench:   {status_text(row)} in {wall:.1f} s", file=sys.stderr, flush=True)
        if args.keep:
            for name, text in (("stdout.txt", out), ("stderr.txt", err)):
                with open(os.path.join(folder, name), "w") as f:
                    f.write(text)
            print(f"solver-bench:   kept {folder}", file=sys.stderr)
        return row
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


# ---------------------------------------------------------------- the table

def status_text(row):
    if row["rc"] == "timeout":
        return "timed out"
    if row["rc"] != 0:
        return f"exit {row['rc']}: {row['error'][:100]}"
    capped = int(row["summary"].get("linear_solves_capped", 0))
    return f"ok, {capped} linear solves at their cap" if capped else "ok"


def short_device(description):
    """'NVIDIA H100 80GB HBM3 (132 SMs, ...), gather assembly' -> 'NVIDIA H100 80GB HBM3';
    'CPU, 2 threads, gather assembly' -> 'CPU, 2 threads'."""
    if description.startswith("CPU"):
        return ", ".join(description.split(", ")[:2])
    return description.split(" (")[0]


def cells(row, commit, date):
    s = row["summary"]

    def num(key, fmt):
        return fmt.format(s[key]) if key in s else "-"

    dofs = row["dofs"]
    dev_peak = s.get("device_peak_bytes")
    per_dof = f"{dev_peak / dofs:.0f}" if dev_peak and dofs else "-"
    return [row["problem"], row["cells"], str(row["p"]), str(row.get("ranks", 1)), f"{dofs:,}" if dofs else "-",
            num("newton_iterations", "{:.0f}"), num("linear_iterations", "{:.0f}"), row["preconditioner"],
            num("mesh_seconds", "{:.2f}"), num("setup_seconds", "{:.2f}"), num("preconditioner_setup_seconds", "{:.2f}"),
            num("solve_seconds", "{:.3f}"),
            num("total_seconds", "{:.2f}"), f"{dev_peak / 1e6:.1f}" if dev_peak is not None else "-",
            f"{s['host_peak_bytes'] / 1e6:.1f}" if "host_peak_bytes" in s else "-",
            per_dof, short_device(row["device"]) or "-", commit, date, status_text(row).replace("|", "/")]


def markdown(rows, commit, date, preamble):
    lines = [preamble, "", "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for row in rows:
        lines.append("| " + " | ".join(cells(row, commit, date)) + " |")
    return "\n".join(lines) + "\n"


def femto_commit(femto):
    """The commit femto-app was configured at (its --version), else this checkout's HEAD, else 'unknown'."""
    try:
        out = subprocess.run([femto, "--version"], capture_output=True, text=True, timeout=30).stdout
    except OSError as e:
        fail(f"cannot run {femto}: {e.strerror}")
    m = re.search(r"commit ([0-9a-f]+)", out)
    if m:
        return m.group(1)
    git = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return git.stdout.strip() if git.returncode == 0 else "unknown"


# ---------------------------------------------------------------- calibration

def count_mesh(femto, geo, h):
    """{'cell': 'tet'|'hex', 'size': h, 'vertices', 'edges', 'faces', 'cells'} from femto-app info."""
    with tempfile.TemporaryDirectory(prefix="femto-bench-count-") as folder:
        xml = os.path.join(folder, "count.xml")
        with open(xml, "w") as f:
            f.write(f'<femto><mesh file="{os.path.join(PROBLEMS_DIR, geo)}" size="{h!r}"/>'
                    '<heat><material region="any" conductivity="1"/></heat></femto>\n')
        res = subprocess.run([femto, "info", xml], capture_output=True, text=True)
    m = re.search(r"topology: (\d+) vertices, (\d+) edges, (\d+) faces, (\d+) cells", res.stdout)
    kind = re.search(r"^\s*cells\s+(tet|hex)", res.stdout, re.M)
    if res.returncode != 0 or not m or not kind:
        fail(f"femto-app info could not count the mesh of {geo} at size {h}: {res.stderr.strip()}")
    counts = dict(zip(("vertices", "edges", "faces", "cells"), map(int, m.groups())))
    return dict(cell=kind.group(1), size=h, **counts)


def calibrate(femto):
    table = {}
    for geo, sizes in CALIBRATION_SIZES.items():
        rows = []
        for h in sizes:
            t0 = time.monotonic()
            rows.append(count_mesh(femto, geo, h))
            print(f"solver-bench: {geo} at h = {h}: {rows[-1]['vertices']:,} vertices, "
                  f"{rows[-1]['cells']:,} cells ({time.monotonic() - t0:.1f} s)", file=sys.stderr, flush=True)
        table[geo] = {"cell": rows[0]["cell"], "sizes": [{k: r[k] for k in r if k != "cell"} for r in rows]}
    write_counts(table)
    print(f"solver-bench: wrote {COUNTS_FILE}", file=sys.stderr)


def write_counts(table):
    """mesh-counts.json, one line per size."""
    lines = ['{"_about": "vertices, edges, faces and cells of femto\'s mesh of each geometry at each size (femto-app '
             'info); written by bench/solver-bench.py --calibrate",']
    for i, (geo, entry) in enumerate(table.items()):
        sizes = ",\n  ".join(json.dumps(r) for r in entry["sizes"])
        lines.append(f' {json.dumps(geo)}: {{"cell": {json.dumps(entry["cell"])}, "sizes": [\n  {sizes}]}}'
                     + ("," if i < len(table) - 1 else ""))
    with open(COUNTS_FILE, "w") as f:
        f.write("\n".join(lines) + "}\n")


# ---------------------------------------------------------------- command line

def options():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--femto", default=os.path.join(ROOT, "build", "femto-app"), help="femto-app to run")
    ap.add_argument("--device", choices=["cpu", "cuda", "auto"], default="auto",
                    help="femto-app's --device (default auto: the GPU when there is one)")
    ap.add_argument("--threads", type=int, default=0, help="CPU threads (default: femto-app's, all cores)")
    ap.add_argument("--problem", action="append", choices=sorted(PROBLEMS),
                    help="a benchmark problem (repeatable; default: all)")
    ap.add_argument("--sizes", help="comma-separated: dof targets (33k, 750k, 6M) or cell sizes in m (0.02)")
    ap.add_argument("--order", default="", help="element order(s), comma-separated (default: the problem's)")
    ap.add_argument("--preconditioner", choices=["multigrid", "jacobi", "chebyshev", "none"],
                    help="<linear preconditioner=...> (default: femto's)")
    ap.add_argument("--coarse-solver", choices=["auto", "boomeramg", "cudss", "cholmod", "mumps"],
                    help="<linear coarse-solver=...> (default: femto's)")
    ap.add_argument("--coarse-inverse", choices=["auto", "yes", "no"],
                    help="<linear coarse-inverse=...>: cuDSS's factor as its explicit inverse (default: femto's)")
    ap.add_argument("--refine", type=int, default=0,
                    help="mesh at 2^N times the cell size and refine N times (<mesh refine>): about the same cells "
                         "(the hexahedral beam's exactly), and multigrid goes on to the meshes before refinement")
    ap.add_argument("--ranks", default="1", help="MPI rank counts, comma-separated (default 1: no mpiexec)")
    ap.add_argument("--weak", action="store_true",
                    help="weak scaling: each size is per rank (dof targets times R, cell sizes over R^(1/3))")
    ap.add_argument("--weak-length", action="store_true",
                    help="weak scaling of the structured beam (cantilever-hex) by its length: R ranks solve a beam R "
                         "times longer with the same cells, so every rank's share is the one-rank problem exactly "
                         "(--weak grows the cells' count in every direction, in steps the mesh allows)")
    ap.add_argument("--mpiexec", default="mpiexec", help="the MPI launcher (default mpiexec)")
    ap.add_argument("--mpiexec-flags", default="", help="extra launcher flags, e.g. '--oversubscribe'")
    ap.add_argument("--markdown", help="also write the table to this file")
    ap.add_argument("--json", help="also write every run (its options, status and NAME_summary.txt) to this file")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per run (default 3600)")
    ap.add_argument("--keep", action="store_true", help="keep each run's folder (problem file, results, output)")
    ap.add_argument("--no-mesh-cache", action="store_true",
                    help="mesh every .geo again (FEMTO_MESH_CACHE=off) rather than read femto's cached mesh")
    ap.add_argument("--with-output", action="store_true", help="write VTU and HDF5 as the problem file says")
    ap.add_argument("--dry-run", action="store_true", help="print the runs and their predicted dofs only")
    ap.add_argument("--calibrate", action="store_true", help=f"remake {os.path.relpath(COUNTS_FILE, ROOT)}")
    # a launcher flag is itself an option ("--mpiexec-flags --oversubscribe"), which argparse would refuse as
    # the value: the word after --mpiexec-flags is its value whatever it looks like
    argv = sys.argv[1:]
    for i, a in enumerate(argv[:-1]):
        if a == "--mpiexec-flags":
            argv[i:i + 2] = ["--mpiexec-flags=" + argv[i + 1]]
            break
    args = ap.parse_args(argv)
    if args.weak_length:
        args.weak = True
        if any(PROBLEMS[q]["sizing"] != "beam-hex" for q in (args.problem or list(PROBLEMS))):
            fail("--weak-length lengthens the structured beam: give --problem cantilever-hex")
    return args


def parse_ranks(text):
    try:
        ranks = [int(r) for r in text.split(",") if r.strip()]
    except ValueError:
        ranks = []
    if not ranks or min(ranks) < 1:
        fail(f"bad --ranks '{text}': expected positive rank counts, e.g. 1,2,4")
    return ranks


def per_rank_size(size, ranks):
    """A weak-scaling size: the per-rank dof target times the ranks, or the cell size over their cube root."""
    kind, value = size
    return (kind, value * ranks) if kind == "dofs" else (kind, value / ranks ** (1 / 3))


def plan(args, counts_table):
    """[(problem, order, h or None, predicted dofs or None, ranks)]"""
    orders = [int(o) for o in args.order.split(",") if o.strip()] if args.order else [None]
    sizes = parse_sizes(args.sizes) if args.sizes else [None]
    if args.weak and None in sizes:
        fail("--weak needs --sizes (the size per rank)")
    runs = []
    for problem in args.problem or list(PROBLEMS):
        root = ET.parse(os.path.join(PROBLEMS_DIR, PROBLEMS[problem]["xml"])).getroot()
        for p in orders:
            p = p or int(root.find("discretization").get("order", "1"))
            for size in sizes:
                for ranks in parse_ranks(args.ranks):
                    if size is None:
                        runs.append((problem, p, None, None, ranks))
                        continue
                    sz = per_rank_size(size, ranks) if args.weak and not args.weak_length else size
                    h, predicted = choose_size(problem, problem_geo(problem), counts_table, p, sz, args.refine)
                    if args.weak_length:  # `ranks` beams end to end: (p nx + 1) nodes along becomes (p nx R + 1)
                        nx, ny = beam_hex_cells(h)
                        predicted = PROBLEMS[problem]["ncomp"] * (p * nx * ranks + 1) * (p * ny + 1) ** 2
                    runs.append((problem, p, h, predicted, ranks))
    return runs


def scaling_table(rows, weak):
    """Solve time, time per Krylov iteration and efficiency of each run against the same case's fewest ranks
    (strong: T1 R1 / (TR R); weak: T1 / TR), or '' when every case ran on one rank count."""
    if len({r["ranks"] for r in rows}) < 2:
        return ""
    lines = ["", f"{'Weak' if weak else 'Strong'} scaling (efficiency of the solve, and of one Krylov iteration):", "",
             "| problem | p | ranks | dofs | Krylov | setup s | solve s | ms per iteration | efficiency | "
             "efficiency per iteration |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    base = {}
    for r in rows:
        s = r["summary"]
        if r["rc"] != 0 or "solve_seconds" not in s or not s.get("linear_iterations"):
            lines.append(f"| {r['problem']} | {r['p']} | {r['ranks']} | - | - | - | - | - | - | {status_text(r)} |")
            continue
        t, its = s["solve_seconds"], s["linear_iterations"]
        key = (r["problem"], r["p"]) if weak else (r["problem"], r["p"], r["h"])
        b = base.setdefault(key, (r["ranks"], t, t / its))
        work = 1 if weak else r["ranks"] / b[0]
        eff, eff_it = b[1] / (t * work), b[2] / (t / its * work)
        lines.append(f"| {r['problem']} | {r['p']} | {r['ranks']} | {r['dofs']:,} | {its:.0f} | "
                     f"{s.get('setup_seconds', 0):.2f} | {t:.3f} | {1e3 * t / its:.3f} | {100 * eff:.0f}% | "
                     f"{100 * eff_it:.0f}% |")
    return "\n".join(lines) + "\n"


def main():
    args = options()
    if not (os.path.isfile(args.femto) and os.access(args.femto, os.X_OK)):
        fail(f"no femto-app at {args.femto} (build it, or give --femto PATH)")
    args.femto = os.path.abspath(args.femto)
    if args.calibrate:
        calibrate(args.femto)
        return 0
    counts_table = json.load(open(COUNTS_FILE)) if os.path.exists(COUNTS_FILE) else {}
    runs = plan(args, counts_table)
    if args.dry_run:
        for problem, p, h, predicted, ranks in runs:
            print(f"{problem} p = {p}: h = {h if h is not None else 'as in the file'}"
                  + (f", about {predicted:,} dofs" if predicted else "") + (f", {ranks} ranks" if ranks > 1 else ""))
        return 0
    commit, date = femto_commit(args.femto), datetime.date.today().isoformat()
    rows = [one_run(args, problem, p, h, predicted, ranks) for problem, p, h, predicted, ranks in runs]
    devices = sorted({r["device"] for r in rows if r["device"]})
    preamble = (f"femto solver benchmark, {date}, commit {commit}: femto-app --device {args.device}"
                + (f" --threads {args.threads}" if args.threads else "")
                + (f", preconditioner {args.preconditioner}" if args.preconditioner else "")
                + (f"; {'; '.join(devices)}" if devices else ""))
    table = markdown(rows, commit, date, preamble) + scaling_table(rows, args.weak)
    sys.stdout.write(table)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table)
    if args.json:
        with open(args.json, "w") as f:
            json.dump([dict(r, status=status_text(r), commit=commit, date=date) for r in rows], f, indent=1)
    return 0 if all(r["rc"] == 0 for r in rows) else 3


if __name__ == "__main__":
    sys.exit(main())
