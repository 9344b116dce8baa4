#!/usr/bin/env python3
"""Multigrid's levels on the meshes before refinement (<mesh refine>, fem/solvers/multigrid.c), through femto-app.

usage: test_mg_refined_app.py FEMTO_APP MESHES_DIR WORK_DIR [--device cpu|cuda]
  (a) a p = 2 tetrahedral cantilever meshed at one size and refined 1 and 2 times: multigrid has 3 and 4 levels
      (p = 2, 1 on the mesh, then order 1 on each mesh before a refinement), its coarsest level is the same
      size both times (the unrefined mesh's order-1 dofs), and the CG iterations stay mesh-independent: at
      refinement 1 and 2 the larger count is at most 1.25 times the smaller, and at most 3 more than with the
      p-levels alone
      (levels="2", the coarse solver then factorising the refined mesh's order-1 level);
  (b) the answers: the largest displacement equals the p-levels-only run's to 1e-8 relative (both solved to a
      linear tolerance of 1e-11);
  (c) levels="3" on the twice-refined mesh keeps one coarser mesh only (3 levels);
  (d) steady heat with convection on a refined cube (the coarser meshes' facets carry the Robin term): the
      same largest temperature as with the p-levels alone, to 1e-8, and at most 3 more iterations;
  (e) a neo-Hookean beam on a refined mesh (the coarser meshes' operators linearised at the injected state):
      the same tip displacement as with the p-levels alone to 1e-7, at most the same Newton steps plus one;
  (f) femto-app info lists the two kept meshes, each with 8 times fewer cells than the next finer one;
  (g) five samples meshed from their .geo and refined once (2D and 3D, curved boundaries, a thermal strain,
      reaction-diffusion): one level more, at most 2 more linear iterations than with the p-levels alone.
Standard library only; tests/common/app_checks.py."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from app_checks import Checks, run_app, summary  # noqa: E402

app, meshes, work = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
device = sys.argv[sys.argv.index("--device") + 1] if "--device" in sys.argv else "cpu"
os.makedirs(work, exist_ok=True)
check = Checks()


BEAM = """<?xml version="1.0"?>
<femto>
  <mesh file="{meshes}/beam_tet.geo" size="0.05" refine="{refine}"/>
  <discretization order="2"/>
  <elasticity model="{model}">
    <material region="beam" young="200e9" poisson="0.3" density="7850"/>
    <fixed boundary="clamp"/>
    <traction boundary="top" z="{load}"/>
  </elasticity>
  <solver><linear preconditioner="multigrid" rtol="1e-11"{levels}/></solver>
  <output directory="{out}"><vtu enabled="false"/><hdf5 enabled="false"/></output>
</femto>
"""

HEAT = """<?xml version="1.0"?>
<femto>
  <mesh file="{meshes}/cube_tet.geo" size="0.25" refine="{refine}"/>
  <discretization order="2"/>
  <heat>
    <material region="domain" conductivity="15" source="2e4"/>
    <temperature boundary="left" value="300"/>
    <convection boundary="right" h="50" ambient="280"/>
  </heat>
  <solver><linear preconditioner="multigrid" rtol="1e-11"{levels}/></solver>
  <output directory="{out}"><vtu enabled="false"/><hdf5 enabled="false"/></output>
