#!/bin/bash
# Boot the cached test kernel under qemu (TCG) with a busybox initramfs that
# carries mmtune.ko, the test modules and programs, and the guest tests.
# Results come back as TAP on a second serial port; the kernel console goes
# to a log that is scanned for warnings, BUGs and lockdep reports.
#
#   tests/vm/run.sh [--line LINE] [--demo] [--bench NAME] [--tests SPEC]
#                   [--run-dir DIR] [--verbose]
#
# --line LINE boots the test kernel of that kernel line (kernel-patches/LINE;
# default 6.1), build/LINE/kernel, with the modules built for it,
# build/LINE/{module,kmod} ("make modules LINE=LINE"), in the run directory
# build/LINE/vm, so that the lines can run side by side.
# --bench NAME runs tests/bench/NAME.sh in the guest instead of the tests
# and shows its output (tests/bench/run.sh is the front end).
# --tests SPEC: the tests to run, comma-separated globs, "!GLOB" excludes
# (tests/vm/guest/select.sh), e.g. 'zswap_large-*' or '*,!pcp_high-reclaim-cap'.
# --run-dir DIR: the run directory instead of the line's (two boots of one
# line side by side, as tests/run-all.sh's split of the 6.1 suite).
#
# Environment:
#   KDIR                 kernel tree (default: build/LINE/kernel, the line's)
#   MMTUNE_VM_TIMEOUT    seconds before the run is killed (default 2400,
#                        times the scale below)
#   MMTUNE_VM_STALL      seconds without a new line on the TAP port before
#                        the run is killed (default: the longest time limit
#                        of the chosen tests plus the cleanup's, plus 120)
#   MMTUNE_VM_BOOT_TIMEOUT  seconds for the guest to reach its tests
#                        (default 180; a boot stuck in the kernel)
#   MMTUNE_VM_TIMEOUT_SCALE  multiplies every guest test's time limit
#                        (default 1; slower kernels, e.g. the debug one)
#   MMTUNE_VM_LOAD_SCALE  the host-load factor of every limit (default:
#                        1 + the host's load average per CPU at the start)
#   MMTUNE_VM_DUMP_MEMORY  1: a hung guest's memory is also saved
#                        (dump-guest-memory, as large as the guest's RAM)
#   MMTUNE_VM_MEM        guest memory (default 2G)
#   MMTUNE_VM_SMP        vCPUs (default 2; MMTUNE_VM_NUMA sets its own)
#   MMTUNE_VM_ICOUNT     qemu's -icount value, e.g. shift=0,sleep=off: the
#                        guest's clock counts instructions (2^shift ns
#                        each), so guest-measured times do not follow the
#                        host's load. Single-threaded TCG and one vCPU only
#                        (qemu 7.2 hangs bringing up a second vCPU under
#                        -icount, see tests/bench/icount/run.sh)
#   MMTUNE_VM_FILES      more files for the guest, copied to /files/
#                        (space-separated paths; e.g. a second mmtune.ko)
#   MMTUNE_VM_TCG_THREAD single (default) or multi: TCG's vCPU threading;
#                        multi hits a qemu bug, see below
#   MMTUNE_VM_ACCEL      tcg (default) or kvm; kvm crawls and dies on these
#                        machines, so it is opt-in only
#   MMTUNE_VM_KO         mmtune.ko to test instead of the line's (e.g.
#                        one built by DKMS); the test modules are then
#                        optional (tests/packaging)
#   MMTUNE_VM_DISK_BPS   throttle the virtio swap disk to this many bytes/s
#                        (qemu throttling.bps-total), so that disk swap is
#                        not a page-cache-backed file in disguise
#   MMTUNE_VM_PROBE_KO   mmtune_probe.ko to use instead of tests/kmod's
#   MMTUNE_VM_APPEND     more kernel parameters (e.g. preempt=full)
#   MMTUNE_VM_SLOW       0 (default): tests marked "# slow:" are skipped;
#                        1: they run too; only: only they run
#   MMTUNE_VM_DIMM       1 (default for tests): a 256 MiB pc-dimm the guest
#                        may hot-unplug (pcp_high-dimm-unplug); its memory stays offline
#                        until a test onlines it; 0: none
#   MMTUNE_VM_NUMA       1: two NUMA nodes, half the memory and one CPU
#                        each (split_zero-migrate then migrates with move_pages())
#   MMTUNE_VM_KNOWN_REPORTS  names of tests/vm/known-reports/NAME.awk: stock
#                        kernel reports that do not fail this run (each
#                        filter removes only its report's own lines; the
#                        count is printed). Default: the row's
#                        known_reports; empty: none.
#
# Exit status: 0 when every test passed and the console is clean.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
# The kernel line: its kernel, modules and run directory (set below).
line=6.1
for ((i = 1; i <= $#; i++)); do
	[ "${!i}" = --line ] && { j=$((i + 1)); line=${!j:-}; }
done
[ -n "$line" ] && [ -f "$repo/kernel-patches/$line/line.conf" ] ||
	{ echo "vm: error: no kernel line '$line' (kernel-patches/LINE/line.conf)" >&2; exit 2; }
kdir=${KDIR:-$repo/build/$line/kernel} out=$repo/build/$line/vm
line_mods=$repo/build/$line/module line_kmod=$repo/build/$line/kmod
mem=${MMTUNE_VM_MEM:-2G}
accel=${MMTUNE_VM_ACCEL:-tcg}
# A busy host (CI machines are shared) gives the guest less CPU, so every
# limit grows with the host's load per CPU when the run starts: 1 + load /
# CPUs (an idle host 1, one kernel build beside it 2). MMTUNE_VM_LOAD_SCALE
# overrides the measured factor; MMTUNE_VM_TIMEOUT_SCALE multiplies it (a
# slower kernel).
load_scale=${MMTUNE_VM_LOAD_SCALE:-$(awk -v n="$(nproc)" '{ print 1 + int($1 / n) }' /proc/loadavg)}
timeout_scale=$(( ${MMTUNE_VM_TIMEOUT_SCALE:-1} * load_scale ))
timeout_s=${MMTUNE_VM_TIMEOUT:-$(( 2400 * timeout_scale ))}
boot_timeout_s=$(( ${MMTUNE_VM_BOOT_TIMEOUT:-180} * timeout_scale ))
die() { echo "vm: error: $*" >&2; exit 1; }

mode=test
tests='*'
bench=
verbose=0
disk_bps=${MMTUNE_VM_DISK_BPS:-}
smp=${MMTUNE_VM_SMP:-2}
numa_opts=()
if [ "${MMTUNE_VM_NUMA:-0}" = 1 ]; then
	# One socket per node: two cores of one socket on two nodes make
	# the guest warn (topology_sane) at boot.
	smp=2,sockets=2,cores=1,threads=1
	half=$(( $(numfmt --from=iec "$mem") / 2 ))
	numa_opts=(-object "memory-backend-ram,id=m0,size=$half" -object "memory-backend-ram,id=m1,size=$half"
		-numa node,nodeid=0,cpus=0,memdev=m0 -numa node,nodeid=1,cpus=1,memdev=m1)
fi

mem_opt=$mem
dimm_opts=()

while [ $# -gt 0 ]; do
	case "$1" in
	--demo) mode=demo; verbose=1 ;;
	--bench) mode=bench; bench=$2; verbose=1; shift
		[ -f "$repo/tests/bench/$bench.sh" ] || die "no benchmark tests/bench/$bench.sh" ;;
	--tests) tests=$2; shift
		case "$tests" in *[[:space:]]*) die "--tests takes globs separated by commas, no spaces: '$tests'" ;; esac ;;
	--run-dir) out=$(realpath -m "$2"); shift ;;
	--line) shift ;;	# read above
	--verbose) verbose=1 ;;
	*) echo "usage: $0 [--line LINE] [--demo] [--bench NAME] [--tests SPEC] [--run-dir DIR] [--verbose]" >&2; exit 2 ;;
	esac
	shift
