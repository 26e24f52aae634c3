# shellcheck shell=bash
# kernels.sh: ci/kernels, parsed once.  Sourced after ci/lib.sh (die).
#
# load_kernels fills, for each build NAME: BUILD_TREE[NAME] (series|base),
# BUILD_FRAGS[NAME]; for each boot NAME: BOOT_BUILD[NAME], BOOT_KIND[NAME],
# BOOT_TESTS[NAME], BOOT_OPTS[NAME] ("-" for none); and BOOTS, the boot
# names in the file's order.  A malformed line, a name given twice, an
# unknown tree, kind or option, or a boot of no build stops the caller
# with the file's line number.

# shellcheck disable=SC2034 # used by the scripts that source this file
declare -A BUILD_TREE=() BUILD_FRAGS=() BOOT_BUILD=() BOOT_KIND=() BOOT_TESTS=() BOOT_OPTS=()
BOOTS=()
KERNELS_FILE=${KERNELS_FILE:-$CI_DIR/kernels}

load_kernels() {
	local n=0 line o vs
	local -a f opts
	while IFS= read -r line; do
		n=$((n + 1))
		# Fields are split with read -a, never by an unquoted expansion:
		# the TESTS column holds globs, which must reach the guest as
		# written.
		read -r -a f <<<"$line"
		case ${f[0]:-} in
		''|'#'*) continue ;;
		build)
			[ ${#f[@]} = 4 ] || die "$KERNELS_FILE:$n: want 'build NAME TREE FRAGMENTS'"
			[ -z "${BUILD_TREE[${f[1]}]:-}" ] || die "$KERNELS_FILE:$n: build ${f[1]} given twice"
			case ${f[2]} in series|base) ;; *) die "$KERNELS_FILE:$n: tree '${f[2]}' is neither series nor base" ;; esac
			BUILD_TREE[${f[1]}]=${f[2]}
			BUILD_FRAGS[${f[1]}]=${f[3]} ;;
		boot)
			[ ${#f[@]} = 6 ] || die "$KERNELS_FILE:$n: want 'boot NAME BUILD KIND TESTS OPTIONS'"
			[ -z "${BOOT_BUILD[${f[1]}]:-}" ] || die "$KERNELS_FILE:$n: boot ${f[1]} given twice"
			[ -n "${BUILD_TREE[${f[2]}]:-}" ] || die "$KERNELS_FILE:$n: boot ${f[1]} names build '${f[2]}', not given above it"
			case ${f[3]} in series|base|gate) ;; *) die "$KERNELS_FILE:$n: kind '${f[3]}' is not series, base or gate" ;; esac
			IFS=, read -r -a opts <<<"${f[5]}"
			for o in "${opts[@]}"; do
				case $o in -|kmemcaches|hybrid|manual|slow|v2|icount|vs=?*) ;;
				*) die "$KERNELS_FILE:$n: unknown option '$o'" ;;
				esac
			done
			BOOT_BUILD[${f[1]}]=${f[2]}
			BOOT_KIND[${f[1]}]=${f[3]}
			BOOT_TESTS[${f[1]}]=${f[4]}
			BOOT_OPTS[${f[1]}]=${f[5]}
			BOOTS+=("${f[1]}") ;;
		*) die "$KERNELS_FILE:$n: a line starts with build or boot, not '${f[0]}'" ;;
		esac
	done < "$KERNELS_FILE"
	for o in "${BOOTS[@]}"; do
		vs=$(boot_opt "$o" vs) || continue
		[ -n "${BOOT_BUILD[$vs]:-}" ] || die "$KERNELS_FILE: boot $o: vs=$vs names no boot"
	done
}

# Succeeds if boot NAME has option OPT.
boot_has() { # NAME OPT
	case ,${BOOT_OPTS[$1]}, in *,"$2",*) return 0 ;; esac
	return 1
}

# The value of boot NAME's option KEY=VALUE; fails without one.
boot_opt() { # NAME KEY
	local o
	local -a opts
	IFS=, read -r -a opts <<<"${BOOT_OPTS[$1]}"
	for o in "${opts[@]}"; do
		case $o in "$2"=*) printf '%s\n' "${o#*=}"; return 0 ;; esac
	done
	return 1
}

boot_tree() { printf '%s\n' "${BUILD_TREE[${BOOT_BUILD[$1]}]}"; }

# The boots make check makes: all but "manual".
default_boots() {
	local b
	for b in "${BOOTS[@]}"; do
		boot_has "$b" manual || printf '%s\n' "$b"
	done
}

# What a benchmark boot is in the comparison (ci/bench-table): "base",
# "series" (the 2012 design) or "series-objects" (the series' default).
boot_role() {
	if [ "$(boot_tree "$1")" = base ]; then echo base
	elif boot_has "$1" kmemcaches; then echo series
	else echo series-objects
	fi
}

# slab or slub: the allocator boot NAME's build compiles.
boot_allocator() {
	case ,${BUILD_FRAGS[${BOOT_BUILD[$1]}]}, in *,slab.config,*) echo slab ;; *) echo slub ;; esac
}
