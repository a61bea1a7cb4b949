#!/bin/bash
# The GRUB pin of packaging/README.md ("Debian 13: pin our kernel in GRUB") booted through
# GRUB ("make check-packaging-grub"; not part of "make check": it needs a
# built 6.12 cloud set and three boots under TCG).
#
#   tests/packaging/grub-pin.sh [KERNEL-PKGS-DIR]
#
# KERNEL-PKGS-DIR: a finished 6.12 debian-cloud set (default: the newest
# in $MMTUNE_CACHE/kernel-pkgs; none is built here). Work and logs:
# build/packaging/grub-pin/. What it asserts:
#   root     in a copy of the cached Debian 13 root (rootfs.sh trixie), apt
#            installs grub-pc, Debian's linux-image-cloud-amd64 and our
#            linux-image-<rel> (Debian's other kernel purged: one stock
#            kernel, as on a cloud image); every package ii, an initramfs
#            for both; Debian's release sorts above ours
#   disk     the root as partition 1 of an MBR disk image (ext4 with a
#            chosen UUID); /etc/default/grub.d/10-cloud-image.cfg puts the
#            console on ttyS0, as a cloud image's own snippet does
#   boot 1   (the stock kernel, qemu -kernel) grub-install /dev/vda and
#            update-grub in the guest: the first entry is the stock kernel
#   boot 2   through GRUB, no pin: the stock kernel runs (the control);
#            then the README's recipe, its text taken from the README (all
#            but the final reboot): grub-editenv's saved_entry is the
#            recipe's id, and grub.cfg has the submenu and entry it names
#   boot 3   through GRUB: our kernel runs, the saved_entry unchanged
# Each boot's console (GRUB's menu and the kernel's banner on ttyS0) is
# also checked on the host. Guest time limits: lib.sh (load_scale).
set -uo pipefail
# shellcheck source=tests/packaging/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/packaging/full.sh
. tests/packaging/full.sh

case $#:${1:-} in 0:|1:[!-]*) ;; *) echo "usage: $0 [KERNEL-PKGS-DIR]" >&2; exit 2 ;; esac
kp=${1:-}
if [ -z "$kp" ]; then
	kp=$(newest_set 6.12)
fi
work=build/packaging/grub-pin
logs=$work/logs
# full.sh's helpers (guest_boot, apt_run) write here.
pk_work=$work pk_logs=$logs
archives=$cache/apt-archives-trixie-grub
start=$SECONDS
tap_header
if [ -z "$kp" ] || [ ! -f "$kp/kernel.release" ]; then
	skip "GRUB pin on Debian 13" "no 6.12 debian-cloud set (make kernel-packages-cloud LINE=6.12)"
	tap_plan "$tap_n"; exit 0
fi
command -v sfdisk >/dev/null ||
	{ not_ok "sfdisk for the disk image (fdisk: scripts/setup-host.sh)"; tap_plan "$tap_n"; exit 1; }
rel=$(cat "$kp/kernel.release")
case $rel:$(cat "$kp/flavour" 2>/dev/null) in
6.12.*-cloud-amd64:debian-cloud) ;;
*) not_ok "$kp is a 6.12 debian-cloud set (release $rel)"; tap_plan "$tap_n"; exit 1 ;;
esac
img=$(ls "$kp"/deb/linux-image-"$rel"_*.deb 2>/dev/null)
[ -n "$img" ] || { not_ok "$kp has linux-image-$rel"; tap_plan "$tap_n"; exit 1; }
rm -rf "$work"; mkdir -p "$logs"
note "kernel packages: $kp ($rel); load $(cut -d' ' -f1-3 /proc/loadavg)"

# The recipe, as the README has it: the first sh block after "A Debian 13
# host"; its last line reboots, which the guest leaves to its unit.
recipe=$(awk '/^\*\*Debian 13: pin our kernel in GRUB/ { f = 1 } f && /^```sh$/ { b = 1; next } b && /^```$/ { exit } b' packaging/README.md)
if [ "$(tail -n 1 <<<"$recipe")" = reboot ] && grep -q '^grub-set-default ' <<<"$recipe"; then
	ok "packaging/README.md: the recipe for a Debian 13 host ($(wc -l <<<"$recipe") lines, ends with reboot)"
