# shellcheck shell=bash
# Common settings of branch-tools: sourced, not run.
#
# Every path can be overridden from the environment so that the tools work on
# a developer's own layout; the defaults keep everything under the repo's
# ignored build/ folder.

set -euo pipefail

TOOLS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$TOOLS_DIR/.." && pwd)

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

die() {
	printf '%s: error: %s\n' "${0##*/}" "$*" >&2
	exit 1
}

note() {
	printf '%s: %s\n' "${0##*/}" "$*" >&2
}

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
	if [ -f "$TARBALL" ]; then
		return 0
	fi
	command -v apt-get >/dev/null || die "$TARBALL missing and no apt-get to install $SRC_PKG"
	[ "$(id -u)" = 0 ] || die "$TARBALL missing: install $SRC_PKG as root (apt-get install $SRC_PKG)"
	note "installing $SRC_PKG from Debian's archive"
	apt-get update -qq >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$SRC_PKG" >/dev/null
	[ -f "$TARBALL" ] || die "$SRC_PKG installed but $TARBALL is not there"
}

# git in the kernel tree, with identities that do not depend on the caller.
kgit() {
	git -C "$KTREE" -c user.name="${GIT_AUTHOR_NAME:-$BASE_AUTHOR_NAME}" \
		-c user.email="${GIT_AUTHOR_EMAIL:-$BASE_AUTHOR_EMAIL}" \
		-c core.autocrlf=false -c gc.auto=0 "$@"
}
