#!/bin/sh
# runs inside the vmtest guest
cd /tmp/vmt/exp
export HOOKLOG=/tmp/vmt/exp/hook.log
: > $HOOKLOG
echo "guest kernel $(uname -r); self cgroup $(cat /proc/self/cgroup); controllers: $(cat /sys/fs/cgroup/cgroup.controllers); subtree: $(cat /sys/fs/cgroup/cgroup.subtree_control)"
mkdir -p /sys/fs/cgroup/bpfsbx
for rt in runc crun; do
  echo "################ $rt: run, cgroupsPath=/bpfsbx/$rt-c1"
  echo "######## $rt run" >> $HOOKLOG
  ./mkbundle.sh /tmp/vmt/b-$rt $rt /bpfsbx/$rt-c1 >/dev/null
  (cd /tmp/vmt/b-$rt && $rt run $rt-c1 </dev/null; echo "exit=$?")
  echo "################ $rt: create/start split"
  echo "######## $rt create" >> $HOOKLOG
  ./mkbundle.sh /tmp/vmt/b2-$rt $rt /bpfsbx/$rt-c2 >/dev/null
  (cd /tmp/vmt/b2-$rt && $rt create $rt-c2 </dev/null >/tmp/vmt/$rt-c2.out 2>&1; echo "create exit=$?")
  pid=$($rt state $rt-c2 | jq -r .pid); echo "state after create: $($rt state $rt-c2 | jq -c '{status,pid,bundle}')"
  echo "pid $pid comm=$(cat /proc/$pid/comm) exe=$(readlink /proc/$pid/exe) cgroup=$(cat /proc/$pid/cgroup)"
  echo "######## $rt start" >> $HOOKLOG
  $rt start $rt-c2; sleep 1; cat /tmp/vmt/$rt-c2.out
  echo "######## $rt delete" >> $HOOKLOG
  $rt delete $rt-c2 2>&1
  echo "################ $rt: no cgroupsPath"
  echo "######## $rt nocgpath" >> $HOOKLOG
  ./mkbundle.sh /tmp/vmt/b3-$rt $rt "" >/dev/null
  (cd /tmp/vmt/b3-$rt && $rt run $rt-c3 </dev/null 2>&1 | head -1)
  echo "################ $rt: relative cgroupsPath"
  echo "######## $rt relative" >> $HOOKLOG
  ./mkbundle.sh /tmp/vmt/b4-$rt $rt "rel/x" >/dev/null
  (cd /tmp/vmt/b4-$rt && $rt run $rt-c4 </dev/null 2>&1 | head -1)
done
echo "################ nested under a populated cgroup"
mkdir -p /sys/fs/cgroup/bpfsbx/pop; sh -c 'echo $$ > /sys/fs/cgroup/bpfsbx/pop/cgroup.procs; exec sleep 30' & sp=$!
sleep 0.5
echo "bpfsbx subtree_control=$(cat /sys/fs/cgroup/bpfsbx/cgroup.subtree_control)"
./mkbundle.sh /tmp/vmt/b5 runc /bpfsbx/pop/inner >/dev/null
(cd /tmp/vmt/b5 && runc run c5 </dev/null 2>&1 | head -3; echo "exit=$?")
./mkbundle.sh /tmp/vmt/b6 crun /bpfsbx/pop/inner2 >/dev/null
(cd /tmp/vmt/b6 && crun run c6 </dev/null 2>&1 | head -3; echo "exit=$?")
kill $sp
echo "################ hook failure at createRuntime (runc)"
./mkbundle.sh /tmp/vmt/b7 runc /bpfsbx/fail >/dev/null
cd /tmp/vmt/b7 && jq '.hooks.createRuntime=[{"path":"/bin/false"}]' config.json > c && mv c config.json && runc run c7 </dev/null; echo "runc exit=$?"; ls -d /sys/fs/cgroup/bpfsbx/fail 2>&1
cd /tmp/vmt/b7 && crun run c7b </dev/null; echo "crun exit=$?"; ls -d /sys/fs/cgroup/bpfsbx/fail 2>&1
echo "################ hook log"
cat $HOOKLOG