done

bzimage=$kdir/arch/x86/boot/bzImage
make_line=" LINE=$line"
[ -f "$bzimage" ] || die "no kernel at $bzimage (make kernel$make_line)"
# A KDIR of another line (make exports the 6.1 one) would boot the wrong
# kernel with this line's modules: every test would fail on the load.
case "$(cat "$kdir/include/config/kernel.release" 2>/dev/null)" in
"$line".*) ;;
*) die "$kdir is not a $line kernel (release '$(cat "$kdir/include/config/kernel.release" 2>/dev/null)'; KDIR=${KDIR:-unset})" ;;
esac
mmtune_ko=${MMTUNE_VM_KO:-$line_mods/mmtune.ko}
probe_ko=${MMTUNE_VM_PROBE_KO:-$line_kmod/mmtune_probe.ko}
[ -f "$mmtune_ko" ] || die "missing $mmtune_ko (make modules$make_line)"
[ -f "$probe_ko" ] || [ -n "${MMTUNE_VM_KO:-}" ] || die "missing $probe_ko (make modules$make_line)"

# Hot-pluggable memory for the hot-unplug test: benchmarks and the demo
# boot without, so that their memory is what MMTUNE_VM_MEM says.
if [ "${MMTUNE_VM_DIMM:-$([ $mode = test ] && echo 1 || echo 0)}" = 1 ]; then
	mem_opt="$mem,slots=2,maxmem=$(( ($(numfmt --from=iec "$mem") >> 20) + 1024 ))M"
	dimm_node=
	[ ${#numa_opts[@]} -eq 0 ] || dimm_node=,node=0
	dimm_opts=(-object memory-backend-ram,id=dimm0,size=256M
		-device "pc-dimm,id=dimm0,memdev=dimm0$dimm_node")
fi
case "${MMTUNE_VM_SLOW:-0}" in 0|1|only) ;; *) die "MMTUNE_VM_SLOW must be 0, 1 or only" ;; esac
# Single-threaded TCG: both vCPUs take turns on one host thread. With
# thread=multi, qemu 7.2 may keep a stale translation of kernel text that
# another vCPU just patched (static keys: text_poke_bp writes an int3, then
# the new instruction). The stale vCPU traps on an int3 no longer in memory;
# kprobe_int3_handler() sees no int3 at the address and restarts the
# instruction, forever. It hung swap_slots-rmmod (1 run in 28), repro-tcg-stock-key-flip within
# minutes, and a stock kernel flipping tracepoint keys without mmtune
# (tests/vm/repro/repro-tcg-stock-key-flip.sh). Real CPUs cannot do this:
# text_poke_bp() serialises every CPU between the steps.
case "$accel" in
tcg) accel_opt="-accel tcg,thread=${MMTUNE_VM_TCG_THREAD:-single}" ;;
kvm) accel_opt="-accel kvm -cpu host" ;;
*) die "MMTUNE_VM_ACCEL must be tcg or kvm" ;;
esac
if [ -n "${MMTUNE_VM_ICOUNT:-}" ]; then
	if [ "$accel_opt" != "-accel tcg,thread=single" ] || [ "$smp" != 1 ]; then
		die "MMTUNE_VM_ICOUNT needs single-threaded TCG and MMTUNE_VM_SMP=1"
	fi
	accel_opt+=" -icount $MMTUNE_VM_ICOUNT"
