#!/usr/bin/env bash
# Regenerates every sample's .msh from its .geo (the source of truth) with the gmsh command-line program, in
# Gmsh's format 4.1. The samples' problem files read the .msh, so their answers do not move with Gmsh's mesher;
# run this after editing a .geo and update the sample's expected numbers if they change (saying why).
set -euo pipefail
cd "$(dirname "$0")/../inputs"
mesh() { gmsh "$@" -format msh41 > /dev/null && echo "made ${*: -1}"; }
mesh -2 heat-fin-2d/fin.geo -o heat-fin-2d/fin.msh
mesh -3 heat-wall-3d/wall.geo -o heat-wall-3d/wall.msh
mesh -3 heat-kt-bar/bar.geo -o heat-kt-bar/bar.msh
mesh -3 thermal-bar/bar.geo -o thermal-bar/bar.msh
mesh -3 heat-transient-slab/slab.geo -o heat-transient-slab/slab.msh
mesh -3 cantilever/cantilever.geo -o cantilever/cantilever.msh
mesh -3 cantilever-neohookean/beam.geo -o cantilever-neohookean/beam.msh
mesh -2 -order 2 plate-hole-2d/plate.geo -o plate-hole-2d/plate.msh
mesh -2 -order 2 cylinder-lame/cylinder.geo -o cylinder-lame/cylinder.msh
mesh -2 reaction-strip/strip.geo -o reaction-strip/strip.msh
