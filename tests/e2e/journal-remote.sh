#!/bin/sh
# journal-remote.sh FIXTURE OUT PORT - a deny event from the daemon's event
# path into a journald, then by systemd-journal-upload into
# systemd-journal-remote, which writes OUT/remote.journal.
#
# Runs in a private mount namespace (test-fleet.mjs starts it with
# unshare -m) with tmpfs over journald's sockets and files, so its
# journald is the test's own: the machine's journal, if it has one, is
# neither read nor written.
set -eu
fixture=$1 out=$2 port=$3
sd=/lib/systemd
# no /var/log/journal under the tmpfs on /var/log: journald keeps its
# journal in /run/log/journal, which the upload reads
mount -t tmpfs tmpfs /run/systemd
mkdir -p /run/systemd/journal /run/log
mount -t tmpfs tmpfs /run/log
mount -t tmpfs tmpfs /var/log
jd= rm=
trap 'kill $jd $rm 2>/dev/null; wait 2>/dev/null' EXIT
$sd/systemd-journald >"$out/journald.log" 2>&1 &
jd=$!
i=0
until [ -S /run/systemd/journal/socket ]; do
	i=$((i + 1))
	[ $i -lt 100 ] || { echo "journald did not start" >&2; exit 1; }
	sleep 0.1
done
$sd/systemd-journal-remote --listen-http="127.0.0.1:$port" --output="$out/remote.journal" \
	--split-mode=none >"$out/remote.log" 2>&1 &
rm=$!
"$fixture" --journal --emit 1 >"$out/fixture.json"
# sd_journal_sendv returns once the datagram is queued: wait until the
# local journal shows the entry
i=0
until journalctl -q -D /run/log/journal SBX_SESSION=fleet-test 2>/dev/null | grep -q .; do
	i=$((i + 1))
	[ $i -lt 100 ] || { echo "the entry did not reach the local journal" >&2; exit 1; }
	sleep 0.1
done
$sd/systemd-journal-upload --url="http://127.0.0.1:$port" --directory=/run/log/journal \
	--save-state="$out/upload.state" --follow=no >"$out/upload.log" 2>&1