fi

rm -rf "$out"
mkdir -p "$out/root"

# --- initramfs -------------------------------------------------------------
root=$out/root
mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,run,mmtune,tests,bench,sysfs-docs,files}
cp /bin/busybox "$root/bin/busybox"
# Host programs the guest tests use, with the shared libraries they load.
# python3 by absolute path: Debian's, not a pyenv shim that may be first on PATH.
host_progs=(lz4 zstd /usr/bin/python3)
for prog in "${host_progs[@]}"; do
	path=$(command -v "$prog") || die "$prog is not installed on the host (scripts/setup-host.sh)"
	install -D "$path" "$root/usr/bin/$(basename "$prog")"
	ldd "$path" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
		while read -r lib; do
			[ -e "$root$lib" ] || install -D "$lib" "$root$lib"
		done
done
# mmtunectl (tests 7x): python3's standard library without what it does not
# need (tests, GUI, build config, __pycache__: the guest compiles what it
# imports), extension modules only if they need no library beyond libc, and
# mmtunectl installed as the packages install it.
pylib=$(/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
mkdir -p "$root$pylib"
rsync -a --exclude=__pycache__ --exclude=/lib-dynload --exclude=/config-3.* \
	--exclude=/test --exclude=/idlelib --exclude=/tkinter --exclude=/ensurepip \
	--exclude=/lib2to3 --exclude=/turtledemo --exclude=/pydoc_data --exclude=/distutils \
	--exclude=/asyncio --exclude=/email --exclude=/xml --exclude=/xmlrpc --exclude=/http \
	--exclude=/urllib --exclude=/unittest --exclude=/multiprocessing --exclude=/sqlite3 \
	--exclude=/curses --exclude=/dbm --exclude=/wsgiref --exclude=/venv --exclude=/ctypes \
	--exclude=/site-packages --exclude=/dist-packages --exclude=/sitecustomize.py \
	--exclude=/turtle.py --exclude=/pydoc.py --exclude=/_pydecimal.py --exclude=/doctest.py \
	--include=/encodings/__init__.py --include=/encodings/aliases.py --include=/encodings/utf_8.py \
	--include=/encodings/ascii.py --include=/encodings/latin_1.py --exclude=/encodings/* \
	"$pylib/" "$root$pylib/"
mkdir -p "$root$pylib/lib-dynload"
for so in "$pylib"/lib-dynload/*.so; do
	case "$(basename "$so")" in _test*|_ctypes_test*|_xx*|xx*|_codecs_*|_multibytecodec*|audioop*|ossaudiodev*) continue ;; esac
	ldd "$so" | grep -qvE 'statically linked|linux-vdso|ld-linux|lib(c|m|pthread)\.so' && continue
	cp "$so" "$root$pylib/lib-dynload/"
done
make -s -C "$repo/systemd" install DESTDIR="$root" || die "cannot install mmtunectl into the guest"
# Byte-compile just the modules mmtunectl loads (mmtunectl writes no
# bytecode, and compiling them at every run costs seconds under TCG).
/usr/bin/python3 - "$root" "$repo/systemd" <<'EOF_PY' || die "cannot byte-compile for the guest"
import os, py_compile, sys
root, src = sys.argv[1], sys.argv[2]
sys.path.insert(0, src)
import mmtunectl.cli  # pulls in every module mmtunectl uses,
mmtunectl.cli.parser().format_help()  # and argparse's lazy imports
for mod in list(sys.modules.values()):
    f = getattr(mod, "__file__", None) or ""
    if f.startswith(src + "/"):
        f = "/usr/lib/mmtune/python/" + f[len(src) + 1:]
    if f.endswith(".py") and os.path.exists(root + f):
        py_compile.compile(root + f, dfile=f, doraise=True)
EOF_PY
# chosen_tests: the test files this run boots for (--tests SPEC, and the
# "# slow:" ones only with MMTUNE_VM_SLOW), as the guest selects them.
# shellcheck source=tests/vm/guest/select.sh
. "$repo/tests/vm/guest/select.sh"
chosen_tests() {
	local t name
	for t in $(tests_in_order "$repo/tests/vm/tests" "$repo/tests/vm/guest/groups"); do
		name=$(basename "$t" .sh)
		test_chosen "$name" "$tests" || continue
		case "${MMTUNE_VM_SLOW:-0}" in
		0) grep -q '^# slow:' "$t" && continue ;;
		only) grep -q '^# slow:' "$t" || continue ;;
		esac
		echo "$t"
	done
}
for prog in "$repo"/tests/vm/progs/*.c; do
	name=$(basename "$prog" .c)
	gcc -O2 -Wall -Wextra -Werror -static -pthread -o "$root/bin/$name" "$prog" ||
		die "cannot build $prog"
done
# The 6.1 tree's own mm selftests (selftests-mm), built by their kselftest
# Makefile from a copy of the selftests of the kernel tree under test (a
# cached tree is never written), with the upstream test fixes of
# tests/vm/selftests-patches/ applied, static like the programs above; the
# objects stay in build/selftests/<tree>. UAPI headers: Debian's
# linux-libc-dev, built from the same linux 6.1 source package as the tree
# (the series changes no UAPI header); the tree has none installed, and
# headers_install would write them into it. ksm_tests needs libnuma-dev.
# Only for tests, and only from a tree that has them (tests/packaging boots
# a packaged kernel from a directory that holds just its bzImage).
# Built only when a chosen test runs them: they cost a minute or two of
# compiling that the default (non-slow) run does not need.
sel_progs=(khugepaged soft-dirty madv_populate transhuge-stress userfaultfd mremap_test ksm_tests split_huge_page_test)
want_selftests=0
if [ $mode = test ]; then
	for t in $(chosen_tests); do
		grep -q '/selftests/vm' "$t" && want_selftests=1
	done
fi
if [ $want_selftests = 1 ] && [ -f "$kdir/tools/testing/selftests/vm/Makefile" ]; then
	sel_out=$repo/build/selftests/$(readlink -f "$kdir" | sha256sum | cut -c1-12)
	rm -rf "$sel_out/src"
	mkdir -p "$sel_out/src" "$root/selftests/vm"
	(cd "$kdir" && cp -a --parents tools/testing/selftests/{lib.mk,*.h,kselftest,vm,x86} mm/gup_test.h include/vdso "$sel_out/src/") ||
		die "cannot copy the mm selftests of $kdir"
	for p in "$repo"/tests/vm/selftests-patches/*.patch; do
		patch -s -d "$sel_out/src" -p1 <"$p" || die "cannot apply $p to the mm selftests"
	done
	make -C "$sel_out/src/tools/testing/selftests/vm" OUTPUT="$sel_out" KHDR_INCLUDES="-isystem /usr/include" \
		EXTRA_CFLAGS=-static "${sel_progs[@]/#/$sel_out/}" >"$sel_out/build.log" 2>&1 ||
		die "cannot build the mm selftests of $kdir (libnuma-dev missing? scripts/setup-host.sh); $(tail -n 5 "$sel_out/build.log")"
	cp "${sel_progs[@]/#/$sel_out/}" "$root/selftests/vm/"
fi
cp "$mmtune_ko" "$root/mmtune/mmtune.ko"
[ -f "$probe_ko" ] && cp "$probe_ko" "$root/mmtune/"
# The other test modules (swapcache_pin.ko: zswap_large-stale-tail), when built: from
# the probe's directory, built against the same kernel (check-debug.sh
# builds them for the debug kernel in its own directory).
for ko in "$(dirname "$probe_ko")"/*.ko; do
	if [ -f "$ko" ] && [ "$(basename "$ko")" != mmtune_probe.ko ]; then
		cp "$ko" "$root/mmtune/"
	fi
done
# busybox modinfo needs modules.dep; the host's modinfo tells the guest tests.
modinfo -F version "$mmtune_ko" >"$root/mmtune/mmtune.version"
cp "$repo"/tests/vm/guest/* "$root/"
cp "$repo/tests/lib/tap.sh" "$root/tap.sh"
cp "$repo"/tests/vm/tests/*.sh "$root/tests/"
cp "$repo"/tests/bench/*.sh "$root/bench/"
cp "$repo"/sysfs-docs/* "$root/sysfs-docs/"
for f in ${MMTUNE_VM_FILES:-}; do
	cp "$f" "$root/files/" || die "cannot copy $f (MMTUNE_VM_FILES) into the guest"
done
chmod 0755 "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$out/initramfs.cpio.gz"

# A sparse swap disk: becomes /dev/vda in the guest.
truncate -s 4G "$out/swap.img"
disk_opts=
[ -n "$disk_bps" ] && disk_opts=",throttling.bps-total=$disk_bps"

# --- boot ------------------------------------------------------------------
# No new TAP line for this long means the guest is stuck beyond what its
# own per-test limits catch (tests/vm/guest/run-tests.sh: the longest limit
# of the chosen tests, then the cleanup's 60 s, plus the watchdog's grace).
if [ -n "${MMTUNE_VM_STALL:-}" ]; then
	stall_s=$MMTUNE_VM_STALL
elif [ $mode = test ]; then
	longest=0
	for t in $(chosen_tests); do
		l=$(sed -n 's/^# timeout: *\([0-9][0-9]*\).*/\1/p' "$t" | head -n 1)
		[ "${l:-300}" -gt $longest ] && longest=${l:-300}
	done
	stall_s=$(( (longest + 60) * timeout_scale + 120 ))
else
	stall_s=$timeout_s
fi

: >"$out/results.tap"
: >"$out/console.log"
rm -f "$out/qmp.sock"
echo "vm: booting $(cat "$kdir/include/config/kernel.release") (line $line, $mode, $smp vCPU(s)${MMTUNE_VM_ICOUNT:+, -icount $MMTUNE_VM_ICOUNT}, tests '$tests', timeout ${timeout_s}s, stall ${stall_s}s, limits x$timeout_scale for a host load of $(cut -d" " -f1 /proc/loadavg))"
start=$(date +%s)
# The QMP socket lets us ask a hung guest for its state before killing it.
# no_timer_check: on a busy host the vCPU may not see the timer ticks the
# kernel's early IO-APIC check waits for, and it panics ("IO-APIC + timer
# doesn't work!"), as it did here with a host load of 11.
# brd.rd_size: a 128 MiB /dev/ram0 (allocated as written), enough to swap
# 2M folios to a synchronous device other than zram.
qemu-system-x86_64 $accel_opt \
	-smp "$smp" -m "$mem_opt" "${numa_opts[@]}" "${dimm_opts[@]}" -nodefaults -no-reboot -display none \
	-kernel "$bzimage" -initrd "$out/initramfs.cpio.gz" \
	-append "console=ttyS0,115200 panic=-1 oops=panic no_timer_check brd.rd_size=131072 rdinit=/init mmtune.mode=$mode mmtune.tests=$tests mmtune.bench=$bench mmtune.disk_bps=${disk_bps:-0} mmtune.timeout_scale=$timeout_scale mmtune.slow=${MMTUNE_VM_SLOW:-0} ${MMTUNE_VM_APPEND:-}" \
	-serial "file:$out/console.log" -serial "file:$out/results.tap" \
	-drive "file=$out/swap.img,if=virtio,format=raw,cache=unsafe,discard=unmap$disk_opts" \
	-qmp "unix:$out/qmp.sock,server=on,wait=off" \
	>"$out/qemu.log" 2>&1 &
qemu_pid=$!

# Stream results while the guest runs: TAP lines as they are (so that
# tests/run-all.sh can count them), the rest with --verbose.
tail -n +1 -s 0.5 -f --pid=$qemu_pid "$out/results.tap" | tr -d '\r' | while IFS= read -r line; do
	case "$line" in
	ok*|"not ok"*|"TAP version"*|1..*) echo "$line" ;;
	*) [ $verbose -eq 1 ] && echo "$line" ;;
	esac
