#!/bin/sh
# mkbundle.sh DIR RUNTIME CGPATH  -> bundle with busybox rootfs and hooks
set -e
d=$1; rt=$2; cgp=$3
rm -rf "$d"; mkdir -p "$d/rootfs/bin" "$d/rootfs/proc" "$d/rootfs/dev" "$d/rootfs/sys" "$d/rootfs/tmp" "$d/rootfs/etc"
cp /bin/busybox "$d/rootfs/bin/busybox"
for a in sh cat echo sleep ls true id; do ln -s busybox "$d/rootfs/bin/$a"; done
cp /tmp/vmt/exp/inhook.sh "$d/rootfs/bin/inhook"
cd "$d"
runc spec
H=/tmp/vmt/exp/hook.sh
jq --arg cgp "$cgp" --arg h "$H" '
 .process.terminal=false | .root.readonly=false
 | .process.args=["/bin/sh","-c","echo user-process: $(cat /proc/self/cgroup); cat /hooklog 2>/dev/null; echo mounts:; cat /proc/self/mountinfo | head -3"]
 | (if $cgp == "" then del(.linux.cgroupsPath) else .linux.cgroupsPath=$cgp end)
 | .annotations={"io.kubernetes.pod.name":"podA","io.kubernetes.pod.namespace":"nsA","io.kubernetes.container.name":"agent"}
 | .mounts += [{"destination":"/root/.aws","type":"bind","source":"/tmp/vmt/exp/hostaws","options":["rbind","ro"]}]
 | .hooks={
   "prestart":[{"path":$h,"args":["hook.sh","prestart"]}],
   "createRuntime":[{"path":$h,"args":["hook.sh","createRuntime"]}],
   "createContainer":[{"path":$h,"args":["hook.sh","createContainer"]}],
   "startContainer":[{"path":"/bin/inhook","args":["inhook"]}],
   "poststart":[{"path":$h,"args":["hook.sh","poststart"]}],
   "poststop":[{"path":$h,"args":["hook.sh","poststop"]}]}' config.json > c2 && mv c2 config.json
