#!/bin/bash
# Boot Debian 12's stock kernel (no mmtune.ko) with the mmtune package
# installed, under qemu (TCG, one thread), and check in the guest
# (tests/packaging/guest/stock-boot-check.sh) that the boot logs no error about
# mmtune: modprobe@mmtune.service ran and said nothing, systemd-modules-load
# logged nothing, no failed unit; and, as the control, that the former
# modules-load.d entry makes systemd-modules-load log that error on this
# kernel. A second boot of the same system with a stand-in mmtune.ko
# (Debian's dummy.ko installed under that name, depmod): the unit chain
# loads it before mmtune.service starts, silently.
#
#   tests/packaging/stock-boot.sh [ROOT]
#
# ROOT: the cached Debian 12 root (tests/packaging/rootfs.sh). The stock
# linux-image comes from $MMTUNE_CACHE/apt-archives (filled by the full
# suite) or the Debian mirror. Needs build/packaging/out/deb. Prints the
# guest's TAP; exit 0 when every check passed. About 3 minutes.
set -uo pipefail

# shellcheck disable=SC1091 # tests/packaging/lib.sh, checked on its own
. "$(dirname "$0")/lib.sh" >/dev/null
base=${1:-$(tests/packaging/rootfs.sh)} || exit 1
cache=${MMTUNE_CACHE:-$HOME/.cache/mmtune}
ver=$(packaging/version.sh)
deb=build/packaging/out/deb/mmtune_${ver}_all.deb
[ -f "$deb" ] || { echo "no $deb: packaging/build.sh deb first"; exit 1; }
w=build/packaging/work/stock-boot
r=$w/root img=$w/root.img logs=build/packaging/logs
mkdir -p "$logs" "$cache/apt-archives"
copy_root "$base" "$r"
for kver in "$r"/usr/src/linux-headers-*-amd64; do kver=${kver##*/linux-headers-}; break; done

cp "$deb" "$r/var/tmp/"
cp "$cache"/apt-archives/*.deb "$r/var/cache/apt/archives/" 2>/dev/null
out=$(in_root "$r" sh -c "apt-get update && apt-get install -y linux-image-$kver /var/tmp/${deb##*/}" 2>&1); rc=$?
cp -n "$r"/var/cache/apt/archives/*.deb "$cache/apt-archives/" 2>/dev/null
rm -f "$r"/var/cache/apt/archives/*.deb
printf '%s\n' "$out" >"$logs/stock-boot-apt.log"
# The operator's choice: mmtune.service applies the rules' pick at boot.
in_root "$r" systemctl enable mmtune.service >>"$logs/stock-boot-apt.log" 2>&1 || rc=$?
if [ $rc != 0 ] || [ ! -s "$r/boot/initrd.img-$kver" ]; then
	echo "apt-get install linux-image-$kver mmtune failed (exit $rc): $logs/stock-boot-apt.log"; exit 1
fi

g=$r/usr/local/lib/mmtune-e2e
install -D -m 0755 tests/packaging/guest/stock-boot-check.sh "$g/check.sh"
install -D -m 0644 tests/lib/tap.sh "$g/tap.sh"
cat >"$r/etc/systemd/system/mmtune-e2e.service" <<'UNIT'
[Unit]
Description=mmtune stock-kernel boot checks
After=multi-user.target mmtune.service

[Service]
Type=oneshot
ExecStart=/usr/local/lib/mmtune-e2e/check.sh
ExecStopPost=/bin/systemctl --no-block poweroff
StandardOutput=journal+console

[Install]
WantedBy=multi-user.target
UNIT
ln -sf /etc/systemd/system/mmtune-e2e.service "$r/etc/systemd/system/multi-user.target.wants/mmtune-e2e.service"
cp "$r/boot/vmlinuz-$kver" "$w/vmlinuz"; cp "$r/boot/initrd.img-$kver" "$w/initrd.img"
size=$(( $(du -sm "$r" | cut -f1) + 512 ))
mkfs.ext4 -q -F -L root -d "$r" "$img" "${size}M" || exit 1
# The second system: a stand-in mmtune.ko.
dummy=$(find "$r/lib/modules/$kver" -name 'dummy.ko*' | head -n 1)
[ -n "$dummy" ] || { echo "no dummy.ko in linux-image-$kver"; exit 1; }
mkdir -p "$r/lib/modules/$kver/updates"
cp "$dummy" "$r/lib/modules/$kver/updates/mmtune.ko${dummy##*/dummy.ko}"
in_root "$r" depmod "$kver" || exit 1
touch "$r/usr/local/lib/mmtune-e2e/expect-module"
mkfs.ext4 -q -F -L root -d "$r" "$w/module.img" "${size}M" || exit 1
rm -rf "$r"
rc=0
for b in stock:"$img" module:"$w/module.img"; do
	t0=$SECONDS
	rm -f "$w/results.tap"
	guest_boot "$logs/stock-boot-${b%%:*}-boot" "${MMTUNE_E2E_TIMEOUT:-1200}" "$w" "${b#*:}" "$w/results.tap"
	echo "# ${b%%:*}: boot and checks took $((SECONDS - t0))s"
	sed -i 's/\r$//' "$w/results.tap"
	cat "$w/results.tap"
	grep -q '^# e2e: done' "$w/results.tap" || { echo "not ok: the guest did not finish (console: $logs/stock-boot-${b%%:*}-boot-console.log)"; rc=1; }
	grep -q '^not ok' "$w/results.tap" && rc=1
done
rm -rf "$w"
exit $rc
