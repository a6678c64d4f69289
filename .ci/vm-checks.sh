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
# refuses as a workspace (docs/run.md, "Where the workspace may be"); the delegated one also
# checks that doctor finds the delegation through systemd (Debian 12's user manager sets no
# delegate xattr) and that the sandbox goes below that scope.
# unpriv-scope: as a user whose own systemd runs but whose cgroup is not its own (the
# service's here, a login session's on a real host): warden asks that systemd for a
# delegated scope itself (sandbox/sdscope.c), so doctor passes and runs get cgroup v2 limits,
# read from outside, and a memory hog is killed for oom. unpriv-scope-undelegated: the same
# from a scope of the user's systemd without Delegate=yes; unpriv-scope-bus: the same through
# the user's message bus rather than systemd's own socket. unpriv-no-systemd: with no systemd
# to ask, warden refuses (125, naming the remedies) and runs with unsafe: [no-cgroup].

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

# Starts user tester's systemd (lingering, as after a login) and waits for its socket; sets
# TESTER_RT to its runtime directory.
tester_manager() {
	local uid i
	uid=$(id -u tester)
	TESTER_RT=/run/user/$uid
	loginctl enable-linger tester || systemctl start "user@$uid.service"
	for i in $(seq 120); do [ -S "$TESTER_RT/systemd/private" ] && break; sleep 0.5; done
	echo "tester's systemd: $(systemctl is-active "user@$uid.service"); $(ls "$TESTER_RT" | tr '\n' ' ')"
}

# Runs a shell command line as tester in ~/proj, with $1.. as its arguments; the environment
# has no XDG_RUNTIME_DIR (as after runuser or sudo -u) unless the command line sets it, as
# systemd-run --user needs. USER_RUN: systemd-run --user with it.
USER_RUN='env XDG_RUNTIME_DIR=/run/user/$(id -u) systemd-run --user --scope --quiet'
as_tester() { # COMMAND-LINE [ARG...]
	local c=$1
	shift
	runuser -u tester -- env -u XDG_RUNTIME_DIR sh -c 'mkdir -p ~/proj && cd ~/proj && '"$c" sh "$@"
}

# The pid that tester's command line wrote to $1 (it runs in the background meanwhile).
tester_pid() { # PIDFILE
	local i
	for i in $(seq 120); do [ -s "$1" ] && break; sleep 0.25; done
	cat "$1" 2>/dev/null
}

# As user tester in a scope of its own systemd user manager with Delegate=yes: doctor finds
# the delegation (through systemd: no xattr on Debian 12), and the sandbox cgroup goes below
# that scope, beside warden's warden-supervisor leaf, not into a scope of warden's own.
check_unpriv_project_delegated() {
	local rc out pid d r=$REC/unpriv-project-delegated pf=/tmp/vmcg-pid-delegated
	tester_manager
	rm -rf "$r" "$pf" && mkdir -p "$r" && chown tester "$r"
	out=$(as_tester "$USER_RUN -p Delegate=yes -- /job/src/build/warden doctor" 2>&1)
	rc=$?
	printf '%s\ndoctor exit: %s\n' "$out" "$rc"
	expect "doctor exits 0" '[ $rc = 0 ]'
	expect "doctor: the cgroup is delegated, as the user's systemd says (no xattr)" \
		'printf "%s" "$out" | grep "cgroup.placement" | grep -q "says its unit has Delegate=yes"'
	as_tester "exec $USER_RUN -p Delegate=yes -- /job/src/build/warden run --record \"\$1\" -- id" "$r"
	rc=$?
	echo "warden run exit: $rc"
	rec_show "$r"
	expect "warden run -- id exits 0" '[ $rc = 0 ]'
	expect "record: cgroup_version 2, unprivileged" \
		'[ "$(rec_get "$r" sandbox.cgroup_version)" = 2 ] && [ "$(rec_get "$r" sandbox.mode)" = unprivileged ]'
	as_tester "echo \$\$ >\"\$1\" && exec $USER_RUN -p Delegate=yes -- \
		/job/src/build/warden run -- sleep 5" "$pf" &
	pid=$(tester_pid "$pf")
	LIMITS=
	show_sandbox_cgroup "$pid"
	d=$(sed -n 's/^0:://p' "/proc/$pid/cgroup" 2>/dev/null)
	wait
	expect "the sandbox cgroup is below systemd-run's scope (run-*.scope), none of warden's own" \
		'case "$d" in */run-*.scope/warden-supervisor) true ;; *) false ;; esac'
	expect "memory.max 4294967296, memory.swap.max 0, memory.oom.group 1, pids.max 1024" \
		'[ "$LIMITS" = "4294967296 0 1 1024 " ]'
	return $FAILED
}

