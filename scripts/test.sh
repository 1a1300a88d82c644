#!/usr/bin/env bash
# Set-up + build + the whole test suite: the release build (warnings are errors), then the
# AddressSanitizer/UBSan build and the ThreadSanitizer build of the threading tests.
#   scripts/test.sh            everything
#   scripts/test.sh --quick    the release build's tests only
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
quick=0
[[ "${1:-}" == "--quick" ]] && quick=1
jobs=$(nproc)

scripts/setup-deps.sh
scripts/check-format.sh

# Each stage's start, with the minutes spent so far (CI keeps the whole run short).
step() { echo; echo "=== $* (at $((SECONDS / 60))m$((SECONDS % 60))s) ==="; }
# A build started in the background at the lowest priority: it takes only the CPU time the
# running tests leave idle (ranks waiting on each other, Slurm's scheduling intervals), so the
# next stage's build is mostly done when its tests are. Its log is shown if it fails.
background_build() { # PRESET LOG [TARGET...]
  local preset=$1 log=$2
  shift 2
  local targets=()
  (($#)) && targets=(--target "$@")
  # setsid: its own process group, stopped with the script (see the trap below).
  (cmake --preset "$preset" >/dev/null &&
    exec setsid nice -n 19 cmake --build --preset "$preset" -j"$jobs" "${targets[@]}") \
    >"$log" 2>&1 &
  build_pid=$!
}
finish_build() { # NAME LOG
  if ! wait "$build_pid"; then
    cat "$2"
    echo "scripts/test.sh: the $1 build failed" >&2
    exit 1
  fi
  build_pid=
  tail -n 1 "$2"
}
logs=$(mktemp -d)
build_pid=
trap '[[ -n $build_pid ]] && kill -- -"$build_pid" 2>/dev/null; rm -rf "$logs"' EXIT

step "release build (preset ci)"
cmake --preset ci >/dev/null
cmake --build --preset ci -j"$jobs"
[[ $quick == 0 ]] && background_build asan "$logs/asan.log"
step "release tests"
ctest --preset ci -j"$jobs"

if [[ $quick == 0 ]]; then
  step "asan build (finishing)"
  finish_build asan "$logs/asan.log"
  background_build tsan "$logs/tsan.log" tessera_threads_tests
  step "asan tests"
  # Every test at one and two ranks: the release run above covers 3 and 4 (uneven splits,
  # oversubscribed on a small machine, where sanitized ranks crawl); memory errors do not wait
  # for a particular rank count.
  # ParaView is not under test here (pvbatch is not sanitized; heat2d's output path is).
  ctest --preset asan -j"$jobs" -LE "slurm|cuda|paraview" -E '\.np[34]$'
  step "tsan build (finishing)"
  finish_build tsan "$logs/tsan.log"
  step "tsan tests (label threads)"
  ctest --preset tsan -j"$jobs" --no-tests=ignore
fi
echo; echo "scripts/test.sh: all tests passed in $((SECONDS / 60))m$((SECONDS % 60))s"
