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

step() { echo; echo "=== $* ==="; }
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
  ctest --preset asan -j"$jobs" -LE "slurm|cuda"
  step "tsan build"
  cmake --preset tsan >/dev/null
  cmake --build --preset tsan -j"$jobs" --target tessera_threads_tests
  step "tsan tests (label threads)"
  ctest --preset tsan -j"$jobs" --no-tests=ignore
fi
echo; echo "scripts/test.sh: all tests passed"
