#!/bin/bash
# SPDX-License-Identifier: MIT
# The shell completions (completions/): what bash and zsh offer for a set of command lines,
# and that every option each command's --help names is offered by both.
#
# usage: test-completion.sh bash|zsh WARDEN COMPLETION_DIR
#   bash: sources COMPLETION_DIR/warden and calls _warden with COMP_WORDS set as bash sets it.
#   zsh:  completes in a real interactive zsh (zsh-complete.zsh beside this script); exits
#         77 (skip) when zsh is not installed.
set -u
shell=$1
warden=$2
[[ $warden == /* ]] || warden=$PWD/$warden
compdir=$3
here=$(cd "$(dirname "$0")" && pwd)
fails=0
passes=0

if [[ $shell == zsh ]] && ! command -v zsh >/dev/null; then
	echo "SKIP: zsh is not installed (Debian package zsh)"
	exit 77
fi

# A scratch home and working folder, readable by the unprivileged user of the changeset case.
tmp=$(mktemp -d /tmp/warden-completion.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
mkdir -p "$tmp/config/warden/policies" "$tmp/work/sub" "$tmp/state/warden/changes/20261201-154001-31308b"
: >"$tmp/config/warden/policies/mine.yaml"
: >"$tmp/work/task.yaml" >"$tmp/work/notes.txt"
chmod -R a+rX "$tmp"
cd "$tmp/work" || exit 1
export XDG_CONFIG_HOME=$tmp/config HOME=$tmp

if [[ $shell == bash ]]; then
	# shellcheck source=/dev/null
	source "$compdir/warden" || exit 1
fi

# Splits a command line into COMP_WORDS as bash does: at blanks, and at '=' (one of
# COMP_WORDBREAKS), which becomes a word of its own.
bash_words()
{
	local line=$1 w rest
	local -a words
	read -ra words <<<"$line"
	[[ $line == *' ' ]] && words+=("")
	out_words=()
	for w in "${words[@]}"; do
		if [[ $w == -*=* ]]; then
			rest=${w#*=}
			out_words+=("${w%%=*}" "=")
			[[ -n $rest ]] && out_words+=("$rest")
		else
			out_words+=("$w")
		fi
	done
}

# The candidates for LINE, one a line, sorted.
candidates()
{
	local line=$1
	if [[ $shell == bash ]]; then
		local -a out_words
		bash_words "$line"
		COMP_WORDS=("${out_words[@]}")
		COMP_CWORD=$((${#out_words[@]} - 1))
		COMP_LINE=$line
		COMP_POINT=${#line}
		COMPREPLY=()
		_warden warden "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
		((${#COMPREPLY[@]})) && printf '%s\n' "${COMPREPLY[@]}" | sort -u
	else
		timeout 60 zsh -f "$here/zsh-complete.zsh" "$compdir" "$line"
	fi
}

fail()
{
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# check LINE exact|has|lacks WORD...
check()
{
	local line=$1 how=$2 got w
	shift 2
	got=$(candidates "$line")
	case $how in
	exact)
		if [[ $got != "$(printf '%s\n' "$@" | sort -u)" ]]; then
			fail "[$line]: expected exactly: $*; got: $(echo $got)"
			return
		fi
		;;
	has)
		for w in "$@"; do
			grep -qxF -- "$w" <<<"$got" || { fail "[$line]: '$w' missing from: $(echo $got)"; return; }
		done
		;;
	lacks)
		for w in "$@"; do
			! grep -qxF -- "$w" <<<"$got" || { fail "[$line]: '$w' offered: $(echo $got)"; return; }
		done
		;;
	esac
	passes=$((passes + 1))
}

commands="run changes diff apply discard audit doctor check eval grade policy help"

check "warden " exact $commands
check "warden ru" exact run
check "warden d" exact diff discard doctor
check "warden -" exact -h --help -V --version
check "warden run --ap" exact --apply
check "warden run --apply " exact safe none
check "warden run --workspace-mode " exact changes direct
check "warden run --workspace-mode d" exact direct
check "warden run --policy " has default mine task.yaml
check "warden run --policy " lacks notes.txt
check "warden run --workspace " has sub
check "warden run --workspace " lacks notes.txt task.yaml
check "warden run -q --timeout 5 tru" has true
check "warden run -- tru" has true
check "warden run -" has --policy --workspace --workspace-mode --apply --timeout --record -q -v
check "warden apply 20261201-154001-31308b --in" exact --include
check "warden eval -" has -o --out -j --jobs --no-grade --json
check "warden eval " has task.yaml sub
check "warden eval " lacks notes.txt
check "warden eval --out " has sub
check "warden eval --out " lacks task.yaml
check "warden grade --task " has task.yaml
check "warden check " has task.yaml
check "warden policy " exact show check seccomp
check "warden policy show " exact default
check "warden policy check " has default mine task.yaml
check "warden policy check -" has --json
check "warden policy seccomp " has default mine
if [[ $shell == bash ]]; then
	# --opt=value: bash hands the '=' over as a word of its own.
	check "warden run --apply=" exact safe none
	check "warden run --apply=s" exact safe
	check "warden run --policy=mi" exact mine
	# After the command, its arguments: files, never warden's options.
	check "warden run ls -" lacks --policy --apply
	check "warden run ls no" exact notes.txt
else
	check "warden run --apply=" exact safe none
	check "warden run ls -" lacks --policy --apply
fi

# Changeset ids come from the state folder: as root /var/lib/warden/changes, which a test
# must not touch; so that case runs as an unprivileged user with XDG_STATE_HOME set.
changeset_ids()
{
	local line=$1
	local script
	if [[ $shell == bash ]]; then
		script='source "$1/warden"; COMP_WORDS=(warden "$2" ""); COMP_CWORD=2; _warden; printf "%s\n" "${COMPREPLY[@]}"'
		set -- bash -c "$script" bash "$compdir" "$line"
	else
		set -- zsh -f "$here/zsh-complete.zsh" "$compdir" "warden $line "
	fi
	if [[ $EUID -eq 0 ]]; then
		if ! command -v setpriv >/dev/null; then
			echo "SKIP: the changeset id case needs setpriv (util-linux) as root" >&2
			return 77
		fi
		# A build tree below a private folder (a package build's) is out of its reach.
		if ! setpriv --reuid=65534 --regid=65534 --clear-groups \
			test -r "$compdir/warden" -a -r "$here/zsh-complete.zsh"; then
			echo "SKIP: the changeset id case: uid 65534 cannot read $compdir" >&2
			return 77
		fi
		env XDG_STATE_HOME="$tmp/state" HOME="$tmp" setpriv --reuid=65534 --regid=65534 \
			--clear-groups timeout 60 "$@"
	else
		XDG_STATE_HOME="$tmp/state" timeout 60 "$@"
	fi
}
for c in diff apply discard; do
	got=$(changeset_ids "$c")
	rc=$?
	if [[ $rc -eq 77 ]]; then
		continue
	elif [[ $(echo $got) != 20261201-154001-31308b ]]; then
		fail "[warden $c ]: expected the changeset id; got: $(echo $got)"
	else
		passes=$((passes + 1))
	fi
done

# Every option that a command's --help names is offered, in both shells. For the commands
# that share one help (changes, diff, apply, discard; policy's subcommands), only the options
# of the command's own usage line count.
for cmd in run changes diff apply discard audit doctor check eval grade policy; do
	help=$("$warden" "$cmd" --help) || { fail "warden $cmd --help failed"; continue; }
	if [[ $(grep -cE '^(Usage: |       )warden [a-z]' <<<"$help") -gt 1 ]]; then
		help=$(grep -E "^(Usage: |       )warden $cmd( |\$)" <<<"$help")
	fi
	opts=$(grep -oE '(^|[][ (,|])--?[A-Za-z][A-Za-z-]*' <<<"$help" | sed 's/^[][ (,|]//' | sort -u)
	[[ -n $opts ]] || continue
	line="warden $cmd -"
	[[ $cmd == policy ]] && line="warden policy check -"
	got=$(candidates "$line")
	for o in $opts; do
		grep -qxF -- "$o" <<<"$got" || fail "[$line]: '$o' (in 'warden $cmd --help') is not offered"
	done
	passes=$((passes + 1))
done

echo "$passes passed, $fails failed"
[[ $fails -eq 0 ]]
