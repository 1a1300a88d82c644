#!/usr/bin/env bash
# Integration test of the Slurm job scripts: starts a private one-node Slurm cluster
# (scripts/slurm-local.sh), submits jobs/cpu-single-node.sbatch and
# jobs/hybrid-multi-node.sbatch with `sbatch --wait`, adapted to this node by sbatch options
# (2 ranks; 2 ranks x 2 threads), and checks their HDF5 results with h5py + numpy
# (check_output.py: complete, shapes, transpose and reductions equal to numpy's).
#
#   run_slurm_jobs.sh TESSERA SOURCE_DIR
#
# Exit status 77 (ctest: skipped) without root or without the slurm-wlm/munge packages. The
# cluster is always stopped at the end; on failure its logs and the job logs are printed and
# the work directory is kept.
set -euo pipefail

tessera=${1:?usage: run_slurm_jobs.sh TESSERA SOURCE_DIR}
src=${2:?usage: run_slurm_jobs.sh TESSERA SOURCE_DIR}
python=/usr/bin/python3
here=$(cd "$(dirname "$0")" && pwd)
job_timeout=${TESSERA_SLURM_JOB_TIMEOUT:-240}

# shellcheck disable=SC1091 # checked on its own (tests/slurm/CMakeLists.txt)
source "$(dirname "$0")/cluster_common.sh"
require_slurm munged slurmctld slurmd sbatch
# The commands these jobs need: generate and run. A build whose CLI still lacks them skips.
if "$tessera" --help 2>&1 | grep -E '^ *(run|generate) ' | grep -q 'not available yet'; then
  echo "SKIPPED: this tessera build has no 'run'/'generate' yet"
  exit 77
fi

work=$(mktemp -d /tmp/tessera-slurm-test.XXXXXX)
private_cluster "$work"
# Four CPUs on this node whatever it has, for a real 2 ranks x 2 threads hybrid layout.
export TESSERA_SLURM_CPUS=4
slurm_local=$src/scripts/slurm-local.sh
passed=0

