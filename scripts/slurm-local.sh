#!/usr/bin/env bash
# Starts, stops and reports a one-node SLURM cluster (Debian's slurmctld, slurmd and munge) on this
# machine, with all its state in one scratch folder: the cluster GLLM Workbench's slow tests submit to.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: scripts/slurm-local.sh start|stop|status [--dir DIR]

  start   write DIR/slurm.conf and a munge key, start munged, slurmctld and slurmd, wait until
          the node is idle and print on stdout the one line clients need (the rest goes to
          stderr, so eval "$(scripts/slurm-local.sh start)" works):
            export SLURM_CONF=DIR/slurm.conf
          a no-op that prints that line when the cluster is already up
  stop    cancel every job, then end the daemons this script started (by their pid files)
  status  each daemon with its pid and whether it is alive, then sinfo; exit 0 when all are
          up, 3 when none is, 1 when only some are

DIR defaults to $GLLM_SLURM_DIR, else /tmp/gllm-slurm. Every file lives there: slurm.conf, the
munge key and socket, slurmctld's state, slurmd's spool, logs, pid files, the job-completion log.
EOF
}

action=""
dir="${GLLM_SLURM_DIR:-/tmp/gllm-slurm}"
while [ $# -gt 0 ]; do
  case "$1" in
    start|stop|status) action="$1" ;;
    --dir) [ $# -ge 2 ] || { echo "slurm-local: --dir needs a folder" >&2; exit 2; }; dir="$2"; shift ;;
    --dir=*) dir="${1#--dir=}" ;;
    -h|--help) usage; exit 0 ;;
    *) echo "slurm-local: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
  shift
done
[ -n "$action" ] || { usage >&2; exit 2; }
dir="$(realpath -m -- "$dir")"

conf="$dir/slurm.conf"
munge_dir="$dir/munge"
munge_key="$munge_dir/munge.key"
munge_socket="$munge_dir/munge.socket.2"
log_dir="$dir/log"
run_dir="$dir/run"
export SLURM_CONF="$conf"

# Each daemon's pid file is run/NAME.pid and its /proc/PID/comm is NAME; stop ends them in this order.
daemons=(slurmd slurmctld munged)
pidfile_of() { echo "$run_dir/$1.pid"; }

die() { echo "slurm-local: $*" >&2; exit 1; }

