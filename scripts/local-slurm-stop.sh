#!/usr/bin/env bash
# Stop the daemons that scripts/local-slurm-start.sh started (and only those): the PIDs
# recorded in $LOCAL_SLURM_STATE/*.pid, and only while /proc/PID/comm still names the
# expected daemon. TERM, wait up to 30 s, then KILL. Then, for a multi-host cluster
# (LOCAL_SLURM_NODES > 1), it removes the network the start script made: the namespaces,
# links, bridge and host-name lines it listed in $LOCAL_SLURM_STATE/network.list, and
# nothing else. Packages, configuration and Slurm state are left in place, so the next
# start is fast.
#
#   LOCAL_SLURM_STATE  where the start script recorded its PIDs (default: /run/local-slurm)
#
# See tests/slurm/README.md.
set -euo pipefail

log() { printf 'local-slurm: %s\n' "$*" >&2; }
die() { printf 'local-slurm: ERROR: %s\n' "$*" >&2; exit 1; }

STATE=${LOCAL_SLURM_STATE:-/run/local-slurm}
GRACE=30
(( EUID == 0 )) || die "must run as root (try: sudo $0)"

# pid file each daemon writes itself (same table as in local-slurm-start.sh)
daemon_pidfile() {
  case $1 in
    munged) echo /run/munge/munged.pid ;;
    mariadbd) echo /run/mysqld/mysqld.pid ;;
    slurmdbd) echo /run/slurmdbd.pid ;;
    slurmctld) echo /run/slurmctld.pid ;;
    slurmd) echo /run/slurmd.pid ;;
    slurmd-*) echo "/run/$1.pid" ;;
  esac
}
# true if process $1 exists, is not a zombie, and /proc/PID/comm is exactly $2
# (an exited daemon stays a zombie until PID 1 reaps it, which can take seconds)
pid_is() { # pid comm
  local c stat st
  [[ $1 =~ ^[0-9]+$ ]] || return 1
  { read -r c <"/proc/$1/comm" && read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
  st=${stat##*) }
  st=${st%% *}
  [[ $c == "$2" && $st != Z && $st != X ]]
}
# Program name of daemon key $1: slurmd-dlnode1 -> slurmd.
comm_of() { echo "${1%%-*}"; }
running_pids() {
  local d c
  for d in /proc/[0-9]*; do
    { read -r c <"$d/comm"; } 2>/dev/null || continue
    if [[ $c == "$1" ]] && pid_is "${d#/proc/}" "$1"; then echo "${d#/proc/}"; fi
  done
  return 0
}

if [[ ! -d $STATE ]]; then
  log "nothing to stop ($STATE does not exist)"
  exit 0
fi

# shellcheck source=local-slurm-net.sh
source "$(dirname "${BASH_SOURCE[0]}")/local-slurm-net.sh"

# Dependents first: slurmd (one per host), slurmctld, slurmdbd, then MariaDB and munge.
host_slurmds=()
for f in "$STATE"/slurmd-*.pid; do
  [[ -f $f ]] && host_slurmds+=("$(basename "$f" .pid)")
done
order=(slurmd "${host_slurmds[@]}" slurmctld slurmdbd mariadbd munged)
declare -A sent=() # daemons sent TERM
stopped=0
for name in "${order[@]}"; do
  f=$STATE/$name.pid
  [[ -f $f ]] || continue
  pid=$(<"$f")
  comm=$(comm_of "$name")
  if pid_is "$pid" "$comm"; then
    log "stopping $name (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    sent[$name]=$pid
  else
    log "$name (pid ${pid:-?}) is not running any more (PID gone or now another program); removing its stale pid file"
    rm -f "$f" "$STATE/$name.sha256"
    pf=$(daemon_pidfile "$name")
    if [[ -f $pf && $(<"$pf") == "$pid" ]]; then rm -f "$pf"; fi
  fi
  # Let each daemon finish before its dependency goes away (slurmctld saves state,
  # slurmdbd flushes to MariaDB, all of them still need munge while shutting down).
  if [[ -n ${sent[$name]:-} ]]; then
    t0=$SECONDS
    while pid_is "$pid" "$comm" && ((SECONDS - t0 < GRACE)); do sleep 0.1; done
    if pid_is "$pid" "$comm"; then
      log "$name (pid $pid) did not exit within ${GRACE}s; sending KILL"
      kill -KILL "$pid" 2>/dev/null || true
      for ((i = 0; i < 50; i++)); do pid_is "$pid" "$comm" || break; sleep 0.1; done
      if pid_is "$pid" "$comm"; then log "WARNING: $name (pid $pid) survived KILL"; fi
    fi
    rm -f "$f" "$STATE/$name.sha256"
    pf=$(daemon_pidfile "$name")
    if [[ -f $pf ]] && { [[ $(<"$pf") == "$pid" ]] || ! pid_is "$(<"$pf")" "$comm"; }; then
      rm -f "$pf"
    fi
    stopped=$((stopped + 1))
  fi
done

# The hosts' network goes once their slurmds are gone.
network_down

if ((stopped == 0)); then
  log "nothing to stop (no running daemons recorded in $STATE)"
else
  log "stopped $stopped daemon(s); packages, /etc/slurm and Slurm state are kept"
fi
for name in slurmd slurmctld slurmdbd mariadbd munged; do
  others=$(running_pids "$name" | tr '\n' ' ')
  if [[ -n $others ]]; then
    log "note: $name (pid ${others% }) was not started by local-slurm-start.sh; left alone"
  fi
done
