#!/usr/bin/env bash
# Installs the Debian packages femto needs to build, run and test (as root). Quick when they are all present.
set -euo pipefail
packages=(build-essential cmake pkg-config libgmsh-dev gmsh libxml2-dev libxml2-utils libhdf5-dev hdf5-tools
          zlib1g-dev python3 python3-numpy python3-h5py paraview python3-paraview xvfb
          libopenmpi-dev openmpi-bin libhdf5-openmpi-dev libhypre-dev libmumps-dev libmetis-dev libsuitesparse-dev
          libopenblas0-openmp
          libplplot-dev plplot-driver-cairo)
# libhypre-dev: BoomerAMG, the CPU coarse solver of multigrid (it brings Open MPI, which libopenmpi-dev and
# openmpi-bin make usable for building and for runs over several ranks).
# libmumps-dev: MUMPS, the sparse direct solver of multigrid's coarse level over MPI ranks: its factor and
# triangular solves are spread over the ranks, where CHOLMOD would solve on rank 0 alone.
# libhdf5-openmpi-dev: HDF5 built for Open MPI, with which the ranks of a run write one HDF5 file together.
# Installing it makes Debian's hdf5.pc alternative name the MPI flavour; CMake does not rely on that: it looks
# for this flavour by its own paths (CMakeLists.txt), and FindHDF5 still finds the serial libhdf5-dev otherwise.
# libmetis-dev: METIS, which partitions a mesh's cells over the MPI ranks of a run split over processes
# (fem/partition.c).
# libsuitesparse-dev: CHOLMOD, the sparse Cholesky factorisation that is multigrid's exact coarse solver on the
# host for small coarse matrices. Its dense blocks go to BLAS/LAPACK, which Debian takes from the reference
# implementation (netlib: single-threaded, unoptimised) unless another is installed; libopenblas0-openmp
# becomes libblas.so.3 and liblapack.so.3 through Debian's alternatives, optimised and threaded with OpenMP,
# the runtime femto's own threads use (so --threads limits it too).
# libplplot-dev, plplot-driver-cairo: PLplot and its cairo driver draw the PNG plots of probes and convergence.
nvcc_found=0
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
  nvcc_found=1
  packages+=(python3-pip unzip) # to fetch and unpack the cuDSS wheel below
fi
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

# NVIDIA cuDSS, the GPU coarse solver: only where the CUDA backend is built. The PyPI wheel is downloaded (pip
# cannot install into Debian's Python, PEP 668) and unpacked into /opt/femto/cudss/{include,lib}, where CMake
# looks for it. Version 0.7.0.20 on purpose: its libcudss.so.0 (70 MB) is less than half the size of 1.0's.
cudss_version=0.7.0.20
cudss_dir=/opt/femto/cudss
if [ "$nvcc_found" = 1 ] && [ ! -f "$cudss_dir/lib/libcudss.so.0" ]; then
  echo "femto: installing NVIDIA cuDSS $cudss_version into $cudss_dir"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  python3 -m pip download --quiet --no-deps --dest "$tmp" "nvidia-cudss-cu13==$cudss_version"
  unzip -q "$tmp"/nvidia_cudss_cu13-*.whl -d "$tmp/wheel"
  mkdir -p "$cudss_dir"
  rm -rf "$cudss_dir/include" "$cudss_dir/lib"
  cp -r "$tmp/wheel/nvidia/cu13/include" "$tmp/wheel/nvidia/cu13/lib" "$cudss_dir/"
  cp "$tmp"/wheel/nvidia_cudss_cu13-*.dist-info/licenses/LICENSE.txt "$cudss_dir/" 2>/dev/null || true
  ln -sf libcudss.so.0 "$cudss_dir/lib/libcudss.so"
fi

# NVIDIA NCCL: halo exchanges between the GPUs of a run over MPI ranks (gpu/nccl.cu, loaded at run time), only
# where the CUDA backend is built with MPI and CUDA's own folders have no nccl.h: the PyPI wheel's header and
# library unpacked into /opt/femto/nccl/{include,lib}, where CMake looks. Without it such runs stage their
# exchanges through the host.
nccl_dir=/opt/femto/nccl
if [ "$nvcc_found" = 1 ] && [ ! -f /usr/local/cuda/include/nccl.h ] && [ ! -f /usr/include/nccl.h ] &&
   [ ! -f "$nccl_dir/include/nccl.h" ]; then
  echo "femto: installing NVIDIA NCCL into $nccl_dir"
  tmp_nccl=$(mktemp -d)
  python3 -m pip download --quiet --no-deps --dest "$tmp_nccl" nvidia-nccl-cu13
  unzip -q "$tmp_nccl"/nvidia_nccl_cu13-*.whl 'nvidia/nccl/include/*' 'nvidia/nccl/lib/libnccl.so.2' \
    -d "$tmp_nccl/wheel"
  mkdir -p "$nccl_dir"
  rm -rf "$nccl_dir/include" "$nccl_dir/lib"
  cp -r "$tmp_nccl/wheel/nvidia/nccl/include" "$tmp_nccl/wheel/nvidia/nccl/lib" "$nccl_dir/"
  rm -rf "$tmp_nccl"
fi
