#!/usr/bin/env bash
# N-D permutation as a whole job, file to file, timed from start to exit (first run included),
# beside the limit and the alternatives, all interleaved in the same rounds:
#   cp        of the input file (reads and writes the same bytes: the limit)
#   tessera   tessera transpose IN:/v OUT:/v --axes lat,lon,time (1 rank, and RANKS ranks)
#   ncpdq     NCO's ncpdq -a lat,lon,time (the same permutation, netCDF out)
#   numpy     h5py read, numpy transpose, h5py write (three lines)
#   dask      dask.array over the h5py dataset (chunks "auto"), transpose, to_hdf5 (threads), as
#             xarray with dask computes it (xarray itself is not in Debian 12's python3)
# The input is a netCDF4 file made by netCDF4-python: v(time, lat, lon), f32, contiguous, with
# coordinate variables.
#
# Usage:  bench/permute_jobs.sh [-t TESSERA] [TIMExLATxLON…]   (default 64x2048x2048: 1 GiB)
# Env:    ROUNDS (3), RANKS (2), PYTHON (/usr/bin/python3 with h5py, numpy, netCDF4)
# Prints each job's median, min and max over the rounds and its time over cp's.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
tessera=$here/build/release/src/app/tessera
while getopts "t:" o; do
  case $o in
    t) tessera=$(realpath "$OPTARG") ;;
    *) sed -n '2,14p' "$0" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
sizes=("$@")
((${#sizes[@]})) || sizes=(64x2048x2048)
rounds=${ROUNDS:-3}; ranks=${RANKS:-2}
PY=${PYTHON:-/usr/bin/python3}
[[ -x $tessera ]] || { echo "permute_jobs.sh: no tessera at $tessera (-t PATH)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export HDF5_USE_FILE_LOCKING=FALSE
w=$(mktemp -d /tmp/tessera-permute.XXXX)
trap 'rm -rf "$w"' EXIT
cd "$w"
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; $(date -u +%FT%TZ)"
cat >np_p.py <<'PY'
import h5py, numpy as np
with h5py.File('in.nc', 'r') as f: a = f['v'][...]
with h5py.File('np.h5', 'w') as g: g['v'] = np.ascontiguousarray(a.transpose(1, 2, 0))
PY
cat >dask_p.py <<'PY'
import h5py, dask, dask.array as da
dask.config.set(scheduler='threads')
f = h5py.File('in.nc', 'r')
da.to_hdf5('dask.h5', '/v', da.from_array(f['v'], chunks='auto').transpose(1, 2, 0))
PY
jobs=(cp tessera.1 "tessera.$ranks" numpy)
"$PY" -c 'import dask.array' 2>/dev/null && jobs+=(dask)
command -v ncpdq >/dev/null && jobs+=(ncpdq)
run() {
  case $1 in
    cp) cp in.nc cp.nc ;;
    tessera.1) "$tessera" -q transpose in.nc:/v t1.h5:/v --axes lat,lon,time ;;
    tessera.*) mpirun -np "${1#tessera.}" --bind-to none "$tessera" -q transpose in.nc:/v tn.h5:/v \
                 --axes lat,lon,time ;;
    numpy) "$PY" np_p.py ;;
    dask) "$PY" dask_p.py ;;
    ncpdq) ncpdq -O -a lat,lon,time in.nc nco.nc ;;
  esac
}
for size in "${sizes[@]}"; do
  IFS=x read -r nt ny nx <<<"$size"
  "$PY" - "$nt" "$ny" "$nx" <<'PY'
import sys, numpy as np, netCDF4
nt, ny, nx = map(int, sys.argv[1:])
with netCDF4.Dataset("in.nc", "w") as nc:
    for name, n in (("time", nt), ("lat", ny), ("lon", nx)):
        nc.createDimension(name, n)
        c = nc.createVariable(name, "f8", (name,))
        c[:] = np.arange(n)
    v = nc.createVariable("v", "f4", ("time", "lat", "lon"))
    v.units = "K"
    rng = np.random.default_rng(1)
    for t in range(nt):
        v[t] = rng.standard_normal((ny, nx), dtype=np.float32)
PY
  echo "== v($nt, $ny, $nx) f32, $(du -h in.nc | cut -f1): (time, lat, lon) -> (lat, lon, time)"
  declare -A times=()
  for ((r = 0; r < rounds; r++)); do
    for j in "${jobs[@]}"; do
      rm -f cp.nc t1.h5 tn.h5 np.h5 dask.h5 nco.nc
      sync
      t0=$(date +%s.%N); run "$j" >/dev/null; t1=$(date +%s.%N)
      times[$j]+="$(echo "$t1 - $t0" | bc) "
    done
  done
  cpmed=$(echo "${times[cp]}" | tr ' ' '\n' | grep . | sort -n | sed -n "$(((rounds + 1) / 2))p")
  for j in "${jobs[@]}"; do
    s=$(echo "${times[$j]}" | tr ' ' '\n' | grep . | sort -n)
    med=$(echo "$s" | sed -n "$(((rounds + 1) / 2))p")
    printf '%-12s median %7.3f s (%s–%s)  %5.1f× cp\n' "$j" "$med" "$(echo "$s" | head -1)" \
      "$(echo "$s" | tail -1)" "$(echo "$med / $cpmed" | bc -l)"
  done
  unset times
done
