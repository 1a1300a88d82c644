#!/usr/bin/env bash
# Set-up + build + the embedded default job in single-node test mode (no launcher needed): a
# small heat2d case (inputs/default.toml) that runs in seconds on one core. Prints the job's
# summary (error against the exact solution, time per step, output path) and its output file.
# It installs and builds only what the `tessera` command needs (the test suite, its tools and
# the bindings are scripts/test.sh's), and the CUDA backend only where a GPU answers
# (TESSERA_ENABLE_CUDA=ON|OFF overrides).
#   scripts/quickstart.sh                           the default job, output in ./out/
#   scripts/quickstart.sh --set grid.nx=512         any `tessera run` arguments
#   scripts/quickstart.sh inputs/pipeline.toml      another deck
#   TESSERA_OUT=/scratch/me scripts/quickstart.sh   another output directory
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
source scripts/env.sh
scripts/setup-deps.sh --run
cuda=${TESSERA_ENABLE_CUDA:-OFF}
if [[ -z ${TESSERA_ENABLE_CUDA:-} ]] && nvidia-smi -L >/dev/null 2>&1; then cuda=AUTO; fi
cmake --preset release -DTESSERA_BUILD_TESTS=OFF -DTESSERA_BUILD_BENCH=OFF -DTESSERA_UNITY=ON \
  -DTESSERA_FORTRAN=OFF -DTESSERA_PYTHON=OFF -DTESSERA_ENABLE_CUDA="$cuda" >/dev/null
cmake --build --preset release -j"$(nproc)" --target tessera
tessera=$root/build/release/src/app/tessera

out=${TESSERA_OUT:-$root/out}
mkdir -p "$out"
cd "$out"
stamp=$(mktemp "$out/.quickstart.XXXXXX")
trap 'rm -f "$stamp" "$stamp.log"' EXIT
echo
echo "== tessera run (single-node test mode: one process, no launcher; OMP_NUM_THREADS=${OMP_NUM_THREADS:-all cores})"
"$tessera" run "$@" | tee "$stamp.log"

echo
echo "== summary"
# A heat2d job ends its stdout with a summary: error, time per step, output path.
sed -n '/^heat2d: /,$p' "$stamp.log"
written=$(find "$out" -maxdepth 1 -name '*.h5' -newer "$stamp" | sort)
if [[ -z $written ]]; then
  echo "quickstart: the job wrote no HDF5 file (output.file = \"\"?)"
  exit 0
fi
for f in $written; do
  echo "output file: $f"
  if /usr/bin/python3 -c 'import h5py' 2>/dev/null; then
    /usr/bin/python3 - "$f" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    print(f"  complete = {int(f.attrs['complete'])}, written by tessera {f.attrs['version']} "
          f"on {int(f.attrs['ranks'])} rank(s) x {int(f.attrs['threads'])} thread(s), "
          f"backend {f.attrs['backend']}")
    def show(name, obj):
        if isinstance(obj, h5py.Dataset):
            print(f"  /{name:<22} {str(obj.shape):>14} {obj.dtype}")
    f.visititems(show)
PY
  else
    h5dump -H "$f" | head -20
  fi
done
echo
echo "Read it with: /usr/bin/python3 -c 'import h5py; f = h5py.File(\"${written%%$'\n'*}\"); print(list(f))'"
echo "More: docs/cli.md (commands), docs/decks.md (job decks), docs/output.md (file layout)."
