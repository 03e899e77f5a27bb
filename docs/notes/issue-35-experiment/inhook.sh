#!/bin/sh
# startContainer hook: runs inside the container namespaces
{ echo "=== stage=startContainer(in-container)"; cat; echo; echo "self cgroup: $(cat /proc/self/cgroup)"; } >> /hooklog 2>&1
exit 0
