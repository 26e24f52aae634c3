# shellcheck shell=bash
# What ci/ and branch-tools/ share: messages, the cache directory, the
# compiler cache's settings and package installation.  Sourced by
# ci/lib.sh and branch-tools/lib.sh, not run.

die() {
	printf '%s: error: %s\n' "${0##*/}" "$*" >&2
	exit 1
}

note() {
	printf '%s: %s\n' "${0##*/}" "$*" >&2
}

# Caches that outlive a clone (ccache, the userland image, the rootfs of the
# container's base image, make check's kernel trees).  A fresh machine simply starts cold.
CACHE_DIR=${CACHE_DIR:-/var/cache/memcg-kmem}
# make check's kernel trees and object trees (ci/suite-lib.sh): kept from
# run to run, so that a run with unchanged patches rebuilds nothing.
TREES_DIR=${TREES_DIR:-$CACHE_DIR/trees}

# ccache for kernel builds.  Paths differ between clones and between the
# series and base trees: ccache hashes them relative to the working
# directory, so the trees (kept at the same depth) share objects.
use_ccache() {
	export CCACHE_DIR=${CCACHE_DIR:-$CACHE_DIR/ccache}
	export CCACHE_BASEDIR=/ CCACHE_NOHASHDIR=1 CCACHE_COMPILERCHECK=content CCACHE_MAXSIZE=5G
}

# Install the Debian packages of the list that are missing (as root, from
# this machine's archive).
APT_UPDATED=0
need_pkgs() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$p")
	done
	[ ${#missing[@]} -gt 0 ] || return 0
	command -v apt-get >/dev/null || die "missing packages (${missing[*]}) and no apt-get to install them"
	[ "$(id -u)" = 0 ] || die "missing packages (${missing[*]}): install them as root (apt-get install ${missing[*]})"
	note "installing ${missing[*]} from Debian's archive"
	if [ "$APT_UPDATED" = 0 ]; then
		apt-get update -qq >/dev/null
		APT_UPDATED=1
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# COMMAND, from Debian package PACKAGE if it is missing.
ensure_command() { # COMMAND PACKAGE
	command -v "$1" >/dev/null && return 0
	need_pkgs "$2"
	command -v "$1" >/dev/null || die "$2 installed but $1 is not there"
}

# Check commit C out, detached, in WT, a worktree of the git tree TREE
# (made, or made again if WT is something else): make bisect-build and
# make bisect-check work there, never in TREE's own work tree.
worktree_at() { # TREE WT C
	local tree=$1 wt=$2 common have
	[ "$(realpath -m "$wt")" != "$(realpath -m "$tree")" ] || die "the worktree $wt would be $tree itself"
	common=$(cd "$tree" && cd "$(git rev-parse --git-common-dir)" && pwd)
	if [ -e "$wt" ]; then
		have=$(cd "$wt" 2>/dev/null && cd "$(git rev-parse --git-common-dir)" 2>/dev/null && pwd) || have=
		if [ "$have" != "$common" ]; then
			note "$wt is not a worktree of $tree (any more): making it again"
			rm -rf "$wt"
		fi
	fi
	if [ ! -e "$wt" ]; then
		git -C "$tree" worktree prune
		git -C "$tree" worktree add -q -f --detach "$wt" "$3"
	fi
	git -C "$wt" checkout -q -f --detach "$3"
}
