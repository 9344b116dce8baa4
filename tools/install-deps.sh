#!/usr/bin/env bash
# Installs the Debian packages femto needs to build, run and test (as root). Quick when they are all present.
set -euo pipefail
packages=(build-essential cmake pkg-config libgmsh-dev gmsh libxml2-dev libxml2-utils libhdf5-dev hdf5-tools
          zlib1g-dev python3 python3-numpy python3-h5py paraview python3-paraview xvfb)
# python3-paraview provides VTK's Python modules (vtkmodules) too; python3-vtk9 would conflict with it.
# xvfb: Debian's ParaView renders through X only, so on a machine without a display
# tools/render-cantilever.py (and its test) renders on a virtual X server, Xvfb.
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "femto: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y --no-install-recommends "${missing[@]}"
fi
