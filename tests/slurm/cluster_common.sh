# Sourced by the Slurm integration tests: skip/fail, the prerequisites, and the directory and
# free ports of a private one-node cluster (scripts/slurm-local.sh). Needs $tessera and $python.
# shellcheck shell=bash disable=SC2154

skip() {
  echo "SKIPPED: $*"
  exit 77
}
fail() {
  echo "FAILED: $*" >&2
  exit 1
}

# require_slurm CMD…: skips without root or without one of the commands; fails without the
# tessera binary or h5py/numpy.
require_slurm() {
  [[ $(id -u) -eq 0 ]] || skip "the local Slurm cluster needs root (slurmd starts the job steps)"
  local cmd
  for cmd in "$@"; do
    command -v "$cmd" >/dev/null || skip "$cmd not installed (apt-get install -y slurm-wlm munge)"
  done
  [[ -x $tessera ]] || fail "tessera binary '$tessera' not found"
  $python -c 'import h5py, numpy' 2>/dev/null || fail "$python cannot import h5py and numpy"
}

# private_cluster WORKDIR: exports TESSERA_SLURM_DIR (WORKDIR/cluster) and TESSERA_SLURM_PORT,
# the first of two free ports, so that the test runs beside a cluster someone already started.
private_cluster() {
  export TESSERA_SLURM_DIR=$1/cluster
  TESSERA_SLURM_PORT=$($python - <<'PY'
import random, socket
for _ in range(200):
    p = random.randrange(20000, 60000, 2)
    try:
        for q in (p, p + 1):
            with socket.socket() as s:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind(("", q))
        print(p)
        break
    except OSError:
        pass
PY
  )
  export TESSERA_SLURM_PORT
}
