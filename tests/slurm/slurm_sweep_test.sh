#!/usr/bin/env bash
# Slurm.ShardedSweepMergesToTheLocalSweep: starts a one-node Slurm cluster of its own in a scratch folder (munged,
# slurmctld and slurmd with their own socket, ports, state and pid files), submits a sharded sweep through
# examples/slurm/submit.sh, waits for the merge job and compares the merged sweep.csv, summary.txt and sweep.json
# byte for byte with the unsharded sweep run here. Stops what it started, by pid file, on every way out.
#
#   slurm_sweep_test.sh PARTSIM SOURCE_DIR
#
# Exit 0: equal; 77: skipped (not root: the daemons run as root); anything else: a failure, with the daemons' and
# jobs' logs. Slurm and munge missing is a failure (tools/install-deps.sh installs them).
set -euo pipefail

partsim=$(realpath "${1:?usage: slurm_sweep_test.sh PARTSIM SOURCE_DIR}")
source_dir=$(realpath "${2:?usage: slurm_sweep_test.sh PARTSIM SOURCE_DIR}")
say() { echo "slurm-test: $*" >&2; }

if [ "$(id -u)" -ne 0 ]; then
  say "skipped: needs root to run slurmctld, slurmd and munged (SlurmUser=root)"
  exit 77
fi
missing=()
for tool in /usr/sbin/munged /usr/bin/munge /usr/bin/unmunge /usr/sbin/slurmctld /usr/sbin/slurmd sbatch scontrol \
  sinfo scancel; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "FAILED: not installed: ${missing[*]}; install slurm-wlm and munge (tools/install-deps.sh does)"
  exit 1
fi

scratch=$(mktemp -d /tmp/partsim-slurm-XXXXXX)
chmod 755 "$scratch" # munged, running as munge, reaches its folder below
ok=0
stop_by_pid_file() { # NAME PIDFILE: TERM, then KILL after 10 s
  local pid
  [ -s "$2" ] || return 0
  pid=$(cat "$2")
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  say "$1 (pid $pid) did not stop on TERM; killing it"
  kill -KILL "$pid" 2>/dev/null || true
}
cleanup() {
  set +e
  if [ -f "$scratch/slurm.conf" ]; then
    SLURM_CONF="$scratch/slurm.conf" scancel --quiet --user=root 2>/dev/null
  fi
  stop_by_pid_file slurmd "$scratch/slurmd.pid"
  stop_by_pid_file slurmctld "$scratch/slurmctld.pid"
  stop_by_pid_file munged "$scratch/munge/munged.pid"
  if [ "$ok" = 1 ]; then
    rm -rf "$scratch"
  else
    for log in "$scratch"/*.log "$scratch"/munge/munged.log "$scratch"/sweep/logs/*.out; do
      [ -f "$log" ] && { echo "----- $log"; tail -n 30 "$log"; } >&2
    done
    say "kept $scratch"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# munge: a daemon of our own on a socket of our own, with the installed key.
mkdir -p "$scratch/munge"
chown munge:munge "$scratch/munge"
chmod 755 "$scratch/munge" # munged wants its socket folder searchable by all
socket="$scratch/munge/munge.socket"
runuser -u munge -- /usr/sbin/munged --socket="$socket" --pid-file="$scratch/munge/munged.pid" \
  --log-file="$scratch/munge/munged.log" --seed-file="$scratch/munge/munged.seed"
munge --socket="$socket" -n | unmunge --socket="$socket" >/dev/null || {
  say "FAILED: munge does not work on $socket"
  exit 1
}

# Two free TCP ports for slurmctld and slurmd (two runs at once get different ones).
port_in_use() { grep -qi ":$(printf '%04X' "$1") " /proc/net/tcp /proc/net/tcp6 2>/dev/null; }
port=$((20000 + ($$ % 20000) * 2))
while port_in_use "$port" || port_in_use $((port + 1)); do port=$((port + 2)); done

host=$(hostname -s)
cat >"$scratch/slurm.conf" <<CONF
ClusterName=partsimtest$$
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
SlurmctldPort=$port
SlurmdPort=$((port + 1))
StateSaveLocation=$scratch/state
SlurmdSpoolDir=$scratch/spool
SlurmctldPidFile=$scratch/slurmctld.pid
SlurmdPidFile=$scratch/slurmd.pid
SlurmctldLogFile=$scratch/slurmctld.log
SlurmdLogFile=$scratch/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
NodeName=$host CPUs=$(nproc) RealMemory=4000 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
mkdir -p "$scratch/state" "$scratch/spool"
export SLURM_CONF="$scratch/slurm.conf"
/usr/sbin/slurmctld -f "$SLURM_CONF"
/usr/sbin/slurmd -f "$SLURM_CONF"
for _ in $(seq 60); do
  state=$(sinfo --noheader --format=%t 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 0.5
done
[ "$state" = idle ] || { say "FAILED: the node is not idle after 30 s (sinfo: '$state')"; exit 1; }

# The sweep here, unsharded, then through the example scripts in 3 shards (4 points: shard 0 holds two).
scenario="$source_dir/scenarios/default.json"
vary=/cluster/nodes=1,2,5,10
"$partsim" sweep "$scenario" --vary "$vary" --jobs 2 --out "$scratch/local" --progress=json >/dev/null 2>"$scratch/local.log"
merge_id=$(PARTSIM="$partsim" SCENARIO="$scenario" VARY="$vary" SHARDS=3 OUT="$scratch/sweep" \
  "$source_dir/examples/slurm/submit.sh")
say "merge job $merge_id submitted"

# No accounting: scontrol knows a finished job for MinJobAge (300 s), long enough to read its state.
state=
for _ in $(seq 240); do
  line=$(scontrol show job --oneliner "$merge_id")
  state=$(sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' <<<"$line")
  case "$state" in
    COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE) break ;;
  esac
  if [[ "$line" == *Reason=DependencyNeverSatisfied* ]]; then
    say "FAILED: a shard of the array failed, so the merge job never runs"
    exit 1
  fi
  sleep 0.5
done
[ "$state" = COMPLETED ] || { say "FAILED: merge job $merge_id ended $state"; exit 1; }

for name in sweep.csv summary.txt sweep.json; do
  if ! cmp "$scratch/local/$name" "$scratch/sweep/merged/$name"; then
    diff "$scratch/local/$name" "$scratch/sweep/merged/$name" >&2 || true
    say "FAILED: the merged $name differs from the unsharded sweep's"
    exit 1
  fi
done
[ "$(wc -l <"$scratch/sweep/merged/sweep.csv")" -eq 5 ] || { say "FAILED: expected 4 points in sweep.csv"; exit 1; }
say "ok: 3 shards on Slurm merged into the unsharded sweep's sweep.csv, summary.txt and sweep.json"
ok=1
