# shellcheck shell=bash
# Common settings of branch-tools: sourced, not run.
#
# Every path can be overridden from the environment so that the tools work on
# a developer's own layout; the defaults keep everything under the repo's
# ignored build/ folder.

set -euo pipefail

TOOLS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$TOOLS_DIR/.." && pwd)
# die, note, CACHE_DIR, use_ccache, need_pkgs, ensure_command
. "$REPO_DIR/lib/common.sh"

# The kernel git tree made from the packaged tarball (outside git of this repo).
KTREE=${KTREE:-$REPO_DIR/build/linux}
# The branch that carries the series.
BRANCH=${BRANCH:-memcg-kmem}
# Where the series lives as git-format-patch files (the source of truth).
PATCH_DIR=${PATCH_DIR:-$REPO_DIR/patches}
# Debian's packaged kernel source.
SRC_PKG=${SRC_PKG:-linux-source-6.1}
TARBALL=${TARBALL:-/usr/src/linux-source-6.1.tar.xz}

# Fixed identities and dates so that re-running gives the same hashes.
BASE_AUTHOR_NAME="Debian kernel source"
BASE_AUTHOR_EMAIL="debian-kernel@lists.debian.org"

# The package version, e.g. 6.1.192-3, and a tag name made from it.
pkg_version() {
	dpkg-query -W -f='${Version}' "$SRC_PKG" 2>/dev/null || true
}

base_tag_for() {
	# git refs cannot hold '~' or ':'.
	printf 'debian/%s_%s' "$SRC_PKG" "$(printf '%s' "$1" | tr '~:' '__')"
}

# The base tag present in the tree (there is exactly one per tree).
tree_base_tag() {
	git -C "$KTREE" tag -l 'debian/*' | tail -n 1
}

ensure_package() {
	[ -f "$TARBALL" ] && return 0
	need_pkgs "$SRC_PKG"
	[ -f "$TARBALL" ] || die "$SRC_PKG installed but $TARBALL is not there"
}

# git in the kernel tree, with identities that do not depend on the caller.
kgit() {
	git -C "$KTREE" -c user.name="${GIT_AUTHOR_NAME:-$BASE_AUTHOR_NAME}" \
		-c user.email="${GIT_AUTHOR_EMAIL:-$BASE_AUTHOR_EMAIL}" \
		-c core.autocrlf=false -c gc.auto=0 "$@"
}

# Write the series (base tag..BRANCH) as git format-patch files into DIR,
# with settings that make the output depend on the commits alone.
format_series() {
	local dir=$1 tag count
	tag=$(tree_base_tag)
	count=$(kgit rev-list --count "$tag..$BRANCH")
	[ "$count" -gt 0 ] || return 0
	kgit -c format.signature= -c diff.noprefix=false -c diff.mnemonicprefix=false \
		-c format.coverLetter=false -c format.numbered=auto \
		format-patch -q --no-signature --zero-commit \
		--abbrev=12 -N --subject-prefix=PATCH -o "$dir" "$tag..$BRANCH" >/dev/null
}

# The patch files of DIR, names and contents, as one stream.
series_dump() {
	local f
	for f in "$1"/*.patch; do
		[ -e "$f" ] || continue
		printf '== %s\n' "${f##*/}"
		cat "$f"
	done
}

# Would resetting the branch lose work?  Prints why, returns 1 if so.
tree_has_unsaved_work() {
	local dirty
	[ -d "$KTREE/.git" ] || return 1
	kgit rev-parse -q --verify "refs/heads/$BRANCH" >/dev/null || return 1
	if [ -d "$KTREE/.git/rebase-apply" ] || [ -d "$KTREE/.git/rebase-merge" ]; then
		echo "a rebase or am is in progress in $KTREE"
		return 0
	fi
	# Untracked files too: the reset below cleans the tree (git clean), which
	# would delete a new source file not yet committed.  Build outputs are
	# ignored by the kernel's .gitignore, so they do not count.
	dirty=$(kgit status --porcelain --untracked-files=normal | head -n 5)
	if [ -n "$dirty" ]; then
		printf 'uncommitted changes or new files in %s (commit them, e.g. as fixups, and run branch-tools/refresh; or remove them):\n%s\n' "$KTREE" "$dirty"
		return 0
	fi
	if ! branch_is_patches && ! branch_is_export; then
		echo "branch $BRANCH in $KTREE has commits that differ from $PATCH_DIR (run branch-tools/refresh first)"
		return 0
	fi
	return 1
}

# Was every commit of branch $BRANCH above the base tag made by export (its
# fixed committer, and a committer date equal to the author date, which a
# commit, amend or rebase of anyone else's does not keep)?  Such a branch
# holds an older patches/ and nobody's work: make check's own tree after
# patches/ changed.
branch_is_export() {
	local base
	base=$(tree_base_tag)
	[ -n "$base" ] || return 1
	kgit log --format='%cn%x09%ce%x09%ct%x09%at' "$base..refs/heads/$BRANCH" |
		awk -F '\t' -v n="$BASE_AUTHOR_NAME" -v e="$BASE_AUTHOR_EMAIL" \
			'$1 != n || $2 != e || $3 != $4 { bad = 1 } END { exit bad }'
}

# Does branch $BRANCH hold exactly the commits of $PATCH_DIR (the same
# files when written out again)?
branch_is_patches() {
	local tmp rc=0
	tmp=$(mktemp -d)
	mkdir "$tmp/series"
	format_series "$tmp/series"
	# Into files: cmp stops at the first difference, and a dump still
	# reading $tmp through a process substitution would see it removed.
	series_dump "$tmp/series" > "$tmp/branch"
	series_dump "$PATCH_DIR" > "$tmp/patches"
	cmp -s "$tmp/branch" "$tmp/patches" || rc=1
	rm -rf "$tmp"
	return $rc
}

# kbuild's own answer to "which objects does directory DIR of source tree
# SRC build with the configuration in object tree OUT?": its Makefile
# evaluated with Makefile.lib's expansion of composite objects.
members() { # SRC OUT DIR
	make -s --no-print-directory -C "$1" -f "$TOOLS_DIR/members.mk" \
		objtree="$2" obj="$3" members 2>/dev/null | tr ' ' '\n' | sed 's:/$::'
}

# Is FILE.c (a path in source tree SRC) compiled with the configuration in
# OUT?  Its object must be in its directory's list, and each directory
# below the top one (arch/<arch> for arch/) in its parent's.
compiled() { # SRC OUT FILE
	local src=$1 out=$2 file=$3 dir obj top parent
	dir=$(dirname "$file")
	obj=${file%.c}.o
	case $file in
	tools/*|scripts/*|samples/*|Documentation/*|usr/*) return 1 ;;
	arch/*/*) top=$(printf '%s\n' "$file" | cut -d/ -f1-2) ;;
	*) top=${file%%/*} ;;
	esac
	[ -f "$src/$dir/Makefile" ] || [ -f "$src/$dir/Kbuild" ] || return 1
	# grep without -q reads all of its input: no SIGPIPE under pipefail.
	members "$src" "$out" "$dir" | grep -x -- "$obj" >/dev/null || return 1
	while [ "$dir" != "$top" ] && [ "$dir" != . ]; do
		parent=$(dirname "$dir")
		members "$src" "$out" "$parent" | grep -x -e "$dir" -e "${dir##*/}" >/dev/null || return 1
		dir=$parent
	done
	return 0
}
