#!/usr/bin/env python3
"""Inputs that are valid XML but that the mesh or physics cannot honour, and results that are absurd.

usage: test_plausibility.py FEMTO_APP INPUTS_DIR WORK_DIR
- loads a mesh cannot carry (a z traction, z gravity or z displacement on a 2D mesh; plane="..." on a 3D mesh):
  exit 2 with one sentence naming the problem file and line, from `check` and from `run`;
- values whose products overflow (young="1e308"): exit 2 naming the value, never a solver failure;
- units slips that still solve (young="70" on steel, ambient="20", a flux that cools below 0 K): exit 0, results
  written, a 'warning:' line on stderr per finding (none with -q, like every warning of femto-app) and their
  count in NAME_summary.txt either way.
Standard library only."""
import os
import re
import sys

from harness import Harness, line_of

app, inputs, work = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
h = Harness(app, inputs, work)

PLATE = f"""<?xml version="1.0" encoding="UTF-8"?>
<femto>
  <mesh file="{inputs}/plate-hole-2d/plate.msh"/>
  <elasticity{{plane}}>
    <material region="plate" young="70e9" poisson="0.33" density="2700"/>
    <fixed boundary="symmetry-y" components="x"/>
    <fixed boundary="symmetry-x" components="y"/>
    {{load}}
  </elasticity>
  <output directory="{work}/out" basename="plate"/>
</femto>
"""
CANTILEVER = open(os.path.join(inputs, "cantilever", "cantilever.xml")).read().replace(
    'file="cantilever.msh"', f'file="{inputs}/cantilever/cantilever.msh"').replace(
    'directory="results"', f'directory="{work}/out"')
FIN = open(os.path.join(inputs, "heat-fin-2d", "fin.xml")).read().replace(
    'file="fin.msh"', f'file="{inputs}/heat-fin-2d/fin.msh"').replace('directory="results"', f'directory="{work}/out"')
out = os.path.join(work, "out")


def refused(name, text, message):
    """check and run both exit 2 with `message` (@LINE@: the line of the first line holding @NEEDLE@)."""
    path = h.write(name + ".xml", text)
    for command in ["check", "run"]:
        h.case(f"{name} ({command})", [command, path, "-q", *(["--device", "cpu"] if command == "run" else [])], 2,
               f"femto-app: @WORK@/{name}.xml:" + message, no_results_in=out)


def plate(load, plane=' plane="stress"'):
    return PLATE.replace("{load}", load).replace("{plane}", plane)


# a 2D mesh has no z: loads along z are refused, not dropped
text = plate('<traction boundary="pulled" x="100e6" z="5e6"/>')
refused("traction-z-2d", text, f"{line_of(text, 'traction')}: <traction> on boundary 'pulled' has z = 5e+06 Pa, "
        f"but the mesh '@INPUTS@/plate-hole-2d/plate.msh' is 2D and has no z direction; expected x and y only")
text = plate('<traction boundary="pulled" x="100e6"/>\n    <gravity y="-9.81" z="-9.81"/>')
refused("gravity-z-2d", text, f"{line_of(text, 'gravity')}: <gravity> has z = -9.81 m/s^2, but the mesh "
        f"'@INPUTS@/plate-hole-2d/plate.msh' is 2D and has no z direction; expected x and y only")
text = plate('<displacement boundary="pulled" x="1e-4" z="1e-4"/>')
refused("displacement-z-2d", text, f"{line_of(text, 'displacement')}: <displacement> on boundary 'pulled' has "
        f"z = 0.0001 m, but the mesh '@INPUTS@/plate-hole-2d/plate.msh' is 2D and has no z direction; expected x "
        f"and y only")
