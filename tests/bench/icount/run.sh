#!/bin/bash
# Exact kernel and user instruction counts per memory operation, on any
# kernel: boots it under qemu TCG with the icount.so plugin (one vCPU,
# single-threaded TCG, -icount: the counts repeat run after run), runs
# icount-work's phases ROUNDS times per boot, RUNS boots, and prints per
# phase and round the kernel and user instructions, lock calls and page
# clears per operation, their spread, and the top kernel functions.
#
#   tests/bench/icount/run.sh [options] [PHASE...]   (default: fault4k allocfree)
#
#   --kdir TREE       kernel tree: TREE/arch/x86/boot/bzImage, TREE/System.map
#   --kernel BZIMAGE  a kernel image; with --map MAP its symbols (default:
#                     read from /proc/kallsyms in a first boot, cached)
#   --debian          Debian 12's stock kernel matching linux-source-6.1
#                     (apt-get download once, cached in $MMTUNE_CACHE/bench)
#   --runs N          boots (default 3)       --rounds R   rounds per boot (4)
#   --warmup W        unmeasured rounds first (1)  --ops N  ops per round (16384)
#   --top N           kernel functions listed (10)
#   --call NAME       also count calls of NAME (repeatable)
#   --label NAME      report directory name (default: the kernel release)
#   --setup SCRIPT    guest shell script run before icount-work (and before
#                     reading /proc/kallsyms), e.g. insmod and sysfs writes
#   --prep SCRIPT     guest shell script run after --setup in the measured
#                     boots only (swap devices, knobs): it is not part of
#                     the symbol cache's key, so configurations that differ
#                     only in it share one /proc/kallsyms boot
#   --file PATH       copied to /files/ in the guest (repeatable: mmtune.ko)
#   --append ARGS     more kernel command line, e.g. brd.rd_size=524288 (a
#                     512 MiB /dev/ram0 to swap on: a RAM disk's I/O ends
#                     in the submitting call, with no idle wait and no
#                     completion interrupt at a host-timed moment)
#   --smp N           vCPUs (default 1; counts are then also split per vCPU).
#                     QEMU 7.2 hangs bringing up a second vCPU under -icount,
#                     so N > 1 runs without it: timer interrupts then follow
#                     the host's speed and counts vary (up to ~1%)
#
# With --setup, or without a System.map, a first boot runs the setup and
# reads /proc/kallsyms, so that loaded modules have symbols too (nokaslr:
# the same addresses on the next boots); the result is cached by the
# kernel, setup and files' contents.
#
# Reports: build/icount/LABEL/ (plugin records run-N.txt, guest and console
# logs, report.txt). Needs qemu-system-x86 (7.2: plugin API 1), gcc,
# busybox-static, cpio, python3.
#
# The guest boots with nokaslr (System.map addresses hold) and norandmaps
# (the same page-table layout every run), on the default qemu64 CPU.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
cache=${MMTUNE_CACHE:-$HOME/.cache/mmtune}
mem=${MMTUNE_ICOUNT_MEM:-1G}
timeout_s=${MMTUNE_ICOUNT_TIMEOUT:-900}

die() { echo "icount: error: $*" >&2; exit 1; }
log() { echo "icount: $*" >&2; }

cmdline="$*"
kernel='' map='' kdir='' debian=0 runs=3 rounds=4 warmup=1 ops=16384 top=10 label=''
setup='' prep='' smp=1 append=''
calls=() phases=() files=()
while [ $# -gt 0 ]; do
	case "$1" in
	--kdir) kdir=$2; shift ;;
	--kernel) kernel=$2; shift ;;
	--map) map=$2; shift ;;
	--debian) debian=1 ;;
	--runs) runs=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--warmup) warmup=$2; shift ;;
	--ops) ops=$2; shift ;;
	--top) top=$2; shift ;;
	--call) calls+=("$2"); shift ;;
	--label) label=$2; shift ;;
	--setup) setup=$2; shift ;;
	--prep) prep=$2; shift ;;
	--file) files+=("$2"); shift ;;
	--append) append=$2; shift ;;
	--smp) smp=$2; shift ;;
	-h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) die "unknown option $1 (--help)" ;;
	*) phases+=("$1") ;;
	esac
	shift
