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
step "release build (preset ci)"
cmake --preset ci >/dev/null
cmake --build --preset ci -j"$jobs"
step "release tests"
ctest --preset ci -j"$jobs"

if [[ $quick == 0 ]]; then
  step "asan build"
  cmake --preset asan >/dev/null
  cmake --build --preset asan -j"$jobs"
  step "asan tests"
  # Every test at one and two ranks: the release run above covers 3 and 4 (uneven splits,
  # oversubscribed on a small machine, where sanitized ranks crawl); memory errors do not wait
  # for a particular rank count.
  ctest --preset asan -j"$jobs" -LE "slurm|cuda" -E '\.np[34]$'
  step "tsan build"
  cmake --preset tsan >/dev/null
  cmake --build --preset tsan -j"$jobs" --target tessera_threads_tests
  step "tsan tests (label threads)"
  ctest --preset tsan -j"$jobs" --no-tests=ignore
fi
echo; echo "scripts/test.sh: all tests passed in $((SECONDS / 60))m$((SECONDS % 60))s"
