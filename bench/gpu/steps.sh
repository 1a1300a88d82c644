# Sourced by the bench/gpu scripts: time-boxed steps under an overall budget.
# steps_begin sets $out (log folder), $budget and $start (seconds) and $summary (array).
# shellcheck shell=bash disable=SC2154
# steps_begin OUTDIR [SECONDS]: the log folder (created) and the overall budget (default 570 s).
steps_begin() {
  out=$1
  budget=${2:-570}
  mkdir -p "$out"
  start=$SECONDS
  summary=()
}
left() { echo $((budget - (SECONDS - start))); }
# step NAME LIMIT CMD…: runs CMD with its output in OUTDIR/NAME.log, at most LIMIT seconds
# (less when the overall budget runs out).
step() {
  local name=$1 limit=$2
  shift 2
  local l
  l=$(left)
  ((l < limit)) && limit=$l
  if ((limit <= 5)); then
    summary+=("$name: not run (time)")
    return 1
  fi
  local t0=$SECONDS
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  summary+=("$name: rc $rc, $((SECONDS - t0)) s")
  return $rc
}
