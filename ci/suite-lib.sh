# shellcheck shell=bash
# suite-lib.sh: the steps ci/run-suite, ci/bench and ci/bisect-check share:
# export, kernel builds, tests, guest image, initramfs, boots.  Sourced
# after ci/lib.sh and ci/kernels.sh, with load_kernels done.

# The series tree is make check's own (not make branch's build/linux,
# where a developer edits): exported from patches/, kept under CACHE_DIR
# with its object trees, so that a fresh clone's run rebuilds only what
# changed.  The base tree sits at the same depth as the series tree and
# each kernel's object tree at the same place relative to its source, so
# ccache (paths made relative by CCACHE_BASEDIR) shares objects between
# the two.
KTREE=${KTREE:-$TREES_DIR/linux}
BASE_TREE=${BASE_TREE:-$TREES_DIR/base/linux}
RESULTS=${RESULTS:-$BUILD_DIR/results}
JOBS=${JOBS:-$(nproc)}

# One run at a time uses the trees: runs from other clones share them.
# (The descriptor stays open, and the lock held, until the run ends.)
mkdir -p "$CACHE_DIR"
exec 9>>"$CACHE_DIR/trees.lock"
if ! flock -n 9; then
	note "waiting for another run that uses $TREES_DIR"
	flock 9
fi

do_export() {
	KTREE=$KTREE "$REPO_DIR/branch-tools/export" --auto-recreate
	local tag
	tag=$(git -C "$KTREE" tag -l 'debian/*' | tail -n 1)
	if [ -d "$BASE_TREE/.git" ] || [ -f "$BASE_TREE/.git" ]; then
		git -C "$BASE_TREE" checkout -q -f --detach "$tag"
	else
		git -C "$KTREE" worktree prune
		mkdir -p "$(dirname "$BASE_TREE")"
		git -C "$KTREE" worktree add -q -f --detach "$BASE_TREE" "$tag"
	fi
}

# Source tree of build NAME.
build_src() {
	if [ "${BUILD_TREE[$1]}" = base ]; then printf '%s\n' "$BASE_TREE"; else printf '%s\n' "$KTREE"; fi
}

# Object tree of build NAME: <its source>/../out/NAME.
build_obj() { printf '%s/out/%s\n' "$(dirname "$(build_src "$1")")" "$1"; }

# The builds that the boots BOOT... use, each once, in the boots' order.
builds_of() {
	local b seen=" "
	for b in "$@"; do
		case $seen in *" ${BOOT_BUILD[$b]} "*) continue ;; esac
		seen="$seen${BOOT_BUILD[$b]} "
		printf '%s\n' "${BOOT_BUILD[$b]}"
	done
}

