#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for trying the job scripts in jobs/ and for the
# Slurm integration test. Everything (munge key and socket, slurm.conf, spool, state, logs)
# lives in one directory, so it never touches a system Slurm or munge configuration:
#
#   scripts/slurm-local.sh start     start munged, slurmctld and slurmd; wait for the node
#   scripts/slurm-local.sh status    daemons, node state and queue; exit 1 when not running
#   scripts/slurm-local.sh env       print the `export SLURM_CONF=...` line for sbatch/squeue
#   scripts/slurm-local.sh stop      cancel jobs and stop the daemons (state is kept)
#   scripts/slurm-local.sh clean     stop, then remove the state directory
#
# Then: export SLURM_CONF=$TESSERA_SLURM_DIR/etc/slurm.conf; sbatch jobs/cpu-single-node.sbatch
#
# Settings (environment):
#   TESSERA_SLURM_DIR        state directory                      [/tmp/tessera-slurm]
#   TESSERA_SLURM_PORT       slurmctld port; slurmd uses PORT+1  [6817]
#   TESSERA_SLURM_CPUS       CPUs to advertise (default: this machine's). More CPUs than the
#                            machine has lets a 2-core box run a 2 ranks x 2 threads layout.
#   TESSERA_SLURM_GPUS       GPUs to offer as gres/gpu (default: the /dev/nvidiaN devices
#                            found; 0 offers none), for trying jobs/gpu-nodes.sbatch
#   TESSERA_SLURM_TIMEOUT    seconds to wait for each daemon        [60]
#
# Needs root and the Debian packages slurm-wlm and munge (scripts/setup-deps.sh installs them).
# Works without systemd: the daemons are started directly.
set -euo pipefail

STATE=${TESSERA_SLURM_DIR:-/tmp/tessera-slurm}
PORT=${TESSERA_SLURM_PORT:-6817}
TIMEOUT=${TESSERA_SLURM_TIMEOUT:-60}
CONF=$STATE/etc/slurm.conf
MUNGE_SOCKET=$STATE/munge/munge.socket
NODE=$(hostname -s)
SLURM_PLUGINS=/usr/lib/x86_64-linux-gnu/slurm-wlm

say() { echo "slurm-local: $*"; }
die() {
  echo "slurm-local: error: $*" >&2
  exit 1
}

