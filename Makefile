# mmtune: kernel hook patches, the mmtune.ko module, tools and tests.
#
#   make kernel    patched test kernel of the line (cached, see
#                  scripts/kernel-build.sh), linked as build/LINE/kernel
#   make modules   mmtune.ko and the test modules against that kernel, built
#                  in build/LINE/module and build/LINE/kmod
#   LINE=6.12      every target that builds, boots or packages a kernel takes
#                  the line (kernel-patches/LINE, its row line.conf); the
#                  default is 6.1
#   make kernel-prepare  the line's tree patched and configured, not built
#                  (the dry run)
#   make run       the main job: boot the kernel with mmtune in qemu, show it
#   make check     every test suite (unit, static, VM on each kernel line), one
#                  summary line
#   make kernel-bench  the benchmark kernels: bench-prod (the series, no
#                  debugging) and bench-unpatched (same config, no series);
#                  and PEER (the line's bench_peer, 6.12: 7.3: upstream's
#                  kernel, bench-unpatched of that line)
#   make bench-icount  instruction counts per operation, every feature, on
#                  those kernels (tests/bench/icount-features.sh; LINE=6.12
#                  with the upstream column)
#   make kernel-bench-irqsoff  bench-prod with the irqsoff and preemptoff
#                  latency tracers (configs/bench-irqsoff.config; 20 min)
#   make bench-irqsoff  interrupts-off sections, preemption-off sections and
#                  scheduling latency during munmap of 1 GiB of swapped-out
#                  memory, the stock slot cache against mmtune's at 64 and
#                  1024 (tests/bench/irqsoff.sh; issue 26 item 2; 1 hour)
#   make check-debug  the VM suite on the debug kernel (KASAN, kmemleak,
#                  DEBUG_PAGEALLOC, lockdep) with preempt=full, the line's
#                  (build/LINE/kernel-debug)
#   make check-slow   the VM tests marked "# slow:" (campaigns, mm
#                  selftests), skipped by make check
#   make check-selftests  the kernel tree's own mm selftests in the VM,
#                  stock and with every feature on (selftests-mm, slow)
#   make unit | style | userspace | vm-check   one suite
#   make check-matrix  for every kernel line, its series and the module
#                  under the configurations of its row (test, hooks/SWAP/
#                  ZSWAP/THP/SMP off, Debian's amd64): W=1 on the touched
#                  objects, mmtune exports, make M=; hooks-off disassembled
#                  against stock (touched objects and those including a
#                  touched header); each patch compiled in turn; no vmlinux
#   make packages          mmtune and mmtune-dkms .deb and .rpm (build/packaging/out)
#   make kernel-packages   the patched kernel as .deb and .rpm (cached;
#                          build/packaging/kernel-pkgs-LINE)
#   make check-packaging   the whole packaging suite: kernel packages, DKMS in
#                          a Debian 12 root, RPMs, install and boot (long)
#   make check-packaging-suites  no kernel: lintian on Debian 12 and 13,
#                          both suites from one repository, what installing
#                          changes (about 2 min)
#   make kernel-packages-cloud  the kernel .debs from Debian 12's cloud config
#                          and mmtune-modules for it (cached; over an hour cold;
#                          LINE=6.12: linux-config-6.12's)
#   make check-packaging-cloud  those packages: headers (make M=, DKMS), apt
#                          install from a signed local repository and qemu
#                          boots with module.sig_enforce=1, a stock kernel
#                          beside ours (LINE=6.12 RELEASE=bookworm|trixie:
#                          in a Debian 12 or 13 root)
#   make check-packaging-rpm  the .rpm half of a set (LINE=, KERNEL_PKGS=SET):
#                          names, exact pins, no private key, mmtune-modules'
#                          signature, rpm --root install with DKMS from -devel
#   make check-packaging-cloud-6.12  the 6.12 operator path end to end: both
#                          cloud sets, then the above for 6.12 in Debian 12
#                          (with the Debian 12 LTS move from our 6.1 kernel)
#                          and in Debian 13
#   make check-packaging-grub  the Debian 13 GRUB pin (packaging/README.md, "Debian 12 and 13")
#                          booted through GRUB: Debian's higher cloud kernel
#                          without it, ours with it (a built 6.12 cloud set:
#                          KERNEL_PKGS=SET, default the newest; builds none)
#   make check-packaging-kernels  every shipped profile applied, verified and
#                          rolled back on Debian 12 and 13 cloud kernels and
#                          trixie-backports' newest, booted (about 20 min)
#   make repo              a signed apt repository (dists/bookworm) and rpm
#                          repository (createrepo_c) in build/repo from the
#                          built packages, with MMTUNE_REPO_KEY=<gpg key>
#                          (packaging/PACKAGING.md, "The repository")
#   make results           render results/*.tsv (written by the benchmarks
#                          and make check) into the docs' results regions
#
# On a fresh Debian 12 machine use scripts/dev.sh, which installs the build
# dependencies first (see README.md).