need_packages() {
  local miss=()
  for c in munged slurmctld slurmd sinfo sbatch squeue scancel scontrol srun; do
    command -v "$c" >/dev/null 2>&1 || miss+=("$c")
  done
  if [ ${#miss[@]} -gt 0 ]; then
    die "missing ${miss[*]}: install Debian's slurm-wlm (slurmctld slurmd slurm-client) and munge; run scripts/setup.sh"
  fi
}

# A daemon that died stays a zombie until pid 1 reaps it, which can take a while in a container.
is_zombie() { [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = Z ]; }

# The pid recorded for daemon $1 when that process is alive and is that daemon; empty otherwise.
live_pid() {
  local f pid comm
  f="$(pidfile_of "$1")"
  [ -s "$f" ] || return 0
  pid="$(tr -dc '0-9' <"$f")"
  [ -n "$pid" ] || return 0
  comm="$(cat "/proc/$pid/comm" 2>/dev/null || true)"
  [ "$comm" = "$1" ] || return 0
  is_zombie "$pid" || echo "$pid"
  return 0
}

# Prints "pid-file-path pid" for each pid file whose process is gone (or is another program).
stale_pidfiles() {
  local d f
  for d in "${daemons[@]}"; do
    f="$(pidfile_of "$d")"
    if [ -e "$f" ] && [ -z "$(live_pid "$d")" ]; then
      echo "$f $(tr -dc '0-9' <"$f" 2>/dev/null || true)"
    fi
  done
}

controller_up() { [ -n "$(live_pid slurmctld)" ] && timeout 10 scontrol ping >/dev/null 2>&1; }

log_tails() {
  local f
  for f in "$log_dir/munged.log" "$log_dir/slurmctld.log" "$log_dir/slurmd.log"; do
    [ -f "$f" ] || continue
    echo "---- last lines of $f" >&2
    tail -n 15 "$f" >&2
  done
}

# A TCP port that nothing listens on, outside the kernel's ephemeral range, not in "$@".
free_port() {
  local used p lo hi
  read -r lo hi </proc/sys/net/ipv4/ip_local_port_range
  used=" $(ss -Htan 2>/dev/null | awk '{n=split($4,a,":"); print a[n]}' | sort -u | tr '\n' ' ') $* "
  for _ in $(seq 1 500); do
    p=$((20000 + RANDOM % 12000))
    if [ "$p" -ge "$lo" ] && [ "$p" -le "$hi" ]; then continue; fi
    case "$used" in *" $p "*) continue ;; esac
    echo "$p"; return 0
  done
  die "no free TCP port found for the SLURM daemons"
}

wait_gone() {  # pid, seconds
  for _ in $(seq 1 $(( $2 * 10 ))); do
    [ -e "/proc/$1" ] || return 0
    is_zombie "$1" && return 0
    sleep 0.1
  done
  return 1
}

print_env() {
  echo "export SLURM_CONF=$conf"
}

write_conf() {
  local host ctld_port slurmd_port node_line cpus mem margin
  host="$(hostname -s)"
  ctld_port="$(free_port)"
  slurmd_port="$(free_port "$ctld_port")"
  # slurmd -C: "NodeName=vm CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=24105"
  node_line="$(slurmd -C | head -n 1)"
  cpus="$(sed -n 's/.*CPUs=\([0-9]*\).*/\1/p' <<<"$node_line")"
  mem="$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$node_line")"
  { [ -n "$cpus" ] && [ -n "$mem" ]; } || die "could not read CPUs and RealMemory from 'slurmd -C': $node_line"
  margin=$(( mem / 10 > 1024 ? mem / 10 : 1024 ))
  mem=$(( mem > margin + 256 ? mem - margin : mem ))
  local topo
  topo="$(grep -o 'Boards=[0-9]* SocketsPerBoard=[0-9]* CoresPerSocket=[0-9]* ThreadsPerCore=[0-9]*' <<<"$node_line" || true)"
  cat >"$conf" <<EOF
# Written by scripts/slurm-local.sh start: GLLM Workbench's one-node test cluster. Rewritten at each start.
ClusterName=gllm-local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# cred_expire: a requeued job waits this long (plus 1 s) before it may start again; default 120.
AuthInfo=socket=$munge_socket,cred_expire=10
MpiDefault=none
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
# Accounting is off, so sacct has nothing; a finished job stays in 'scontrol show job' for
# MinJobAge seconds and is written for good, with its state and exit code, to JobCompLoc.
JobCompType=jobcomp/filetxt
JobCompLoc=$log_dir/jobcomp.log
SchedulerType=sched/backfill
# Both loops every few seconds (defaults 30 and 60), so a job that becomes eligible starts at once.
SchedulerParameters=bf_interval=1,sched_interval=2
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
# Without a default every job would ask for the whole node's memory and run alone.
DefMemPerCPU=$(( mem / cpus ))
ReturnToService=2
JobRequeue=1
KillWait=2
MinJobAge=120
InactiveLimit=0
MessageTimeout=10
SlurmctldTimeout=30
SlurmdTimeout=30
StateSaveLocation=$dir/slurmctld
SlurmdSpoolDir=$dir/slurmd
SlurmctldPidFile=$(pidfile_of slurmctld)
SlurmdPidFile=$(pidfile_of slurmd)
SlurmctldLogFile=$log_dir/slurmctld.log
SlurmdLogFile=$log_dir/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus ${topo:+$topo }RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
}

start_munged() {
  mkdir -p "$munge_dir"
  chmod 0700 "$munge_dir"
  if [ ! -s "$munge_key" ]; then
    dd if=/dev/urandom of="$munge_key" bs=1 count=1024 status=none
  fi
  chmod 0400 "$munge_key"
  rm -f "$munge_socket" "$munge_socket.lock"
  # --force: munged refuses to run as root without it.
  munged --force --key-file="$munge_key" --socket="$munge_socket" \
    --pid-file="$(pidfile_of munged)" --log-file="$log_dir/munged.log" \
    --seed-file="$munge_dir/munged.seed" \
    || fail_start "munged did not start"
}

# A start that fails shows the logs' last lines and ends what it had started.
fail_start() {
  log_tails
  do_stop >&2 || true
  die "$1 (logs in $log_dir)"
}

