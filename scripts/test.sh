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

# What the build needs first; the test tools (ParaView, Slurm, h5py, …) install beside the
# release build (see below).
scripts/setup-deps.sh --build
scripts/check-format.sh

# Each stage's start, with the minutes spent so far (CI keeps the whole run short).
step() { echo; echo "=== $* (at $((SECONDS / 60))m$((SECONDS % 60))s) ==="; }
# The tests that mostly wait with the cores idle run in the background, beside a build or the
# other tests, instead of holding a slot: the Slurm tests (for sbatch, for a time limit to
# strike; one at a time, they share the local cluster) and those labelled waits (cli.signal: for
# Open MPI to pass a signal on).
# No build runs beside the MPI tests: ranks oversubscribed on the cores wait for each other by
# yielding, and a build taking those slices stretches every collective (measured: the release
# tests and the asan build overlapped took longer than one after the other).
background_labels='slurm|waits'
start_background_tests() {
  (exec setsid ctest --preset ci -L "$background_labels" >"$logs/background.log" 2>&1) &
  background_pid=$!
}
finish_background_tests() {
  if ! wait "$background_pid"; then
    cat "$logs/background.log"
    echo "scripts/test.sh: the Slurm tests or the waiting tests failed" >&2
    exit 1
  fi
  background_pid=
  grep -E '^[0-9]+/[0-9]+ Test|tests passed' "$logs/background.log"
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
background_pid=
deps_pid=
trap '[[ -n $background_pid ]] && kill -- -"$background_pid" 2>/dev/null
      [[ -n $deps_pid ]] && wait "$deps_pid"; rm -rf "$logs"' EXIT

step "release build (preset ci), the test tools installing beside it"
scripts/setup-deps.sh >"$logs/deps.log" 2>&1 &
deps_pid=$!
cmake --preset ci >/dev/null
cmake --build --preset ci -j"$jobs"
if ! wait "$deps_pid"; then
  cat "$logs/deps.log"
  echo "scripts/test.sh: installing the test tools failed" >&2
  exit 1
fi
deps_pid=
cat "$logs/deps.log"
# Again, now that the test tools are there: the tests that need one (pvbatch) register only
# where it is found.
cmake --preset ci >/dev/null
start_background_tests
if [[ $quick == 0 ]]; then
  step "asan build (the Slurm and waiting tests beside it)"
  cmake --preset asan >/dev/null
  cmake --build --preset asan -j"$jobs"
fi
step "release tests"
ctest --preset ci -j"$jobs" -LE "$background_labels"
finish_background_tests

if [[ $quick == 0 ]]; then
  step "asan tests"
  # Each test at one rank count, two where it has one (the exchange between ranks is where
  # buffers are cut), else its lowest; without a launcher too (np0). The release run above
  # covers every count. (The preset leaves out the Slurm, CUDA, ParaView and benchmark labels.)
  ctest --preset asan -j"$jobs" -E "$(asan_excluded)"
  step "tsan build"
  cmake --preset tsan >/dev/null
  cmake --build --preset tsan -j"$jobs" --target tessera_threads_tests
  step "tsan tests (label threads)"
  ctest --preset tsan -j"$jobs" --no-tests=ignore
fi
echo; echo "scripts/test.sh: all tests passed in $((SECONDS / 60))m$((SECONDS % 60))s"