else
	not_ok "packaging/README.md has the recipe for a Debian 13 host (an sh block ending with reboot)"; note "$recipe"
	tap_plan "$tap_n"; exit 1
fi
note "$recipe"

if ! base=$(tests/packaging/rootfs.sh trixie 2>"$logs/rootfs.log"); then
	not_ok "Debian 13 root (mmdebstrap)"; note "$(tail -n 20 "$logs/rootfs.log")"
	tap_plan "$tap_n"; exit 1
fi
r=$work/root
copy_root "$base" "$r"

# --- the root: Debian's cloud kernel, ours, GRUB -----------------------------------
mkdir -p "$r/var/tmp/pkgs" "$archives"
cp "$img" "$r/var/tmp/pkgs/"
cp "$archives"/*.deb "$r/var/cache/apt/archives/" 2>/dev/null || true
t0=$SECONDS rc=0
apt_run "$r" apt-install sh -c "apt-get update && apt-get install -y grub-pc linux-image-cloud-amd64 /var/tmp/pkgs/${img##*/}" || rc=$?
# Debian's kernels that are not the cloud flavour (the root's generic one,
# there for the DKMS tests' headers): the stock kernel is the cloud one.
# shellcheck disable=SC2016 # dpkg-query's format
other=$(in_root "$r" dpkg-query -W -f '${Package}\n' 'linux-image-*' 'linux-headers-*' 2>/dev/null |
	grep -v -e cloud-amd64 -e mmtune | tr '\n' ' ')
