#!/bin/bash
# On a machine with an NVIDIA GPU, from the project's root, after configuring with the release
# preset: builds tessera and the CUDA transpose, reduction and heat2d tests, runs the tests,
# compute-sanitizer (memcheck, racecheck, synccheck) on their small cases, and the benchmark
# matrix (`tessera bench transpose|reduce --backend cuda --preset classes`). Logs and the JSON
# lines go to OUTDIR; the tables are printed last.
#
#   bench/gpu/run_gpu_checks.sh OUTDIR [SECONDS]      (SECONDS: overall time limit, default 570)
# Environment: STEPS (default "build tests bench sanitize multi"), BUILD_DIR (default
# build/release), BENCH_ARGS (extra `tessera bench` arguments, e.g. "--variants").
set -uo pipefail
# shellcheck source=bench/gpu/steps.sh
source "$(dirname "$0")/steps.sh"
steps_begin "${1:?usage: run_gpu_checks.sh OUTDIR [SECONDS]}" "${2:-570}"
steps=${STEPS:-build tests bench sanitize multi}
build=${BUILD_DIR:-build/release}
tessera=$build/src/app/tessera
has() { [[ " $steps " == *" $1 "* ]]; }

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem \
  --format=csv >"$out/gpu.txt" 2>&1
cat "$out/gpu.txt"
if has build; then
  step build 300 cmake --build "$build" -j"$(nproc)" --target tessera test_cuda_transpose \
    test_cuda_reduce test_cuda_reduce_long_rows test_cuda_heat2d || { tail -40 "$out/build.log"; exit 1; }
fi
# cuBLAS is loaded only by the benchmark that needs it, never linked.
summary+=("tessera linked against cuBLAS: $(ldd "$tessera" | grep -c cublas) libraries")
if has tests; then
  step test_transpose 120 "$build/tests/test_cuda_transpose" --gtest_brief=1
  step test_reduce 120 "$build/tests/test_cuda_reduce" --gtest_brief=1
  step test_reduce_long_rows 60 "$build/tests/test_cuda_reduce_long_rows" --gtest_brief=1
  step test_heat2d 120 "$build/tests/test_cuda_heat2d" --gtest_brief=1
fi
# shellcheck disable=SC2086 # BENCH_ARGS holds several arguments
if has bench; then
  step bench_transpose 200 "$tessera" bench transpose --backend cuda --preset classes --repeat 7 \
    ${BENCH_ARGS:-} --json
  step bench_reduce 200 "$tessera" bench reduce --backend cuda --preset classes --repeat 7 --json
fi
if has sanitize; then
  t="$build/tests/test_cuda_transpose --gtest_filter=*OneOfEach* --gtest_brief=1"
  r="$build/tests/test_cuda_reduce --gtest_filter=*OneOfEach* --gtest_brief=1"
  l="$build/tests/test_cuda_reduce_long_rows --gtest_filter=*Sanitizers* --gtest_brief=1"
  for tool in memcheck racecheck synccheck; do
    # shellcheck disable=SC2086
    step "san_${tool}_transpose" 60 compute-sanitizer --tool "$tool" --error-exitcode 9 $t
    # shellcheck disable=SC2086
    step "san_${tool}_reduce" 60 compute-sanitizer --tool "$tool" --error-exitcode 9 $r
    # shellcheck disable=SC2086
    step "san_${tool}_long_rows" 60 compute-sanitizer --tool "$tool" --error-exitcode 9 $l
  done
fi
if has multi; then
  step bench_multi 120 "$tessera" bench reduce --backend cuda --shapes 16384x16384,16411x16363 \
    --dtype f32,f64 --axis all,rows,cols --op sum,max,norm2 --repeat 7 --json
fi
echo "== summary"
printf '%s\n' "${summary[@]}"
for f in "$out"/test_*.log; do [[ -f $f ]] && echo "$(basename "$f"): $(tail -3 "$f" | tr '\n' ' ')"; done
for f in "$out"/san_*.log; do [[ -f $f ]] && echo "$(basename "$f"): $(grep -E "(ERROR|RACECHECK) SUMMARY" "$f" | tail -1)"; done
python3 "$(dirname "$0")/bench_table.py" "$out"/bench_*.log
exit 0
