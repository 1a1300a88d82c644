#!/bin/bash
# On a machine with an NVIDIA GPU, from the project's root: builds `tessera` and the CUDA tests,
# then checks the command line with the CUDA backend: the CUDA tests, `tessera info` (the GPUs),
# `tessera selftest` at 1 and 2 ranks, the heat2d job on the GPU, and `tessera bench --backend
# cuda --json`: transpose f32 and f64 on device memory, f32 staged from pinned host memory, and
# reduce f32 sum along each axis. Logs go to OUTDIR; a summary is printed last.
#
#   bench/gpu/run_cli_checks.sh OUTDIR [SECONDS]     (SECONDS: overall time limit, default 570)
# Environment: BUILD_DIR (default build/release), CMAKE_CUDA_ARCHITECTURES (default 90),
# SIZE (benchmark and heat2d size, default 16384).
set -uo pipefail
# shellcheck source=bench/gpu/steps.sh
source "$(dirname "$0")/steps.sh"
steps_begin "${1:?usage: run_cli_checks.sh OUTDIR [SECONDS]}" "${2:-570}"
build=${BUILD_DIR:-build/release}
size=${SIZE:-16384}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
tessera=$build/src/app/tessera


tests=(test_cuda_runtime test_cuda_transpose test_cuda_reduce test_cuda_tridiag test_cuda_plans
  test_cuda_heat2d)
step configure 60 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DTESSERA_BUILD_BENCH=OFF -DCMAKE_CUDA_ARCHITECTURES="${CMAKE_CUDA_ARCHITECTURES:-90}" ||
  { tail -30 "$out/configure.log"; exit 1; }
step build 240 cmake --build "$build" -j"$(nproc)" --target tessera "${tests[@]}" ||
  { grep -E "error|FAILED" "$out/build.log" | head -30; exit 1; }
step ctest 120 ctest --test-dir "$build" -L cuda --output-on-failure -j4 --timeout 100
step info 20 "$tessera" info
step selftest_np1 60 "$tessera" selftest
step selftest_np2 60 mpirun -np 2 "$tessera" selftest
step heat2d 90 bench/heat2d.sh -n 1 -s "$size" -k 10 -r 1 -b cuda -t "$tessera"
benches=()
bench() { # bench NAME ARGS…: one `tessera bench … --backend cuda --json` step
  local name=$1
  shift
  benches+=("$name")
  step "$name" 40 "$tessera" bench "$@" --backend cuda --rows "$size" --cols "$size" --json
}
bench bench_transpose_f32 transpose --dtype f32
bench bench_transpose_f64 transpose --dtype f64
bench bench_transpose_host_f32 transpose --dtype f32 --memory host
for axis in all rows cols; do
  bench "bench_reduce_$axis" reduce --dtype f32 --op sum --axis "$axis"
done

echo "== summary"
printf '%s\n' "${summary[@]}"
[[ -f $out/ctest.log ]] && grep -E "tests passed|\*\*\*" "$out/ctest.log" | tail -12
[[ -f $out/info.log ]] && grep -A3 -E "GPUs" "$out/info.log"
for f in selftest_np1 selftest_np2; do
  [[ -f $out/$f.log ]] && grep -E "^(cpu|cuda) |selftest:" "$out/$f.log" | tail -14
done
[[ -f $out/heat2d.log ]] && tail -8 "$out/heat2d.log"
for f in "${benches[@]}"; do
  [[ -f $out/$f.log ]] && grep -E "^\{" "$out/$f.log" | cut -c1-400
done
exit 0