# The kernel line (kernel-patches/LINE, its row LINE/line.conf): 6.1, the
# default, or another of LINES.
LINE ?= 6.1
LINES := $(patsubst kernel-patches/%/line.conf,%,$(wildcard kernel-patches/*/line.conf))
# Every line's kernel, modules and VM runs live in build/LINE/; the sources
# (module/, tests/kmod/) are copied there, so that no object is built in the
# source tree and the lines never overwrite each other's objects.
KDIR ?= $(CURDIR)/build/$(LINE)/kernel
MODDIR := $(CURDIR)/build/$(LINE)/module
KMODDIR := $(CURDIR)/build/$(LINE)/kmod
export KDIR
# $(call row,NAME): the value of NAME in the line's row.
row = $(shell . kernel-patches/$(LINE)/line.conf && echo "$$$(1)")
# tests/vm/run.sh --line: the kernel, modules and run directory of the line.
VM_LINE := --line $(LINE)
# When make check started: its results count building what was missing.
ifeq ($(origin MMTUNE_CHECK_T0),undefined)
MMTUNE_CHECK_T0 := $(shell date +%s)
endif
export MMTUNE_CHECK_T0

all: modules

setup:
	scripts/setup-host.sh

# Always asks the cache; a hit costs a second.
kernel:
	scripts/kernel-build.sh $(LINE)

kernel-prepare:
	scripts/kernel-build.sh $(LINE) --prepare

# The copy keeps its objects (rsync leaves excluded files), so kbuild
# rebuilds only what changed.
OBJECTS := '*.o' '*.ko' '*.mod' '*.mod.c' '.*.cmd' Module.symvers modules.order
modules: kernel
	@mkdir -p $(MODDIR) $(KMODDIR)
	rsync -a --delete $(addprefix --exclude=,$(OBJECTS)) module/ $(MODDIR)/
	rsync -a --delete $(addprefix --exclude=,$(OBJECTS)) tests/kmod/ $(KMODDIR)/
	$(MAKE) -C $(KDIR) M=$(MODDIR) modules
	$(MAKE) -C $(KDIR) M=$(KMODDIR) modules

# Every kernel line's kernel and modules, one line after the other (the
# kernel builds take the machine's build lock in turn anyway).
# (KDIR is exported: each line's make must pick its own.)
modules-all-lines:
	$(foreach l,$(LINES),env -u KDIR $(MAKE) --no-print-directory modules LINE=$(l) &&) true

run: modules
	tests/vm/run.sh --demo $(VM_LINE)

check: modules-all-lines
	tests/run-all.sh

# The VM tests "make check" leaves out (not marked "# tier: check"), every
# line, two lanes; CI (.ci/run) runs it after "make check".
check-vm: modules-all-lines
	tests/run-all.sh --tier vm

check-slow: modules
	MMTUNE_VM_SLOW=only tests/vm/run.sh $(VM_LINE)

check-selftests: modules
	MMTUNE_VM_SLOW=1 tests/vm/run.sh --tests 'selftests-*' $(VM_LINE)

kernel-debug:
	scripts/kernel-build.sh $(LINE) --variant debug

# The peer of a line's instruction counts: upstream's kernel of the same
# config without the series (the line's bench_peer; 6.12: 7.3,
# linux-source-7.3 of trixie-backports; PEER= for none).
PEER ?= $(call row,bench_peer)

kernel-bench:
	scripts/kernel-build-bench.sh $(LINE) bench-prod
	scripts/kernel-build-bench.sh $(LINE) bench-unpatched
ifneq ($(PEER),)
	scripts/install-kernel-source.sh $(PEER)
	scripts/kernel-build-bench.sh $(PEER) bench-unpatched
endif

bench-icount: kernel-bench
	tests/bench/icount-features.sh --line $(LINE) $(if $(PEER),--peer $(PEER))

kernel-bench-irqsoff:
	scripts/kernel-build-bench.sh $(LINE) bench-irqsoff

bench-irqsoff: kernel-bench-irqsoff
	tests/bench/run.sh irqsoff

check-debug:
	tests/vm/check-debug.sh $(VM_LINE)

unit:
	$(MAKE) -C tests/unit check

userspace:
	tests/userspace/run.sh

style: kernel
	scripts/check-style-docs.sh

# Not part of check yet (see kernel-patches/README.md, "Build matrix"): needs no kernel
# build, only the source packages. Both lines run even if the first fails; a
# line whose every point passed gets its time in results/build-matrix.tsv.
check-matrix:
	@rc=0; for l in $(LINES); do \
		tests/bench/results.py time build-matrix --label "scripts/check-build-matrix.sh $$l" -- \
			scripts/check-build-matrix.sh $$l || rc=1; \
	done; \
	scripts/render-results.py >/dev/null; exit $$rc

vm-check: modules
	tests/vm/run.sh $(VM_LINE)

packages:
	packaging/build.sh

kernel-packages:
	packaging/kernel/build-kernel-pkgs.sh --line $(LINE)

check-packaging:
	tests/packaging/run.sh --full

# Debian 12 and 13 roots, no kernel: lintian, apt from one repository,
# what installing changes (also part of check-packaging).
check-packaging-suites: packages
	tests/packaging/suites.sh

# The distribution-config builds are long: never part of check or
# check-packaging.
kernel-packages-cloud:
	packaging/kernel/build-kernel-pkgs.sh --line $(LINE) --distro debian-cloud --deb

# The set of that line.
KERNEL_PKGS = build/packaging/kernel-pkgs-$(LINE)

# The Debian release of the root the cloud tests install into: the first
# of the line's cloud_releases (bookworm, Debian 12; 6.12 also trixie,
# Debian 13).
RELEASE ?= $(firstword $(call row,cloud_releases))

check-packaging-cloud: kernel-packages-cloud
	tests/packaging/cloud.sh --line $(LINE) --release $(RELEASE) $(KERNEL_PKGS)

# The .rpm half of a kernel package set, as far as this machine allows
# (rpm --root into a Debian 12 root, no boot: no RPM distribution is
# reachable): KERNEL_PKGS=SET (default the line's last set).
check-packaging-rpm: packages
	tests/packaging/rpm-set.sh --line $(LINE) $(KERNEL_PKGS)

# The 6.12 operator path: 6.12 in Debian 12 (bookworm-security's 6.12 as
# the stock kernel beside ours, and a host on our 6.1 kernel moving to
# 6.12) and in Debian 13; both runs, whatever the first gives.
# --no-print-directory: in a sub-make, make -C prints "Entering directory"
# even with -s, and the kernel release the build script reads from
# "make -s kernelrelease" would carry it.
check-packaging-cloud-6.12:
	$(MAKE) --no-print-directory kernel-packages-cloud LINE=6.1
	$(MAKE) --no-print-directory kernel-packages-cloud LINE=6.12
	rc=0; \
	tests/packaging/cloud.sh --line 6.12 --release bookworm --from build/packaging/kernel-pkgs-6.1 build/packaging/kernel-pkgs-6.12 || rc=1; \
	tests/packaging/cloud.sh --line 6.12 --release trixie build/packaging/kernel-pkgs-6.12 || rc=1; \
	exit $$rc

# The README's GRUB pin for Debian 13, booted through GRUB. It builds no
# kernel: KERNEL_PKGS=SET when given on the command line, else the newest
# finished 6.12 cloud set in the cache.
check-packaging-grub:
	tests/packaging/grub-pin.sh $(if $(filter command line,$(origin KERNEL_PKGS)),$(KERNEL_PKGS))

# Every shipped profile on Debian's own kernels (no mmtune hooks): the
# stock kernels of Debian 12 and 13 and the newest from trixie-backports.
check-packaging-kernels:
	packaging/build.sh deb
	tests/packaging/profiles-boot.sh

# The kernel sets it takes are 6.1's built last (build/packaging/kernel-pkgs-6.1):
# make kernel-packages or kernel-packages-cloud first.
repo: packages
	packaging/repo/make-repo.sh

results:
	scripts/render-results.py

clean:
	rm -rf build/unit build/vm-split build/vm-failed-* build/test-logs build/packaging \
		$(foreach l,$(LINES),build/$(l)/module build/$(l)/kmod build/$(l)/vm build/$(l)/debug)

.PHONY: all setup kernel kernel-prepare modules run check check-vm check-slow check-selftests modules-all-lines kernel-debug kernel-bench bench-icount kernel-bench-irqsoff bench-irqsoff check-debug unit style check-matrix userspace vm-check clean packages kernel-packages check-packaging check-packaging-suites check-packaging-rpm kernel-packages-cloud check-packaging-cloud check-packaging-cloud-6.12 check-packaging-grub check-packaging-kernels repo results