done &
tail_pid=$!

# guest_dump WHY: blocked tasks and every CPU's backtrace onto the console
# (sysrq w and l, sent as keys), the vCPUs' registers into registers.txt
# and, with MMTUNE_VM_DUMP_MEMORY=1, the memory into vmcore; then the
# caller kills qemu. Whatever the monitor answers goes to monitor.log.
guest_dump() {
	echo "vm: $1: asking the guest for sysrq w and l, saving the vCPUs' registers"
	/usr/bin/python3 "$repo/tests/lib/guest-dump.py" "$out/qmp.sock" "$out" "${MMTUNE_VM_DUMP_MEMORY:-0}" >"$out/monitor.log" 2>&1 || true
	sed 's/^/vm: monitor: /' "$out/monitor.log"
}

# Wait for qemu, the overall timeout or a stall, whichever comes first.
qemu_rc=0
killed=
last_size=0
last_change=$start
while kill -0 $qemu_pid 2>/dev/null; do
	sleep 1
	now=$(date +%s)
	size=$(stat -c %s "$out/results.tap")
	if [ "$size" != "$last_size" ]; then
		last_size=$size
		last_change=$now
	fi
	if [ $((now - start)) -ge "$timeout_s" ]; then
		killed="timeout after ${timeout_s}s"
	elif [ "$size" = 0 ] && [ $((now - start)) -ge "$boot_timeout_s" ]; then
		killed="the guest did not reach its tests in ${boot_timeout_s}s"
	elif [ $((now - last_change)) -ge "$stall_s" ]; then
		killed="no TAP output for ${stall_s}s"
	fi
	if [ -n "$killed" ]; then
		kill -0 $qemu_pid 2>/dev/null && guest_dump "$killed"
		kill $qemu_pid 2>/dev/null
		break
	fi