done
[ ${#phases[@]} -gt 0 ] || phases=(fault4k allocfree)
for n in "$runs" "$rounds" "$warmup" "$ops" "$top" "$smp"; do
	[[ $n =~ ^[0-9]+$ ]] || die "not a number: $n"
done

# Debian's own kernel: the linux-image-6.1.0-*-amd64 package whose version
# is that of the installed linux-source-6.1 (the source our kernel uses).
# Its System.map is a stub, so symbols come from /proc/kallsyms.
debian_kernel() {
	local ver pkg dir deb

	ver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null) ||
		die "linux-source-6.1 is not installed"
	for pkg in $(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64$' | cut -d' ' -f1 | sort -rV); do
		# no "| grep -q": its early exit fails the pipe under pipefail
		if [ "$(apt-cache show --no-all-versions "$pkg" | sed -n 's/^Version: //p')" = "$ver" ]; then
			break
		fi
		pkg=
	done
	[ -n "${pkg:-}" ] || die "no linux-image-6.1.0-*-amd64 of version $ver in apt's lists (apt-get update?)"
	dir=$cache/bench/debian-kernel/${pkg}_$ver
	if [ ! -f "$dir/vmlinuz" ]; then
		log "downloading $pkg $ver"
		rm -rf "$dir.tmp"
		mkdir -p "$dir.tmp"
		(cd "$dir.tmp" && apt-get download -q "$pkg=$ver" >/dev/null 2>&1) ||
			die "apt-get download $pkg=$ver failed"
		deb=$(ls "$dir.tmp"/*.deb)
		dpkg-deb -x "$deb" "$dir.tmp/x"
		cp "$dir.tmp"/x/boot/vmlinuz-* "$dir.tmp/vmlinuz"
		cp "$dir.tmp"/x/boot/config-* "$dir.tmp/config"
		rm -rf "$dir.tmp/x" "$deb"
		rm -rf "$dir"
		mv "$dir.tmp" "$dir"
	fi
	kernel=$dir/vmlinuz
	[ -n "$label" ] || label=debian-$(basename "$dir")
}

if [ $debian -eq 1 ]; then
	debian_kernel
elif [ -n "$kdir" ]; then
	kernel=$kdir/arch/x86/boot/bzImage
	map=${map:-$kdir/System.map}
	[ -n "$label" ] || label=$(cat "$kdir/include/config/kernel.release" 2>/dev/null || basename "$kdir")
fi
[ -n "$kernel" ] || die "which kernel? --kdir, --kernel or --debian"
[ -f "$kernel" ] || die "no kernel image $kernel"
[ -z "$map" ] || [ -f "$map" ] || die "no symbol map $map"
[ -n "$label" ] || label=$(basename "$kernel")
[ -z "$setup" ] || [ -f "$setup" ] || die "no setup script $setup"
[ -z "$prep" ] || [ -f "$prep" ] || die "no prep script $prep"
for f in "${files[@]}"; do [ -f "$f" ] || die "no file $f"; done

out=$repo/build/icount/$label
work=$out/work
rm -rf "$out"
mkdir -p "$work"

make -s -C "$here" O="$work" CC="${CC:-gcc}" || die "cannot build the plugin and icount-work"
marks=$(nm "$work/icount-work" | awk '$3 == "icount_marks" { print "0x" $1 }')
[ -n "$marks" ] || die "no icount_marks symbol in icount-work"
"$work/icount-work" --list >"$work/phases.txt"
for p in "${phases[@]}"; do
	grep -q "^[0-9]* $p " "$work/phases.txt" || die "no phase $p; phases: $(cut -d' ' -f2 "$work/phases.txt" | tr '\n' ' ')"
done

# pack MODE ARGS: the initramfs, busybox-static + icount-work + init.
pack() {
	local root=$work/root

	rm -rf "$root"
	mkdir -p "$root"/{bin,dev,proc,sys,files}
	cp /bin/busybox "$root/bin/busybox"
	[[ $(file -L /bin/busybox) == *"statically linked"* ]] || die "/bin/busybox is not static (apt-get install busybox-static)"
	cp "$work/icount-work" "$root/icount-work"
	install -m 0755 "$here/init" "$root/init"
	[ -z "$setup" ] || install -m 0755 "$setup" "$root/setup.sh"
	[ "$1" = kallsyms ] || [ -z "$prep" ] || install -m 0755 "$prep" "$root/prep.sh"
	for f in "${files[@]}"; do cp "$f" "$root/files/"; done
	echo "$1" >"$root/icount.mode"
	echo "$2" >"$root/icount.args"
	(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$work/initramfs.cpio.gz"
}

icount_opt=(-icount 'shift=1,sleep=off')
if [ "$smp" -gt 1 ]; then
	icount_opt=()
	# Without -icount a loaded host can delay the guest's timer past the
	# IO-APIC timer check's window: "IO-APIC + timer doesn't work!" panic
	append+="${append:+ }no_timer_check"
	log "--smp $smp: without -icount (QEMU 7.2 hangs at the second vCPU's bring-up with it)"
fi

# boot NAME [PLUGIN-ARGS]: one boot; NAME.console (ttyS0), NAME.guest (ttyS1)
boot() {
	local name=$1 plugin=() rc=0

	[ -n "${2:-}" ] && plugin=(-plugin "$work/icount.so,$2")
	: >"$out/$name.console"
	: >"$out/$name.guest"
	timeout --foreground "$timeout_s" qemu-system-x86_64 \
		-nodefaults -no-reboot -display none -smp "$smp" -m "$mem" \
		-accel tcg,thread=single "${icount_opt[@]}" \
		-kernel "$kernel" -initrd "$work/initramfs.cpio.gz" \
		-append "console=ttyS0,115200 panic=-1 rdinit=/init nokaslr norandmaps quiet${append:+ $append}" \
		-serial "file:$out/$name.console" -serial "file:$out/$name.guest" \
		"${plugin[@]}" >"$out/$name.qemu" 2>&1 || rc=$?
	sed -i 's/\r$//' "$out/$name.guest" "$out/$name.console"
	[ $rc -eq 124 ] && die "$name: timeout after ${timeout_s}s (console: $out/$name.console)"
	[ $rc -eq 0 ] || die "$name: qemu exited with $rc: $(tail -n 3 "$out/$name.qemu")"
	grep -qx 'icount: rc=0' "$out/$name.guest" ||
		die "$name: the guest failed: $(tail -n 5 "$out/$name.guest")"
}

# Symbols from the guest's /proc/kallsyms: for a kernel without System.map,
# or modules loaded by --setup. Once per kernel, setup and files.
if [ -z "$map" ] || [ -n "$setup" ]; then
	map=$cache/bench/kallsyms/$(cat "$kernel" ${setup:+"$setup"} "${files[@]}" | sha256sum | cut -c1-16).map
	if [ ! -s "$map" ]; then
		log "reading /proc/kallsyms of $kernel (one boot)"
		pack kallsyms ""
		boot kallsyms
		mkdir -p "$(dirname "$map")"
		grep -E '^[0-9a-f]{16} [tTwWbB] ' "$out/kallsyms.guest" >"$map.tmp"
		[ "$(wc -l <"$map.tmp")" -gt 1000 ] || die "too few symbols from /proc/kallsyms ($out/kallsyms.guest)"
		mv "$map.tmp" "$map"
	fi
fi

# The plugin lists more functions than the report, so that a function
# near the cut is averaged over every round.
plugin_args="map=$map,mark=$marks,top=$((top * 3 > 100 ? 100 : top * 3))"
for c in "${calls[@]}"; do plugin_args+=",call=$c"; done
pack run "-n $ops -r $rounds -w $warmup ${phases[*]}"
log "kernel $kernel ($label), phases ${phases[*]}: $runs boot(s) x $rounds round(s) x $ops ops"
for r in $(seq 1 "$runs"); do
	start=$(date +%s)
	boot "run-$r" "$plugin_args,out=$out/run-$r.txt"
	log "run $r: $(( $(date +%s) - start ))s"
done

{
	echo "kernel: $kernel"
	echo "symbols: $map"
	echo "command: tests/bench/icount/run.sh $cmdline"
	[ -z "$setup" ] || sed 's/^/setup: /' "$setup"
	[ -z "$prep" ] || sed 's/^/prep: /' "$prep"
	echo "qemu: $(qemu-system-x86_64 --version | head -n 1); -smp $smp -accel tcg,thread=single ${icount_opt[*]}"
	python3 "$here/report.py" --phases "$work/phases.txt" --ops "$ops" --top "$top" \
		--rounds "$rounds" "$out"/run-*.txt
} | tee "$out/report.txt"