do_start() {
  need_packages
  [ "$(id -u)" -eq 0 ] || die "run as root: slurmd must run jobs as root (SlurmUser=SlurmdUser=root)"
  local t0 up=0 d
  t0="$(date +%s.%N)"
  local line
  while read -r line; do
    [ -n "$line" ] || continue
    echo "slurm-local: stale pid file ${line% *} (pid ${line##* } is not running): removing it" >&2
    rm -f "${line% *}"
  done < <(stale_pidfiles)
  for d in "${daemons[@]}"; do [ -n "$(live_pid "$d")" ] && up=$((up + 1)); done
  if [ "$up" -eq ${#daemons[@]} ]; then
    echo "slurm-local: already running in $dir" >&2
    print_env
    return 0
  fi
  if [ "$up" -gt 0 ]; then
    echo "slurm-local: only some daemons are up in $dir; stopping them to start afresh" >&2
    do_stop >&2
  fi

  mkdir -p "$dir" "$log_dir" "$run_dir" "$dir/slurmctld" "$dir/slurmd"
  chmod 0700 "$dir"
  [ ${#munge_socket} -lt 100 ] || die "munge socket path too long for a unix socket: $munge_socket (use a shorter --dir)"
  write_conf
  start_munged
  munge -n --socket="$munge_socket" | unmunge --socket="$munge_socket" >/dev/null 2>&1 \
    || fail_start "munged is up but a credential does not decode through $munge_socket"
  slurmctld -f "$conf" || fail_start "slurmctld did not start"
  slurmd -f "$conf" || fail_start "slurmd did not start"

  local host state=""
  host="$(hostname -s)"
  for _ in $(seq 1 120); do
    state="$(timeout 10 sinfo -h -n "$host" -o '%T' 2>/dev/null | head -n 1 || true)"
    [ "$state" = idle ] && break
    for d in "${daemons[@]}"; do
      # a pid file not written yet is a daemon still starting
      if [ -e "$(pidfile_of "$d")" ] && [ -z "$(live_pid "$d")" ]; then fail_start "$d exited during start"; fi
    done
    sleep 0.5
  done
  [ "$state" = idle ] || fail_start "node $host is not idle after 60 s (sinfo says '${state:-nothing}')"
  echo "slurm-local: one-node cluster gllm-local up in $dir ($(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s)" >&2
  print_env
}

do_stop() {
  local ids d pid
  if controller_up; then
    ids="$(timeout 15 squeue -h -o '%i' 2>/dev/null | tr '\n' ' ' || true)"
    if [ -n "${ids// /}" ]; then
      echo "slurm-local: cancelling jobs $ids"
      # shellcheck disable=SC2086
      timeout 15 scancel $ids || true
      for _ in $(seq 1 60); do
        [ -z "$(timeout 10 squeue -h -t RUNNING,COMPLETING,CONFIGURING,SUSPENDED -o '%i' 2>/dev/null || true)" ] && break
        sleep 0.5
      done
    fi
  fi
  for d in "${daemons[@]}"; do
    pid="$(live_pid "$d")"
    if [ -n "$pid" ]; then
      kill -TERM "$pid" 2>/dev/null || true
      if ! wait_gone "$pid" 30; then
        echo "slurm-local: $d (pid $pid) still up 30 s after SIGTERM; sending SIGKILL" >&2
        kill -KILL "$pid" 2>/dev/null || true
        wait_gone "$pid" 10 || die "$d (pid $pid) does not exit"
      fi
      echo "slurm-local: stopped $d (pid $pid)"
    fi
    rm -f "$(pidfile_of "$d")"
  done
  rm -f "$munge_socket" "$munge_socket.lock"
}

do_status() {
  local d pid up=0 f
  for d in "${daemons[@]}"; do
    f="$(pidfile_of "$d")"
    pid="$(live_pid "$d")"
    if [ -n "$pid" ]; then
      echo "$d: pid $pid alive"; up=$((up + 1))
    elif [ -e "$f" ]; then
      echo "$d: pid $(tr -dc '0-9' <"$f") dead (stale pid file $f)"
    else
      echo "$d: not running"
    fi
  done
  if [ -n "$(live_pid slurmctld)" ]; then
    timeout 15 sinfo || echo "sinfo: no answer from slurmctld"
    print_env
  fi
  [ "$up" -eq ${#daemons[@]} ] && return 0
  [ "$up" -eq 0 ] && return 3
  return 1
}

case "$action" in
  start) do_start ;;
  stop) do_stop ;;
  status) do_status ;;
esac
