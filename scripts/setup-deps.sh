#!/usr/bin/env bash
# Installs every Debian 12 package tessera needs to build, test and run. Idempotent: when all
# are present it prints one line and returns at once. Run as root (or with sudo available).
#   scripts/setup-deps.sh           everything
#   scripts/setup-deps.sh --build   only what configuring and building need (scripts/test.sh
#                                   installs the rest, the test tools, beside the first build)
#   scripts/setup-deps.sh --run     only what building the `tessera` command and running a job
#                                   need (scripts/quickstart.sh): no test tools, no bindings
set -euo pipefail

# What building and running the `tessera` command needs, and nothing more (quickstart).
run_packages=(
  g++ make cmake ninja-build git
  openmpi-bin libopenmpi-dev libhdf5-openmpi-dev
  libcli11-dev libtomlplusplus-dev libspdlog-dev libfmt-dev
  python3-h5py # the quickstart's summary reads the output back
)
# What configuring and building everything (tests, bindings) needs.
build_packages=(
  build-essential cmake ninja-build pkg-config git clang-format
  openmpi-bin libopenmpi-dev libhdf5-openmpi-dev
  libgtest-dev libcli11-dev libtomlplusplus-dev libspdlog-dev libfmt-dev
  libfftw3-dev libfftw3-mpi-dev
  libscalapack-openmpi-dev # libtessera_scalapack and its comparison with ScaLAPACK
  gfortran pybind11-dev
  python3 python3-h5py python3-numpy # the configure step lists the CLI test cases with them
)
case "${1:-}" in
  --run) packages=("${run_packages[@]}") ;;
  --build) packages=("${build_packages[@]}") ;;
  *)
    packages=("${build_packages[@]}"
      hdf5-tools time python3-mpi4py python3-pytest python3-matplotlib python3-netcdf4)
    # The ParaView test (pvbatch opens a heat2d output's XDMF sidecar; Xvfb gives it a
    # display); TESSERA_WITH_PARAVIEW=0 leaves ParaView out (it is large).
    if [[ "${TESSERA_WITH_PARAVIEW:-1}" == 1 ]]; then
      packages+=(paraview python3-paraview xvfb)
    fi
    # The Slurm integration test needs a local one-node cluster (scripts/slurm-local.sh).
    if [[ "${TESSERA_WITH_SLURM:-1}" == 1 ]]; then
      packages+=(slurm-wlm munge)
    fi
    ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "setup-deps: installing ${missing[*]}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "setup-deps: run as root or install sudo" >&2; exit 1; }
  SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup-deps: done"