</femto>
"""


def run(name, template, refine, levels=0, model="linear", load="-1e5"):
    out = os.path.join(work, name)
    path = os.path.join(work, name + ".xml")
    open(path, "w").write(template.format(meshes=meshes, refine=refine, model=model, load=load, out=out,
                                          levels=f' levels="{levels}"' if levels else ""))
    r = run_app(check, app, path, device, os.path.join(work, "mesh-cache"))
    if r is None:
        return {}
    values = summary(out, name)
    m = re.search(r"preconditioner: (p-)?multigrid, (\d+) levels \(([^)]*)\)", r.stdout)
    values["levels"] = int(m.group(2)) if m else 0
    h = re.search(r"then p = 1 on the (?:\d+ meshes|mesh) before its last (?:\d+ )?refinements?: (\d+) dofs",
                  r.stdout)
    values["coarse_dofs"] = int(h.group(1)) if h else 0
    values["log"] = r.stdout
    return values


def rel(a, b):
    return abs(a - b) / abs(b)


# (a), (b)
h1, h2 = run("beam-r1", BEAM, 1), run("beam-r2", BEAM, 2)
p1, p2 = run("beam-r1-p", BEAM, 1, levels=2), run("beam-r2-p", BEAM, 2, levels=2)
if h1 and h2 and p1 and p2:
    check(h1["levels"] == 3 and h2["levels"] == 4 and p1["levels"] == 2 and p2["levels"] == 2,
          f"levels: {h1['levels']} and {h2['levels']} with the coarser meshes, {p1['levels']} and "
          f"{p2['levels']} without (expected 3, 4, 2, 2)")
    check(h1["coarse_dofs"] > 0 and h1["coarse_dofs"] == h2["coarse_dofs"],
          f"the coarsest level is the unrefined mesh's order 1 both times: {h1['coarse_dofs']} and "
          f"{h2['coarse_dofs']} dofs")
    its = [h1["linear_iterations"], h2["linear_iterations"], p1["linear_iterations"], p2["linear_iterations"]]
    print("CG iterations, refined 1 and 2 times, with and without the coarser meshes:", its)
    check(max(its[:2]) <= 1.25 * min(its[:2]) and its[0] <= its[2] + 3 and its[1] <= its[3] + 3,
          f"iterations mesh-independent ({its[0]:g}, {its[1]:g}: largest / smallest <= 1.25) and at most 3 "
          f"more than the p-levels' ({its[2]:g}, {its[3]:g})")
    for a, b, n in [(h1, p1, 1), (h2, p2, 2)]:
        check(a["newton_iterations"] == 1 and rel(a["max_displacement"], b["max_displacement"]) <= 1e-8,
              f"refined {n} times: one Newton step, the same largest displacement "
              f"({rel(a['max_displacement'], b['max_displacement']):.1e} relative)")

# (c)
c = run("beam-r2-l3", BEAM, 2, levels=3)
if c:
    check(c["levels"] == 3 and c["coarse_dofs"] > 0 and (not h2 or c["coarse_dofs"] > h2["coarse_dofs"]),
          f'levels="3": {c["levels"]} levels, the coarsest on the mesh before the last refinement '
          f'({c["coarse_dofs"]} dofs)')

def same_as_p_levels(what, a, b, key, tol, count, slack):
    """An h-level run a against the p-levels' run b: 3 levels, `key` equal to tol, `count` at most b's + slack."""
    check(a["levels"] == 3 and rel(a[key], b[key]) <= tol and a[count] <= b[count] + slack,
          f"{what}: {a['levels']} levels, the same {key} ({rel(a[key], b[key]):.1e}, at most {tol:g}), "
          f"{a[count]:g} {count} against {b[count]:g} (at most {slack} more)")


# (d)
th, tp = run("heat-r1", HEAT, 1), run("heat-r1-p", HEAT, 1, levels=2)
if th and tp:
    same_as_p_levels("heat with convection", th, tp, "temperature_max", 1e-8, "linear_iterations", 3)

# (e)
nh, npl = (run("neo-r1", BEAM, 1, model="neo-hookean", load="-2e6"),
           run("neo-r1-p", BEAM, 1, levels=2, model="neo-hookean", load="-2e6"))
if nh and npl:
    same_as_p_levels("neo-Hookean", nh, npl, "max_displacement", 1e-7, "newton_iterations", 1)

# (f) femto-app info lists the kept meshes, each with 8 times fewer cells than the one after it
info = subprocess.run([app, "info", os.path.join(work, "beam-r2.xml")], capture_output=True, text=True,
                      env=dict(os.environ, FEMTO_MESH_CACHE=os.path.join(work, "mesh-cache")))
kept = [int(c) for c in re.findall(r"the mesh before refinement \d of the last 2: (\d+) cells", info.stdout)]
fine = re.search(r"topology: .* (\d+) cells \(V - E", info.stdout)
check(len(kept) == 2 and fine and int(fine.group(1)) == 8 * kept[0] and kept[0] == 8 * kept[1],
      f"femto-app info: {fine.group(1) if fine else '?'} cells, then the meshes before refinement {kept}")

# (g) samples meshed from their .geo and refined once: 2D and 3D, curved boundaries, a thermal strain (an
# auxiliary field), reaction-diffusion
INPUTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "inputs")
for sample, name in [("cylinder-lame", "cylinder"), ("plate-hole-2d", "plate"), ("thermal-bar", "bar"),
                     ("heat-fin-2d", "fin"), ("reaction-strip", "strip")]:
    text = open(os.path.join(INPUTS, sample, name + ".xml")).read()
    geo = os.path.join(INPUTS, sample, [f for f in os.listdir(os.path.join(INPUTS, sample)) if f.endswith(".geo")][0])
    text = re.sub(r'<mesh file="[^"]+"[^/]*/>', f'<mesh file="{geo}" refine="1"/>', text)
    text = re.sub(r'xsi:noNamespaceSchemaLocation="[^"]*"', "", text)
    text = re.sub(r'<output[^>]*>', f'<output directory="{{out}}">', text, count=1)
    got = {}
    for levels in (0, 2):
        tag = f"{sample}-r1" + ("-p" if levels else "")
        body = text.replace("{out}", os.path.join(work, tag))
        if levels:
            body = body.replace("<output", '<solver><linear levels="2"/></solver>\n  <output', 1)
        path = os.path.join(work, tag + ".xml")
        open(path, "w").write(body)
        r = run_app(check, app, path, device, os.path.join(work, "mesh-cache"))
        if r is None:
            break
        out = os.path.join(work, tag)
        s = summary(out, [f for f in os.listdir(out) if f.endswith("_summary.txt")][0][:-len("_summary.txt")])
        m = re.search(r"multigrid, (\d+) levels", r.stdout)
        got[levels] = (int(m.group(1)) if m else 0, s["linear_iterations"])
    if len(got) == 2:
        check(got[0][0] == got[2][0] + 1 and got[0][1] <= got[2][1] + 2,
              f"{sample} refined once: {got[0][0]} levels, {got[0][1]:g} linear iterations against "
              f"{got[2][1]:g} with the p-levels alone (at most 2 more)")

check.exit("test_mg_refined_app")