# pid_of NAME: the pid recorded for daemon NAME if that process is alive, else nothing.
pid_of() {
  local file=$STATE/run/$1.pid pid
  [[ -r $file ]] || return 0
  pid=$(<"$file")
  [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null && echo "$pid"
  return 0
}

# show_log NAME: the end of a daemon's log, to explain a failure.
show_log() {
  local log=$STATE/log/$1.log
  if [[ -r $log ]]; then
    echo "---- last lines of $log ----" >&2
    tail -n 20 "$log" >&2
  fi
}

# wait_for SECONDS WHAT COMMAND...: polls COMMAND until it succeeds; false after SECONDS.
wait_for() {
  local seconds=$1 what=$2 t=0
  shift 2
  until "$@" >/dev/null 2>&1; do
    if ((t >= seconds * 5)); then
      echo "slurm-local: error: $what not reached after ${seconds}s" >&2
      return 1
    fi
    sleep 0.2
    t=$((t + 1))
  done
}

check_prerequisites() {
  [[ $(id -u) -eq 0 ]] || die "run as root (slurmd must start job steps; SlurmUser is root)"
  local missing=()
  for cmd in munged munge unmunge slurmctld slurmd sinfo sbatch scontrol; do
    command -v "$cmd" >/dev/null || missing+=("$cmd")
  done
  if [[ ${#missing[@]} -gt 0 ]]; then
    die "missing ${missing[*]}; install them with: apt-get install -y slurm-wlm munge" \
      "(or scripts/setup-deps.sh)"
  fi
}

make_dirs() {
  # A Unix socket path holds at most 107 bytes.
  ((${#MUNGE_SOCKET} < 100)) || die "state directory path too long for a socket: $STATE"
  mkdir -p "$STATE"/{etc,log,run,spool/slurmctld,spool/slurmd}
  # munged refuses key files and sockets in directories others can write to; the socket must
  # stay reachable (execute permission) for clients that are not root.
  mkdir -p "$STATE/munge"
  chmod 0755 "$STATE" "$STATE/munge"
}

start_munge() {
  local key=$STATE/munge/munge.key
  if [[ ! -s $key ]]; then
    say "creating munge key $key"
    if command -v mungekey >/dev/null; then
      mungekey --create --keyfile="$key" --force
    else
      dd if=/dev/urandom of="$key" bs=1024 count=1 status=none
    fi
  fi
  chmod 0600 "$key"
  if [[ -n $(pid_of munged) ]]; then
    say "munged already running (pid $(pid_of munged))"
  else
    rm -f "$MUNGE_SOCKET" "$MUNGE_SOCKET.lock"
    say "starting munged (socket $MUNGE_SOCKET)"
    # --force: munged is run as root here, which it otherwise declines.
    munged --force --key-file="$key" --socket="$MUNGE_SOCKET" \
      --pid-file="$STATE/run/munged.pid" --log-file="$STATE/log/munged.log" \
      --seed-file="$STATE/munge/munged.seed" ||
      {
        show_log munged
        die "munged did not start"
      }
  fi
  if ! wait_for "$TIMEOUT" "a working munge socket $MUNGE_SOCKET" \
    bash -c "munge -n -S '$MUNGE_SOCKET' | unmunge -S '$MUNGE_SOCKET'"; then
    show_log munged
    die "munge credentials cannot be created and decoded"
  fi
}

# GPUs offered as generic resources: /dev/nvidia0, /dev/nvidia1, ... unless told otherwise.
gpu_count() {
  local n=${TESSERA_SLURM_GPUS:-}
  if [[ -z $n ]]; then
    n=$(find /dev -maxdepth 1 -name 'nvidia[0-9]*' 2>/dev/null | wc -l)
  fi
  [[ $n =~ ^[0-9]+$ ]] || die "TESSERA_SLURM_GPUS must be a number, not '$n'"
  echo "$n"
}

# The node line: this machine's CPUs and memory as slurmd sees them, so the node registers
# idle. RealMemory is lowered a little: a node reporting less than configured is drained.
node_line() {
  local hw cpus mem gres="" gpus
  gpus=$(gpu_count)
  ((gpus > 0)) && gres="Gres=gpu:$gpus"
  hw=$(slurmd -C | head -n 1)
  mem=$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$hw")
  mem=$((mem * 95 / 100))
  if [[ -n ${TESSERA_SLURM_CPUS:-} ]]; then
    cpus=$TESSERA_SLURM_CPUS
    [[ $cpus =~ ^[1-9][0-9]*$ ]] || die "TESSERA_SLURM_CPUS must be a positive integer, not '$cpus'"
    echo "NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem $gres State=UNKNOWN"
  else
    cpus=$(sed -n 's/.*\(CPUs=[0-9]*\).*/\1/p' <<<"$hw")
    local topo
    topo=$(grep -o 'Boards=[0-9]* SocketsPerBoard=[0-9]* CoresPerSocket=[0-9]* ThreadsPerCore=[0-9]*' <<<"$hw" || true)
    echo "NodeName=$NODE NodeAddr=127.0.0.1 $cpus $topo RealMemory=$mem $gres State=UNKNOWN"
  fi
}

write_config() {
  local mpi=none
  # srun --mpi=pmix is what Debian's OpenMPI (built with PMIx) expects under Slurm.
  [[ -e $SLURM_PLUGINS/mpi_pmix.so ]] && mpi=pmix
  local overrides="" gres_types="" gpus
  [[ -n ${TESSERA_SLURM_CPUS:-} ]] && overrides="SlurmdParameters=config_overrides"
  gpus=$(gpu_count)
  : >"$STATE/etc/gres.conf"
  if ((gpus > 0)); then
    gres_types="GresTypes=gpu"
    echo "NodeName=$NODE Name=gpu File=/dev/nvidia[0-$((gpus - 1))]" >"$STATE/etc/gres.conf"
  fi
  cat >"$CONF.new" <<EOF
# Generated by scripts/slurm-local.sh: a one-node test cluster. Edits are overwritten.
ClusterName=tessera-local
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCKET
StateSaveLocation=$STATE/spool/slurmctld
SlurmdSpoolDir=$STATE/spool/slurmd
SlurmctldPidFile=$STATE/run/slurmctld.pid
SlurmdPidFile=$STATE/run/slurmd.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.log
PlugStackConfig=$STATE/etc/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=$mpi
ReturnToService=2
SchedulerType=sched/backfill
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
SlurmctldTimeout=60
SlurmdTimeout=120
InactiveLimit=0
MinJobAge=300
KillWait=10
$overrides
$gres_types
$(node_line)
PartitionName=debug Nodes=$NODE Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
  : >"$STATE/etc/plugstack.conf"
  # slurmd (22.05) always sets up a cgroup plugin, even with proctrack/linuxproc and
  # task/none. On a cgroup v2 host without systemd, cgroup/v2 must not ask systemd for a scope.
  cat >"$STATE/etc/cgroup.conf" <<EOF
CgroupPlugin=autodetect
IgnoreSystemd=yes
EOF
  mv "$CONF.new" "$CONF"
}

# On a cgroup v2 host without systemd, slurmd's cgroup/v2 plugin (IgnoreSystemd=yes) puts
# slurmstepd into /sys/fs/cgroup/system.slice/<node>_slurmstepd.scope itself: the parent
# systemd would have made must exist, with the cpuset, cpu and memory controllers enabled.
prepare_cgroup_v2() {
  local root=/sys/fs/cgroup c
  [[ $(stat -fc %T "$root" 2>/dev/null) == cgroup2fs ]] || return 0
  if ! mkdir -p "$root/system.slice" 2>/dev/null; then
    say "warning: cannot create $root/system.slice (read-only cgroup file system?);" \
      "slurmd may fail to start"
    return 0
  fi
  for c in cpuset cpu memory; do
    grep -qw "$c" "$root/cgroup.controllers" || continue
    echo "+$c" >"$root/cgroup.subtree_control" 2>/dev/null || true
    echo "+$c" >"$root/system.slice/cgroup.subtree_control" 2>/dev/null || true
  done
}

node_state() { sinfo -h -N -n "$NODE" -o %T 2>/dev/null | head -n 1; }
node_idle() { [[ $(node_state) =~ ^(idle|mixed|allocated) ]]; }
queue_empty() { [[ -z $(squeue -h -o %i 2>/dev/null) ]]; }

start() {
  check_prerequisites
  make_dirs
  start_munge
  export SLURM_CONF=$CONF
  local ctld slurmd_pid
  ctld=$(pid_of slurmctld)
  slurmd_pid=$(pid_of slurmd)
  if [[ -z $ctld || -z $slurmd_pid ]]; then
    # A daemon died or was never started: restart both on a fresh configuration.
    [[ -n $ctld ]] && stop_daemon slurmctld
    [[ -n $slurmd_pid ]] && stop_daemon slurmd
    write_config
    say "starting slurmctld (port $PORT, log $STATE/log/slurmctld.log)"
    slurmctld -f "$CONF" || {
      show_log slurmctld
      die "slurmctld did not start"
    }
    if ! wait_for "$TIMEOUT" "slurmctld answering" scontrol ping; then
      show_log slurmctld
      die "slurmctld does not answer on port $PORT (is another Slurm using it? set TESSERA_SLURM_PORT)"
    fi
    prepare_cgroup_v2
    say "starting slurmd (port $((PORT + 1)), log $STATE/log/slurmd.log)"
    slurmd -f "$CONF" || {
      show_log slurmd
      grep -q "cgroup" "$STATE/log/slurmd.log" 2>/dev/null &&
        say "hint: slurmd sets up cgroups even for this cluster; with cgroup v2 it needs a" \
          "writable /sys/fs/cgroup (a privileged container)"
      die "slurmd did not start"
    }
  else
    say "slurmctld (pid $ctld) and slurmd (pid $slurmd_pid) already running"
  fi
  if ! wait_for "$TIMEOUT" "node $NODE idle" node_idle; then
    # A node left down or drained by an earlier run comes back with a resume.
    scontrol update NodeName="$NODE" State=RESUME >/dev/null 2>&1 || true
    if ! wait_for 10 "node $NODE idle after resume" node_idle; then
      sinfo -N -l >&2 || true
      show_log slurmd
      show_log slurmctld
      die "node $NODE is '$(node_state)', not idle"
    fi
  fi
  sinfo
  say "ready; use it with: export SLURM_CONF=$CONF"
}

# stop_daemon NAME: SIGTERM, then SIGKILL after a grace period.
stop_daemon() {
  local name=$1 pid t=0
  pid=$(pid_of "$name")
  [[ -z $pid ]] && return 0
  kill "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null; do
    if ((t >= 100)); then
      say "$name (pid $pid) ignored SIGTERM for 20s; killing it"
      kill -9 "$pid" 2>/dev/null || true
      break
    fi
    sleep 0.2
    t=$((t + 1))
  done
  rm -f "$STATE/run/$name.pid"
  say "stopped $name (pid $pid)"
}

stop() {
  export SLURM_CONF=$CONF
  if [[ -n $(pid_of slurmctld) ]]; then
    # Jobs first, so that no job step outlives its slurmd.
    local jobs
    jobs=$(squeue -h -o %i 2>/dev/null || true)
    if [[ -n $jobs ]]; then
      # shellcheck disable=SC2086 # one argument per job id
      scancel $jobs 2>/dev/null || true
      wait_for 30 "an empty queue" queue_empty || true
    fi
  fi
  stop_daemon slurmd
  stop_daemon slurmctld
  stop_daemon munged
}

status() {
  export SLURM_CONF=$CONF
  local name pid running=1
  for name in munged slurmctld slurmd; do
    pid=$(pid_of "$name")
    if [[ -n $pid ]]; then
      echo "$name: running (pid $pid)"
    else
      echo "$name: not running"
      running=0
    fi
  done
  echo "state: $STATE"
  if [[ $running == 1 ]]; then
    sinfo -N -l
    squeue
    echo "export SLURM_CONF=$CONF"
    return 0
  fi
  return 1
}

case ${1:-} in
start) start ;;
stop) stop ;;
status) status ;;
env) echo "export SLURM_CONF=$CONF" ;;
clean)
  stop
  rm -rf "$STATE"
  say "removed $STATE"
  ;;
*)
  echo "usage: $0 start|stop|status|env|clean" >&2
  exit 2
  ;;
esac
