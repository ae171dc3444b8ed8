#!/usr/bin/env bash
# A one-node Slurm cluster with real accounting, on localhost, from Debian's packages: munged,
# MariaDB, slurmdbd, slurmctld and slurmd, started as root without systemd in a directory of its
# own, each in the foreground under setsid with its PID recorded, and stopped by those PIDs.
# The test suite runs generated job scripts on it (tests/slurm/); it is also a place to try a
# site profile's directives with `sbatch --test-only`.
#
#   scripts/slurm/test-cluster.sh install              install the Debian packages that are missing
#   scripts/slurm/test-cluster.sh start DIR            start the cluster in DIR (created, must be empty)
#   scripts/slurm/test-cluster.sh stop DIR             cancel its jobs, stop every daemon by its PID
#   scripts/slurm/test-cluster.sh run DIR -- CMD...    start, run CMD in the cluster's environment, stop
#                                                      (also when CMD or the start fails); CMD's status
#
# After `start`, `. DIR/env` points the Slurm clients at the cluster (SLURM_CONF). The cluster:
#   cluster `miniapp`, account `miniapp-test` (root is its user; AccountingStorageEnforce=associations,
#   so a job under any other account is refused), one node `node1` declared as 2 sockets x 64 cores and
#   500 GiB (SlurmdParameters=config_overrides: the machine may have 2 cores) with two typed GPUs
#   (a100 and v100, files are links to /dev/null), partitions named like the sites' (debug (default),
#   gpu, gpusmall, gpumedium, small-g, small, medium, standard-g).
#
# Exit codes: 0 done; 1 a daemon did not start (its log is printed) or stop failed; 2 usage;
# 77 cannot run here (not root, or the packages cannot be installed), with the reason on stderr.
set -euo pipefail

readonly PACKAGES=(munge mariadb-server mariadb-client slurm-wlm slurmdbd slurm-client)
readonly CLUSTER=miniapp
readonly ACCOUNT=miniapp-test
readonly NODE=node1
readonly PARTITIONS=(debug gpu gpusmall gpumedium small-g small medium standard-g)
readonly START_TIMEOUT=${MINIAPP_SLURM_START_TIMEOUT:-60}

