#!/usr/bin/env python3
"""The solver as a user meets it through femto-app (issue 11's tests), on small problems the CPU solves fast.

usage: test_solver_app.py FEMTO_APP MESHES_DIR WORK_DIR [--device cpu|cuda] [--exact-coarse]
  (a) multigrid's CG iteration counts stay mesh-independent: a p = 2 tetrahedral cantilever at three sizes
      (3k, 10k, 20k dofs) takes at most 60 iterations each and the largest count is at most 1.5 times the
      smallest; with --exact-coarse (femto has a direct coarse solver for the device, CHOLMOD on the CPU or
      cuDSS on a GPU, which the default coarse-solver="auto" picks for these small coarse matrices) at most 20;
  (b) every one of those linear solves is one Newton step, and no linear solve stops at its cap;
  (c) multigrid beats Jacobi by at least 5 times in iterations on the middle size;
  (d) the quadrature femto picks for affine simplices (degree 2(p - 1) and p for linear elasticity with
      constant materials, 2p on facets with convection) integrates exactly: the answers equal those of the
      default rule, quadrature-degree = 2p, to 1e-10 relative (both solved to a linear tolerance of 1e-12),
      for the cantilever with gravity and for steady heat with a source and convection;
  (e) an order-1 problem uses multigrid with the assembled level alone (its coarse solver: CHOLMOD or AMG on
      the CPU) and converges in few iterations (at most 40; with --exact-coarse at most 2);
  (f) the solver benchmark's 33k-dof p = 2 cantilever (bench/problems/cantilever-tet.geo at h = 0.0202 m, 34,044
      dofs) with the default solver settings is one Newton step of at most 20 CG iterations with --exact-coarse
      (issue 11's target is 40), else at most 60;
  (g) the same with <linear coarse-precision="single">: on a GPU cuDSS's factor is single-precision (the log
      says so), CG takes at most 3 iterations more and the largest displacement is the same to 1e-6; on the CPU
      nothing changes (the host solvers work in double precision);
  (h) the coarse level's explicit inverse (<linear coarse-inverse>): on a GPU the steady cantilever of (f) does
      not take it by default (the log says so) and takes it with "yes", for the same CG count and the largest
      displacement to 1e-10; transient heat (the cube of (d), 10 backward Euler steps) takes it by default, for
      the CG count and the final temperatures of "no" to 1e-10. On the CPU the setting changes nothing.
Standard library only; tests/common/app_checks.py."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from app_checks import Checks, run_app, summary  # noqa: E402

app, meshes, work = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
device = sys.argv[sys.argv.index("--device") + 1] if "--device" in sys.argv else "cpu"
exact_coarse = "--exact-coarse" in sys.argv
os.makedirs(work, exist_ok=True)
check = Checks()


BEAM = """<?xml version="1.0"?>
<femto>
  <mesh file="{geo}" size="{size}"/>
  <discretization order="{order}"{quad}/>
  <elasticity model="linear">
    <material region="beam" young="200e9" poisson="0.3" density="7850"/>
    <fixed boundary="clamp"/>
    <traction boundary="top" z="-1e5"/>
    {gravity}
  </elasticity>
  <solver><linear preconditioner="{pc}"{rtol}/></solver>
  <output directory="{out}"><vtu enabled="false"/><hdf5 enabled="false"/></output>
</femto>
"""

HEAT = """<?xml version="1.0"?>
<femto>
  <mesh file="{meshes}/cube_tet.geo" size="0.25"/>
  <discretization order="{order}"{quad}/>
  <heat>
    <material region="domain" conductivity="15" source="2e4"/>
    <temperature boundary="left" value="300"/>
    <convection boundary="right" h="50" ambient="280"/>
  </heat>
  <solver><linear{rtol}/></solver>
  <output directory="{out}"><vtu enabled="false"/><hdf5 enabled="false"/></output>
</femto>
"""

TRANSIENT = """<?xml version="1.0"?>
<femto>
  <mesh file="{meshes}/cube_tet.geo" size="0.25"/>
  <discretization order="{order}"/>
  <heat>
    <initial temperature="293"/>
    <material region="domain" conductivity="15" density="7850" specific-heat="460" source="2e4"/>
    <temperature boundary="left" value="300"/>
    <convection boundary="right" h="50" ambient="280"/>
  </heat>
  <time scheme="backward-euler" start="0" end="1000" step="100"/>
  <solver><linear{rtol}/></solver>
  <output directory="{out}"><vtu enabled="false"/><hdf5 enabled="false"/></output>
