#!/bin/bash
# tessera with mpirun, for clusters (or workstations) without Slurm: hybrid MPI + OpenMP over
# the hosts of a hostfile, with each rank's threads pinned to its own cores.
#
#   jobs/mpirun-cluster.sh [options] [DECK.toml] [tessera run arguments...]
#     -f, --hostfile FILE      hosts to run on (default: $HOSTFILE, else ./hostfile, else only
#                              this machine). Open MPI: one "node01 slots=64" per line; MPICH:
#                              "node01:64". Lines starting with # are ignored.
#     -r, --ranks-per-node N   MPI ranks per host (default: NUMA domains of this machine)
#     -t, --threads N          OpenMP threads per rank (default: cores of this machine / N)
#     -b, --bind core|none     pin ranks to cores (default) or leave placement to the OS
#                              (needed when ranks x threads exceed the cores of a host)
#     -o, --outdir DIR         where output goes (default: runs/mpirun-<date>-<time>)
#     -n, --dry-run            print the mpirun command, run nothing
#   e.g. jobs/mpirun-cluster.sh -f hosts -r 2 -t 32 inputs/default.toml --set matrix.rows=50000
#
# What to change: the defaults below (marked CHANGE), or pass the options. The hosts must see
# the tessera binary, the deck and the output directory at the same paths (a shared file
# system), and accept ssh from this host without a password. Deck default: inputs/default.toml
# when it exists, else the deck embedded in tessera. Works with Open MPI and MPICH/Intel MPI.
set -euo pipefail

TESSERA=${TESSERA:-}                       # CHANGE: path to tessera (default: on PATH, else
                                           # build/release/src/app/tessera here)
HOSTFILE=${HOSTFILE:-}                     # CHANGE: hostfile
MPIRUN=${MPIRUN:-mpirun}                   # CHANGE: launcher (mpirun, mpiexec, a full path)
ranks_per_node=${RANKS_PER_NODE:-}         # CHANGE: ranks per host
threads=${THREADS:-}                       # CHANGE: threads per rank
bind=${BIND:-core}
outdir=${TESSERA_OUTDIR:-}
dry_run=0

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit "${1:-2}"; }
die() { echo "mpirun-cluster: error: $*" >&2; exit 2; }

while [[ $# -gt 0 ]]; do
  case $1 in
  -f | --hostfile) HOSTFILE=${2:?}; shift 2 ;;
  -r | --ranks-per-node) ranks_per_node=${2:?}; shift 2 ;;
  -t | --threads) threads=${2:?}; shift 2 ;;
  -b | --bind) bind=${2:?}; shift 2 ;;
  -o | --outdir) outdir=${2:?}; shift 2 ;;
  -n | --dry-run) dry_run=1; shift ;;
  -h | --help) usage 0 ;;
  --) shift; break ;;
  *) break ;;
  esac
done

if [[ -z $TESSERA ]]; then
  TESSERA=$(command -v tessera || echo "$PWD/build/release/src/app/tessera")
fi
[[ -x $TESSERA ]] || die "tessera binary '$TESSERA' not found; set TESSERA"
TESSERA=$(realpath "$TESSERA")
command -v "$MPIRUN" >/dev/null || die "'$MPIRUN' not found; set MPIRUN"

