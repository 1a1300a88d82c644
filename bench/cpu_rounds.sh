#!/usr/bin/env bash
# The CPU figures of bench/RESULTS.md in rounds, beside their anchors measured in the same
# rounds on the same machine: the local transpose (tessera bench, 1 rank x THREADS threads)
# against memcpy and HPTT (MEASURE, every element type: bench/anchors/hptt_typed.sh), and the
# distributed transpose at 2 ranks x 1 thread (bench/compare_fftw, tessera against
# FFTW_MEASURE, interleaved; and tessera bench).
# Prints one line per measurement and round, then the median over rounds of each, with the
# largest over the smallest round (the spread). Run it on an otherwise idle machine.
#
#   bench/cpu_rounds.sh BUILD_DIR [ROUNDS]       (default 5 rounds; THREADS default 2)
#   SHAPES="8192x8192:f64 ..." overrides the local shapes; NO_HPTT=1 skips HPTT;
#   DIST_SHAPES="8192x8192 ..." overrides the distributed ones (DIST_SHAPES= skips them).
set -euo pipefail
build=${1:?usage: bench/cpu_rounds.sh BUILD_DIR [ROUNDS]}
rounds=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
tessera=$build/src/app/tessera
compare=$build/bench/compare_fftw
hptt=$here/anchors/hptt_typed.sh
threads=${THREADS:-2}
shapes=${SHAPES:-"8192x8192:f64 8191x12289:f64 8191x12289:f32 1048573x17:f64 1048573x17:f32 \
17x1048573:f64 4099x4111:f32 4099x4111:c64 2053x2063:c128 1000x1000:f64"}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; $(date -u +%FT%TZ)"
for ((r = 1; r <= rounds; ++r)); do
  echo "load before round $r: $(cut -d' ' -f1-3 /proc/loadavg)"
  for s in $shapes; do
    m=${s%%x*} rest=${s#*x} n=${rest%%:*} t=${s##*:}
    OMP_NUM_THREADS=$threads "$tessera" -q bench transpose --backend cpu --rows "$m" --cols "$n" \
      --dtype "$t" --json | /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); \
print(f'local {sys.argv[1]} tessera {d[\"gbps\"]:.2f} memcpy {d[\"reference\"][\"gbps\"]:.2f}')" "$s" |
      tee -a "$log"
    if [[ -z ${NO_HPTT:-} ]]; then
      OMP_NUM_THREADS=$threads "$hptt" "$m" "$n" "$t" 2>&1 |
        sed -n 's/^hptt(measure).*hptt \([0-9.]*\) GB.*/local '"$s"' hptt \1/p' | tee -a "$log"
    fi
  done
  for s in ${DIST_SHAPES-8192x8192 8191x12289}; do
    if [[ -x $compare ]]; then
      OMP_NUM_THREADS=1 mpirun -np 2 --bind-to core "$compare" --shape "$s" --json 2>/dev/null |
        /usr/bin/python3 -c "import json,sys
for d in (d for l in sys.stdin if l.startswith('[') for d in json.loads(l)):
    print(f'dist {sys.argv[1]} compare_fftw tessera {d[\"tessera_gbps\"]:.2f} fftw {d[\"fftw_gbps\"]:.2f}')" "$s" |
        tee -a "$log"
    fi
    OMP_NUM_THREADS=1 mpirun -np 2 --bind-to core "$tessera" -q bench transpose --backend cpu \
      --rows "${s%x*}" --cols "${s#*x}" --dtype f64 --json |
      /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); \
print(f'dist {sys.argv[1]} bench tessera {d[\"gbps\"]:.2f}')" "$s" | tee -a "$log"
  done
done
echo
echo "median over $rounds rounds (largest / smallest round):"
/usr/bin/python3 - "$log" <<'PY'
import collections, statistics, sys
vals = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    # "local SHAPE tessera X memcpy Y" / "local SHAPE hptt X" / "dist SHAPE compare_fftw tessera X fftw Y"
    # / "dist SHAPE bench tessera X": each number follows its name.
    if len(f) < 4 or f[0] not in ("local", "dist"):
        continue
    tag = f[2] if f[2] in ("compare_fftw", "bench") else ""
    got = {}
    for k in range(2, len(f) - 1):
        try:
            got[f[k]] = float(f[k + 1])
        except ValueError:
            pass
    for name, x in got.items():
        vals[(f[0], f[1], tag, name, "GB/s")].append(x)
    if "fftw" in got and got["fftw"] > 0:
        vals[(f[0], f[1], tag, "tessera/fftw", "x")].append(got["tessera"] / got["fftw"])
for key in list(vals):
    # tessera over HPTT round by round (both measured in each round)
    if key[0] == "local" and key[3] == "hptt":
        mine = vals[(key[0], key[1], "", "tessera", "GB/s")]
        if len(mine) == len(vals[key]):
            vals[(key[0], key[1], "", "tessera/hptt", "x")] = [a / b for a, b in zip(mine, vals[key])]
for key, v in sorted(vals.items()):
    print(f"{' '.join(x for x in key[:-1] if x):45s} {statistics.median(v):8.2f} {key[-1]:4s}"
          f"  spread {max(v) / min(v):.2f}  ({len(v)} rounds)")
PY
