#!/bin/sh
# Regenerates the git index fixtures in this directory with the git binary on PATH:
#   tests/gitindex/make-fixtures.sh
# Most entries are added with `git update-index --cacheinfo`, which needs no working tree and
# stores zero stat data, so those files come out the same on every machine; sparse.index is
# made by a real sparse checkout and carries this machine's stat data. What each fixture holds
# is listed in README; tests/unit/test-gitindex.c asserts it.
set -eu
out=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HOME="$tmp" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org GIT_AUTHOR_DATE='2026-01-01T00:00:00Z'
export GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org GIT_COMMITTER_DATE='2026-01-01T00:00:00Z'

# A fresh repository in $tmp/r with the blob "hi"; its id is in $b.
fresh() {
	rm -rf "$tmp/r"
	git init -q "$tmp/r"
	cd "$tmp/r"
	b=$(echo hi | git hash-object -w --stdin)
}

# The three entries most fixtures start from.
three() {
	git update-index --add --cacheinfo "100644,$b,a" --cacheinfo "100644,$b,dir/f" \
		--cacheinfo "100755,$b,dir/g"
}

save() {
	cp .git/index "$out/$1"
}

fresh; three; save v2-plain.index
git update-index --assume-unchanged dir/g; save v2-assume.index
git update-index --skip-worktree dir/f; save v3-hidden.index
git update-index --index-version 4; save v4-hidden.index

fresh; three
git update-index --add --cacheinfo "120000,$b,dir/link" --cacheinfo "100644,$b,dir/sub/deeper/x" \
	--cacheinfo "100644,$b,dir/sub/deeper/y" --cacheinfo "100644,$b,dirt"
git update-index --index-version 4; save v4-plain.index
git update-index --skip-worktree dir/sub/deeper/x dirt
git update-index --assume-unchanged dir/link; save v4-more.index

# Stages 1, 2 and 3 of c (a conflict), a skip-worktree entry around them.
fresh; three
printf '100644 %s 1\tc\n100644 %s 2\tc\n100644 %s 3\tc\n' "$b" "$b" "$b" | git update-index --index-info
git update-index --skip-worktree dir/f; save conflict.index
# Resolving c records the stages in the resolve-undo (REUC) extension.
git update-index --add --cacheinfo "100644,$b,c"; save resolved.index

# A cache tree (TREE extension).
fresh; three
git update-index --assume-unchanged a
git write-tree >/dev/null; save tree.index

# Names at and around the 12-bit length field's limit (0xFFF), the longest being 4096 bytes.
fresh
long=$(printf 'd%.0s' $(seq 1 200))
p4094="$long/$long/$long/$long/$long/$long/$long/$long/$long/$long/$long/$long/$long/$long/$long/$long/$long/$long/$long/$long/$(printf 'e%.0s' $(seq 1 74))"
git update-index --add --cacheinfo "100644,$b,${p4094}" --cacheinfo "100644,$b,${p4094}f" \
	--cacheinfo "100644,$b,${p4094}ff"
git update-index --skip-worktree "${p4094}f" "${p4094}ff"; save long-v3.index
git update-index --index-version 4; save long-v4.index

# A split index: the entries live in a shared index file (the "link" extension).
fresh; three
git update-index --split-index; save split.index

# The tables for threaded loading (EOIE, and IEOT with many entries).
fresh; three
git -c index.threads=2 update-index --assume-unchanged a; save eoie.index

# A sparse index: dir2/ is one directory entry with skip-worktree (the "sdir" extension).
fresh
mkdir dir1 dir2
echo 1 >dir1/a; echo 2 >dir2/b; echo 3 >top
git add dir1 dir2 top
git commit -q -m c
git sparse-checkout set --cone --sparse-index dir1
save sparse.index
