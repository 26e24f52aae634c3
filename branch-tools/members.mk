# branch-tools/members.mk: prints the objects and subdirectories kbuild
# builds in $(obj) for the .config of $(objtree) (branch-tools/lib.sh,
# compiled()).  Run from the source tree: make -f .../members.mk
# objtree=OUT obj=DIR members.
srctree := $(CURDIR)
src := $(obj)
include $(objtree)/.config
include $(srctree)/scripts/Kbuild.include
kbuild-file := $(if $(wildcard $(srctree)/$(src)/Kbuild),$(srctree)/$(src)/Kbuild,$(srctree)/$(src)/Makefile)
include $(kbuild-file)
include $(srctree)/scripts/Makefile.lib
members:
	@echo $(real-obj-y) $(real-obj-m) $(lib-y) $(subdir-ym)