# The deck (optional first argument): an absolute path, because tessera runs in the output
# directory.
deck_args=()
if [[ $# -gt 0 && $1 != -* ]]; then
  [[ -f $1 ]] || die "deck '$1' not found"
  deck_args=("$(realpath "$1")")
  shift
elif [[ -f inputs/default.toml ]]; then
  deck_args=("$(realpath inputs/default.toml)")
fi

# Hosts: the hostfile's non-comment lines; without one, this machine only.
[[ -z $HOSTFILE && -f hostfile ]] && HOSTFILE=hostfile
nodes=1
if [[ -n $HOSTFILE ]]; then
  [[ -f $HOSTFILE ]] || die "hostfile '$HOSTFILE' not found"
  HOSTFILE=$(realpath "$HOSTFILE")
  nodes=$(grep -cvE '^[[:space:]]*(#|$)' "$HOSTFILE" || true)
  ((nodes > 0)) || die "hostfile '$HOSTFILE' lists no hosts"
fi

# Layout defaults from this machine: one rank per NUMA domain, its cores as threads.
cores=$(lscpu -p=CORE,SOCKET 2>/dev/null | grep -v '^#' | sort -u | wc -l)
((cores > 0)) || cores=$(nproc)
if [[ -z $ranks_per_node ]]; then
  ranks_per_node=$(lscpu -p=NODE 2>/dev/null | grep -v '^#' | sort -u | wc -l)
  ((ranks_per_node > 0)) || ranks_per_node=1
fi
[[ -n $threads ]] || threads=$((cores / ranks_per_node > 0 ? cores / ranks_per_node : 1))
[[ $ranks_per_node =~ ^[1-9][0-9]*$ ]] || die "ranks per node must be a positive integer"
[[ $threads =~ ^[1-9][0-9]*$ ]] || die "threads must be a positive integer"
[[ $bind == core || $bind == none ]] || die "--bind must be core or none, not '$bind'"
ranks=$((nodes * ranks_per_node))

export OMP_NUM_THREADS=$threads OMP_PLACES=cores OMP_PROC_BIND=close
cmd=("$MPIRUN" -np "$ranks")
if [[ $("$MPIRUN" --version 2>&1) == *"Open MPI"* ]]; then
  # Open MPI: ppr = ranks per node; PE = cores per rank, so each rank is bound to its own
  # block of cores and OMP_PLACES/OMP_PROC_BIND place the threads inside that block.
  [[ -n $HOSTFILE ]] && cmd+=(--hostfile "$HOSTFILE")
  if [[ $bind == core ]]; then
    cmd+=(--map-by "ppr:$ranks_per_node:node:PE=$threads" --bind-to core)
  else
    cmd+=(--map-by "ppr:$ranks_per_node:node" --bind-to none)
  fi
  for v in OMP_NUM_THREADS OMP_PLACES OMP_PROC_BIND HDF5_USE_FILE_LOCKING; do
    [[ -n ${!v:-} ]] && cmd+=(-x "$v")
  done
else
  # MPICH / Intel MPI (Hydra).
  [[ -n $HOSTFILE ]] && cmd+=(-f "$HOSTFILE")
  cmd+=(-ppn "$ranks_per_node")
  [[ $bind == core ]] && cmd+=(-bind-to "core:$threads")
  for v in OMP_NUM_THREADS OMP_PLACES OMP_PROC_BIND; do
    cmd+=(-genv "$v" "${!v}")
  done
fi
cmd+=("$TESSERA" run "${deck_args[@]}" "$@")

[[ -n $outdir ]] || outdir=runs/mpirun-$(date +%Y%m%d-%H%M%S)
echo "mpirun-cluster: $nodes host(s) x $ranks_per_node ranks x $threads threads" \
  "(bind: $bind); deck ${deck_args[0]:-(embedded)}; output in $outdir"
if ((dry_run)); then
  printf '%q ' "${cmd[@]}"
  echo
  exit 0
fi
mkdir -p "$outdir"
outdir=$(realpath "$outdir")
cd "$outdir"
rc=0
"${cmd[@]}" || rc=$?
if ((rc != 0 && nodes == 1)) && [[ $bind == core ]] && ((ranks_per_node * threads > cores)); then
  echo "mpirun-cluster: hint: $ranks_per_node ranks x $threads threads exceed the $cores cores" \
    "here; pass --bind none or fewer ranks/threads" >&2
fi
echo "mpirun-cluster: tessera exited with status $rc; output in $outdir:"
ls -l "$outdir"
exit "$rc"
