#!/bin/bash
# SPDX-License-Identifier: MIT
# The man pages (docs/man/, as meson configured them): each renders without a warning from
# groff or man, has every placeholder filled in, and warden(1) documents every command and
# every option that the command's --help or the bash completion names. And every page of
# docs/ is installed.
#
# usage: test-man.sh WARDEN MAN_BUILD_DIR BASH_COMPLETION SOURCE_ROOT
# Exits 77 (skip) when groff or man is not installed (Debian: groff-base, man-db).
set -u
warden=$1
[[ $warden == /* ]] || warden=$PWD/$warden
mandir=$2
completion=$3
src=$4
fails=0
passes=0

for tool in groff man; do
	if ! command -v $tool >/dev/null; then
		echo "SKIP: $tool is not installed"
		exit 77
	fi
done

fail()
{
	echo "FAIL: $*"
	fails=$((fails + 1))
}

pages="warden.1 warden-policy.5 warden-task.5"
for page in $pages; do
	f=$mandir/$page
	[[ -f $f ]] || { fail "$f is missing"; continue; }
	out=$(groff -ww -z -man "$f" 2>&1)
	[[ -z $out ]] || fail "groff -ww on $page: $out"
	out=$(MANWIDTH=80 man --warnings -l "$f" 2>&1 >/dev/null)
	[[ -z $out ]] || fail "man --warnings on $page: $out"
	if grep -nE '@[A-Z_]+@' "$f"; then
		fail "$page has a placeholder left"
	fi
	text=$(MANWIDTH=80 man -l "$f" 2>/dev/null)
	grep -q '^NAME' <<<"$text" && grep -q '^SEE ALSO' <<<"$text" || fail "$page: no NAME or SEE ALSO"
	passes=$((passes + 1))
done

# The rendered warden(1), wide enough that no option is broken across lines.
man1=$(MANWIDTH=250 man -l "$mandir/warden.1" 2>/dev/null)
# shellcheck source=/dev/null
source "$completion" || exit 1
cmds=$("$warden" --help | sed -n 's/^  \([a-z]\+\) .*/\1/p' | sort -u)
[[ -n $cmds ]] || fail "no commands found in 'warden --help'"
for cmd in $cmds; do
	grep -qE "^   warden $cmd( |$)" <<<"$man1" || fail "warden(1) has no section for '$cmd'"
	help=$("$warden" "$cmd" --help) || { fail "warden $cmd --help failed"; continue; }
	opts=$(grep -oE '(^|[][ (,|])--?[A-Za-z][A-Za-z-]*' <<<"$help" | sed 's/^[][ (,|]//')
	# what the bash completion offers for the command's options
	COMP_WORDS=(warden "$cmd" -)
	[[ $cmd == policy ]] && COMP_WORDS=(warden policy check -)
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_warden
	for o in $(printf '%s\n' $opts "${COMPREPLY[@]}" | sort -u); do
		[[ $o == -- ]] && continue
		grep -qE -- "(^|[^A-Za-z-])$o([^A-Za-z-]|$)" <<<"$man1" ||
			fail "warden(1) does not mention '$o' of 'warden $cmd'"
	done
	passes=$((passes + 1))
done

# Every Markdown page of docs/ is installed (docs/meson.build lists them one by one).
for f in "$src"/docs/*.md; do
	name=${f##*/}
	grep -qF "'$name'" "$src/docs/meson.build" || fail "docs/meson.build does not install docs/$name"
done
passes=$((passes + 1))

echo "$passes passed, $fails failed"
[[ $fails -eq 0 ]]