# As user tester from a cgroup it does not own (the service's), with its systemd running:
# warden asks that systemd for a delegated scope of its own and runs with cgroup v2 limits.
# RUN_IN: how tester starts warden (empty: directly; unpriv-scope-undelegated: in a scope of
# the user's systemd without Delegate=yes, which doctor must find not delegated).
unpriv_scope() { # RECORD-NAME RUN-IN SOCKET
	local rc out pid d r=$REC/$1 pf=/tmp/vmcg-pid-$1 hog=/tmp/vmcg-hog-$1.yaml sock=$3
	tester_manager
	rm -rf "$r" "$pf" && mkdir -p "$r" && chown tester "$r"
	echo "tester's own cgroup: $(as_tester "$2 cat /proc/self/cgroup")"
	out=$(as_tester "$2 /job/src/build/warden doctor" 2>&1)
	rc=$?
	printf '%s\ndoctor exit: %s\n' "$out" "$rc"
	expect "doctor exits 0" '[ $rc = 0 ]'
	expect "doctor: warden asks the user's systemd ($sock) for a scope" \
		'printf "%s" "$out" | grep "cgroup.placement" | grep -q "asks the user.s systemd" &&
		 printf "%s" "$out" | grep "cgroup.placement" | grep -qF "($sock)"'
	as_tester "exec $2 /job/src/build/warden run --record \"\$1\" -- id" "$r"
	rc=$?
	echo "warden run exit: $rc"
	rec_show "$r"
	expect "warden run -- id exits 0" '[ $rc = 0 ]'
	expect "record: cgroup_version 2, unprivileged" \
		'[ "$(rec_get "$r" sandbox.cgroup_version)" = 2 ] && [ "$(rec_get "$r" sandbox.mode)" = unprivileged ]'
	as_tester "echo \$\$ >\"\$1\" && exec $2 /job/src/build/warden run -- sleep 5" "$pf" &
	pid=$(tester_pid "$pf")
	LIMITS=
	show_sandbox_cgroup "$pid"
	d=$(sed -n 's/^0:://p' "/proc/$pid/cgroup" 2>/dev/null)
	wait
	expect "warden moved into a scope of its own (warden-scope-PID-*.scope/warden-supervisor)" \
		'case "$d" in */warden-scope-"$pid"-*.scope/warden-supervisor) true ;; *) false ;; esac'
	expect "memory.max 4294967296, memory.swap.max 0, memory.oom.group 1, pids.max 1024" \
		'[ "$LIMITS" = "4294967296 0 1 1024 " ]'
	printf 'limits: { memory: 256M }\n' >"$hog" && chmod 644 "$hog"
	rm -rf "$r-hog" && mkdir -p "$r-hog" && chown tester "$r-hog"
	as_tester "exec $2 /job/src/build/warden run --policy $hog --record \"\$1\" -- python3 -c \"\$2\" $((1 << 30))" "$r-hog" "$HOG"
	rc=$?
	echo "memory hog: warden exit $rc"
	rec_show "$r-hog"
	expect "the hog is killed: exit 137, reason oom" \
		'[ $rc = 137 ] && [ "$(rec_get "$r-hog" exit.reason)" = oom ]'
	echo "scopes of warden still there (systemd collects them once empty):" \
		"$(find /sys/fs/cgroup/user.slice -type d -name 'warden-scope-*' | wc -l)"
	return $FAILED
}
check_unpriv_scope() { unpriv_scope unpriv-scope "" /run/user/1000/systemd/private; }
check_unpriv_scope_undelegated() {
	unpriv_scope unpriv-scope-undelegated "$USER_RUN --" /run/user/1000/systemd/private
}

