#!/usr/bin/env bash
# Builds warden's Debian package (debian/) from the checkout's tracked files, installs it
# into a clean Debian 12 root, and there runs the installed `warden doctor` and one
# `warden run`. Run as root on Debian 12; docs/install.md says why it is done this way.
#
#   .ci/deb-check.sh            # keeps nothing but the cached base root
#
# The clean root is `debootstrap --variant=minbase bookworm`, made once and cached as a
# tarball in $WARDEN_DEB_ROOT_CACHE (default /var/tmp/warden-deb-root; delete it to make a
# new one), unpacked afresh for every check. The package goes in with apt-get, so its
# Depends must name every library it needs: the root has nothing else of the build host.
# warden runs there with that root as the root of a mount namespace of this script's own
# (pivot_root), with a /proc and the host's /sys and /dev, so that it builds a real sandbox
# from the root's own /usr.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
suite=bookworm
mirror=${WARDEN_DEB_MIRROR:-http://deb.debian.org/debian}
security=${WARDEN_DEB_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
cache=${WARDEN_DEB_ROOT_CACHE:-/var/tmp/warden-deb-root}
export DEBIAN_FRONTEND=noninteractive

step() { printf '\n==== deb-check: %s ====\n' "$*"; }
die() {
	echo "deb-check: $*" >&2
	exit 1
}

[ "$(id -u)" -eq 0 ] || die "run as root (it installs build dependencies and makes a chroot)"
grep -q '^VERSION_CODENAME=bookworm$' /etc/os-release || die "expected Debian 12 (bookworm)"

step "tools"
need=()
for p in dpkg-dev debhelper debootstrap fakeroot git; do
	dpkg-query -W -f '${Status}\n' "$p" 2>/dev/null | grep -q ' installed$' || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

work=$(mktemp -d /tmp/warden-deb.XXXXXX)
trap 'rm -rf "$work"' EXIT

step "a clean copy of the tracked files"
# What a clean clone holds (no .deps/, no build folders), as the work tree has it.
mkdir "$work/src"
git -C "$top" ls-files -z --cached |
	tar -C "$top" --null --ignore-failed-read -T - -cf - |
	tar -C "$work/src" -xf -
[ -d "$work/src/debian" ] || die "debian/ is not tracked"

step "build dependencies"
(cd "$work/src" && apt-get build-dep -y -qq ./ >/dev/null)

step "dpkg-buildpackage -us -uc -b"
(cd "$work/src" && dpkg-buildpackage -us -uc -b >"$work/build.log" 2>&1) || {
	tail -n 60 "$work/build.log" >&2
	die "the package did not build (the log's end is above)"
}
deb=$(find "$work" -maxdepth 1 -name 'warden_*.deb' | head -n 1)
[ -n "$deb" ] || die "dpkg-buildpackage made no warden_*.deb"
echo "built ${deb##*/}"
dpkg-deb -I "$deb" | sed -n 's/^ \(Depends\|Static-Built-Using\):/  &/p'

step "the package's files"
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's,^\.,,' >"$work/files"
for f in /usr/bin/warden /usr/libexec/warden/warden-worker \
	/usr/share/man/man1/warden.1.gz /usr/share/man/man5/warden-policy.5.gz \
	/usr/share/man/man5/warden-task.5.gz \
	/usr/share/bash-completion/completions/warden /usr/share/zsh/vendor-completions/_warden \
	/usr/share/warden/profiles/python.yaml /usr/share/doc/warden/README.md \
	/usr/share/doc/warden/SECURITY.md /usr/share/doc/warden/docs/run.md \
	/usr/share/doc/warden/copyright; do
	grep -qxF "$f" "$work/files" || die "the package lacks $f"
done
echo "$(wc -l <"$work/files") entries, the expected ones among them"

step "a clean Debian 12 root"
base=$cache/$suite-minbase.tar
if [ ! -f "$base" ]; then
	mkdir -p "$cache"
	fresh=$(mktemp -d "$cache/root.XXXXXX")
	chmod 0755 "$fresh"
	debootstrap --variant=minbase "$suite" "$fresh" "$mirror" >"$work/debootstrap.log" 2>&1 || {
		tail -n 30 "$work/debootstrap.log" >&2
		rm -rf "$fresh"
		die "debootstrap failed"
	}
	tar -C "$fresh" -cf "$base.tmp" . && mv "$base.tmp" "$base"
	rm -rf "$fresh"
fi
mkdir "$work/root"
tar -C "$work/root" -xf "$base"
# A root folder is 0755 (the cache's was made by mktemp, 0700: the sandbox's unprivileged
# host id could then reach nothing below it).
chmod 0755 "$work/root"
cat >"$work/root/etc/apt/sources.list" <<EOF
deb $mirror $suite main
deb $mirror $suite-updates main
deb $security $suite-security main
EOF
cp /etc/resolv.conf "$work/root/etc/resolv.conf"
cp "$deb" "$work/root/root/"

# The commands run in the root, as root. Each prints what it checks; any failure fails.
cat >"$work/root/root/check.sh" <<'EOF'
set -eu
# apt's downloads as root: the root has no _apt user who could reach /root.
apt-get -o APT::Sandbox::User=root update -qq
apt-get -o APT::Sandbox::User=root install -y -qq --no-install-recommends /root/warden_*.deb >/dev/null
echo "installed: $(dpkg-query -W -f '${Package} ${Version}' warden)"
command -v warden
warden --version
echo "--- warden doctor"
warden doctor
echo "--- the installed profile is found by name"
warden policy check python >/dev/null
echo "--- warden run"
mkdir /root/ws
cd /root/ws
out=$(warden run -- sh -c 'echo from-the-sandbox > made.txt; id -un; hostname; cat /proc/self/status' )
printf '%s\n' "$out" | grep -E '^(agent|warden)$|^(NoNewPrivs|Seccomp|CapEff):'
printf '%s\n' "$out" | grep -qx agent
printf '%s\n' "$out" | grep -qE '^NoNewPrivs:[[:space:]]+1$'
printf '%s\n' "$out" | grep -qE '^Seccomp:[[:space:]]+2$'
printf '%s\n' "$out" | grep -qE '^CapEff:[[:space:]]+0+$'
grep -qx from-the-sandbox made.txt
echo "the sandbox's write was applied to the workspace"
echo "--- the exit status passes through"
set +e
warden run -- sh -c 'exit 7'
rc=$?
set -e
[ "$rc" -eq 7 ] || { echo "expected 7, got $rc"; exit 1; }
echo "exit 7 as expected"
echo "--- the man page names the installed paths; the bash completion loads"
zcat /usr/share/man/man1/warden.1.gz | grep -q '^\.I /usr/libexec/warden/warden\\-worker$'
zcat /usr/share/man/man5/warden-policy.5.gz | grep -q '/usr/share/warden/profiles/'
got=$(bash -c '. /usr/share/bash-completion/completions/warden
	COMP_WORDS=(warden run --policy pyth); COMP_CWORD=3; _warden; echo "${COMPREPLY[*]}"')
[ "$got" = python ] || { echo "bash completion of --policy pyth: '$got'"; exit 1; }
echo "ok"
EOF

step "install it there; warden doctor and warden run from the installed package"
# A mount namespace of its own: nothing mounted here outlives the check. The clean root
# becomes that namespace's root with pivot_root, not with chroot alone: the kernel refuses a
# new user namespace to a chrooted process, and warden's sandbox starts with one.
unshare --mount --propagation private -- sh -ec '
	r=$1
	mount --bind "$r" "$r"
	mount -t proc proc "$r/proc"
	mount --rbind /sys "$r/sys"
	mount --rbind /dev "$r/dev"
	mount -t tmpfs -o mode=0755 tmpfs "$r/run"
	mkdir "$r/.host"
	cd "$r"
	pivot_root . .host
	exec /usr/sbin/chroot . /bin/sh -ec "umount -l /.host; rmdir /.host; exec /bin/sh /root/check.sh"
' sh "$work/root"

step "ok: the package builds, installs into a clean root, and its warden runs a sandbox"