# tinyconfig + the fragments FRAGS (comma-separated) + olddefconfig into
# object tree OUT, checked (ci/kconfig); the release names the kernel
# (6.1.192-series, 6.1.192-base).  Made again only when its inputs change:
# the fragments, ci/kconfig, the tree's commit and any change in its work
# tree (the stamp OUT/.kmem-kconfig, which it prints).
configure() { # NAME SRC OUT FRAGS
	local name=$1 src=$2 out=$3 f fr=() key
	mkdir -p "$out"
	for f in ${4//,/ }; do fr+=("$CI_DIR/configs/$f"); done
	key=$({ cat "${fr[@]}" "$CI_DIR/kconfig"; git -C "$src" rev-parse HEAD; git -C "$src" diff HEAD; echo "$name"; } |
		sha256sum | cut -d' ' -f1)
	if [ ! -f "$out/.config" ] || [ "$(cat "$out/.kmem-kconfig" 2>/dev/null)" != "$key" ]; then
		rm -f "$out/.kmem-kconfig"
		# (|| return: a caller's || turns set -e off in here.)
		"$CI_DIR/kconfig" "$src" "$out" "-$name" "${fr[@]}" || return 1
		echo "$key" > "$out/.kmem-kconfig"
	fi
	echo "$key"
}

# Configure and make kernel SRC into OUT (release suffix -NAME) with the
# fragments FRAGS (comma-separated), and the test modules into
# $BUILD_DIR/tests/NAME.
make_kernel() { # NAME SRC OUT FRAGS
	local name=$1 src=$2 out=$3 key
	# Kbuild only rebuilds what an option change touches.  LOCALVERSION=
	# (set, empty) keeps setlocalversion from adding "+".
	key=$(configure "$@")
	# make takes 12-16 s to find nothing to do: skipped when the last make
	# that succeeded in OUT had the same inputs (a second stamp).
	if [ "$(cat "$out/.kmem-built" 2>/dev/null)" != "$key" ] ||
	   [ ! -f "$out/arch/x86/boot/bzImage" ]; then
		rm -f "$out/.kmem-built"
		make -s -C "$src" O="$out" CC="ccache gcc" LOCALVERSION= -j"$JOBS" bzImage modules
		echo "$key" > "$out/.kmem-built"
	fi
	make -s -C "$REPO_DIR/tests" module KSRC="$src" KOBJ="$out" OUT="$BUILD_DIR/tests/$name" \
		LOCALVERSION= >/dev/null
	note "$name: $(cat "$out/include/config/kernel.release"), bzImage $(stat -c %s "$out/arch/x86/boot/bzImage") bytes"
}

build_kernel() { # BUILD
	make_kernel "$1" "$(build_src "$1")" "$(build_obj "$1")" "${BUILD_FRAGS[$1]}"
}

# The configurations of builds BUILD... that no boot of the run makes (the
# manual ones: the benchmark kernels, series-root): a fragment changed for
# one kernel must not break another that nobody builds that day.  Each is
# configured in a scratch object tree under CACHE_DIR, again only when its
# inputs change; nothing is compiled.
check_configs() { # BUILD...
	local b
	for b; do
		configure "$b" "$(build_src "$b")" "$CACHE_DIR/kconfig-check/$b" "${BUILD_FRAGS[$b]}" >/dev/null ||
			die "build $b of ci/kernels: ci/kconfig refuses its configuration (above)"
	done
}

# The kernel's own cgroup selftests (the gate of ci/gate), from the
# exported tree, with its UAPI headers; they are the same in base and series.
CGROUP_TESTS="test_kmem test_memcontrol test_core"
build_selftests() {
	local o=$BUILD_DIR/khdr t
	make -s -C "$REPO_DIR/tests" selftests KSRC="$KTREE" OUT="$BUILD_DIR/tests/common"
	make -s -C "$KTREE" O="$o" headers
	make -s -C "$KTREE/tools/testing/selftests" O="$o" TARGETS=cgroup
	rm -rf "$BUILD_DIR/tests/common/cgroup"
	mkdir -p "$BUILD_DIR/tests/common/cgroup"
	for t in $CGROUP_TESTS; do
		cp "$o/kselftest/cgroup/$t" "$BUILD_DIR/tests/common/cgroup/"
	done
}

build_image() {
	"$CI_DIR/image" "$BUILD_DIR/image/userland.cpio"
}

# The guest's initramfs $BUILD_DIR/initrd/NAME.initrd: the userland
# archive with one appended that holds the init, the tests and the
# modules built for MODS ($BUILD_DIR/tests/MODS).
make_initrd() { # NAME MODS
	local stage=$BUILD_DIR/initrd/$1
	rm -rf "$stage"
	mkdir -p "$stage/kmem-tests/bin" "$stage/kmem-tests/bench" "$stage/kmem-tests/cgroup"
	cp "$CI_DIR/guest/kmem-init" "$stage/kmem-init"
	cp "$BUILD_DIR/tests/common/bin/"* "$stage/kmem-tests/bin/"
	cp "$BUILD_DIR/tests/common/cgroup/"* "$stage/kmem-tests/cgroup/"
	cp "$BUILD_DIR/tests/common/bench/kmem_bench" "$stage/kmem-tests/bench/"
	cp "$BUILD_DIR/tests/$2/kmem_test.ko" "$BUILD_DIR/tests/$2/kmem_churn.ko" "$stage/kmem-tests/"
	(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) > "$stage.cpio"
	cat "$BUILD_DIR/image/userland.cpio" "$stage.cpio" > "$stage.initrd"
}

# The binaries of DIR that a boot's TESTS column (globs, or !globs: all but
# those) and the globs of FILTER both select, comma-separated.
select_tests() { # TESTS FILTER DIR
	local col=$1 neg=0 name g pick sel=()
	local -a globs filters
	case $col in '!'*) neg=1 col=${col#!} ;; esac
	IFS=, read -ra globs <<< "$col"
	IFS=, read -ra filters <<< "$2"
	for name in $(cd "$3" && echo *); do
		pick=$neg
		for g in "${globs[@]}"; do
			# shellcheck disable=SC2053 # a glob, on purpose
			if [[ $name == $g ]]; then pick=$((1 - neg)); break; fi
		done
		[ "$pick" = 1 ] || continue
		for g in "${filters[@]}"; do
			# shellcheck disable=SC2053
			if [[ $name == $g ]]; then sel+=("$name"); break; fi
		done
	done
	local IFS=,
	echo "${sel[*]}"
}

# The kernel command line a boot's OPTIONS add.
boot_cmdline() { # OPTIONS
	# "slow" (a debug kernel under TCG): the suite's waits and timeouts x10.
	case ,$1, in *,slow,*) echo kmem.timeout_scale=10 ;; esac
	# "kmemcaches": the 2012 design (per-memcg caches), chosen at boot; the
	# suite's copies made at first use (the tests of the threshold set
	# their own), unless "hybrid" keeps the kernel's default threshold.
	case ,$1, in *,kmemcaches,*) echo cgroup.memory=kmemcaches ;; esac
	case ,$1, in *,hybrid,*) ;; *,kmemcaches,*) echo memcontrol.kmem_copy_slabs=0 ;; esac
	# "v2": the kernel's cgroup selftests on cgroup v2 instead of the suite.
	case ,$1, in *,v2,*) echo kmem.suite=cgroup ;; esac
}

