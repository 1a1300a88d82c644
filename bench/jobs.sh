#!/usr/bin/env bash
# Whole jobs, file to file, timed as a user times them: from the command's start to its exit,
# first run included (no warm-up), beside the limit and what a user would run instead, all in
# the same rounds (interleaved, so that a slow moment of the machine hits every command):
#   transpose  tessera at 1 and RANKS ranks (and with --backend cuda where a GPU is usable),
#              cp of the same file (read + write of the same bytes: the limit), a three-line
#              numpy/h5py script, dask.array (to_hdf5), NCO's ncpdq (dimension permutation)
#   reduce     tessera sum,norm2,max at 1 and RANKS ranks, cat of the file to /dev/null (the read
#              limit), numpy, dask, NCO's ncwa
# The input is a netCDF4 file made by netCDF4-python (an HDF5 file with dimensions y, x):
# contiguous, f64, standard normal values.
#
# Usage:  bench/jobs.sh [-t TESSERA] [SIZE…]     SIZE: ROWSxCOLS (default 1024x1024 8192x8192)
# Env:    ROUNDS (3), RANKS (2), PYTHON (/usr/bin/python3: with h5py and numpy), COLD=1 (drop the page cache before every command: root only),
#         ONLY="t.cp t.tessera.1 …" (these jobs only), SKIP="t.dask r.ncwa …" (all but these),
#         DIR (where the files go; default a temporary directory under /tmp, removed at the end),
#         JSON=FILE (one line per job and size appended: the plot's input, bench/plots.py jobs)
# Prints, per size, each job's median, min and max over the rounds, GB/s (file bytes / time),
# its time over the limit, and for tessera how many times faster than the best alternative.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
tessera=$here/build/release/src/app/tessera
while getopts "t:" o; do
  case $o in
    t) tessera=$(realpath "$OPTARG") ;;
    *) sed -n '2,21p' "$0" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
