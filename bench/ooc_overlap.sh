#!/usr/bin/env bash
# Out-of-core staging benchmarks (CPU): the overlap of I/O with compute, and the output write
# throughput against dd on the same disk. Results: bench/RESULTS.md, "Out-of-core staging (CPU)".
#
#   bench/ooc_overlap.sh TESSERA WORKDIR [REPEATS] [NP]
#
# overlap: the same out-of-core transpose three times with deliberate per-chunk delays
#   (TESSERA_IO_DELAY_MS on each read, TESSERA_COMPUTE_DELAY_MS on each transposed chunk):
#   I/O delayed only, compute delayed only, both. With both sides about equal, wall time must
#   stay within 1.15 x the larger one-sided time (it would be their sum without overlap).
# write: an out-of-core transpose, against `dd bs=16M conv=fsync` and `oflag=direct` of the
#   same bytes on the same disk. Like for like with `conv=fsync`, tessera's figure is its
#   write phase plus its commit (the flush that ends on the disk: MPI_File_sync) from the timing
#   table, so the bytes are on the disk in both; the whole command + `sync` is shown as well.
#   Each timed writer (tessera or dd) starts WRITE_SETTLE_S seconds (default 5) after the
#   previous file was deleted: on virtual machines that hand freed memory back to the host, the
#   first writes into the page cache after that cost several times more than writes into
#   memory just freed, and without the pause dd (started right after a delete) would get the
#   cheap memory and tessera (whose writes begin seconds into its run) the dear one.
#   CHUNK_SHAPES (default "columns rows") are the out-of-core chunk shapes measured.
set -euo pipefail
TESSERA=$(realpath "$1")
WORK=$2
REPEATS=${3:-3}
NP=${4:-1}
mkdir -p "$WORK"
cd "$WORK"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export HDF5_USE_FILE_LOCKING=FALSE OMP_NUM_THREADS=1
run() { if [ "$NP" = 0 ]; then "$TESSERA" "$@"; else mpirun -np "$NP" "$TESSERA" "$@"; fi; }
now() { date +%s.%N; }

echo "# machine: $(nproc --all) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)," \
     "load $(cut -d' ' -f1-3 /proc/loadavg); disk: $(df -h . | tail -1 | awk '{print $1, $2}')"

# --- overlap ---------------------------------------------------------------------------------
ROWS=${OVERLAP_ROWS:-2048}
COLS=${OVERLAP_COLS:-2048}
DELAY=${DELAY_MS:-40}
LIMIT=${OVERLAP_LIMIT:-2MiB}
run -q generate ov.h5:/A --rows "$ROWS" --cols "$COLS" >/dev/null
timed() { # io_ms compute_ms -> wall seconds of one out-of-core transpose
  local t0 t1
  t0=$(now)
  TESSERA_TEST_HOOKS=1 TESSERA_IO_DELAY_MS=$1 TESSERA_COMPUTE_DELAY_MS=$2 \
    run -q transpose ov.h5:/A ovt.h5:/AT --memory-limit "$LIMIT" >/dev/null
  t1=$(now)
  echo "$t1 - $t0" | bc -l
}
echo "overlap: ${ROWS}x${COLS} f64, --memory-limit $LIMIT, delay ${DELAY} ms per chunk, np $NP"
for k in $(seq "$REPEATS"); do
  io=$(timed "$DELAY" 0)
  comp=$(timed 0 "$DELAY")
  both=$(timed "$DELAY" "$DELAY")
  none=$(timed 0 0)
  printf 'overlap run %d: none %.3f s  io-only %.3f s  compute-only %.3f s  both %.3f s  both/max %.3f  both/sum %.3f\n' \
    "$k" "$none" "$io" "$comp" "$both" \
    "$(awk -v b="$both" -v i="$io" -v c="$comp" 'BEGIN { print b / (i > c ? i : c) }')" \
    "$(echo "$both / ($io + $comp)" | bc -l)"
done
rm -f ov.h5 ovt.h5

# --- write throughput ------------------------------------------------------------------------
WROWS=${WRITE_ROWS:-8192}
WCOLS=${WRITE_COLS:-8192}
WLIMIT=${WRITE_LIMIT:-64MiB}
BYTES=$((WROWS * WCOLS * 8))
run -q generate w.h5:/A --rows "$WROWS" --cols "$WCOLS" >/dev/null
sync
echo "write: ${WROWS}x${WCOLS} f64 = $BYTES bytes, --memory-limit $WLIMIT, np $NP"
COUNT=$((BYTES / (16 << 20)))
SETTLE=${WRITE_SETTLE_S:-5}
declare -A write_commit # chunk shape -> tessera write + commit seconds of this repeat
settle() { rm -f wt.h5 dd.bin; sync; sleep "$SETTLE"; }
for k in $(seq "$REPEATS"); do
  for shape in ${CHUNK_SHAPES:-columns rows}; do
    settle
    t0=$(now)
    run transpose w.h5:/A wt.h5:/AT --memory-limit "$WLIMIT" --chunk-shape "$shape" >transpose.log
    sync
    t1=$(now)
    tt=$(echo "$t1 - $t0" | bc -l)
    # write + commit seconds (column 3 of the timing table)
    tw=$(awk '$1 == "write" || $1 == "commit" {s += $3} END {print s}' transpose.log)
    tr=$(awk '$1 == "read" {print $3}' transpose.log)
    printf 'write run %d, chunks of %s: whole transpose + sync %.3f s; read %.3f s; write + commit %.3f s (%.3f GB/s)\n' \
      "$k" "$shape" "$tt" "$tr" "$tw" "$(echo "$BYTES / $tw / 1000000000" | bc -l)"
    write_commit[$shape]=$tw
  done
  settle
  t2=$(now)
  dd if=/dev/zero of=dd.bin bs=16M count="$COUNT" conv=fsync status=none
  t3=$(now)
  settle
  t4=$(now)
  dd if=/dev/zero of=dd.bin bs=16M count="$COUNT" oflag=direct status=none
  t5=$(now)
  td=$(echo "$t3 - $t2" | bc -l)
  tdd=$(echo "$t5 - $t4" | bc -l)
  printf 'write run %d: dd conv=fsync %.3f s (%.3f GB/s), dd oflag=direct %.3f s (%.3f GB/s)\n' \
    "$k" "$td" "$(echo "$BYTES / $td / 1000000000" | bc -l)" "$tdd" "$(echo "$BYTES / $tdd / 1000000000" | bc -l)"
  for shape in ${CHUNK_SHAPES:-columns rows}; do
    tw=${write_commit[$shape]}
    printf '  chunks of %s: tessera write + commit = %.2f of dd conv=fsync, %.2f of dd oflag=direct\n' \
      "$shape" "$(echo "$td / $tw" | bc -l)" "$(echo "$tdd / $tw" | bc -l)"
  done
done
rm -f w.h5 wt.h5 transpose.log
