# shellcheck shell=bash
# Common settings of the CI scripts: sourced, not run.

set -euo pipefail

CI_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$CI_DIR/.." && pwd)
# die, note, CACHE_DIR, use_ccache, need_pkgs, ensure_command
. "$REPO_DIR/lib/common.sh"
BUILD_DIR=${BUILD_DIR:-$REPO_DIR/build}
export CONTAINERS_CONF=${CONTAINERS_CONF:-$CI_DIR/containers.conf}

# shellcheck disable=SC2034 # both used by ci/pipeline
BASE_IMAGE=localhost/memcg-kmem-base:bookworm
# shellcheck disable=SC2034
CONTAINER_IMAGE_NAME=localhost/memcg-kmem-ci

# Wall time of each stage, printed as it ends and again at the end.
#
# The stage's command runs as a job of its own: called as "$@" || rc=$?,
# bash would ignore set -e inside it (it does so for everything on the
# left of ||), so a failing make in the middle of a stage function would
# go unnoticed and the function's last command would decide.  In a job,
# set -e holds and the first failing command ends the stage.  A stage
# function therefore sets no variable its caller needs.
STAGE_LOG=${STAGE_LOG:-$BUILD_DIR/stage-times}
stage() {
	local name=$1 start end rc
	shift
	printf '==> %s\n' "$name" >&2
	start=$(date +%s)
	rc=0
	"$@" &
	wait $! || rc=$?
	end=$(date +%s)
	mkdir -p "$(dirname "$STAGE_LOG")"
	printf '%-28s %5ss%s\n' "$name" "$((end - start))" "$([ $rc = 0 ] || echo "  (failed, exit $rc)")" | tee -a "$STAGE_LOG" >&2
	return $rc
}

# The Debian mirror this machine's apt uses: the first URI of the main
# archive in its sources, so nothing here names a host.
debian_mirror() {
	local uri
	uri=$(sed -n 's/^URIs:[[:space:]]*//p' /etc/apt/sources.list.d/*.sources 2>/dev/null |
		grep -v -- '-security' | grep -m1 '/debian/\?$' || true)
	if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
		uri=$(awk '$1 == "deb" && $2 !~ /^\[/ && $3 !~ /security/ { print $2; exit }' /etc/apt/sources.list)
	fi
	[ -n "$uri" ] || die "cannot find this machine's Debian mirror in /etc/apt/sources*"
	printf '%s\n' "${uri%/}"
}

