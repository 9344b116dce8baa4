#!/usr/bin/python3
"""Smoke test of bench/solver-bench.py on the CPU: it checks that the benchmark runs and reports, not how fast.

usage: test_solver_bench.py FEMTO_APP OUTDIR [cpu|cuda]

1. The smallest cantilevers (tetrahedra and hexahedra, h = 0.05 m, order 2, one CPU thread): exit 0, a markdown
   table with exactly the documented columns and one row per run, each 'ok' after exactly one Newton step (the
   problems are linear) and some Krylov iterations; dofs exact: 3 (V + E) of femto's tetrahedral mesh
   (bench/problems/mesh-counts.json at h = 0.05) and 3 (2 * 20 + 1) (2 * 2 + 1)^2 = 3075 for the 20 x 2 x 2
   hexahedra; the device column names the CPU, the commit and date columns are filled, the memory columns are
   positive; the tip deflection (from --json) is within 1 % of Euler-Bernoulli's q L^4 / (8 E I) = 0.75 mm.
2. A run stopped by --timeout: exit 3 and its row says 'timed out'.
With cuda: (1) on the GPU (the device column names no CPU), and its Krylov counts within 10 % of the CPU's;
exit 77 (skipped) when femto-app has no CUDA backend or the machine no GPU.
"""
import datetime
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(HERE, "solver-bench.py")
COLUMNS = ["problem", "cells", "p", "ranks", "dofs", "Newton", "Krylov", "preconditioner", "mesh s", "setup s", "precond s", "solve s",
           "run s", "device MB", "host MB", "device B/dof", "device", "commit", "date", "status"]
failures = 0


def check(cond, msg):
    global failures
    if not cond:
        failures += 1
        print(f"FAIL {msg}")


def table(path):
    """The markdown table's header and rows (lists of cells)."""
    lines = [l.strip() for l in open(path) if l.startswith("|")]
    split = [[c.strip() for c in l.strip("|").split("|")] for l in lines]
    return split[0], split[2:]


def bench(femto, out, name, extra, device="cpu"):
    md, js = os.path.join(out, name + ".md"), os.path.join(out, name + ".json")
    cmd = [sys.executable, BENCH, "--femto", femto, "--device", device, "--threads", "1", "--order", "2",
           "--markdown", md, "--json", js] + extra
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    return res, md, js


def smallest_cantilevers(femto, out, device):
    """Checks (1) on the device; returns {problem: Krylov iterations}."""
    res, md, js = bench(femto, out, "smoke-" + device, ["--problem", "cantilever-tet", "--problem",
                                                        "cantilever-hex", "--sizes", "0.05"], device)
    check(res.returncode == 0, f"the benchmark exited {res.returncode}: {res.stderr[-2000:]}")
    if not os.path.exists(md):
        return {}
    header, rows = table(md)
    check(header == COLUMNS, f"columns {header}, expected {COLUMNS}")
    check(len(rows) == 2, f"{len(rows)} rows, expected 2")
    counts = json.load(open(os.path.join(HERE, "problems", "mesh-counts.json")))["cantilever-tet.geo"]["sizes"]
    tet = next(c for c in counts if c["size"] == 0.05)
    want_dofs = {"cantilever-tet": 3 * (tet["vertices"] + tet["edges"]), "cantilever-hex": 3075}
    today = datetime.date.today().isoformat()
    for cells in rows:
        r = dict(zip(header, cells))
        name = r.get("problem")
        check(r.get("status") == "ok", f"{name}: status '{r.get('status')}', expected ok")
        check(r.get("Newton") == "1", f"{name}: {r.get('Newton')} Newton steps, expected 1 (a linear problem)")
        check(r.get("Krylov", "0").isdigit() and int(r["Krylov"]) > 0, f"{name}: Krylov '{r.get('Krylov')}'")
        check(r.get("dofs", "").replace(",", "") == str(want_dofs.get(name)),
              f"{name}: dofs {r.get('dofs')}, expected {want_dofs.get(name)}")
        check(r.get("cells") == ("tet4" if name == "cantilever-tet" else "hex8"), f"{name}: cells {r.get('cells')}")
        check(r.get("p") == "2", f"{name}: order {r.get('p')}")
        on_cpu = r.get("device") == "CPU, 1 thread"
        check(on_cpu == (device == "cpu") and r.get("device") not in ("", "-"), f"{name}: device '{r.get('device')}'")
        check(r.get("commit") not in ("", "-") and r.get("date") == today,
              f"{name}: commit '{r.get('commit')}', date '{r.get('date')}' (today {today})")
        for col in ("device MB", "host MB", "device B/dof", "solve s", "run s"):
            try:
                check(float(r.get(col)) > 0, f"{name}: {col} {r.get(col)} is not positive")
            except (TypeError, ValueError):
                check(False, f"{name}: {col} '{r.get(col)}' is not a number")
    for run in json.load(open(js)):
        w = run["summary"].get("displacement_z@tip", 0.0)
        check(abs(w + 0.75e-3) < 0.01 * 0.75e-3, f"{run['problem']}: tip deflection {w} m, expected -0.75 mm +- 1 %")
    return {r[0]: int(r[COLUMNS.index("Krylov")]) for r in rows if r[COLUMNS.index("Krylov")].isdigit()}


def no_gpu(femto, out):
    """Why the CUDA half cannot run here, or None."""
    version = subprocess.run([femto, "--version"], capture_output=True, text=True).stdout
    if "CUDA backend: not built" in version:
        return "femto-app was built without CUDA"
    res = bench(femto, out, "probe-cuda", ["--problem", "cantilever-hex", "--sizes", "0.1"], "cuda")[0]
    return "no CUDA device" if res.returncode != 0 and "exit 4" in res.stdout else None


def timeout(femto, out):
    res, md, js = bench(femto, out, "timeout", ["--problem", "cantilever-tet", "--sizes", "0.05",
                                                "--timeout", "0.01"])
    check(res.returncode == 3, f"a timed-out run: the benchmark exited {res.returncode}, expected 3")
    rows = table(md)[1] if os.path.exists(md) else []
    check(len(rows) == 1 and rows[0][-1] == "timed out", f"a timed-out run's rows: {rows}")


def main():
    femto, out = os.path.abspath(sys.argv[1]), sys.argv[2]
    device = sys.argv[3] if len(sys.argv) > 3 else "cpu"
    os.makedirs(out, exist_ok=True)
    if device == "cuda":
        why = no_gpu(femto, out)
        if why:
            print(f"test_solver_bench: skipped: {why}")
            return 77
        gpu, cpu = smallest_cantilevers(femto, out, "cuda"), smallest_cantilevers(femto, out, "cpu")
        for name in cpu:
            check(name in gpu and abs(gpu[name] - cpu[name]) <= 0.1 * cpu[name],
                  f"{name}: {gpu.get(name)} Krylov iterations on the GPU, {cpu[name]} on the CPU (10 % apart at most)")
    else:
        smallest_cantilevers(femto, out, "cpu")
        timeout(femto, out)
    print("test_solver_bench: " + ("all checks passed" if not failures else f"{failures} checks failed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
