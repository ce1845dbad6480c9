#!/bin/sh
# Starts a one-node Slurm cluster on this machine (Debian's slurm-wlm and munge), its state in
# DIR: munged, slurmctld and slurmd, with a partition `covprune` of this machine's cores.
# Prints the SLURM_CONF to export; `one-node-cluster.sh DIR stop` stops it. The daemons listen
# on $SLURMCTLD_PORT and $SLURMD_PORT (default 6817 and 6818) and run as the calling user.
# Usage: one-node-cluster.sh DIR [stop]
set -eu
dir=$(mkdir -p "$1" && cd "$1" && pwd)
conf="$dir/slurm.conf"
if [ "${2:-}" = stop ]; then
    for p in slurmd slurmctld munged; do
        [ -f "$dir/$p.pid" ] && kill "$(cat "$dir/$p.pid")" 2>/dev/null || true
    done
    exit 0
fi
command -v slurmctld >/dev/null || { echo "slurmctld not found: apt-get install slurm-wlm munge" >&2; exit 2; }
host=$(hostname -s)
cpus=$(nproc)
mkdir -p "$dir/ctld" "$dir/spool" "$dir/munge"
# Every daemon is reached at 127.0.0.1: the host's name need not resolve (a container's may not).
# munge: a key of our own, a socket in DIR.
[ -f "$dir/munge/munge.key" ] || dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 700 "$dir/munge"
chmod 400 "$dir/munge/munge.key"
sock="$dir/munge/munge.socket"
munged --force --key-file="$dir/munge/munge.key" --socket="$sock" \
    --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munge/seed"
cat > "$conf" <<CONF
ClusterName=covprune
SlurmctldHost=$host(127.0.0.1)
AuthType=auth/munge
AuthInfo=socket=$sock
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmctldPort=${SLURMCTLD_PORT:-6817}
SlurmdPort=${SLURMD_PORT:-6818}
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmdSpoolDir=$dir/spool
StateSaveLocation=$dir/ctld
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=covprune Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$conf"
slurmctld -f "$conf"
slurmd -f "$conf"
# Wait until the node takes jobs.
i=0
until sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)'; do
    i=$((i + 1))
    if [ $i -gt 60 ]; then
        echo "the node did not come up; logs in $dir" >&2
        exit 1
    fi
    sleep 1
done
echo "SLURM_CONF=$conf"
