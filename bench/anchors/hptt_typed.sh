#!/usr/bin/env bash
# HPTT in MEASURE mode on one shape and element type (f32, f64, c64, c128), for the CPU figures
# of bench/RESULTS.md; builds bench/anchors/hptt_typed.cpp once against the HPTT sources of the
# shared anchors (../shared/anchors/hptt from the project root). Threads: OMP_NUM_THREADS.
#
#   bench/anchors/hptt_typed.sh M N TYPE
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
hptt=${HPTT_SRC:-$here/../../../shared/anchors/hptt}
[[ -d $hptt/src ]] || { echo "hptt_typed: no HPTT sources at $hptt (set HPTT_SRC)" >&2; exit 2; }
b=/tmp/tessera-anchors/typed
mkdir -p "$b"
flags=(-O3 -march=native -fopenmp -std=c++17 -DNDEBUG -DHPTT_ARCH_AVX -I "$hptt/include")
if [[ ! -x $b/hptt_typed || $here/hptt_typed.cpp -nt $b/hptt_typed ]]; then
  for f in "$hptt"/src/*.cpp; do
    [[ -f $b/$(basename "$f" .cpp).o ]] || g++ "${flags[@]}" -c "$f" -o "$b/$(basename "$f" .cpp).o"
  done
  g++ "${flags[@]}" -o "$b/hptt_typed" "$here/hptt_typed.cpp" "$b"/*.o
fi
exec "$b/hptt_typed" "$@"
