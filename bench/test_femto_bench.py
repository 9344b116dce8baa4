#!/usr/bin/python3
"""femto-bench's operator table on tiny meshes, checked column by column (not its timings).

    test_femto_bench.py FEMTO_BENCH OUTDIR [cpu|gpu]

Runs femto-bench's operator and CG rows twice (every shape at p = 1, 2 with the CG rows on a coarse cantilever;
quadrilaterals at p = 4 on the smaller mesh of the higher orders) and reads its markdown file back. Checked: the
table's columns; every case on every device configuration (CPU: serial, threaded atomic, threaded gather; GPU:
fused and separate kernels, each with atomic and gather assembly) with J x and R(u); dof counts (a vector
physics has dim times the scalar dofs; every configuration of a case the same); the minimal-bytes column
recomputed here from the element counts, the nodes per element, the q-points, GEO_STRIDE(dim) and the physics'
state (constant-k heat's J x: the compact q-point data instead); GDOF/s, GB/s and % of copy against µs, MB and the copy reference of the notes; the CG row's bytes (the
operator's plus 17 vector passes); the launch column of GPU rows; commit and date as in the header; the row
count; the table of checks: one row per case and configuration, every configuration's R(u) and J x within
1e-12 of the first's, and on the linear physics R(x0) - R(0) = J x0 to round-off. Then the kernel table's mesh
cache: made once into --mesh-cache, read back by the next run (the same cells), made with --no-mesh-cache. Exit 0 when all hold, 1
otherwise, 77 when the GPU variant finds no GPU.
"""

import decimal
import os
import re
import subprocess
import sys

COLUMNS = ["problem", "cells", "p", "elements", "dofs", "q/elem", "operation", "device", "implementation",
           "assembly", "µs", "element µs", "GDOF/s", "MB", "GB/s", "% of copy", "launch", "commit", "date"]
