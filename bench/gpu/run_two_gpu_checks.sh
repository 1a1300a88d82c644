#!/bin/bash
# On a machine with two NVIDIA GPUs (nvidia-h200-x2), from the project's root: the checks that
# need both GPUs, in steps that fit separate device calls (the build stays in BUILD_DIR between
# calls on the same machine).
#   build     configure and build tessera and every CUDA test
#   tests     ctest -L cuda (1 and 2 ranks; the NCCL start-up makes the 2-rank tests slow)
#   cli       tessera info, tessera selftest at 1 and 2 ranks, compute-sanitizer memcheck of the
#             heat2d GPU tests
#   heat2d    heat2d 16384^2 on one GPU and on two, with the NCCL exchange and with `auto`
#   exchange  tessera bench exchange 32768^2 f32 on two GPUs: nccl against alltoallv
# Logs go to OUTDIR; a summary is printed last.
#
#   STEPS="build tests" bench/gpu/run_two_gpu_checks.sh OUTDIR [SECONDS]
#   STEPS="cli heat2d exchange" bench/gpu/run_two_gpu_checks.sh OUTDIR [SECONDS]
# Environment: STEPS (default: all five), BUILD_DIR (default build/release; outside the source
# folder when each device call replaces that folder),
# CMAKE_CUDA_ARCHITECTURES (default 90), SIZE (heat2d size, default 16384).
set -uo pipefail
# shellcheck source=bench/gpu/steps.sh
source "$(dirname "$0")/steps.sh"
steps_begin "${1:?usage: run_two_gpu_checks.sh OUTDIR [SECONDS]}" "${2:-570}"
steps=${STEPS:-build tests cli heat2d exchange}
build=${BUILD_DIR:-build/release}
size=${SIZE:-16384}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
tessera=$build/src/app/tessera
mpirun2=(mpirun -np 2 -x NCCL_NVLS_ENABLE -x OMP_NUM_THREADS)
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-8}
has() { [[ " $steps " == *" $1 "* ]]; }

if has build; then
  mapfile -t tests < <(find tests/cuda -maxdepth 1 -name 'test_*.cpp' -printf '%f\n' | sed 's/\.cpp$//')
  step configure 60 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DTESSERA_BUILD_BENCH=OFF -DCMAKE_CUDA_ARCHITECTURES="${CMAKE_CUDA_ARCHITECTURES:-90}" ||
    { tail -30 "$out/configure.log"; exit 1; }
  step build 300 cmake --build "$build" -j"$(nproc)" --target tessera "${tests[@]}" ||
    { grep -E "error|FAILED" "$out/build.log" | head -30; exit 1; }
fi
has tests && step ctest 520 ctest --test-dir "$build" -L cuda --output-on-failure -j2 --timeout 400
if has cli; then
  step info 20 "$tessera" info
  step selftest_np1 60 "$tessera" selftest
  step selftest_np2 120 "${mpirun2[@]}" "$tessera" selftest
  step san_memcheck_heat2d 150 compute-sanitizer --tool memcheck --error-exitcode 9 \
    "$build/tests/test_cuda_heat2d" --gtest_filter='-*Large*:*Huge*' --gtest_brief=1
fi
heat() { # heat NAME RANKS EXCHANGE: 10 steps of heat2d SIZE^2 on the GPUs
  local name=$1 ranks=$2 exchange=$3
  step "$name" 150 mpirun -np "$ranks" -x NCCL_NVLS_ENABLE -x OMP_NUM_THREADS "$tessera" run \
    inputs/heat2d.toml --backend cuda --set grid.nx="$size" --set grid.ny="$size" \
    --set time.dt=1e-6 --set time.steps=10 --set output.file= --set output.diagnostics_every=0 \
    --set transpose.exchange="$exchange"
}
if has heat2d; then
  heat heat2d_1gpu 1 auto
  heat heat2d_2gpu_nccl 2 nccl
  heat heat2d_2gpu_auto 2 auto
fi
if has exchange; then
  for algo in nccl alltoallv; do
    step "exchange_$algo" 120 "${mpirun2[@]}" "$tessera" bench exchange --backend cuda \
      --rows 32768 --cols 32768 --dtype f32 --algorithm "$algo" --json
  done
fi

echo "== summary"
printf '%s\n' "${summary[@]}"
[[ -f $out/ctest.log ]] && grep -E "tests passed|\*\*\*" "$out/ctest.log" | tail -20
for f in selftest_np1 selftest_np2; do
  [[ -f $out/$f.log ]] && grep -E "^(cpu|cuda) |selftest:" "$out/$f.log" | tail -14
done
[[ -f $out/san_memcheck_heat2d.log ]] && grep "ERROR SUMMARY" "$out/san_memcheck_heat2d.log"
for f in heat2d_1gpu heat2d_2gpu_nccl heat2d_2gpu_auto; do
  [[ -f $out/$f.log ]] && { echo "-- $f"; grep -E "exchange '|time per step|transposes|memory traffic" "$out/$f.log"; }
done
for f in exchange_nccl exchange_alltoallv; do
  [[ -f $out/$f.log ]] && grep -E "^\{" "$out/$f.log" | cut -c1-400
done
exit 0