done
wait $qemu_pid || qemu_rc=$?
wait $tail_pid || true
secs=$(( $(date +%s) - start ))
sed -i 's/\r$//' "$out/results.tap" "$out/console.log"

# --- verdict ---------------------------------------------------------------
fail=0
problems=()
[ -n "$killed" ] && problems+=("$killed")
[ -z "$killed" ] && [ $qemu_rc -ne 0 ] && problems+=("qemu exited with $qemu_rc: $(tail -n 3 "$out/qemu.log")")

. "$repo/tests/lib/tap.sh"
planned=$(sed -n 's/^1\.\.\([0-9]*\).*/\1/p' "$out/results.tap" | head -n 1)
read -r passed failed skipped missing < <(tap_tally "$out/results.tap")
failed=$((failed - missing))
[ -n "$planned" ] || problems+=("the guest never started its tests")
[ "$missing" -gt 0 ] && problems+=("the guest reported $((passed + failed + skipped)) of $planned results")
[ "$failed" -gt 0 ] && problems+=("$failed test(s) failed: $(grep '^not ok ' "$out/results.tap" | cut -d' ' -f4 | tr '\n' ' ')")
grep -q '^# guest: done' "$out/results.tap" || problems+=("the guest did not finish cleanly")

# Kernel reports that fail a run even when every test passed (the hang
# detectors' and the sysrq dumps' included).
report_re='WARNING:|BUG:|Oops|Kernel panic|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|INFO: task .* blocked|detected stalls|self-detected stall|KASAN|UBSAN|kmemleak: .*suspected memory leak|Call Trace:|BUG [a-z0-9_:-]+ \('
scanned=$out/console.log
known_reports=${MMTUNE_VM_KNOWN_REPORTS-$(known_reports=; . "$repo/kernel-patches/$line/line.conf"; echo "$known_reports")}
if [ -n "$known_reports" ]; then
	scanned=$out/console.scanned.log
	cp "$out/console.log" "$scanned"
	for k in $known_reports; do
		awk -f "$repo/tests/vm/known-reports/$k.awk" "$scanned" >"$scanned.new" 2>"$out/known-$k.txt"
		mv "$scanned.new" "$scanned"
		echo "vm: known stock report $k: $(sed -n 's/^known: //p' "$out/known-$k.txt") on the console (tests/vm/known-reports/$k.awk)"
	done
