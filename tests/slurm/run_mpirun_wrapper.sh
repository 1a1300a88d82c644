#!/usr/bin/env bash
# Integration test of jobs/mpirun-cluster.sh on this machine: a hostfile naming localhost,
# 2 ranks x 1 thread bound to cores, a deck that reads a generated matrix; the HDF5 result is
# checked with h5py + numpy (tests/slurm/check_output.py).
#
#   run_mpirun_wrapper.sh TESSERA SOURCE_DIR
set -euo pipefail

tessera=${1:?usage: run_mpirun_wrapper.sh TESSERA SOURCE_DIR}
src=${2:?usage: run_mpirun_wrapper.sh TESSERA SOURCE_DIR}
here=$(cd "$(dirname "$0")" && pwd)
fail() {
  echo "FAILED: $*" >&2
  exit 1
}

# The commands these jobs need: generate and run. A build whose CLI still lacks them skips.
if "$tessera" --help 2>&1 | grep -E '^ *(run|generate) ' | grep -q 'not available yet'; then
  echo "SKIPPED: this tessera build has no 'run'/'generate' yet"
  exit 77
fi
work=$(mktemp -d /tmp/tessera-mpirun-test.XXXXXX)
passed=0
cleanup() {
  if ((passed)); then rm -rf "$work"; else echo "work directory kept: $work"; fi
}
trap cleanup EXIT
cd "$work"

seed=$((RANDOM * 32768 + RANDOM))
rows=41 cols=23
echo "== seed $seed"
"$tessera" generate "$work/A.h5:/A" --rows $rows --cols $cols --dtype f64 --seed "$seed" ||
  fail "tessera generate failed"
cat >deck.toml <<TOML
[job]
kind = "pipeline"
[matrix]
input = "$work/A.h5:/A"
[output]
file = "result.h5"
TOML
echo "localhost slots=2" >hosts

TESSERA=$tessera "$src/jobs/mpirun-cluster.sh" --hostfile hosts --ranks-per-node 2 --threads 1 \
  --outdir out deck.toml || fail "jobs/mpirun-cluster.sh exited with status $?"
/usr/bin/python3 "$here/check_output.py" out/result.h5 --rows $rows --cols $cols \
  --input "$work/A.h5:/A" --ranks 2 --threads 1 || fail "wrong output"

# A dry run only prints the command.
TESSERA=$tessera "$src/jobs/mpirun-cluster.sh" -f hosts -r 2 -t 1 -o dry -n deck.toml >dry.txt
grep -q -- "-np 2" dry.txt || fail "dry run: no '-np 2' in: $(cat dry.txt)"
[[ ! -e dry ]] || fail "dry run created its output directory"

passed=1
echo "PASSED: jobs/mpirun-cluster.sh wrote a correct HDF5 file"
