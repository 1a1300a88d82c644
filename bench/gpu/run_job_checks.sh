#!/bin/bash
# On a machine with an NVIDIA GPU, from the project's root: builds `tessera` (CUDA backend) and
# its CUDA tests, runs them, times the start-up (`--version`, `info`, a tiny job), then whole
# file jobs with bench/jobs.sh: tessera with --backend cpu, auto and cuda at 1 rank and 2, beside
# cp, cat and numpy (NCO and dask where installed) in the same rounds.
#
#   bench/gpu/run_job_checks.sh OUTDIR [SECONDS]   (SECONDS: overall limit, default 570)
# Environment: BUILD_DIR (build/release), SIZES ("1024x1024 16384x16384"), ROUNDS (3),
# PYTHON (python3: needs h5py and numpy), SKIP_BUILD=1 (reuse BUILD_DIR as it is), NO_TESTS=1
# (build and run no CUDA tests).
set -uo pipefail
# shellcheck source=bench/gpu/steps.sh
source "$(dirname "$0")/steps.sh"
steps_begin "${1:?usage: run_job_checks.sh OUTDIR [SECONDS]}" "${2:-570}"
build=${BUILD_DIR:-build/release}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
tessera=$(pwd)/$build/src/app/tessera
tests=(test_cuda_runtime test_cuda_transpose test_cuda_reduce test_cuda_plans)
[[ ${NO_TESTS:-0} == 1 ]] && tests=()
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
  step configure 60 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DTESSERA_BUILD_BENCH=OFF -DCMAKE_CUDA_ARCHITECTURES="${CMAKE_CUDA_ARCHITECTURES:-90}" ||
    { tail -30 "$out/configure.log"; exit 1; }
  step build 300 cmake --build "$build" -j"$(nproc)" --target tessera "${tests[@]}" ||
    { grep -E "error|FAILED" "$out/build.log" | head -30; exit 1; }
  ((${#tests[@]})) && step ctest 120 ctest --test-dir "$build" -L cuda \
    -R "$(IFS='|'; echo "${tests[*]}")" --output-on-failure -j4 --timeout 100
fi
# Start-up: the median of five runs of each.
startup() {
  local t
  for what in "--version" "info" "-q --timing=off reduce tiny.h5:/A"; do
    for _ in 1 2 3 4 5; do
      t=$(/usr/bin/time -f %e -o /dev/stdout "$tessera" $what 2>/dev/null | tail -1)
      echo "$what $t"
    done
  done
}
${PYTHON:-python3} -c "import h5py, numpy; h5py.File('tiny.h5', 'w')['A'] = numpy.ones((4, 4))"
export -f startup
export tessera
step startup 60 bash -c startup
rm -f tiny.h5
step info 20 "$tessera" info
# shellcheck disable=SC2086
step jobs 400 env PYTHON="${PYTHON:-python3}" ROUNDS="${ROUNDS:-3}" JSON="$out/jobs.jsonl" \
  bench/jobs.sh -t "$tessera" ${SIZES:-1024x1024 16384x16384}
echo "== summary"
printf '%s\n' "${summary[@]}"
cat "$out/startup.log"
cat "$out/jobs.log"
