# shellcheck shell=bash
# Sourced by .ci/run's commands in the cgroup v2 VM (vm-cgroup2.sh), after the VM's own
# checks.sh, in the clone at /job/src: what this project adds to those checks.
#
# run-record-anywhere: the VM's run-record check, with the sandbox's cgroup looked for where
# warden puts it (docs/run.md, "Where the sandbox's cgroup goes"): below warden's own cgroup
# or beside its warden-supervisor leaf when that cgroup is delegated to it, and otherwise in
# warden's subtree at the top, /sys/fs/cgroup/warden.

# The sandbox cgroup of warden (pid $1), read from outside while it runs; sets LIMITS to its
# memory.max, memory.swap.max, memory.oom.group and pids.max, space-separated.
show_sandbox_cgroup() { # PID
	local i cg='' d='' c f
	for i in $(seq 120); do
		cg=$(sed -n 's/^0:://p' "/proc/$1/cgroup" 2>/dev/null) || break
		for c in "/sys/fs/cgroup$cg" "/sys/fs/cgroup${cg%/*}" /sys/fs/cgroup/warden; do
			for d in "$c/warden-$1-"*; do
				[ -d "$d" ] && grep -qs . "$d/cgroup.procs" && break 3
			done
		done
		d=
		sleep 0.25
	done
	[ -n "$d" ] || { echo "no sandbox cgroup warden-$1-* appeared"; return 1; }
	echo "warden (pid $1) is in $cg; the sandbox cgroup: $d"
	for f in cgroup.controllers memory.max memory.swap.max memory.oom.group pids.max cpu.max; do
		printf '  %-18s %s\n' "$f" "$(tr '\n' ' ' 2>/dev/null <"$d/$f" || echo '(absent)')"
	done
	printf '  %-18s %s\n' processes "$(wc -l <"$d/cgroup.procs")"
	printf '  %-18s %s\n' parent "${d%/*}: subtree_control [$(cat "${d%/*}/cgroup.subtree_control")], processes $(wc -l <"${d%/*}/cgroup.procs")"
	LIMITS="$(cat "$d/memory.max" "$d/memory.swap.max" "$d/memory.oom.group" "$d/pids.max" 2>/dev/null | tr '\n' ' ')"
}

check_run_record_anywhere() { check_run_record run-record-anywhere; }
