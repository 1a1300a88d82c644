#!/usr/bin/env bash
# heat2d performance: time per step, cell updates per second, the share of the step spent in the
# two transposes, and the fraction of the memory-bandwidth bound reached.
#
#   bench/heat2d.sh [-n RANKS] [-s SIZE] [-k STEPS] [-r REPEATS] [-b cpu|cuda] [-t TESSERA]
#                   [-l transpose|distributed]
#
# defaults: 2 ranks, 4096 x 4096, 20 steps, 3 repeats, cpu, build/release/src/app/tessera,
# solver.line_solve = transpose (-l distributed: the communication share printed is then the
# reduced systems' exchange).
# Each repeat is one `tessera run inputs/heat2d.toml` without output or intermediate diagnostics
# (the setup, the exchange trial and the initial/final diagnostics are not in the step time);
# the best repeat is reported, the others are listed.
#
# The bound: an ideal ADI step would move, per cell, 80 bytes through memory:
#   transpose Y -> X          read 8 + write 8
#   x-solves + explicit half  read 8 + write 8 (solve in place) + write 8 (the next transpose's input)
#   transpose X -> Y          read 8 + write 8
#   y-solves + explicit half  read 8 + write 8 + write 8
# (the explicit half in y of the next step is fused into the y-solves). That is the transposed
# scheme of several ranks; on one rank the CPU skips the transposes (48 B/cell) and the GPU steps
# by tiles (24 B/cell of field passes, 32 B/cell with its reduced systems). The solver's own count
# (its "memory traffic" line, see docs/performance.md) is shown too, and is the one to compare. The
# memory bandwidth is `tessera bench transpose`'s memcpy figure (read + written) at the same
# size, ranks and threads, measured right after the runs, so "fraction" = (B/cell x cells / time
# per step) / memcpy GB/s.
# OMP_NUM_THREADS defaults to 1 per rank (ranks x threads = cores).
set -euo pipefail
cd "$(dirname "$0")/.."

ranks=2 size=4096 steps=20 repeats=3 backend=cpu tessera=build/release/src/app/tessera
line_solve=transpose
while getopts "n:s:k:r:b:t:l:h" o; do
  case $o in
  n) ranks=$OPTARG ;;
  s) size=$OPTARG ;;
  k) steps=$OPTARG ;;
  r) repeats=$OPTARG ;;
  b) backend=$OPTARG ;;
  t) tessera=$OPTARG ;;
  l) line_solve=$OPTARG ;;
  *)
    sed -n '2,23p' "$0"
    exit 2
    ;;
  esac
done
[[ -x $tessera ]] || {
  echo "bench/heat2d.sh: no tessera binary '$tessera' (-t)" >&2
  exit 2
}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Each rank bound to OMP_NUM_THREADS cores of its own (a plain --bind-to core would put all of
# a rank's threads on one core), unbound when the ranks' threads outnumber the cores.
launch=(mpirun -np "$ranks" --oversubscribe --map-by "slot:PE=$OMP_NUM_THREADS" --bind-to core)
((ranks * OMP_NUM_THREADS > $(nproc))) && launch=(mpirun -np "$ranks" --oversubscribe --bind-to none)

echo "== heat2d ${size}x${size}, $ranks rank(s) x $OMP_NUM_THREADS thread(s), backend $backend," \
  "line solve $line_solve," \
  "$steps steps x $repeats repeats; load: $(cut -d' ' -f1-3 /proc/loadavg)"
best_ms="" best_out=""
for ((i = 1; i <= repeats; i++)); do
  out=$("${launch[@]}" "$tessera" run inputs/heat2d.toml --backend "$backend" \
    --set grid.nx="$size" --set grid.ny="$size" --set time.dt=1e-6 --set time.steps="$steps" \
    --set output.file= --set output.diagnostics_every=0 --set solver.line_solve="$line_solve" \
    2>/dev/null)
  ms=$(sed -n 's/^ *time per step *\([0-9.e+-]*\) ms.*/\1/p' <<<"$out")
  [[ -n $ms ]] || {
    echo "bench/heat2d.sh: run $i printed no 'time per step' line" >&2
    exit 1
  }
  echo "   run $i: $ms ms per step, communication $(sed -n 's/^ *\(transposes\|reduced-system exchange\) *//p' <<<"$out")"
  if [[ -z $best_ms ]] || awk -v a="$ms" -v b="$best_ms" 'BEGIN { exit !(a < b) }'; then
    best_ms=$ms best_out=$out
  fi
done

ref=$("${launch[@]}" "$tessera" bench transpose --backend "$backend" --rows "$size" \
  --cols "$size" --json 2>/dev/null | grep '^{' | tail -n 1)
mem_gbps=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["reference"]["gbps"])' "$ref")
transposes=$(sed -n 's/^ *\(transposes\|reduced-system exchange\) *\([0-9.]*\)% of the step.*/\2/p' <<<"$best_out")
solver_bpc=$(sed -n 's/^ *memory traffic .*(\([0-9.]*\) B per cell).*/\1/p' <<<"$best_out")
echo "$best_out" | sed -n '/^Timing/,/^$/p'
echo "$best_out" | sed -n '/^heat2d: /,$p'
awk -v ms="$best_ms" -v n="$size" -v bw="$mem_gbps" -v tr="$transposes" -v sb="${solver_bpc:-0}" 'BEGIN {
  cells = n * n; s = ms / 1e3; bytes = 80 * cells
  printf "== best of the runs\n"
  printf "   time per step       %.2f ms\n", ms
  printf "   cell updates/s      %.3g\n", cells / s
  printf "   communication       %s%% of the step (line solve '"$line_solve"')\n", tr
  printf "   memcpy bandwidth    %.1f GB/s (tessera bench transpose, same ranks and size)\n", bw
  printf "   ideal bytes         %.3f GB per step (80 B/cell)  ->  %.1f GB/s = %.0f%% of memcpy\n",
    bytes / 1e9, bytes / s / 1e9, 100 * bytes / s / 1e9 / bw
  if (sb > 0)
    printf "   solver bytes        %.3f GB per step (%g B/cell)  ->  %.1f GB/s = %.0f%% of memcpy\n",
      sb * cells / 1e9, sb, sb * cells / s / 1e9, 100 * sb * cells / s / 1e9 / bw
}'
