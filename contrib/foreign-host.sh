#!/bin/sh
# Run a command (as root) on a machine that looks foreign to the tests: a
# network, UTS and mount namespace of its own where the host is called
# gopbs-foreign, 127.0.0.1 reverse-resolves to that name first, localhost
# resolves to ::1 first, and a stranger owns TCP ports 15001-15004 (it
# answers every connection with an error reply and closes). Tests must
# pass here as on any machine: they may depend neither on the machine's
# name, nor on what 127.0.0.1 resolves to, nor on the standard ports.
#
#   contrib/foreign-host.sh go test ./...      (make test-foreign)
set -eu
if [ "${GOPBS_FOREIGN_INSIDE:-}" != 1 ]; then
	[ "$(id -u)" = 0 ] || { echo "foreign-host.sh: run as root" >&2; exit 1; }
	GOPBS_FOREIGN_INSIDE=1 exec unshare --net --uts --mount --propagation private "$0" "$@"
fi
ip link set lo up
hostname gopbs-foreign
hosts=$(mktemp)
printf '127.0.0.1\tgopbs-foreign localhost\n::1\tlocalhost ip6-localhost\n' >"$hosts"
chmod 644 "$hosts" # mktemp's 0600 would hide it from the users the tests run clients as
mount --bind "$hosts" /etc/hosts
pids=
trap 'kill $pids 2>/dev/null; rm -f "$hosts"' EXIT
for port in 15001 15002 15003 15004; do
	python3 -c '
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1])))
s.listen(64)
while True:
    c, _ = s.accept()
    c.sendall(b"+2+15+15007+0+1")
    c.close()
' "$port" &
	pids="$pids $!"
done
unset GOPBS_FOREIGN_INSIDE
status=0
"$@" || status=$?
exit $status