sizes=("$@")
((${#sizes[@]})) || sizes=(1024x1024 8192x8192)
rounds=${ROUNDS:-3}; ranks=${RANKS:-2}; cold=${COLD:-0}
[[ -x $tessera ]] || { echo "jobs.sh: no tessera at $tessera (-t PATH)" >&2; exit 2; }
PY=${PYTHON:-/usr/bin/python3}
command -v mpirun >/dev/null || { echo "jobs.sh: mpirun is missing (Debian: openmpi-bin)" >&2; exit 2; }
$PY -c 'import h5py, numpy' 2>/dev/null || { echo "jobs.sh: $PY needs h5py and numpy" >&2; exit 2; }
# The alternatives a machine lacks are left out, with a note (the GPU machine has no NCO).
missing=()
command -v ncpdq >/dev/null || missing+=(t.ncpdq r.ncwa)
$PY -c 'import dask.array' 2>/dev/null || missing+=(t.dask r.dask)
netcdf=1
$PY -c 'import netCDF4' 2>/dev/null || netcdf=0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export HDF5_USE_FILE_LOCKING=FALSE
w=${DIR:-$(mktemp -d /tmp/tessera-jobs.XXXX)}
mkdir -p "$w"
[[ -n ${DIR:-} ]] || trap 'rm -rf "$w"' EXIT
cd "$w"
gpu=0
"$tessera" info 2>/dev/null | grep -qE "^  GPUs +[0-9]" && gpu=1

cat >np_t.py <<'PY'
import h5py, numpy as np
with h5py.File('A.nc', 'r') as f: a = f['A'][...]
with h5py.File('np_t.h5', 'w') as g: g['AT'] = np.ascontiguousarray(a.T)
PY
cat >dask_t.py <<'PY'
import h5py, dask, dask.array as da
dask.config.set(scheduler='threads')
f = h5py.File('A.nc', 'r')
da.to_hdf5('dask_t.h5', '/AT', da.from_array(f['A'], chunks=(2048, 2048)).T)
PY
cat >np_r.py <<'PY'
import h5py, numpy as np
with h5py.File('A.nc', 'r') as f: a = f['A'][...]
print(a.sum(), np.sqrt(np.dot(a.ravel(), a.ravel())), a.max())
PY
cat >dask_r.py <<'PY'
import h5py, dask, dask.array as da
dask.config.set(scheduler='threads')
x = da.from_array(h5py.File('A.nc', 'r')['A'], chunks=(2048, 8192))
print(dask.compute(x.sum(), da.sqrt((x * x).sum()), x.max()))
PY

machine="$(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores"
((gpu)) && machine+=", $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
echo "bench/jobs.sh: $(date -u '+%Y-%m-%d %H:%M UTC'); $machine; $rounds rounds; cold=$cold; $("$tessera" --version)"
((${#missing[@]})) && echo "left out (not installed): ${missing[*]}"
((netcdf)) || echo "no netCDF4 module: the input is written by h5py (the same HDF5 layout, no named dimensions)"

for size in "${sizes[@]}"; do
  rows=${size%x*}; cols=${size#*x}
  rm -f A.nc
  $PY - "$rows" "$cols" "$netcdf" <<'PY'
import sys, numpy as np
r, c, netcdf = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1"
rng = np.random.default_rng(1); step = max(1, (64 << 20) // (8 * c))
if netcdf:
    import netCDF4
    with netCDF4.Dataset('A.nc', 'w', format='NETCDF4') as d:
        d.createDimension('y', r); d.createDimension('x', c)
        v = d.createVariable('A', 'f8', ('y', 'x'))
        for i in range(0, r, step):
            v[i:i + step, :] = rng.standard_normal((min(step, r - i), c))
else:
    import h5py
    with h5py.File('A.nc', 'w') as f:
        v = f.create_dataset('A', (r, c), 'f8')
        for i in range(0, r, step):
            v[i:i + step, :] = rng.standard_normal((min(step, r - i), c))
PY
  bytes=$(stat -c %s A.nc)
  declare -A jobs=(
    [t.cp]="cp A.nc cp.nc"
    [t.numpy]="$PY np_t.py"
    [t.dask]="$PY dask_t.py"
    [t.ncpdq]="ncpdq -O -a x,y A.nc ncpdq.nc"
    [t.tessera.1]="$tessera -q transpose A.nc:/A tes.h5:/AT --backend cpu"
    [t.tessera.$ranks]="mpirun -np $ranks --bind-to none $tessera -q transpose A.nc:/A tes.h5:/AT --backend cpu"
    [r.cat]="sh -c 'cat A.nc >/dev/null'"
    [r.numpy]="$PY np_r.py"
    [r.dask]="$PY dask_r.py"
    [r.ncwa]="ncwa -O -y ttl -a y,x A.nc ncwa.nc"
    [r.tessera.1]="$tessera -q reduce A.nc:/A --op sum,norm2,max --backend cpu"
    [r.tessera.$ranks]="mpirun -np $ranks --bind-to none $tessera -q reduce A.nc:/A --op sum,norm2,max --backend cpu"
  )
  if ((gpu)); then
    jobs[t.tessera.1.auto]="$tessera -q transpose A.nc:/A tes.h5:/AT"
    jobs[t.tessera.1.cuda]="$tessera -q transpose A.nc:/A tes.h5:/AT --backend cuda"
    jobs[r.tessera.1.cuda]="$tessera -q reduce A.nc:/A --op sum,norm2,max --backend cuda"
  fi
  for k in "${!jobs[@]}"; do
    if [[ -n ${ONLY:-} && " $ONLY " != *" $k "* ]] || [[ " ${SKIP:-} ${missing[*]} " == *" $k "* ]]; then
      unset "jobs[$k]"
    fi
  done
  declare -A times=()
  for ((i = 0; i < rounds; i++)); do
    for k in $(printf '%s\n' "${!jobs[@]}" | sort); do
      rm -f cp.nc np_t.h5 dask_t.h5 ncpdq.nc ncwa.nc tes.h5
      if ((cold)); then sync; echo 3 >/proc/sys/vm/drop_caches; fi
      s=$(date +%s.%N)
      if ! eval "${jobs[$k]}" >/dev/null 2>"err.$k"; then
        echo "FAILED: $k: $(tail -n 2 "err.$k" | tr '\n' ' ')"
      fi
      times[$k]+="$(awk -v a="$(date +%s.%N)" -v b="$s" 'BEGIN{printf "%.4f", a-b}') "
    done
  done
  echo
  echo "== ${rows}x${cols} f64, $bytes bytes; load $(cut -d' ' -f1-3 /proc/loadavg)"
  for k in $(printf '%s\n' "${!times[@]}" | sort); do echo "$k ${times[$k]}"; done |
    $PY -c '
import json, os, sys, statistics as st
b, size, cold = int(sys.argv[1]), sys.argv[2], sys.argv[3] == "1"
runs = {k: list(map(float, v)) for k, *v in (line.split() for line in sys.stdin)}
med = {k: st.median(v) for k, v in runs.items()}
out = os.environ.get("JSON")
for op, limit in (("t", "t.cp"), ("r", "r.cat")):
    alts = [k for k in med if k.startswith(op + ".") and k != limit and "tessera" not in k]
    best = min(alts, key=med.get) if alts else None
    for k in sorted(k for k in med if k.startswith(op + ".")):
        extra = f"  x{med[k] / med[limit]:.2f} {limit[2:]}" if limit in med else ""
        if "tessera" in k and best:
            extra += f", {med[best] / med[k]:.2f}x faster than {best[2:]}"
        print(f"{k:18s} median {med[k]:7.3f} s  [{min(runs[k]):.3f}-{max(runs[k]):.3f}]"
              f"  {b / med[k] / 1e9:6.2f} GB/s{extra}")
        if out:
            with open(out, "a") as f:
                f.write(json.dumps({"job": k, "size": size, "bytes": b, "cold": cold,
                                    "seconds": runs[k], "median": med[k]}) + "\n")
' "$bytes" "${rows}x${cols}" "$cold"
  unset jobs times
done
