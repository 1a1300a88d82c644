#!/usr/bin/env bash
# A heat2d job stopped by its Slurm time limit and requeued from its checkpoint ends with the
# same fields, bit for bit, as one uninterrupted run.
#
#   run_heat2d_requeue.sh TESSERA SOURCE_DIR [resubmit|requeue]
#
# Starts a private one-node Slurm cluster (scripts/slurm-local.sh) and submits
# jobs/heat2d-requeue.sbatch with a 1-minute limit and --signal=B:USR1@40: Slurm's own time-limit
# warning (no scancel) makes tessera checkpoint and stop, and the script submits the next piece
# (default `resubmit`: a new job; `requeue`: `scontrol requeue`, which Slurm holds ~2 minutes
# per piece), which continues from the checkpoint. The number of steps is chosen from a short
# timed srun so that the whole run needs about 30 s of stepping on 2 ranks, more than one piece
# gets: the warning is due 20 s into a piece, and slurmctld checks time limits every 30 s, so it
# arrives 20-50 s in. The reference is the same deck run by mpirun.
#
# Exit status 77 (ctest: skipped) without root or without the slurm-wlm/munge packages.
set -euo pipefail

tessera=${1:?usage: run_heat2d_requeue.sh TESSERA SOURCE_DIR [requeue|resubmit]}
src=${2:?usage: run_heat2d_requeue.sh TESSERA SOURCE_DIR [requeue|resubmit]}
mode=${3:-resubmit}
python=/usr/bin/python3
target_seconds=${TESSERA_HEAT2D_REQUEUE_SECONDS:-30}

# shellcheck disable=SC1091 # checked on its own (tests/slurm/CMakeLists.txt)
source "$(dirname "$0")/cluster_common.sh"
require_slurm munged slurmctld slurmd sbatch scontrol

