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
# The asan stage's exclusion regex: each test family (NAME.npN) at N=2 where it has it, else
# at N=1 where it has it; np0 and tests without a rank count always run.
asan_excluded() {
  ctest --preset asan -N | sed -n 's/^ *Test *#[0-9]*: //p' |
    awk 'match($0, /\.np[1-9]$/) {
           fam = substr($0, 1, RSTART - 1); n = substr($0, RSTART + 3) + 0
           names[fam] = names[fam] " " n
         }
         END {
           for (fam in names) {
             k = split(names[fam], ns, " "); keep = 99; has2 = 0
             for (i = 1; i <= k; i++) { if (ns[i] == 2) has2 = 1; if (ns[i] < keep) keep = ns[i] }
             if (has2) keep = 2; else if (keep > 2) keep = 0 # np3 and np4: release only
             for (i = 1; i <= k; i++) if (ns[i] != keep) {
               name = fam ".np" ns[i]; gsub(/\./, "\\.", name); print "^" name "$"
             }
           }
         }' | paste -sd'|'
}
logs=$(mktemp -d)
build_pid=
slurm_pid=
trap '[[ -n $build_pid ]] && kill -- -"$build_pid" 2>/dev/null
      [[ -n $slurm_pid ]] && kill -- -"$slurm_pid" 2>/dev/null; rm -rf "$logs"' EXIT

step "release build (preset ci)"
cmake --preset ci >/dev/null
cmake --build --preset ci -j"$jobs"
[[ $quick == 0 ]] && background_build asan "$logs/asan.log"
step "release tests"
# The Slurm tests mostly wait (for sbatch, for a time limit to strike): they run beside the
# others instead of holding one of their slots (one at a time: they share the local cluster).
(exec setsid ctest --preset ci -L slurm >"$logs/slurm.log" 2>&1) &
slurm_pid=$!
ctest --preset ci -j"$jobs" -LE slurm
if ! wait "$slurm_pid"; then
  cat "$logs/slurm.log"
  echo "scripts/test.sh: the Slurm tests failed" >&2
  exit 1
fi
slurm_pid=
grep -E '^[0-9]+/[0-9]+ Test|tests passed' "$logs/slurm.log"

if [[ $quick == 0 ]]; then
  step "asan build (finishing)"
  finish_build asan "$logs/asan.log"
  background_build tsan "$logs/tsan.log" tessera_threads_tests
  step "asan tests"
  # Each test at one rank count, two where it has one (the exchange between ranks is where
  # buffers are cut), else its lowest; without a launcher too (np0). The release run above
  # covers every count. (The preset leaves out the Slurm, CUDA, ParaView and benchmark labels.)
  ctest --preset asan -j"$jobs" -E "$(asan_excluded)"
  step "tsan build (finishing)"
  finish_build tsan "$logs/tsan.log"
  step "tsan tests (label threads)"
  ctest --preset tsan -j"$jobs" --no-tests=ignore
fi
echo; echo "scripts/test.sh: all tests passed in $((SECONDS / 60))m$((SECONDS % 60))s"
