# Entry points of the memcg kmem accounting port.  Each target is a thin
# wrapper around a script; run `make help` for the list.

SHELL := /bin/bash
.DEFAULT_GOAL := help

.PHONY: help branch refresh check check-host host-tests lint docs boot checkpatch clean bench bench-slab mail bisect-build bisect-check distro-build debug-full debug-leak

help:
	@echo "make branch      export the series: tarball -> build/linux, branch memcg-kmem"
	@echo "make check       the whole test pipeline in the container (what CI runs)"
	@echo "make check-host  the same pipeline without the container (needs its packages)"
	@echo "make host-tests  tests of the verdict scripts on canned logs (seconds)"
	@echo "make lint        shellcheck on every script; names in the docs exist (make check runs both)"
	@echo "make bench       benchmark, SLUB: base vs series, the two designs; build/bench/table-slub.txt"
	@echo "make bench-slab  the same with SLAB; build/bench/table-slab.txt"
	@echo "make debug-full  the whole suite on the debug kernel (CI runs a subset)"
	@echo "make debug-leak  only the DEBUG_SLAB + kmemleak kernel (series-leak), whole suite"
	@echo "make refresh     write patches/ from the branch (after editing build/linux)"
	@echo "make docs        build the Sphinx site into build/docs/html"
	@echo "make checkpatch  scripts/checkpatch.pl --strict on patches/"
	@echo "make mail        write the posting (cover letter + one message per patch) into build/mail (b4; sends nothing)"
	@echo "make bisect-build  build every commit: SLUB, SLAB, CONFIG_MEMCG=n, root option, no SLUB_DEBUG (CONFIGS=list, FULL=1: vmlinux each)"
	@echo "make bisect-check  boot every commit, run the tests of the patches up to it (COMMITS=\"3 5\": only those)"
	@echo "make distro-build  the series' objects under Debian's amd64 config (VMLINUX=1: whole vmlinux)"
	@echo "make boot        boot a built kernel with a shell (KERNEL=series|base)"
	@echo "make clean       remove build/ (make branch's tree, results); make check's trees are in CACHE_DIR"

branch:
	branch-tools/export

refresh:
	branch-tools/refresh

check:
	ci/pipeline

check-host:
	ci/pipeline --no-container

# The whole suite on the debug kernel (CI runs a subset; ci/kernels).
debug-full:
	KERNELS="$${KERNELS:-debug-full}" SKIP_DOCS=1 ci/pipeline

# The DEBUG_SLAB + kmemleak kernel alone (CI boots it too; see kmemleak.config).
debug-leak:
	KERNELS="$${KERNELS:-series-leak}" SKIP_DOCS=1 ci/pipeline

# The benchmark: base, the series with the 2012 design and the same kernel
# with the default design (series-objects), TCG and -icount, 5 repetitions each.
bench:
	BENCH=$${BENCH:-5} KERNELS="$${KERNELS:-bench-series bench-base bench-objects}" ci/pipeline bench

bench-slab:
	BENCH=$${BENCH:-5} KERNELS="bench-series-slab bench-base-slab bench-objects-slab" ci/pipeline bench

# shellcheck on every script, and every make target and path the docs name
# exists (make check runs both).
lint:
	ci/lint
	ci/docs-names

host-tests:
	@out=$$(tests/host/run); echo "$$out"; ! grep -q '^not ok' <<<"$$out"

docs:
	sphinx-build -W --keep-going -b html docs build/docs/html

checkpatch:
	branch-tools/checkpatch

mail:
	branch-tools/mail

bisect-build:
	branch-tools/bisect-build --configs $${CONFIGS:-test,slab,nomemcg,root,slubnodebug} $(if $(FULL),--full)

# Manual (not in make check): every commit of the series booted, as the
# series and series-objects boots, with the tests of the patches up to it.
bisect-check:
	BISECT_COMMITS="$(COMMITS)" ci/pipeline bisect-check

distro-build:
	branch-tools/distro-build $(if $(VMLINUX),--vmlinux)

KERNEL ?= series
# make check's object trees (TREES_DIR, lib/common.sh).
TREES_DIR = $(shell . lib/common.sh && printf %s "$$TREES_DIR")
KOBJ_DIR = $(firstword $(wildcard $(TREES_DIR)/out/$(KERNEL) $(TREES_DIR)/base/out/$(KERNEL)))
boot:
	@test -n "$(KOBJ_DIR)" || { echo "no built kernel '$(KERNEL)': run make check first"; exit 1; }
	ci/boot --interactive $(KOBJ_DIR)/arch/x86/boot/bzImage build/initrd/$(KERNEL).initrd build/boot-$(KERNEL)

clean:
	rm -rf build
