# shellcheck shell=bash
# Sourced by .ci/run's commands in the cgroup v2 VM (vm-cgroup2.sh), after the VM's own
# checks.sh, in the clone at /job/src: what this project adds to those checks.
#
# run-record-anywhere: the VM's run-record check, with the sandbox's cgroup looked for where
# warden puts it (docs/run.md, "Where the sandbox's cgroup goes"): below warden's own cgroup
# or beside its warden-supervisor leaf when that cgroup is delegated to it, and otherwise in
# warden's subtree at the top, /sys/fs/cgroup/warden.
# unpriv-project, unpriv-project-delegated: the VM's unpriv-id and unpriv-id-delegated, run
# in a project directory inside the user's home rather than the home itself, which warden
# refuses as a workspace (docs/run.md, "Where the workspace may be").

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

# As user tester from the service's cgroup, which it does not own: warden cannot get a cgroup
# there, so it refuses (125) naming the opt-out, or runs; with unsafe: [no-cgroup] it runs.
check_unpriv_project() {
	local out rc pf=/tmp/vmcg-nocg.yaml
	printf 'unsafe: [no-cgroup]\n' >"$pf" && chmod 644 "$pf"
	out=$(runuser -u tester -- sh -c 'mkdir -p ~/proj && cd ~/proj && cat /proc/self/cgroup &&
		exec /job/src/build/warden run -- id' 2>&1)
	rc=$?
	printf '%s\nwarden exit: %s\n' "$out" "$rc"
	expect "ran, or refused with 125 naming unsafe: [no-cgroup]" \
		'[ $rc = 0 ] || { [ $rc = 125 ] && printf "%s" "$out" | grep -q "no-cgroup"; }'
	runuser -u tester -- sh -c 'cd ~/proj && exec /job/src/build/warden run --policy '"$pf"' -- id'
	expect "runs with unsafe: [no-cgroup]" "[ $? = 0 ]"
	return $FAILED
}

# As user tester in a scope of its own systemd user manager with Delegate=yes.
check_unpriv_project_delegated() {
	local uid rt i rc r=$REC/unpriv-project-delegated
	uid=$(id -u tester)
	rt=/run/user/$uid
	loginctl enable-linger tester || systemctl start "user@$uid.service"
	for i in $(seq 120); do [ -S "$rt/systemd/private" ] && break; sleep 0.5; done
	rm -rf "$r" && mkdir -p "$r" && chown tester "$r"
	runuser -u tester -- env XDG_RUNTIME_DIR="$rt" sh -c '
		mkdir -p ~/proj && cd ~/proj
		systemd-run --user --scope --quiet -p Delegate=yes -- /job/src/build/warden doctor
		echo "doctor exit: $?"
		exec systemd-run --user --scope --quiet -p Delegate=yes -- \
			/job/src/build/warden run --record "$1" -- id' sh "$r"
	rc=$?
	echo "warden run exit: $rc"
	rec_show "$r"
	expect "warden run -- id exits 0" '[ $rc = 0 ]'
	expect "record: cgroup_version 2, unprivileged" \
		'[ "$(rec_get "$r" sandbox.cgroup_version)" = 2 ] && [ "$(rec_get "$r" sandbox.mode)" = unprivileged ]'
	return $FAILED
}
