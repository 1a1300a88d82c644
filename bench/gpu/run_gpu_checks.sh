#!/bin/bash
# On a machine with an NVIDIA GPU, from the project's root: configures and builds the CUDA tests
# and the GPU benchmark, then runs the benchmark (bench/gpu/gpu_bench), the CUDA tests
# (ctest -L cuda) and compute-sanitizer (memcheck, racecheck, synccheck) on small shapes.
# Logs and the benchmark's JSON go to OUTDIR; a summary is printed last.
#
#   bench/gpu/run_gpu_checks.sh OUTDIR [SECONDS]      (SECONDS: overall time limit, default 570)
# Environment: STEPS (default "bench tests sanitize"), BUILD_DIR (default build/release),
# CMAKE_CUDA_ARCHITECTURES (default 90), BENCH_ARGS (extra gpu_bench arguments).
set -uo pipefail
# shellcheck source=bench/gpu/steps.sh
source "$(dirname "$0")/steps.sh"
steps_begin "${1:?usage: run_gpu_checks.sh OUTDIR [SECONDS]}" "${2:-570}"
steps=${STEPS:-bench tests sanitize}
build=${BUILD_DIR:-build/release}


nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem \
  --format=csv >"$out/gpu.txt" 2>&1
cat "$out/gpu.txt"
# Every CUDA test program (tests/cuda/test_*.cpp).
mapfile -t tests < <(find tests/cuda -maxdepth 1 -name 'test_*.cpp' -printf '%f\n' | sed 's/\.cpp$//')
step configure 120 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES="${CMAKE_CUDA_ARCHITECTURES:-90}" || { tail -30 "$out/configure.log"; exit 1; }
step build_bench 300 cmake --build "$build" -j"$(nproc)" --target gpu_bench ||
  { tail -30 "$out/build_bench.log"; exit 1; }
# The tests build in the background, at low priority, while the benchmark runs.
(nice -n 19 cmake --build "$build" -j"$(nproc)" --target "${tests[@]}" >"$out/build_tests.log" 2>&1
 echo $? >"$out/build_tests.rc") &
builder=$!
if [[ " $steps " == *" bench "* ]]; then
  # shellcheck disable=SC2086 # BENCH_ARGS holds several arguments
  step bench 240 "$build/bench/gpu/gpu_bench" --json "$out/gpu_bench.json" ${BENCH_ARGS:-}
  cp "$out/bench.log" "$out/gpu_bench.txt"
fi
wait $builder
summary+=("build_tests: rc $(cat "$out/build_tests.rc")")
if [[ " $steps " == *" tests "* ]]; then
  step ctest 300 ctest --test-dir "$build" -L cuda --output-on-failure -j3 --timeout 280
fi
if [[ " $steps " == *" sanitize "* ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  small='-*Large*:*Staged*:*Nvml*:*Huge*:*Events*'
  for tool in memcheck racecheck synccheck; do
    for t in test_cuda_transpose test_cuda_reduce test_cuda_tridiag test_cuda_heat2d; do
      step "san_${tool}_${t#test_cuda_}" 120 compute-sanitizer --tool "$tool" --error-exitcode 9 \
        "$build/tests/$t" --gtest_filter="$small" --gtest_brief=1
    done
  done
fi
echo "== summary"
printf '%s\n' "${summary[@]}"
[[ -f "$out/ctest.log" ]] && grep -E "tests passed|Failed|\*\*\*" "$out/ctest.log" | tail -15
for f in "$out"/san_*.log; do [[ -f $f ]] && echo "$(basename "$f"): $(grep -E "ERROR SUMMARY" "$f" | tail -1)"; done
[[ -f "$out/gpu_bench.txt" ]] && grep -vE "^$" "$out/gpu_bench.txt" | cut -c1-120
exit 0