path = h.write("zero-z-2d.xml", plate('<traction boundary="pulled" x="100e6" z="0"/>\n    <gravity y="-9.81" z="0"/>'))
h.case("a zero z on a 2D mesh is harmless", ["check", path, "-q"], 0, "", stdout="")
# plane strain/stress means nothing on a 3D mesh
for plane in ["stress", "strain"]:
    text = CANTILEVER.replace('<elasticity model="linear">', f'<elasticity model="linear" plane="{plane}">')
    refused(f"plane-{plane}-3d", text, f"{line_of(text, 'plane=')}: plane=\"{plane}\" on <elasticity> applies to 2D "
            f"meshes, and the mesh '@INPUTS@/cantilever/cantilever.msh' is 3D; expected no plane attribute with a "
            f"3D mesh")

# values whose products overflow are refused with the value, not a NaN residual after 11 cutbacks
text = CANTILEVER.replace('young="210e9"', 'young="1e308"')
refused("young-1e308", text, f"{line_of(text, 'young')}: young=\"1e308\" on <material>: beyond any real value "
        f"(diamond, the stiffest solid, has E = 1.2e12 Pa); expected |young| <= 1e15 [Pa]")
text = CANTILEVER.replace('z="-1e6"', 'z="-1e308"')
refused("traction-1e308", text, f"{line_of(text, '<traction')}: z=\"-1e308\" on <traction>: beyond any real value "
        f"(the strongest solids fail below about 1e11 Pa); expected |z| <= 1e15 [Pa]")


def warned(name, text, command, patterns):
    """exit 0, one 'warning:' line per pattern on stderr (in order), and (run) the count in the summary."""
    path = h.write(name + ".xml", text)
    args = [command, path] + (["--device", "cpu", "--output-dir", os.path.join(out, name)] if command == "run"
                              else [])
    h.case(name, args, 0, re.compile("\n".join(patterns)))
    h.case(name + " (-q: no warning lines)", args + ["-q"], 0, "", stdout="")
    if command != "run":
        return
    summary = [f for f in os.listdir(os.path.join(out, name)) if f.endswith("_summary.txt")]
    counts = [l.split()[1] for f in summary for l in open(os.path.join(out, name, f)) if l.startswith("warnings ")]
    h.report(f"{name}: the summary counts {len(patterns)} warning(s)",
             [] if counts == [str(len(patterns))] else [f"warnings in the summary: {counts}"])


# a units slip that still solves: 70 Pa for 70 GPa moves a 1 m steel beam by kilometres
warned("young-70-pa", CANTILEVER.replace('young="210e9"', 'young="70"'), "run", [
    r"warning: the largest displacement, 5\.72e\+06 m at \(1, 0\.05, 0(\.1)?\), is larger than the body itself \(1 m "
    r"across\): check the units of the elastic constants \(Pa\) and of the loads \(Pa, m, m/s\^2\)",
    r"warning: the displacement gradient reaches \S+ at \([^)]*\), far beyond the small strains a linear model "
    r"describes: check the units of the elastic constants \(Pa\) and of the loads, or use model=\"neo-hookean\""])
# Celsius where kelvin are meant: a warning at check time already
text = FIN.replace('ambient="293.15"', 'ambient="20"')
warned("ambient-20", text, "check", [
    f"warning: @WORK@/ambient-20.xml:{line_of(text, 'ambient')}: the ambient temperature on boundary 'faces' is "
    r"20 K, below 100 K; femto's temperatures are in kelvin \(if 20 is meant in degrees Celsius, write 293\.15\)"])
# heat drawn out faster than conduction brings it: the linear solution falls below absolute zero
warned("below-absolute-zero", FIN.replace('<convection', '<flux boundary="tip" value="-1e8"/>\n    <convection'),
       "run", [r"warning: the lowest temperature, -\d\S* K at \(0\.05, [^)]*\), is below absolute zero: check the "
               r"units of the heat fluxes \(W/m\^2\), sources \(W/m\^3\) and conductivities \(W/\(m K\)\)"])
# the same problems with sane values: no warning, and the summary says 0
warned("sane-cantilever", CANTILEVER, "run", [])

sys.exit(h.finish())
