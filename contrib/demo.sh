#!/usr/bin/env bash
# Start a one-host GoPBS cluster on this machine and run a first job.
#
# pbs_server, pbs_mom and pbs_sched run on the loopback interface with the
# standard ports (15001-15004) and their state under $PBS_HOME (default
# /var/tmp/gopbs-demo). The server gets a `batch` queue and the local host
# as a node with two slots; then an unprivileged user submits a job, and the
# script shows qstat and the job's output. pbs_server serves its status
# page and metrics on http://127.0.0.1:15080/ (-http) and pbs_mom its
# metrics on http://127.0.0.1:15081/metrics ($http_address); DEMO_HTTP and
# DEMO_MOM_HTTP choose other ports. The cluster keeps running afterwards;
# `contrib/demo.sh stop` stops it.
#
# Needs root (a root shell, or sudo): pbs_iff must be setuid root and jobs
# run as the demo user. pbs_sched gets the sample sched_config, as
# `make install` installs it. BIN (default ./bin) names the directory of the
# built programs, DEMO_USER the job user.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bin=${BIN:-$root/bin}
export PBS_HOME=${PBS_HOME:-/var/tmp/gopbs-demo}
host=localhost
user=${DEMO_USER:-gopbsdemo}
http_port=${DEMO_HTTP:-15080}
mom_http_port=${DEMO_MOM_HTTP:-15081}
page="http://127.0.0.1:$http_port/"

say() { printf '\n== %s\n' "$*"; }
die() { printf 'demo: %s\n' "$*" >&2; exit 1; }

stop_cluster() {
	[ -f "$PBS_HOME/demo.pids" ] || return 0
	while read -r pid; do
		kill "$pid" 2>/dev/null || true
	done <"$PBS_HOME/demo.pids"
	sleep 1
	while read -r pid; do
		kill -9 "$pid" 2>/dev/null || true
	done <"$PBS_HOME/demo.pids"
	rm -f "$PBS_HOME/demo.pids"
}

# wait_for tries a command once a second until it succeeds.
wait_for() {
	local what=$1 tries=$2
	shift 2
	for _ in $(seq "$tries"); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 1
	done
	die "$what did not come up; see $PBS_HOME/*_logs/"
}

[ "$(id -u)" = 0 ] || die "run as root (make demo in a root shell, or sudo make demo): pbs_iff must be setuid root and jobs run as $user"
for b in pbs_server pbs_mom pbs_sched pbs_iff qmgr qsub qstat; do
	[ -x "$bin/$b" ] || die "bin/$b is missing: run make build"
done

if [ "${1:-}" = stop ]; then
	stop_cluster
	echo "demo cluster stopped"
	exit 0
fi

say "PBS_HOME $PBS_HOME"
stop_cluster
rm -rf "$PBS_HOME"
mkdir -p "$PBS_HOME"/{server_priv/accounting,server_logs,mom_priv/jobs,mom_logs,sched_priv,sched_logs,aux}
install -d -m 1777 "$PBS_HOME/spool" "$PBS_HOME/undelivered"
echo "$host" >"$PBS_HOME/server_name"
cat >"$PBS_HOME/mom_priv/config" <<EOF
\$pbsserver $host
\$logevent 255
\$usecp *:/ /
\$http_address 127.0.0.1:$mom_http_port
EOF
# the sample scheduler configuration, as make install installs it
install -m 0644 "$root/sched/config/sched_config" "$PBS_HOME/sched_priv/sched_config"
chown root:root "$bin/pbs_iff"
chmod 4755 "$bin/pbs_iff"

say "starting pbs_server"
"$bin/pbs_server" -d "$PBS_HOME" -H "$host" -t create -f -http "127.0.0.1:$http_port"
wait_for pbs_server 20 "$bin/qstat" -B
pgrep -f "$bin/pbs_server" >>"$PBS_HOME/demo.pids" || true

# -t create starts with no queues and no nodes (it removes server_priv/nodes).
"$bin/qmgr" <<'EOF'
create node localhost np=2
create queue batch queue_type=execution
set queue batch enabled=true
set queue batch started=true
set queue batch resources_default.walltime=01:00:00
set queue batch resources_default.nodes=1
set server default_queue=batch
set server keep_completed=300
set server scheduler_iteration=60
set server scheduling=true
EOF

say "starting pbs_mom and pbs_sched"
"$bin/pbs_mom" -d "$PBS_HOME" -H "$host"
pgrep -f "$bin/pbs_mom" >>"$PBS_HOME/demo.pids" || true
"$bin/pbs_sched" -d "$PBS_HOME"
pgrep -f "$bin/pbs_sched" >>"$PBS_HOME/demo.pids" || true
wait_for "the node" 60 sh -c "'$bin/pbsnodes' -l free 2>/dev/null | grep -q . || '$bin/pbsnodes' -a | grep -q 'state = free'"

if ! id "$user" >/dev/null 2>&1; then
	say "creating the unprivileged user $user"
	useradd -m "$user"
fi
userhome=$(getent passwd "$user" | cut -d: -f6)
cat >"$userhome/first.sh" <<'EOF'
#!/bin/sh
echo "hello from GoPBS job $PBS_JOBID"
echo "running as $(id -un) on $(hostname) in $PWD"
EOF
chown "$user" "$userhome/first.sh"

as_user() { runuser -u "$user" -- env PBS_HOME="$PBS_HOME" PATH="$bin:$PATH" "$@"; }

say "qsub first.sh (as $user)"
jobid=$(cd "$userhome" && as_user sh -c "cd '$userhome' && qsub first.sh")
echo "$jobid"

say "qstat"
as_user qstat
for _ in $(seq 60); do
	state=$(as_user qstat -f "$jobid" 2>/dev/null | sed -n 's/^ *job_state = //p')
	[ "$state" = C ] && break
	[ -z "$state" ] && break
	sleep 1
done
as_user qstat

out="$userhome/first.sh.o${jobid%%.*}"
say "job output ($out)"
for _ in $(seq 10); do [ -f "$out" ] && break; sleep 1; done
cat "$out" || die "the job's output file did not appear"

say "status page"
echo "status page:     $page   (it refreshes itself; metrics at ${page}metrics)"
echo "pbs_mom metrics: http://127.0.0.1:$mom_http_port/metrics"
if command -v curl >/dev/null 2>&1; then
	curl -fsS "${page}metrics" | grep '^gopbs_server_jobs{' || true
fi

say "the cluster keeps running; stop it with: contrib/demo.sh stop"