# Boot BZIMAGE with the initramfs of NAME, running TESTS (binaries,
# comma-separated) with the command line of OPTIONS; then parse the run
# into OUT/results and judge it into OUT/verdict with KIND and any further
# ci/judge arguments.
run_boot() { # NAME BZIMAGE OUT KIND TESTS OPTIONS [JUDGE-ARGS...]
	local name=$1 bz=$2 out=$3 kind=$4 tests=$5 opts=$6
	local -a extra
	shift 6
	mapfile -t extra < <(boot_cmdline "$opts")
	rm -rf "$out"
	mkdir -p "$out"
	"$CI_DIR/boot" "$bz" "$BUILD_DIR/initrd/$name.initrd" "$out" "kmem.tests=$tests" "${extra[@]}"
	"$CI_DIR/parse-run" "$out/tap.log" "$out/console.log" "$(cat "$out/qemu-status")" > "$out/results"
	"$CI_DIR/judge" --label "$name" --kind "$kind" --manifest "$REPO_DIR/tests/manifest" \
		--binaries "$(cd "$BUILD_DIR/tests/common/bin" && echo *)" "$@" \
		"$out/results" > "$out/verdict"
	note "$name: $(grep -c '^ok' "$out/verdict") ok, $(grep -c '^not ok' "$out/verdict") not ok (guest: $(cat "$out/qemu-status"))"
}

# Boot NAME of ci/kernels and judge it (results in $RESULTS/NAME).
# KMEM_FILTER narrows each boot's tests; a boot left with none is not made.
boot_kernel() { # NAME
	local name=$1 b=${BOOT_BUILD[$1]} tests=${BOOT_TESTS[$1]} res=$RESULTS/$1
	local bins=$BUILD_DIR/tests/common/bin
	if [ -n "${KMEM_FILTER:-}" ]; then
		! boot_has "$name" v2 || bins=$BUILD_DIR/tests/common/cgroup
		tests=$(select_tests "$tests" "$KMEM_FILTER" "$bins")
		if [ -z "$tests" ]; then
			rm -rf "$res"
			mkdir -p "$res"
			echo "ok - $name: not booted # SKIP KMEM_FILTER=$KMEM_FILTER selects none of its tests (${BOOT_TESTS[$name]})" > "$res/verdict"
			note "$name: not booted (KMEM_FILTER=$KMEM_FILTER selects none of ${BOOT_TESTS[$name]})"
			return 0
		fi
	fi
	make_initrd "$name" "$b"
	run_boot "$name" "$(build_obj "$b")/arch/x86/boot/bzImage" "$res" "${BOOT_KIND[$name]}" \
		"$tests" "${BOOT_OPTS[$name]}"
}

# A boot that runs the benchmark instead of the suite (kmem.bench=WHAT):
# MODE icount is QEMU -icount with one vCPU (QEMU 7.2 hangs with two),
# guest time following instructions, for the fast-path figures; tcg is
# four vCPUs, as the memory figures need (each copy has per-CPU slabs).
# Boot NAME's "kmemcaches" option boots the 2012 design.  Succeeds if the
# benchmark finished.
bench_boot() { # NAME OUTDIR MODE(tcg|icount) WHAT
	local name=$1 out=$2 extra=()
	! boot_has "$name" kmemcaches || extra+=(cgroup.memory=kmemcaches)
	# BENCH_CMDLINE: more parameters for every benchmark boot (e.g.
	# memcontrol.kmem_copy_slabs=0, to measure copies at first use).
	[ -z "${BENCH_CMDLINE:-}" ] || read -r -a extra <<<"${extra[*]} $BENCH_CMDLINE"
	rm -rf "$out"
	mkdir -p "$out"
	KMEM_ICOUNT=$([ "$3" = icount ] && echo 1 || echo 0) \
		KMEM_SMP=$([ "$3" = icount ] && echo 1 || echo 4) \
		"$CI_DIR/boot" "$(build_obj "${BOOT_BUILD[$name]}")/arch/x86/boot/bzImage" \
		"$BUILD_DIR/initrd/$name.initrd" "$out" "kmem.bench=$4" tsc=reliable "${extra[@]}"
	grep -q '^KMEM-BENCH-END rc=0' "$out/tap.log"
}

# Export, then build what the boots BOOT... need, the tests and the image.
build_for() { # BOOT...
	local b
	stage export do_export
	for b in $(builds_of "$@"); do
		stage "kernel:$b" build_kernel "$b"
	done
	stage selftests build_selftests
	stage image build_image
}

# Check that each of NAME... is a boot of ci/kernels.
check_boots() {
	local b
	for b in "$@"; do
		[ -n "${BOOT_BUILD[$b]:-}" ] || die "no boot '$b' in ci/kernels (boots: ${BOOTS[*]})"
	done
}