</femto>
"""


def run(name, template, verbosity="-q", **kw):
    out = os.path.join(work, name)
    fields = dict(meshes=meshes, geo=os.path.join(meshes, "beam_tet.geo"), size="0.05", order="2", quad="", gravity="", pc="multigrid", rtol="", out=out)
    fields.update(kw)
    path = os.path.join(work, name + ".xml")
    open(path, "w").write(template.format(**fields))
    r = run_app(check, app, path, device, os.path.join(work, "mesh-cache"), verbosity)
    if r is None:
        return {}
    values = summary(out, name)
    values["log"] = r.stdout
    return values


# (a), (b)
counts = []
for size in ["0.05", "0.035", "0.025"]:
    s = run(f"beam-{size}", BEAM, size=size)
    if not s:
        continue
    counts.append(s["linear_iterations"])
    check(s["newton_iterations"] == 1 and s["linear_solves_capped"] == 0,
          f"size {size}: one Newton step ({s['newton_iterations']:g}), no capped linear solve")
print("multigrid CG iterations at sizes 0.05, 0.035, 0.025:", counts)
most = 20 if exact_coarse else 60
check(len(counts) == 3 and max(counts) <= most and max(counts) <= 1.5 * min(counts),
      f"iterations mesh-independent (at most {most}, largest / smallest <= 1.5): {counts}")

# (c)
mg, jac = run("beam-mg", BEAM, size="0.035"), run("beam-jacobi", BEAM, size="0.035", pc="jacobi")
if mg and jac:
    check(jac["linear_iterations"] >= 5 * mg["linear_iterations"],
          f"multigrid {mg['linear_iterations']:g} vs Jacobi {jac['linear_iterations']:g} CG iterations (>= 5x)")

# (d)
tight = ' rtol="1e-12"'
for name, template, key, extra in [("beam", BEAM, "max_displacement", dict(gravity='<gravity z="-9.81"/>')),
                                   ("heat", HEAT, "temperature_max", {})]:
    for order in ["1", "2", "3"]:
        picked = run(f"{name}-quad-p{order}", template, order=order, rtol=tight, **extra)
        full = run(f"{name}-quad-full-p{order}", template, order=order, rtol=tight,
                   quad=f' quadrature-degree="{2 * int(order)}"', **extra)
        if picked and full:
            rel = abs(picked[key] - full[key]) / abs(full[key])
            check(rel <= 1e-10, f"{name} p = {order}: {key} with femto's rule equals the degree-{2 * int(order)} "
                                f"rule's to {rel:.1e} (<= 1e-10)")

# (e)
p1 = run("beam-p1", BEAM, size="0.025", order="1")
if p1:
    most = 2 if exact_coarse else 40
    check(p1["newton_iterations"] == 1 and p1["linear_iterations"] <= most,
          f"order 1: multigrid is the coarse solver alone, {p1['linear_iterations']:g} CG iterations (<= {most})")

# (f)
bench_geo = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "problems",
                         "cantilever-tet.geo")
b = run("cantilever-33k", BEAM, geo=os.path.abspath(bench_geo), size="0.0202")
if b:
    most = 20 if exact_coarse else 60
    check(b["newton_iterations"] == 1 and b["linear_solves_capped"] == 0 and b["linear_iterations"] <= most,
          f"33k-dof cantilever: {b['newton_iterations']:g} Newton step, {b['linear_iterations']:g} CG iterations "
          f"(one step, at most {most})")

# (g)
s = run("cantilever-33k-single", BEAM, geo=os.path.abspath(bench_geo), size="0.0202",
        rtol=' coarse-precision="single"', verbosity="-v")
if b and s:
    rel = abs(s["max_displacement"] - b["max_displacement"]) / b["max_displacement"]
    factor = [l.strip() for l in s["log"].splitlines() if "preconditioner:" in l]
    if device == "cuda":
        single = any("single-precision Cholesky" in l for l in factor)
        check(single and s["linear_iterations"] <= b["linear_iterations"] + 3 and rel <= 1e-6,
              f"cuDSS's factor in single precision ({'said' if single else 'NOT said'} in the log): "
              f"{s['linear_iterations']:g} CG iterations against {b['linear_iterations']:g} (at most 3 more), "
              f"the largest displacement the same to {rel:.1e} (<= 1e-6)")
    else:
        check(s["linear_iterations"] == b["linear_iterations"] and rel <= 1e-13,
              f"on the CPU coarse-precision='single' changes nothing (the host solvers work in double): "
              f"{s['linear_iterations']:g} and {b['linear_iterations']:g} CG iterations, displacements equal to "
              f"{rel:.1e}")

# (h)
def coarse_line(values):
    return " ".join(l.strip() for l in values.get("log", "").splitlines() if "preconditioner:" in l)


def temperatures(values):
    return [v for k, v in sorted(values.items()) if k in ("temperature_min", "temperature_max")]


inv = run("cantilever-33k-inverse", BEAM, geo=os.path.abspath(bench_geo), size="0.0202",
          rtol=' coarse-inverse="yes"', verbosity="-v")
dflt = run("cantilever-33k-default", BEAM, geo=os.path.abspath(bench_geo), size="0.0202", verbosity="-v")
t_auto = run("transient-auto", TRANSIENT, verbosity="-v")
t_no = run("transient-no", TRANSIENT, rtol=' coarse-inverse="no"', verbosity="-v")
if inv and dflt and t_auto and t_no:
    rel = abs(inv["max_displacement"] - dflt["max_displacement"]) / dflt["max_displacement"]
    ta, tn = temperatures(t_auto), temperatures(t_no)
    trel = max(abs(a - b) / abs(b) for a, b in zip(ta, tn)) if ta and len(ta) == len(tn) else 1.0
    said = {name: "explicit inverse" in coarse_line(v) for name, v in
            (("steady default", dflt), ("steady yes", inv), ("transient default", t_auto), ("transient no", t_no))}
    wanted = {"steady default": False, "steady yes": device == "cuda", "transient default": device == "cuda",
              "transient no": False}
    check(said == wanted, f"the explicit inverse taken {said}, expected {wanted}: {coarse_line(t_auto)[:300]}")
    check(inv["linear_iterations"] == dflt["linear_iterations"] and rel <= 1e-10,
          f"cantilever with the explicit inverse: {inv['linear_iterations']:g} CG iterations against "
          f"{dflt['linear_iterations']:g}, the largest displacement the same to {rel:.1e} (<= 1e-10)")
    check(t_auto["linear_iterations"] == t_no["linear_iterations"] and trel <= 1e-10,
          f"transient heat: {t_auto['linear_iterations']:g} CG iterations by default, {t_no['linear_iterations']:g} "
          f"with coarse-inverse='no', temperatures {ta} and {tn} the same to {trel:.1e} (<= 1e-10)")

check.exit()