[ $rc -ne 0 ] || [ -z "$other" ] || apt_run "$r" apt-purge sh -c "apt-get purge -y $other" || rc=$?
cp -n "$r"/var/cache/apt/archives/*.deb "$archives/" 2>/dev/null || true
rm -rf "$r"/var/cache/apt/archives/*.deb "$r/var/tmp/pkgs"
stock='' nk=0
for f in "$r"/boot/vmlinuz-*; do
	nk=$((nk + 1))
	case ${f##*/vmlinuz-} in "$rel") ;; 6.12.*-cloud-amd64) stock=${f##*/vmlinuz-} ;; esac
done
note "$(grep -hE '^(Get|Setting up|Removing|update-initramfs|E:|W:)' "$logs"/apt-*.log)"
if [ $rc -eq 0 ] && [ -n "$stock" ] && [ -z "$(dpkg_not_ii "$r")" ] &&
	[ -s "$r/boot/initrd.img-$stock" ] && [ -s "$r/boot/initrd.img-$rel" ] &&
	[ $nk = 2 ]; then
	ok "root: apt installs grub-pc, linux-image-cloud-amd64 ($stock) and linux-image-$rel in $((SECONDS - t0))s (purged: $other): every package ii, an initramfs for both, no other kernel"
else
	not_ok "root: grub-pc, Debian's cloud kernel and ours install (apt exit $rc, stock '$stock', not ii: $(dpkg_not_ii "$r"))"
	note "$(ls "$r/boot")"; note "$(tail -n 30 "$logs"/apt-*.log)"
	tap_plan "$tap_n"; exit 1
fi
# The premise: GRUB (10_linux sorts by version) puts Debian's first.
if [ "$(printf '%s\n' "$rel" "$stock" | sort -V | tail -n 1)" = "$stock" ]; then
	ok "Debian's $stock sorts above our $rel"
else
	not_ok "Debian's $stock sorts above our $rel (the pin is moot otherwise)"
fi

# --- the disk ----------------------------------------------------------------------
uuid=$(cat /proc/sys/kernel/random/uuid)
# A cloud image's snippet: the console on the serial port (GRUB's menu too),
# no "quiet" (the kernel's banner names the release on the console), and
# what a hang needs (sysrq; panic=-1 with qemu's -no-reboot ends the run).
cat >"$r/etc/default/grub.d/10-cloud-image.cfg" <<'EOF'
# tests/packaging/grub-pin.sh: as a cloud image's own snippet
GRUB_CMDLINE_LINUX="console=ttyS0,115200 sysrq_always_enabled panic=-1"
GRUB_CMDLINE_LINUX_DEFAULT=""
GRUB_TIMEOUT=1
GRUB_TERMINAL=serial
GRUB_SERIAL_COMMAND="serial --speed=115200"
EOF
# GRUB's command line says "ro": / is remounted rw from fstab.
echo "UUID=$uuid / ext4 errors=remount-ro 0 1" >"$r/etc/fstab"
install_e2e_guest "$r" grub-pin-check.sh "$rel" "$(packaging/version.sh)"
g=$r/usr/local/lib/mmtune-e2e
echo "$stock" >"$g/expected-stock-release"
echo "$uuid" >"$g/expected-uuid"
printf '%s\n' "$recipe" | sed '$d' >"$g/recipe.sh"
cp "$r/boot/vmlinuz-$stock" "$work/stock-vmlinuz"; cp "$r/boot/initrd.img-$stock" "$work/stock-initrd"
# Partition 1 from 1 MiB (GRUB's core.img goes in the gap before it).
disk=$work/disk.img
size=$(( $(du -sm "$r" | cut -f1) + 512 ))
rm -f "$disk"
truncate -s "$((size + 1))M" "$disk"
if printf 'label: dos\nstart=2048, type=83, bootable\n' | sfdisk -q --no-tell-kernel "$disk" >"$logs/sfdisk.log" 2>&1 &&
	mkfs.ext4 -q -F -L root -U "$uuid" -E offset=1048576 -d "$r" "$disk" "${size}M" >"$logs/mkfs.log" 2>&1; then
	ok "disk: MBR, partition 1 from 1 MiB, ext4 (UUID $uuid) with the root, ${size} MiB"
else
	not_ok "disk image (sfdisk, mkfs.ext4 -d)"; note "$(cat "$logs/sfdisk.log" "$logs/mkfs.log")"
	tap_plan "$tap_n"; exit 1
fi
rm -rf "$r"
note "$(sfdisk -l "$disk" 2>&1)"

# console_says NAME RELEASE: the boot's console (GRUB's terminal is ttyS0
# too) shows GRUB's menu, GRUB loading RELEASE, and RELEASE's banner (a
# line may begin with GRUB's carriage return).
console_says() {
	local c=$logs/$1-console.log
	grep -aq 'GNU GRUB' "$c" && grep -aqF "Loading Linux $2 ..." "$c" && grep -aq "\] Linux version $2 " "$c" &&
		grep -aE "Booting \`|Loading Linux|\] Linux version" "$c" | sed 's/^.*\(Booting `\)/\1/; s/^.*\] Linux version \([^ ]*\) .*/[kernel] Linux version \1/'
}

guest_boot grub-setup "$disk" "$work/stock-vmlinuz" "$work/stock-initrd" "root=UUID=$uuid" ||
	{ tap_plan "$tap_n"; exit 1; }
guest_boot grub-unpinned "$disk" "" || { tap_plan "$tap_n"; exit 1; }
check "console of boot 2: GRUB's menu, GRUB loads $stock, its banner" console_says grub-unpinned "$stock"
guest_boot grub-pinned "$disk" ""
check "console of boot 3: GRUB's menu, GRUB loads $rel (from the submenu), its banner" console_says grub-pinned "$rel"
rm -f "$disk" "$work/stock-vmlinuz" "$work/stock-initrd"

note "GRUB pin test took $((SECONDS - start))s; load $(cut -d' ' -f1-3 /proc/loadavg)"
tap_plan "$tap_n"
echo "grub-pin: $((tap_n - tap_failed - tap_skipped)) passed, $tap_failed failed, $tap_skipped skipped"
[ $tap_failed -eq 0 ]