# cell title: (dimension, nodes per element at order p)
SHAPES = {"triangles": (2, lambda p: (p + 1) * (p + 2) // 2), "quadrilaterals": (2, lambda p: (p + 1) ** 2),
          "tetrahedra": (3, lambda p: (p + 1) * (p + 2) * (p + 3) // 6), "hexahedra": (3, lambda p: (p + 1) ** 3)}
# physics: (components, q-point state doubles) as functions of the dimension
PHYSICS = {"heat (constant k)": (lambda d: 1, lambda d: 1 + d), "elasticity (linear)": (lambda d: d, lambda d: 0),
           "neo-Hookean": (lambda d: d, lambda d: 10)}
CG_VECTOR_PASSES = 17
THREADS = 2

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def run(bench, args, md, gpu):
    cmd = [bench, "--threads", str(THREADS), "--repeat", "2", "--cpu-repeat", "1", "--markdown", md] + args
    cmd += ["--gpu-only"] if gpu else ["--cpu-only"]
    env = dict(os.environ, OMP_WAIT_POLICY="PASSIVE")
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    if r.returncode == 77:
        print(r.stdout.strip())
        sys.exit(77)
    if r.returncode != 0:
        print(r.stdout[-3000:], r.stderr[-3000:])
        sys.exit(f"femto-bench exited with {r.returncode}: {' '.join(cmd)}")


def parse(md):
    text = open(md, encoding="utf-8").read()
    m = re.search(r"^- date: (.+?); femto \S+, git (.+)$", text, re.M)
    check(m is not None, "the header names the date and the commit")
    date, commit = (m.group(1), m.group(2)) if m else ("", "")
    m = re.search(r"Copy references: GPU ([\d.]+) GB/s, host ([\d.]+) GB/s \(1 thread\) and ([\d.]+) GB/s "
                  r"\((\d+) threads\)", text)
    check(m is not None, "the notes give the copy references")
    copies = {"gpu": float(m.group(1)), 1: float(m.group(2)), int(m.group(4)): float(m.group(3))} if m else {}
    rows = table(text, "operator", COLUMNS)
    checks = table(text, "operator checks", CHECK_COLUMNS)
    return rows, checks, date, commit, copies


CHECK_COLUMNS = ["problem", "cells", "p", "device", "implementation", "assembly", "R(u) vs first", "J x vs first",
                 "R(x0) - R(0) vs J x0"]
LINEAR = {"heat (constant k)", "elasticity (linear)", "cantilever-tet.xml"}


def table(text, title, columns):
    """The rows of the markdown table under '## title' as dicts (checked against the columns)."""
    section = text.split(f"\n## {title}\n", 1)
    check(len(section) == 2, f"the output has the section '## {title}'")
    lines = []
    for l in section[-1].splitlines():
        if l.startswith("## "):
            break
        if l.startswith("|"):
            lines.append(l)
    header = [c.strip() for c in lines[0].strip("|").split(" | ")] if lines else []
    check(header == columns, f"the table '{title}' has the columns {columns}, not {header}")
    rows = []
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        check(len(cells) == len(columns), f"a row of {len(columns)} cells: {line[:120]}")
        if len(cells) == len(columns):
            rows.append(dict(zip(columns, cells)))
    return rows


def check_checks(checks, rows, nconfigs):
    """One check row per case and configuration: the configurations agree with the first to 1e-12, and on a
    linear physics R(x0) - R(0) = J x0 to round-off (x0 zero on the constrained dofs); '-' where none applies."""
    cases = sorted({(r["problem"], r["cells"], r["p"]) for r in rows})
    check(len(checks) == len(cases) * nconfigs, f"{len(checks)} check rows: one per case ({len(cases)}) and "
          f"configuration ({nconfigs})")
    for case in cases:
        mine = [c for c in checks if (c["problem"], c["cells"], c["p"]) == case]
        check(len(mine) == nconfigs, f"{case}: {nconfigs} check rows, not {len(mine)}")
        for i, c in enumerate(mine):
            for col in ("R(u) vs first", "J x vs first"):
                if i == 0:
                    check(c[col] == "-", f"{case}: the first configuration is the reference ({col} '-')")
                else:
                    check(c[col] != "-" and float(c[col]) <= 1e-12, f"{case} {c['device']} {c['assembly']} "
                          f"{c['implementation']}: {col} {c[col]} <= 1e-12")
            lin = c["R(x0) - R(0) vs J x0"]
            if case[0] in LINEAR:
                check(lin != "-" and float(lin) <= 1e-12, f"{case} {c['device']} {c['assembly']}: R(x0) - R(0) "
                      f"agrees with J x0 to round-off ({lin})")
            else:
                check(lin == "-", f"{case}: a nonlinear physics has no linearity check ({lin})")


def num(row, col):
    return float(row[col])


def rel_ulp(text):
    """Half a unit of the last digit shown, relative to the value ("0.372" -> 0.0005 / 0.372, "1.2e-05" ->
    0.05e-5 / 1.2e-5)."""
    exponent = decimal.Decimal(text).as_tuple().exponent
    return 0.5 * 10.0 ** exponent / max(abs(float(text)), 1e-300)


def check_row_arithmetic(r, copies):
    """GDOF/s, GB/s and % of copy against the row's own µs, MB and the copy reference."""
    us, dofs = num(r, "µs"), int(r["dofs"])
    name = f"{r['problem']} {r['cells']} p={r['p']} {r['operation']} {r['device']} {r['assembly']}"
    check(us > 0 and num(r, "GDOF/s") > 0, f"{name}: µs {us} and GDOF/s {r['GDOF/s']} > 0")
    if us <= 0:
        return
    gdofs = dofs / us / 1e3
    got = num(r, "GDOF/s")
    check(abs(got - gdofs) <= got * rel_ulp(r["GDOF/s"]) + gdofs * rel_ulp(r["µs"]), f"{name}: GDOF/s {got} = "
          f"dofs / µs {gdofs:.4g}")
    mb = num(r, "MB")
    gbs = mb / us * 1e3
    tol = rel_ulp(r["MB"]) + rel_ulp(r["µs"]) + rel_ulp(r["GB/s"])  # each column is rounded as shown
    check(abs(num(r, "GB/s") - gbs) <= gbs * tol, f"{name}: GB/s = MB / µs")
    cpu = r["device"].startswith("CPU, ")
    threads = int(r["device"].split()[1]) if cpu else 0
    copy = copies.get(threads if cpu else "gpu")
    check(copy is not None, f"{name}: a copy reference for the row's device")
    if copy:
        pct = 100 * gbs / copy
        tol = pct * (rel_ulp(r["MB"]) + rel_ulp(r["µs"]) + 0.05 / copy) + 0.5
        check(abs(float(r["% of copy"].rstrip("%")) - pct) <= tol, f"{name}: % of copy")


def check_bytes(r):
    """The minimal-bytes model, recomputed: vectors, dof map, tag, geometry and state; for the Jacobian action
    of constant-k heat (steady: the compact q-point data form) vectors, dof map and the dim (dim + 1) / 2
    doubles of D per q-point, once per element on the (straight-sided) simplices."""
    dim, nodes = SHAPES[r["cells"]]
    ncomp, nstate = (f(dim) for f in PHYSICS[r["problem"]])
    p, ne, nq, dofs = int(r["p"]), int(r["elements"]), int(r["q/elem"]), int(r["dofs"])
    want = 16 * dofs + ne * (4 * nodes(p) + 4 + 8 * nq * (1 + dim * dim + nstate))
    if r["problem"] == "heat (constant k)" and r["operation"] == "J x":
        per_elem = 1 if r["cells"] in ("triangles", "tetrahedra") else nq
        want = 16 * dofs + ne * (4 * nodes(p) + 8 * per_elem * dim * (dim + 1) // 2)
    got = num(r, "MB") * 1e6
    check(abs(got - want) <= want * rel_ulp(r["MB"]) + 1, f"{r['problem']} {r['cells']} p={p}: MB {got / 1e6:.1f} is "
          f"the model's {want / 1e6:.2f}")


def expected_configs(gpu):
    if gpu:
        return 6
    return {("CPU, 1 thread", "serial"), (f"CPU, {THREADS} threads", "atomic"), (f"CPU, {THREADS} threads", "gather")}


def check_cases(rows, cases, gpu):
    """Every case on every configuration with J x and R(u); dofs the same across them and ncomp x scalar."""
    dofs_of = {}
    for problem, cells, p in cases:
        mine = [r for r in rows if (r["problem"], r["cells"], int(r["p"])) == (problem, cells, p)]
        for op in ("J x", "R(u)"):
            got = [r for r in mine if r["operation"] == op]
            if gpu:
                check(len(got) == 6, f"{problem} {cells} p={p} {op}: 6 GPU configurations, not {len(got)}")
                check(sorted(r["assembly"] for r in got) == ["atomic"] * 3 + ["gather"] * 3,
                      f"{problem} {cells} p={p} {op}: atomic and gather assembly, fused (two kinds) and not")
                check_launches(got)
            else:
                cfg = {(r["device"], r["assembly"]) for r in got}
                check(cfg == expected_configs(False) and len(got) == 3,
                      f"{problem} {cells} p={p} {op}: the CPU configurations {sorted(expected_configs(False))}, "
                      f"not {sorted(cfg)}")
        check(len({r["dofs"] for r in mine}) == 1, f"{problem} {cells} p={p}: one dof count in all its rows")
        check(len(mine) > 0, f"{problem} {cells} p={p}: rows present")
        if mine:
            dofs_of[(problem, cells, p)] = int(mine[0]["dofs"])
            check(int(mine[0]["elements"]) > 0, f"{problem} {cells} p={p}: elements > 0")
    for (problem, cells, p), n in dofs_of.items():
        scalar = dofs_of.get(("heat (constant k)", cells, p))
        if scalar and problem != "heat (constant k)":
            dim = SHAPES[cells][0]
            check(n == dim * scalar, f"{problem} {cells} p={p}: {n} dofs = {dim} x the scalar {scalar}")


def check_launches(rows):
    """Fused rows in pairs (atomic, gather) per kind; the register kernel on simplices of order <= 2 and the
    sum-factorised kernel on quadrilaterals and hexahedra of order <= 6 (their own launch lines), the
    shared-memory kernel where it is asked for (implementation cuda-fused-shared)."""
    cells, p = rows[0]["cells"], int(rows[0]["p"])
    register = cells in ("triangles", "tetrahedra") and p <= 2
    tensor = cells in ("quadrilaterals", "hexahedra") and p <= 6
    for impl in ("cuda-fused", "cuda-fused-shared"):
        fused = [r for r in rows if r["implementation"] == impl]
        check(len(fused) in (0, 2), f"{cells} p={p}: {impl} rows come in pairs (atomic, gather)")
    for r in rows:
        if r["implementation"] == "cuda-fused" and register:
            check(r["launch"].startswith("fused-simplex "), f"register kernel's launch line: {r['launch'][:80]}")
        elif r["implementation"] == "cuda-fused" and tensor:
            check(r["launch"].startswith("fused-tensor "), f"sum-factorised kernel's launch line: {r['launch'][:80]}")
        elif r["implementation"].startswith("cuda-fused"):
            check(r["launch"].startswith("fused "), f"fused row's launch line: {r['launch'][:80]}")
        else:
            check(r["launch"].startswith("separate kernels of cell block 0: interpolation "),
                  f"separate kernels' launch line: {r['launch'][:80]}")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    bench, outdir = sys.argv[1], sys.argv[2]
    gpu = len(sys.argv) > 3 and sys.argv[3] == "gpu"
    os.makedirs(outdir, exist_ok=True)
    runs = [(["--rows", "operator,cg", "--elements", "500", "--op-orders", "1,2", "--cg-size", "0.05",
              "--cg-iterations", "5"], [(s, p) for s in SHAPES for p in (1, 2)]),
            (["--rows", "operator", "--elements", "300", "--shapes", "quad,tet", "--op-orders", "4",
              "--physics", "heat,elasticity"], [("quadrilaterals", 4)])]
    cache = os.path.join(outdir, "mesh-cache")
    for k, (args, shape_orders) in enumerate(runs):
        md = os.path.join(outdir, f"operator_{k}.md")
        run(bench, args + ["--mesh-cache", cache], md, gpu)
        rows, checks, date, commit, copies = parse(md)
        physics = list(PHYSICS) if k == 0 else ["heat (constant k)", "elasticity (linear)"]
        cases = [(ph, s, p) for ph in physics for s, p in shape_orders]
        bench_rows = [r for r in rows if r["problem"] in PHYSICS]
        check({(r["problem"], r["cells"], int(r["p"])) for r in bench_rows} == set(cases),
              f"run {k}: the cases {sorted(cases)}")
        check_cases(rows, cases, gpu)
        nconfigs = 6 if gpu else 3
        ncases = len(cases) + (k == 0)  # run 0: the cantilever's operator rows too
        want = ncases * nconfigs * 2 + (nconfigs if k == 0 else 0)  # J x and R(u); the CG rows
        check(len(rows) == want, f"run {k}: {want} operator rows ({ncases} cases x {nconfigs} configurations x "
              f"2 operations{' + the CG rows' if k == 0 else ''}), not {len(rows)}")
        check_checks(checks, rows, nconfigs)
        for r in rows:
            check_row_arithmetic(r, copies)
            check(r["commit"] == commit and r["date"] == date, "every row names the header's commit and date")
            if r["problem"] in PHYSICS:
                check_bytes(r)
                check(r["element µs"] != "-", "J x and R(u) rows time the element-level entry too")
        if k == 1:
            quads = [r for r in bench_rows if r["cells"] == "quadrilaterals"]
            check(quads and all(int(r["elements"]) < 300 for r in quads),
                  "p = 4 runs on a mesh of fewer elements than --elements")
        if k == 0:
            check_cg(rows, gpu)
        print(f"run {k}: {len(rows)} rows checked")
    check_mesh_cache(bench, outdir, gpu)
    if failures:
        sys.exit(f"{len(failures)} check(s) failed")
    print("all checks passed")


def check_mesh_cache(bench, outdir, gpu):
    """The kernel table's mesh: made and kept in --mesh-cache the first time, read from it the second (the same
    cells), made again with --no-mesh-cache."""
    cache = os.path.join(outdir, "kernel-mesh-cache")
    for f in os.listdir(cache) if os.path.isdir(cache) else []:
        os.remove(os.path.join(cache, f))
    seen = []
    for k, extra in enumerate([["--mesh-cache", cache], ["--mesh-cache", cache], ["--no-mesh-cache"]]):
        md = os.path.join(outdir, f"kernels_{k}.md")
        run(bench, ["--rows", "kernels", "--elements", "300", "--shapes", "tri", "--orders", "1"] + extra, md, gpu)
        text = open(md, encoding="utf-8").read()
        m = re.search(r"^## triangles: (\d+) elements, (\d+) vertices$", text, re.M)
        check(m is not None, f"kernel table run {k}: the triangles' heading")
        seen.append((m.groups() if m else None, "read from femto's mesh cache" in text))
    check([c for _, c in seen] == [False, True, False],
          f"kernel table's mesh: made, read from the cache, made without it; got {[c for _, c in seen]}")
    check(seen[0][0] == seen[1][0], f"the cached mesh is the one made: {seen[0][0]} and {seen[1][0]}")
    check(any(f.endswith(".femesh") for f in os.listdir(cache)) if os.path.isdir(cache) else False,
          f"{cache} holds the meshes")


def check_cg(rows, gpu):
    cant = [r for r in rows if r["problem"] == "cantilever-tet.xml"]
    cg = [r for r in cant if r["operation"] == "CG iteration (Jacobi)"]
    check(len(cg) == (6 if gpu else 3), f"one CG row per configuration, not {len(cg)}")
    for r in cg:
        j = [x for x in cant if x["operation"] == "J x" and x["device"] == r["device"]
             and x["assembly"] == r["assembly"] and x["implementation"] == r["implementation"]]
        check(len(j) == 1, f"CG row {r['device']} {r['assembly']}: its J x row")
        if j:
            extra = (num(r, "MB") - num(j[0], "MB")) * 1e6
            want = CG_VECTOR_PASSES * 8 * int(r["dofs"])
            check(abs(extra - want) <= 1e6 * num(r, "MB") * (rel_ulp(r["MB"]) + rel_ulp(j[0]["MB"])), f"CG row: {CG_VECTOR_PASSES} vector passes beyond J x "
                  f"({extra / 1e6:.2f} MB, want {want / 1e6:.2f})")
        check(r["element µs"] == "-" and re.search(r"; 5 iterations; apart: J x \(op_jacobian\) [\d.]+ µs",
                                                    r["launch"]) is not None,
              f"CG row's launch column: {r['launch'][:100]}")
        check(r["p"] == "2" and int(r["dofs"]) % 3 == 0, "the cantilever: p = 2 vector dofs")


if __name__ == "__main__":
    main()