work=$(mktemp -d /tmp/tessera-heat2d-requeue.XXXXXX)
private_cluster "$work"
export TESSERA_SLURM_CPUS=2
slurm_local=$src/scripts/slurm-local.sh
passed=0
cleanup() {
  set +e
  [[ -n ${id:-} ]] && scancel "$id" 2>/dev/null
  "$slurm_local" stop >"$work/stop.log" 2>&1 || cat "$work/stop.log"
  if ((passed)); then
    rm -rf "$work"
    return
  fi
  local f
  for f in "$work"/*.out "$TESSERA_SLURM_DIR"/log/slurmctld.log; do
    [[ -f $f ]] || continue
    echo "---- $f (last 60 lines) ----"
    tail -n 60 "$f"
  done
  echo "work directory kept: $work"
}
trap cleanup EXIT
cd "$work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
mpirun=(mpirun -np 2 --oversubscribe --bind-to none)

# The deck: periodic boundaries and a gaussian, so that nothing is symmetric by accident.
cat >"$work/heat.toml" <<TOML
[job]
kind = "heat2d"
[grid]
nx = 96
ny = 80
lx = 1.2
[time]
dt = 1e-5
steps = 2000
[initial]
kind = "gaussian"
[boundary]
kind = "periodic"
[output]
file = "heat.h5"
snapshot_every = 0
diagnostics_every = 0
TOML

echo "== starting a one-node cluster in $TESSERA_SLURM_DIR (port $TESSERA_SLURM_PORT)"
"$slurm_local" start || fail "scripts/slurm-local.sh start failed"
export SLURM_CONF=$TESSERA_SLURM_DIR/etc/slurm.conf
export TESSERA=$tessera

# Steps for about target_seconds of stepping on 2 ranks under srun here.
mkdir -p calibrate
(cd calibrate && timeout 300 srun --partition=debug --ntasks=2 "$tessera" run "$work/heat.toml" \
  --set time.steps=3000 >log 2>&1) || fail "calibration run failed: $(tail -n 5 calibrate/log)"
ms=$(sed -n 's/^ *time per step *\([0-9.e+-]*\) ms.*/\1/p' calibrate/log)
[[ -n $ms ]] || fail "calibration run printed no time per step: $(tail -n 5 calibrate/log)"
steps=$($python -c "print(max(500, int($target_seconds * 1000 / $ms) // 10 * 10))")
echo "== $ms ms per step under srun: $steps steps for about ${target_seconds}s"

# One attempt: the uninterrupted reference, then the requeued job; sets $pieces.
attempt() {
  echo "== reference: mpirun -np 2 tessera run heat.toml --set time.steps=$steps"
  mkdir -p reference
  (cd reference && "${mpirun[@]}" "$tessera" run "$work/heat.toml" --set time.steps="$steps" \
    >log 2>&1) || fail "reference run failed: $(tail -n 5 reference/log)"

  echo "== sbatch --time=1 --signal=B:USR1@40 jobs/heat2d-requeue.sbatch heat.toml (REQUEUE=$mode)"
  # The time limit and the signal as SBATCH_* variables: they override the script's #SBATCH lines
  # and, being in the job's environment, the resubmitted pieces' too.
  # A loaded machine steps several times slower than the calibration: allow many pieces.
  id=$(TESSERA_OUTDIR=$work/slurm REQUEUE=$mode MAX_PIECES=60 SBATCH_TIMELIMIT=1 SBATCH_SIGNAL=B:USR1@40 \
    sbatch --parsable --partition=debug --ntasks=2 --job-name=heat \
    --output="$work/heat-%j.out" "$src/jobs/heat2d-requeue.sbatch" "$work/heat.toml" \
    --set time.steps="$steps") ||
    fail "sbatch failed"
  # On a machine shared with other work the pieces can step many times slower than the
  # calibration measured: a generous deadline (the ctest TIMEOUT is 1800 s).
  deadline=$(($(date +%s) + 1500))
  # Done when the output is complete at the last step and no job of ours is left.
  while :; do
    (($(date +%s) < deadline)) || fail "the run did not finish in time"
    jobs_left=$(squeue -h -n heat 2>/dev/null | wc -l)
    if ((jobs_left == 0)) && grep -q "heat2d finished after" "$work"/heat-*.out 2>/dev/null; then
      break
    fi
    if ((jobs_left == 0)) && grep -qE "^error:|exited with status [1-9]" "$work"/heat-*.out \
      2>/dev/null; then
      fail "a piece of the job failed"
    fi
    sleep 2
  done
  cat "$work"/heat-*.out
  pieces=$(cat "$work"/heat-*.out | { grep -c "stopped by SIGUSR1 at step" || true; })
}

# The machine may step much faster than the calibration measured (a load that went away): when
# the run ended within one piece, try again with four times the steps.
for try in 1 2 3; do
  rm -rf reference "$work/slurm" "$work"/heat-*.out
  attempt
  ((pieces >= 1)) && break
  ((try < 3)) || fail "the time limit never stopped the run (the machine ran it within one piece)"
  steps=$((steps * 4))
  echo "== the run ended within one piece: again with $steps steps"
done
grep -q "continuing from $work/slurm/heat2d.ckpt.h5" "$work"/heat-*.out ||
  fail "no piece continued from the checkpoint"

$python - "$work/reference/heat.h5" "$work/slurm/heat.h5" "$steps" <<'PY' ||
import sys, h5py, numpy as np
ref, got, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
with h5py.File(ref, "r") as a, h5py.File(got, "r") as b:
    assert int(b.attrs["complete"]) == 1, "the requeued run's output is not complete"
    assert int(b["diagnostics/step"][-1]) == steps, f"last step {b['diagnostics/step'][-1]}"
    ua, ub = a["fields/u"][-1], b["fields/u"][-1]
    assert ua.shape == ub.shape, f"shapes {ua.shape} {ub.shape}"
    assert np.array_equal(ua.view(np.uint64), ub.view(np.uint64)), \
        f"final fields differ: max |diff| {np.abs(ua - ub).max()}"
    for k in ("step", "time", "total", "min", "max"):
        assert np.array_equal(a["diagnostics/" + k][...], b["diagnostics/" + k][...]), k
print(f"{got}: complete at step {steps}, final u bit-identical to the uninterrupted run")
PY
  fail "the requeued run differs from the uninterrupted one"

passed=1
echo "PASSED: heat2d stopped by the Slurm time limit $pieces time(s), requeued ($mode) from its" \
  "checkpoint, and ended bit-identical to an uninterrupted run"
