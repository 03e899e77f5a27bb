#!/bin/sh
# $1 = stage name; logs what a hook sees
stage=$1; out=${HOOKLOG:-/tmp/vmt/exp/hook.log}
state=$(cat)
pid=$(printf '%s' "$state" | jq -r .pid)
{
echo "=== stage=$stage"
echo "state=$state"
echo "hook cwd=$(pwd) hook_pid=$$ hook_cgroup=$(cat /proc/self/cgroup | tr '\n' ' ')"
echo "hook mntns=$(readlink /proc/self/ns/mnt) pidns=$(readlink /proc/self/ns/pid)"
if [ -n "$pid" ] && [ "$pid" != null ] && [ -d /proc/$pid ]; then
  echo "target pid=$pid comm=$(cat /proc/$pid/comm) exe=$(readlink /proc/$pid/exe)"
  echo "target cgroup=$(cat /proc/$pid/cgroup | tr '\n' ' ')"
  echo "target mntns=$(readlink /proc/$pid/ns/mnt) cgroupns=$(readlink /proc/$pid/ns/cgroup)"
  cg=$(sed -n 's/^0:://p' /proc/$pid/cgroup)
  if [ -d "/sys/fs/cgroup$cg" ]; then echo "cgroup dir exists: /sys/fs/cgroup$cg ino=$(stat -c %i /sys/fs/cgroup$cg) procs=$(cat /sys/fs/cgroup$cg/cgroup.procs | tr '\n' ' ')"; fi
fi
} >>"$out" 2>&1
exit 0