fi
if grep -Eq "$report_re" "$scanned"; then
	first=$(grep -En "$report_re" "$scanned" | head -n 1)
	during=$(head -n "${first%%:*}" "$scanned" | grep -o 'mmtune-test: begin .*' | tail -n 1 || true)
	problems+=("kernel report on the console (${during:-before the tests}): ${first#*:}")
fi

echo "vm: $passed passed, $failed failed, $skipped skipped of ${planned:-?} in ${secs}s (boot to first test: $(sed -n 's/^# guest: booted in \(.*\)/\1/p' "$out/results.tap"))"
if [ ${#problems[@]} -gt 0 ]; then
	fail=1
	# Named after the run directory too: two boots of a line side by side
	# (--run-dir) may fail in the same second.
	tag=$(basename "$out"); tag=${tag#vm}; tag=${tag#-}
	keep=$repo/build/vm-failed-${tag:+$tag-}$(date +%Y%m%d-%H%M%S)
	cp -r "$out" "$keep"
	rm -f "$keep/swap.img" "$keep/initramfs.cpio.gz" "$keep/qmp.sock"
	rm -rf "$keep/root"
	for p in "${problems[@]}"; do echo "vm: FAIL: $p"; done
	# The output of failed tests (their result lines were shown above),
	# then the end of the console.
	awk '/^# --- begin /{buf=""; keep=1} /^not ok /{printf "%s", buf} /^(not )?ok /{buf=""; next} keep{buf=buf $0 "\n"}' \
		"$out/results.tap" | tail -n 80
	echo "vm: console (last 40 lines; full log kept in $keep/console.log):"
	tail -n 40 "$out/console.log" | sed 's/^/# /'
fi
exit $fail