# unpriv-scope with the user's message bus running, as Debian's dbus-user-session sets it up
# on a desktop (the VM's image lacks that package: its two units are written here): warden
# asks systemd through the bus ($XDG_RUNTIME_DIR/bus) instead of systemd's own socket.
check_unpriv_scope_bus() {
	local i
	tester_manager
	mkdir -p /etc/systemd/user
	printf '%s\n' '[Unit]' 'Description=D-Bus user message bus socket' '[Socket]' \
		'ListenStream=%t/bus' >/etc/systemd/user/dbus.socket
	printf '%s\n' '[Unit]' 'Description=D-Bus user message bus' 'Requires=dbus.socket' \
		'[Service]' 'ExecStart=/usr/bin/dbus-daemon --session --address=systemd: --nofork --nopidfile --systemd-activation --syslog-only' \
		>/etc/systemd/user/dbus.service
	as_tester 'export XDG_RUNTIME_DIR=/run/user/$(id -u)
		systemctl --user daemon-reload && systemctl --user start dbus.socket dbus.service'
	for i in $(seq 120); do
		as_tester 'XDG_RUNTIME_DIR=/run/user/$(id -u) busctl --user call org.freedesktop.systemd1 \
			/org/freedesktop/systemd1 org.freedesktop.DBus.Peer Ping' >/dev/null 2>&1 && break
		sleep 0.5
	done
	echo "the user's bus: $(ls -l "$TESTER_RT/bus"); systemd on it after $i tries"
	unpriv_scope unpriv-scope-bus "" /run/user/1000/bus
}

# As user tester with no systemd to ask (XDG_RUNTIME_DIR names an empty directory): warden
# cannot get a cgroup, refuses with 125 naming the remedies, and runs with unsafe: [no-cgroup].
check_unpriv_no_systemd() {
	local out rc pf=/tmp/vmcg-nocg.yaml e=/tmp/vmcg-empty-rt
	printf 'unsafe: [no-cgroup]\n' >"$pf" && chmod 644 "$pf"
	rm -rf "$e" && mkdir -p "$e" && chown tester "$e" && chmod 700 "$e"
	out=$(as_tester 'XDG_RUNTIME_DIR="$1" exec /job/src/build/warden run -- id' "$e" 2>&1)
	rc=$?
	printf '%s\nwarden exit: %s\n' "$out" "$rc"
	expect "refused with 125 naming unsafe: [no-cgroup]" \
		'[ $rc = 125 ] && printf "%s" "$out" | grep -q "no-cgroup"'
	out=$(as_tester 'XDG_RUNTIME_DIR="$1" exec /job/src/build/warden doctor' "$e" 2>&1)
	rc=$?
	printf '%s\ndoctor exit: %s\n' "$out" "$rc"
	expect "doctor exits 1 and names systemd-run --user --scope -p Delegate=yes" \
		'[ $rc = 1 ] && printf "%s" "$out" | grep -q "systemd-run --user --scope -p Delegate=yes"'
	as_tester 'XDG_RUNTIME_DIR="$1" exec /job/src/build/warden run --policy "$2" -- id' "$e" "$pf"
	expect "runs with unsafe: [no-cgroup]" "[ $? = 0 ]"
	return $FAILED
}