log() { printf '[test-cluster %5.1fs] %s\n' "$(elapsed)" "$*" >&2; }
elapsed() { local now; now=$(date +%s.%N); awk -v a="$T0" -v b="$now" 'BEGIN { printf "%.1f", b - a }'; }
T0=$(date +%s.%N)
usage() { sed -n '/^#   scripts\/slurm\/test-cluster.sh install/,/CMD.s status$/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
cannot() { echo "test-cluster: cannot run: $*" >&2; exit 77; }

missing_packages() {
  local p
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}

install_packages() {
  [ "$(id -u)" -eq 0 ] || cannot "installing ${PACKAGES[*]} needs root"
  local missing
  missing=$(missing_packages | tr '\n' ' ')
  [ -z "${missing// /}" ] && return 0
  command -v apt-get >/dev/null 2>&1 || cannot "packages missing ($missing) and there is no apt-get"
  log "installing Debian packages: $missing"
  local logfile; logfile=$(mktemp /tmp/miniapp-slurm-apt.XXXXXX)
  # Daemons are started by this script, never by the packages' maintainer scripts.
  if ! { apt-get update -q && DEBIAN_FRONTEND=noninteractive RUNLEVEL=1 \
         apt-get install -y -q --no-install-recommends $missing; } >"$logfile" 2>&1; then
    tail -n 20 "$logfile" >&2
    cannot "apt-get install $missing failed (log: $logfile)"
  fi
  rm -f "$logfile"
}

free_port() {  # a localhost TCP port nothing listens on
  local p
  for _ in $(seq 200); do
    p=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
  done
  echo "test-cluster: no free port found" >&2; return 1
}

# Starts a daemon in the foreground in a session of its own and records its PID.
spawn() {  # name, log file, command...
  local name=$1 out=$2; shift 2
  setsid "$@" >>"$out" 2>&1 </dev/null &
  echo "$name $!" >>"$DIR/pids"
}

pid_of() { awk -v n="$1" '$1 == n { print $2 }' "$DIR/pids"; }

wait_for() {  # description, daemon name, log, command...: retries until it succeeds
  local what=$1 name=$2 logfile=$3; shift 3
  local deadline=$((SECONDS + START_TIMEOUT)) pid
  pid=$(pid_of "$name")
  until "$@" >/dev/null 2>&1; do
    if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
      echo "test-cluster: $name exited while waiting for $what; end of $logfile:" >&2
      tail -n 30 "$logfile" >&2 || true
      return 1
    fi
    if [ $SECONDS -ge $deadline ]; then
      echo "test-cluster: timed out after ${START_TIMEOUT}s waiting for $what; end of $logfile:" >&2
      tail -n 30 "$logfile" >&2 || true
      return 1
    fi
    sleep 0.2
  done
}

write_configs() {
  mkdir -p "$DIR"/{etc,munge,mysql,state,spool/slurmd-$NODE,log,run,dev}
  chmod 755 "$DIR" "$DIR/munge"
  local host; host=$(hostname -s)
  local munge_socket=$DIR/munge/munge.socket.2
  DB_PORT=$(free_port); DBD_PORT=$(free_port); CTLD_PORT=$(free_port); SLURMD_PORT=$(free_port)
  DB_PASSWORD=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
  ln -sf /dev/null "$DIR/dev/gpu-a100-0"
  ln -sf /dev/null "$DIR/dev/gpu-v100-1"

  cat >"$DIR/etc/slurm.conf" <<EOF
# Written by scripts/slurm/test-cluster.sh: a one-node test cluster.
ClusterName=$CLUSTER
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$munge_socket
CredType=cred/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/slurmd-%n
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd-%n.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups (containers, no systemd): processes are tracked through /proc, tasks not bound.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=5
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
# Without it a job that names no memory gets the whole node's, and jobs run one at a time.
DefMemPerCPU=1000
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
# Without these each job takes about 10 s to be scheduled and cleared.
MinJobAge=5
SchedulerParameters=batch_sched_delay=0
KillWait=10
InactiveLimit=0
SlurmdTimeout=60
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$DBD_PORT
AccountingStoragePass=$munge_socket
AccountingStorageEnforce=associations
AccountingStorageTRES=gres/gpu
GresTypes=gpu
NodeName=$NODE NodeAddr=127.0.0.1 NodeHostname=$host Port=$SLURMD_PORT Boards=1 SocketsPerBoard=2 CoresPerSocket=64 ThreadsPerCore=1 RealMemory=512000 Gres=gpu:a100:1,gpu:v100:1 State=UNKNOWN
EOF
  local p default
  for p in "${PARTITIONS[@]}"; do
    default=NO; [ "$p" = debug ] && default=YES
    echo "PartitionName=$p Nodes=$NODE Default=$default MaxTime=7-00:00:00 State=UP OverSubscribe=NO" \
      >>"$DIR/etc/slurm.conf"
  done
  # slurmd 22.05 drops a GPU without a file ("Removing file-less GPU") and the node goes INVAL.
  cat >"$DIR/etc/gres.conf" <<EOF
NodeName=$NODE Name=gpu Type=a100 File=$DIR/dev/gpu-a100-0
NodeName=$NODE Name=gpu Type=v100 File=$DIR/dev/gpu-v100-1
EOF
  cat >"$DIR/etc/slurmdbd.conf" <<EOF
AuthType=auth/munge
AuthInfo=socket=$munge_socket
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$DBD_PORT
SlurmUser=root
LogFile=$DIR/log/slurmdbd.log
PidFile=$DIR/run/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=slurm
StoragePass=$DB_PASSWORD
StorageLoc=slurm_acct_db
EOF
  chmod 600 "$DIR/etc/slurmdbd.conf"  # slurmdbd refuses a readable one
  cat >"$DIR/env" <<EOF
export SLURM_CONF=$DIR/etc/slurm.conf
export MINIAPP_TEST_CLUSTER=$DIR
export MINIAPP_TEST_ACCOUNT=$ACCOUNT
EOF
}

start() {
  [ "$(id -u)" -eq 0 ] || cannot "the test cluster's daemons run as root; this is uid $(id -u)"
  local missing; missing=$(missing_packages | tr '\n' ' ')
  [ -z "${missing// /}" ] || cannot "packages missing: $missing(scripts/slurm/test-cluster.sh install)"
  mkdir -p "$DIR"
  [ -z "$(ls -A "$DIR")" ] || { echo "test-cluster: $DIR is not empty" >&2; exit 2; }
  DIR=$(cd "$DIR" && pwd)
  : >"$DIR/pids"
  # A start that fails half-way stops what it started.
  trap 'status=$?; if [ $status -ne 0 ]; then stop_daemons; fi; exit $status' EXIT
  write_configs
  export SLURM_CONF=$DIR/etc/slurm.conf

  log "munged"
  local sock=$DIR/munge/munge.socket.2
  dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$DIR/munge/munge.key"
  spawn munged "$DIR/log/munged.out" munged --foreground --force --socket="$sock" \
    --key-file="$DIR/munge/munge.key" --seed-file="$DIR/munge/munged.seed" \
    --pid-file="$DIR/munge/munged.pid" --log-file="$DIR/log/munged.log"
  wait_for "a munge credential" munged "$DIR/log/munged.log" sh -c "munge -n -S '$sock' | unmunge -S '$sock'"

  log "MariaDB (port $DB_PORT)"
  mariadb-install-db --no-defaults --user=root --datadir="$DIR/mysql/data" --skip-test-db \
    --auth-root-authentication-method=socket >"$DIR/log/mariadb-install.log" 2>&1 \
    || { tail -n 30 "$DIR/log/mariadb-install.log" >&2; exit 1; }
  spawn mariadbd "$DIR/log/mariadbd.out" mariadbd --no-defaults --user=root --datadir="$DIR/mysql/data" \
    --socket="$DIR/mysql/mysqld.sock" --port="$DB_PORT" --bind-address=127.0.0.1 \
    --pid-file="$DIR/run/mariadbd.pid" --log-error="$DIR/log/mariadbd.log" --skip-log-bin \
    --innodb-buffer-pool-size=64M --innodb-log-file-size=16M --innodb-flush-log-at-trx-commit=2 \
    --innodb-lock-wait-timeout=900 --max-connections=50
  local sql=(mariadb --no-defaults --socket="$DIR/mysql/mysqld.sock" -u root)
  wait_for "MariaDB" mariadbd "$DIR/log/mariadbd.log" "${sql[@]}" -e "SELECT 1"
  "${sql[@]}" -e "CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY '$DB_PASSWORD';
                  GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';"

  log "slurmdbd (port $DBD_PORT)"
  spawn slurmdbd "$DIR/log/slurmdbd.out" slurmdbd -D
  wait_for "slurmdbd" slurmdbd "$DIR/log/slurmdbd.log" sacctmgr -n list cluster
  # The cluster must be known to the database before slurmctld registers with it.
  sacctmgr -i add cluster "$CLUSTER" >/dev/null
  sacctmgr -i add account "$ACCOUNT" Cluster="$CLUSTER" Description="miniapp tests" Organization=miniapp >/dev/null
  sacctmgr -i add user root Account="$ACCOUNT" Cluster="$CLUSTER" DefaultAccount="$ACCOUNT" >/dev/null

  log "slurmctld (port $CTLD_PORT)"
  spawn slurmctld "$DIR/log/slurmctld.out" slurmctld -D -i
  wait_for "slurmctld" slurmctld "$DIR/log/slurmctld.log" scontrol ping

  log "slurmd ($NODE, port $SLURMD_PORT)"
  spawn slurmd "$DIR/log/slurmd.out" slurmd -D -N "$NODE"
  wait_for "node $NODE idle" slurmd "$DIR/log/slurmd.log" \
    sh -c "sinfo -h -n $NODE -o %T | grep -qx idle"
  trap - EXIT
  log "up: $(sinfo -h -o '%P' | tr '\n' ' ')(. $DIR/env)"
}

alive() { kill -0 "$1" 2>/dev/null; }

stop_daemons() {
  [ -f "$DIR/pids" ] || return 0
  if [ -f "$DIR/etc/slurm.conf" ] && alive "$(pid_of slurmctld)"; then
    # Jobs first, so no step daemon outlives the cluster.
    SLURM_CONF=$DIR/etc/slurm.conf scancel --full --cluster="$CLUSTER" --user=root >/dev/null 2>&1 || true
    local deadline=$((SECONDS + 20))
    while [ $SECONDS -lt $deadline ] && \
          [ -n "$(SLURM_CONF=$DIR/etc/slurm.conf squeue -h -o %i 2>/dev/null)" ]; do sleep 0.5; done
  fi
  local failed=0 name pid wave
  # Slurm's daemons first, then what they use: the database, MariaDB and munged.
  for wave in "slurmd slurmctld" "slurmdbd" "mariadbd munged"; do
    local pids=()
    while read -r name pid; do
      case " $wave " in *" $name "*) ;; *) continue ;; esac
      alive "$pid" || continue
      kill -TERM "$pid" 2>/dev/null || true
      pids+=("$name:$pid")
    done <"$DIR/pids"
    local deadline=$((SECONDS + 20)) entry
    for entry in "${pids[@]}"; do
      name=${entry%%:*} pid=${entry##*:}
      while alive "$pid" && [ $SECONDS -lt $deadline ]; do sleep 0.05; done
      if alive "$pid"; then
        echo "test-cluster: $name (PID $pid) ignored SIGTERM for 20 s; sending SIGKILL" >&2
        kill -KILL "$pid" 2>/dev/null || true
        failed=1
      else
        log "stopped $name (PID $pid)"
      fi
    done
  done
  return $failed
}

command=${1:-}
[ $# -gt 0 ] && shift
case "$command" in
  install) install_packages ;;
  start) [ $# -eq 1 ] || usage; DIR=$1; start ;;
  stop) [ $# -eq 1 ] || usage; DIR=$(cd "$1" && pwd); stop_daemons; log "stopped" ;;
  run)
    [ $# -ge 3 ] && [ "$2" = "--" ] || usage
    DIR=$1; shift 2
    "$0" start "$DIR" || exit $?
    DIR=$(cd "$DIR" && pwd)
    trap 'stop_daemons || true' EXIT
    status=0
    (. "$DIR/env" && "$@") || status=$?
    exit $status ;;
  -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0"; exit 0 ;;
  *) usage ;;
esac