cleanup() {
  set +e
  "$slurm_local" stop >"$work/stop.log" 2>&1 || cat "$work/stop.log"
  if ((passed)); then
    rm -rf "$work"
    return
  fi
  local f
  for f in "$work"/*.out "$TESSERA_SLURM_DIR"/log/*.log; do
    [[ -f $f ]] || continue
    echo "---- $f (last 40 lines) ----"
    tail -n 40 "$f"
  done
  echo "work directory kept: $work"
}
trap cleanup EXIT

echo "== starting a one-node cluster in $TESSERA_SLURM_DIR (port $TESSERA_SLURM_PORT)"
"$slurm_local" start || fail "scripts/slurm-local.sh start failed"
export SLURM_CONF=$TESSERA_SLURM_DIR/etc/slurm.conf
# The job scripts use this binary; sbatch passes the whole environment on (--export=ALL).
export TESSERA=$tessera
cd "$work"

# submit NAME SCRIPT [sbatch options...] -- [script arguments...]: runs one job to the end,
# with its output in $work/NAME (or $outdir when set).
submit() {
  local name=$1 script=$src/jobs/$2 rc=0
  shift 2
  local opts=()
  while [[ $# -gt 0 && $1 != -- ]]; do
    opts+=("$1")
    shift
  done
  [[ $# -gt 0 ]] && shift
  echo "== $name: sbatch --wait ${opts[*]} jobs/$(basename "$script") $*"
  TESSERA_OUTDIR=${outdir:-$work/$name} timeout "$job_timeout" \
    sbatch --wait --partition=debug --time=00:05:00 --job-name="$name" \
    --output="$work/$name-%j.out" "${opts[@]}" "$script" "$@" || rc=$?
  if ((rc == 124)); then
    squeue || true
    fail "$name: the job did not finish within ${job_timeout}s"
  fi
  ((rc == 0)) || fail "$name: sbatch --wait exited with status $rc (the job failed; log below)"
  cat "$work/$name"-*.out
}

# Awkward shapes: primes, more columns than rows and the other way round.
seed=$((RANDOM * 32768 + RANDOM))
echo "== seed $seed"
rows=37 cols=53
"$tessera" generate "$work/A.h5:/A" --rows $rows --cols $cols --dtype f64 --seed "$seed" ||
  fail "tessera generate failed"

cat >"$work/read.toml" <<TOML
# Reads A.h5:/A, transposes it and reduces its rows.
[job]
kind = "pipeline"
[matrix]
input = "$work/A.h5:/A"
[reduce]
ops = ["sum", "min", "max", "norm2"]
axis = "rows"
[output]
file = "result.h5"
TOML
cat >"$work/generate.toml" <<TOML
# Generates a 61 x 29 matrix, transposes it and reduces its columns with every op.
[job]
kind = "pipeline"
[matrix]
rows = 61
cols = 29
seed = $seed
[reduce]
ops = ["sum", "min", "max", "mean", "norm1", "norm2", "norminf"]
axis = "cols"
[output]
file = "result.h5"
TOML

submit cpu cpu-single-node.sbatch --ntasks=2 -- "$work/read.toml"
grep -q "2 ranks x 1 threads" "$work"/cpu-*.out || fail "cpu: the job did not run 2 ranks x 1 thread"
$python "$here/check_output.py" "$work/cpu/result.h5" --rows $rows --cols $cols \
  --input "$work/A.h5:/A" --ranks 2 --threads 1 || fail "cpu: wrong output"

submit hybrid hybrid-multi-node.sbatch --nodes=1 --ntasks-per-node=2 --cpus-per-task=2 -- \
  "$work/generate.toml" --set output.file=hybrid.h5
grep -q "2 ranks (2 per node) x 2 threads" "$work"/hybrid-*.out ||
  fail "hybrid: the job did not run 2 ranks x 2 threads"
$python "$here/check_output.py" "$work/hybrid/hybrid.h5" --rows 61 --cols 29 \
  --ranks 2 --threads 2 || fail "hybrid: wrong output"

# The time-limit path: Slurm's warning (--signal=B:USR1, sent here with scancel) reaches the
# batch script, which passes it on to every rank; a heat2d run writes a checkpoint, stops
# cleanly, and a second job continues from it in the same output directory.
cat >"$work/heat.toml" <<TOML
# Far more steps than it will run: the signal stops it.
[job]
kind = "heat2d"
[grid]
nx = 48
ny = 40
[time]
dt = 1e-5
steps = 100000000
[output]
file = "heat.h5"
TOML
echo "== heat2d: sbatch --ntasks=2 jobs/cpu-single-node.sbatch heat.toml, then SIGUSR1"
id=$(TESSERA_OUTDIR=$work/heat sbatch --parsable --partition=debug --time=00:05:00 \
  --job-name=heat --output="$work/heat-%j.out" --ntasks=2 "$src/jobs/cpu-single-node.sbatch" \
  "$work/heat.toml") || fail "heat2d: sbatch failed"
log=$work/heat-$id.out
# job_state: the job's state while slurmctld remembers it (MinJobAge), "" when gone.
job_state() { scontrol show job "$id" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }
for ((t = 0; t < job_timeout; t++)); do
  grep -q "info: step 10/" "$log" 2>/dev/null && break
  [[ $(job_state) =~ ^(PENDING|RUNNING|CONFIGURING)$ ]] || fail "heat2d: job $id ended before stepping"
  sleep 1
done
grep -q "info: step 10/" "$log" || fail "heat2d: no step 10 after ${job_timeout}s"
scancel --batch --signal=USR1 "$id" || fail "heat2d: scancel --signal=USR1 failed"
for ((t = 0; t < 120; t++)); do
  [[ $(job_state) =~ ^(PENDING|RUNNING|CONFIGURING|COMPLETING)$ ]] || break
  sleep 1
done
cat "$log"
state=$(job_state)
[[ $state == COMPLETED ]] || fail "heat2d: job $id is '$state' after SIGUSR1, expected COMPLETED"
grep -q "warning: the time limit is near" "$log" || fail "heat2d: the batch script missed SIGUSR1"
stopped=$(sed -n 's/.*stopped by SIGUSR1 at step \([0-9]*\) of.*/\1/p' "$log" | head -n 1)
[[ -n $stopped ]] || fail "heat2d: tessera did not report stopping on SIGUSR1"
[[ -f $work/heat/heat.ckpt.h5 ]] || fail "heat2d: no checkpoint heat.ckpt.h5 in $work/heat"

target=$((stopped + 10))
outdir=$work/heat submit heat-restart cpu-single-node.sbatch --ntasks=2 -- "$work/heat.toml" \
  --set restart.file=heat.ckpt.h5 --set time.steps=$target
# The restart reads the checkpoint it would overwrite under its numbered name
# (heat.ckpt.000014.h5), which the deck it stores then names.
grep -qE "restarting from 'heat\.ckpt(\.[0-9]+)?\.h5' at step $stopped" "$work"/heat-restart-*.out ||
  fail "heat2d: the second job did not restart from step $stopped"
$python - "$work/heat/heat.h5" "$target" <<'PY' || fail "heat2d: wrong output after the restart"
import sys, h5py
path, target = sys.argv[1], int(sys.argv[2])
with h5py.File(path, "r") as f:
    assert int(f.attrs["complete"]) == 1, "complete != 1"
    steps = f["diagnostics/step"][...]
    assert int(steps[-1]) == target, f"last diagnostics step {steps[-1]}, expected {target}"
print(f"{path}: complete, diagnostics up to step {target}")
PY

passed=1
echo "PASSED: the job scripts ran under Slurm and wrote correct HDF5 files; SIGUSR1 stopped" \
  "a heat2d run with a checkpoint and a second job continued it"
