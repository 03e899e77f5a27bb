#!/bin/sh
cd /tmp/vmt/exp
export HOOKLOG=/tmp/vmt/exp/hook2.log; : > $HOOKLOG
for rt in runc crun; do
  echo "######## $rt: container under a populated /bpfsbx/s-$rt (a live bpfsbx-style session)"
  mkdir -p /sys/fs/cgroup/bpfsbx/s-$rt
  sh -c "echo \$\$ > /sys/fs/cgroup/bpfsbx/s-$rt/cgroup.procs; exec sleep 600" & sp=$!
  sleep 1
  echo "before: s type=$(cat /sys/fs/cgroup/bpfsbx/s-$rt/cgroup.type) procs=$(cat /sys/fs/cgroup/bpfsbx/s-$rt/cgroup.procs) bpfsbx.subtree=$(cat /sys/fs/cgroup/bpfsbx/cgroup.subtree_control)"
  ./mkbundle.sh /tmp/vmt/n-$rt $rt /bpfsbx/s-$rt/ctr >/dev/null
  (cd /tmp/vmt/n-$rt && jq '.hooks={} | .process.args=["/bin/sh","-c","echo in-container; cat /proc/self/cgroup"]' config.json > c && mv c config.json && $rt run n-$rt </dev/null 2>&1 | tail -3; echo "exit=$?")
  echo "after: s type=$(cat /sys/fs/cgroup/bpfsbx/s-$rt/cgroup.type) s.subtree=$(cat /sys/fs/cgroup/bpfsbx/s-$rt/cgroup.subtree_control) ctr exists? $(ls -d /sys/fs/cgroup/bpfsbx/s-$rt/ctr 2>&1)"
  echo "-- same, with a memory limit in config (domain controller):"
  ./mkbundle.sh /tmp/vmt/m-$rt $rt /bpfsbx/s-$rt/ctrm >/dev/null
  (cd /tmp/vmt/m-$rt && jq '.hooks={} | .linux.resources.memory={"limit":67108864} | .process.args=["/bin/sh","-c","echo in-container-mem"]' config.json > c && mv c config.json && $rt run m-$rt </dev/null 2>&1 | tail -3; echo "exit=$?")
  kill $sp; wait $sp 2>/dev/null
  echo "######## $rt: sibling layout /bpfsbx/s2-$rt/{agent,ctr} (leaf-only processes)"
  mkdir -p /sys/fs/cgroup/bpfsbx/s2-$rt/agent
  sh -c "echo \$\$ > /sys/fs/cgroup/bpfsbx/s2-$rt/agent/cgroup.procs; exec sleep 600" & sp=$!
  sleep 1
  ./mkbundle.sh /tmp/vmt/o-$rt $rt /bpfsbx/s2-$rt/ctr >/dev/null
  (cd /tmp/vmt/o-$rt && jq '.hooks={} | .linux.resources.memory={"limit":67108864} | .process.args=["/bin/sh","-c","echo in-container-sib; cat /proc/self/cgroup"]' config.json > c && mv c config.json && $rt run o-$rt </dev/null 2>&1 | tail -3; echo "exit=$?")
  echo "after: s2.subtree=$(cat /sys/fs/cgroup/bpfsbx/s2-$rt/cgroup.subtree_control) ctr type=$(cat /sys/fs/cgroup/bpfsbx/s2-$rt/ctr/cgroup.type 2>&1)"
  kill $sp; wait $sp 2>/dev/null
done
echo "######## bind-mount path & inode identity"
./mkbundle.sh /tmp/vmt/p runc /bpfsbx/p >/dev/null
(cd /tmp/vmt/p && jq '.hooks={} | .process.args=["/bin/sh","-c","ls -i /root/.aws/credentials; cat /proc/self/mountinfo | grep aws; stat -c \"dev=%d ino=%i\" /root/.aws/credentials 2>/dev/null || busybox stat -c \"dev=%d ino=%i\" /root/.aws/credentials"]' config.json > c && mv c config.json && runc run p </dev/null 2>&1)
echo "host: $(stat -c 'dev=%d ino=%i' /tmp/vmt/exp/hostaws/credentials)"
