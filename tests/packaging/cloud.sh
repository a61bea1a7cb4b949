#!/bin/bash
# The kernel packages built from Debian 12's cloud config, tested as a host
# gets them ("make check-packaging-cloud"; not part of "make check" or
# "make check-packaging": it needs the distribution build, over an hour).
#
#   tests/packaging/cloud.sh [KERNEL-PKGS-DIR]
#
# KERNEL-PKGS-DIR: the output of "build-kernel-pkgs.sh --distro
# debian-cloud --deb" (default: the newest finished debian-cloud set in
# $MMTUNE_CACHE/kernel-pkgs). What it asserts, in order:
#   packages  linux-image, linux-headers, mmtune-modules-<rel> for the same
#             release; the kept certificate (signing/) is the one built into
#             vmlinux; mmtune-modules Depends on exactly linux-image-<rel>
#             at this build's version, mmtune-kernel-cloud-amd64 on exactly
#             both; no private key in any package (issue 27);
#             its mmtune.ko carries the kernel build's signature, which
#             verifies against that certificate
#   rebuild   mmtune-modules-<rel> rebuilt from the headers package and the
#             kept key alone (a new mmtune without a kernel build)
#   headers   in a Debian 12 root (mmdebstrap, cached): the headers package
#             builds mmtune.ko with "make M=", and mmtune-dkms builds,
#             signs (MOK) and installs it with DKMS
#   boot      apt installs linux-image, mmtune-modules, mmtune into another
#             copy of the root (every package ii); qemu TCG boots it with
#             module.sig_enforce=1 through a busybox initramfs that only
#             loads the image's own virtio modules and switches to systemd;
#             in the guest (guest/cloud-check.sh): the signed module loaded,
#             no E taint, unsigned and foreign-key copies refused, the
#             default profile applied (knobs changed from stock, verify 0),
#             swap round trips byte-equal through zswap and disk, stop rolls
#             back, no failed units, a clean console
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo" || exit 2
. tests/packaging/lib.sh
. tests/packaging/full.sh
cache=${MMTUNE_CACHE:-$HOME/.cache/mmtune}
work=build/packaging/cloud
logs=$work/logs

kp=${1:-}
if [ -z "$kp" ]; then
	kp=$(ls -td "$cache"/kernel-pkgs/6.1-*/ 2>/dev/null | while read -r d; do
		[ "$(cat "$d/flavour" 2>/dev/null)" = debian-cloud ] && [ -f "$d/.deb-complete" ] && { echo "${d%/}"; break; }
	done)
fi
start=$SECONDS
tap_header
if [ -z "$kp" ] || [ ! -f "$kp/kernel.release" ]; then
	skip "cloud kernel packages" "none built (make kernel-packages-cloud)"
	tap_plan "$tap_n"; exit 0
fi
rm -rf "$work"; mkdir -p "$logs"
rel=$(cat "$kp/kernel.release")
ver=$(packaging/version.sh)
note "kernel packages: $kp ($rel)"
note "$(cat "$kp/build-info.txt" 2>/dev/null)"

# --- packages -----------------------------------------------------------------
img=$(ls "$kp"/deb/linux-image-"$rel"_*.deb 2>/dev/null | grep -v -- -dbg_)
hdr=$(ls "$kp"/deb/linux-headers-"$rel"_*.deb 2>/dev/null)
mods=$(ls "$kp"/deb/mmtune-modules-"$rel"_*.deb 2>/dev/null)
cert=$kp/signing/signing_key.x509
note "$(cd "$kp/deb" && ls -l)"
if [ -n "$img" ] && [ -n "$hdr" ] && [ -n "$mods" ]; then
	ok "linux-image-$rel, linux-headers-$rel and mmtune-modules-$rel .debs"
else
	not_ok "linux-image-$rel, linux-headers-$rel and mmtune-modules-$rel .debs"
	tap_plan "$tap_n"; exit 1
fi
check "kernel .debs: headers have CONFIG_MMTUNE_HOOKS and sign-file, image has /boot/vmlinuz-$rel" \
	kernel_debs_ok "$kp" "$rel"
check "the kernel's config: Debian's cloud options kept (ENA, NVMe, XFS, dm), mmtune's on, no debug options beyond Debian's" \
	bash -c "t=\$(mktemp -d); dpkg-deb -x '$hdr' \$t; c=\$t/usr/src/linux-headers-$rel/.config
		grep -E '^CONFIG_(ENA_ETHERNET|BLK_DEV_NVME|XFS_FS|BLK_DEV_DM|MMTUNE_HOOKS|ZSWAP|ZSMALLOC|MODULE_SIG|MODULE_SIG_ALL|DEBUG_INFO_BTF)=' \$c
		n=\$(grep -cE '^CONFIG_(PROVE_LOCKING|DEBUG_VM|LOCKDEP|KASAN|DEBUG_OBJECTS|DEBUG_PAGEALLOC)=y' \$c); rm -rf \$t
		[ \$n -eq 0 ]"
kv=$(dpkg-deb -f "$img" Version)
check "mmtune-modules-$rel Depends on exactly this kernel build: linux-image-$rel (= $kv)" \
	bash -c "dpkg-deb -f '$mods' Depends; dpkg-deb -f '$mods' Depends | grep -qE '(^|, )linux-image-$rel \(= $kv\)(\$|,)'"
meta=$(ls "$kp"/deb/mmtune-kernel-cloud-amd64_*.deb 2>/dev/null)
check "mmtune-kernel-cloud-amd64 depends on exactly linux-image-$rel (= $kv) and mmtune-modules-$rel (= $(dpkg-deb -f "$mods" Version))" \
	bash -c "[ -n '$meta' ] && dpkg-deb -f '$meta' Depends | tee /dev/stderr | grep -qF 'linux-image-$rel (= $kv), mmtune-modules-$rel (= $(dpkg-deb -f "$mods" Version))'"
pk_logs=$logs
timed "no private key in any package of the set ($kp: deb/, unpublished/; file lists in $logs/contents/)" \
	no_private_keys "$kp"/deb/*.deb "$kp"/unpublished/*.deb
tmp=$(mktemp -d)
dpkg-deb -x "$mods" "$tmp"
ko=$tmp/lib/modules/$rel/extra/mmtune.ko
signer=$(openssl x509 -inform DER -in "$cert" -noout -subject -nameopt multiline 2>/dev/null |
	sed -n 's/^ *commonName *= *//p')
[ -n "$signer" ] && ok "the kept certificate ($cert) names the signer: '$signer'" ||
	not_ok "the kept certificate $cert is readable and has a commonName"
# The kept certificate is the one compiled into this kernel's
# .builtin_trusted_keys: its bytes are in vmlinux (from the -dbg package).
dbg=$(ls "$kp"/deb/linux-image-"$rel"-dbg_*.deb 2>/dev/null)
if [ -n "$dbg" ]; then
	check "the kept certificate is built into vmlinux (system certificate list), from linux-image-$rel-dbg" \
		bash -c "dpkg-deb --fsys-tarfile '$dbg' | tar -xOf - ./usr/lib/debug/lib/modules/$rel/vmlinux |
			python3 -c 'import sys; c = open(sys.argv[1], \"rb\").read(); sys.exit(0 if c in sys.stdin.buffer.read() else 1)' '$cert'"
else
	skip "the kept certificate is built into vmlinux" "no linux-image-$rel-dbg package"
fi
check "mmtune-modules .deb: mmtune.ko for $rel, version $ver" ko_matches "$ko" "$rel" "$ver"
check "mmtune-modules .deb: signed by the kernel build's key ('$signer')" ko_signed "$ko" "$signer"
check "mmtune-modules .deb: the signature verifies against the certificate the kernel trusts ($cert)" \
	ko_sig_verifies "$ko" "$cert"
cp "$ko" "$work/mmtune-signed.ko"
rm -rf "$tmp"

# --- rebuild from the headers and the kept key ----------------------------------
hdir=$work/headers
mkdir -p "$hdir"
dpkg-deb -x "$hdr" "$hdir"
out=$work/rebuilt
t0=$SECONDS
if packaging/kernel/build-module-pkgs.sh "$hdir/usr/src/linux-headers-$rel" --deb --out "$out" \
	--key "$kp/signing/signing_key.pem" --cert "$cert" --build "$(cat "$kp/build-id")" >"$logs/rebuild.log" 2>&1; then
	tmp=$(mktemp -d)
	dpkg-deb -x "$(ls "$out"/mmtune-modules-"$rel"_*.deb)" "$tmp"
	check "mmtune-modules-$rel rebuilt from linux-headers-$rel and the kept key in $((SECONDS - t0))s: signature verifies" \
		ko_sig_verifies "$tmp/lib/modules/$rel/extra/mmtune.ko" "$cert"
	rm -rf "$tmp"
else
	not_ok "mmtune-modules-$rel rebuilt from the headers package and the kept key"
	note "$(tail -n 20 "$logs/rebuild.log")"
fi

# --- headers in a Debian 12 root: make M= and DKMS ----------------------------------
if ! base=$(tests/packaging/rootfs.sh 2>"$logs/rootfs.log"); then
	not_ok "Debian 12 root (mmdebstrap)"; note "$(tail -n 20 "$logs/rootfs.log")"
	tap_plan "$tap_n"; exit 1
fi
[ -f build/packaging/out/deb/mmtune_"$ver"_all.deb ] && [ -f build/packaging/out/deb/mmtune-dkms_"$ver"_all.deb ] ||
	packaging/build.sh deb >"$logs/build-deb.log" 2>&1 ||
	{ not_ok "mmtune and mmtune-dkms .debs build"; tap_plan "$tap_n"; exit 1; }
r=$work/headers-root
copy_root "$base" "$r"
mkdir -p "$r/var/tmp/pkgs" "$r/tmp/mmtune"
cp "$img" "$hdr" build/packaging/out/deb/mmtune-dkms_"$ver"_all.deb "$r/var/tmp/pkgs/"
(cd module && cp Kbuild Makefile ./*.h "$OLDPWD/$r/tmp/mmtune/" &&
	for f in ./*.c; do case "$f" in *.mod.c) ;; *) cp "$f" "$OLDPWD/$r/tmp/mmtune/" ;; esac; done)
rc=0
in_root "$r" sh -c "apt-get install -y /var/tmp/pkgs/$(basename "$img") /var/tmp/pkgs/$(basename "$hdr")" \
	>"$logs/headers-apt.log" 2>&1 || rc=$?
[ $rc -eq 0 ] && ok "headers root: apt installs linux-image-$rel and linux-headers-$rel" ||
	{ not_ok "headers root: apt installs linux-image-$rel and linux-headers-$rel (exit $rc)"; note "$(tail -n 20 "$logs/headers-apt.log")"; }
t0=$SECONDS
rc=0
in_root "$r" make -C "/lib/modules/$rel/build" M=/tmp/mmtune modules >"$logs/headers-make.log" 2>&1 || rc=$?
note "$(grep -iE 'warning|error|skipping' "$logs/headers-make.log" | head -n 10)"
if [ $rc -eq 0 ] && [ -f "$r/tmp/mmtune/mmtune.ko" ]; then
	check "headers root: 'make -C /lib/modules/$rel/build M=' builds mmtune.ko in $((SECONDS - t0))s, vermagic $rel" \
		ko_matches "$r/tmp/mmtune/mmtune.ko" "$rel" "$ver"
else
	not_ok "headers root: make M= against linux-headers-$rel (exit $rc)"; note "$(tail -n 20 "$logs/headers-make.log")"
fi
make_mok "$r"
t0=$SECONDS
rc=0
out=$(in_root "$r" apt-get install -y "/var/tmp/pkgs/mmtune-dkms_${ver}_all.deb" 2>&1) || rc=$?
echo "$out" >"$logs/headers-dkms.log"
note "$(grep '^mmtune-dkms: ' <<<"$out")"
dk=$r/lib/modules/$rel/updates/dkms/mmtune.ko
if [ $rc -eq 0 ] && grep -q "^mmtune-dkms: $rel: built, signed and installed mmtune $ver" <<<"$out" && [ -f "$dk" ]; then
	ok "headers root: mmtune-dkms builds, signs and installs mmtune $ver for $rel in $((SECONDS - t0))s"
	check "headers root: the DKMS module is signed with the MOK and verifies" \
		bash -c "$(declare -f ko_signed ko_sig_verifies); ko_signed '$dk' 'mmtune test MOK' && ko_sig_verifies '$dk' '$r/var/lib/dkms/mok.pub'"
else
	not_ok "headers root: mmtune-dkms builds mmtune for $rel (apt exit $rc)"; note "$(tail -n 30 <<<"$out")"
fi
rm -rf "$r"

# --- boot: apt install, then qemu with module.sig_enforce=1 ---------------------------
r=$work/boot-root
copy_root "$base" "$r"
mkdir -p "$r/var/tmp/pkgs"
cp "$img" "$mods" build/packaging/out/deb/mmtune_"$ver"_all.deb "$r/var/tmp/pkgs/"
t0=$SECONDS
rc=0
out=$(in_root "$r" sh -c 'apt-get install -y /var/tmp/pkgs/*.deb' 2>&1) || rc=$?
echo "$out" >"$logs/boot-apt.log"
notii=$(in_root "$r" dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' | grep -v '^ii ' || true)
if [ $rc -eq 0 ] && [ -z "$notii" ] && [ -f "$r/lib/modules/$rel/extra/mmtune.ko" ] &&
	grep -q 'extra/mmtune.ko' "$r/lib/modules/$rel/modules.dep"; then
	ok "boot root: apt installs linux-image-$rel, mmtune-modules-$rel, mmtune in $((SECONDS - t0))s; every package ii, mmtune.ko in modules.dep"
else
	not_ok "boot root: apt install of the three packages (exit $rc, not ii: $notii)"; note "$(tail -n 30 <<<"$out")"
	tap_plan "$tap_n"; exit 1
fi
g=$r/usr/local/lib/mmtune-e2e
install_e2e_guest "$r" cloud-check.sh "$rel" "$ver"
echo "$signer" >"$g/expected-signer"
gcc -O2 -Wall -Wextra -Werror -static -pthread -o "$r/usr/local/bin/swap_integrity" tests/vm/progs/swap_integrity.c
# Bad input for the guest: mmtune.ko without its signature, and signed by
# a key this kernel does not trust.
python3 - "$work/mmtune-signed.ko" "$g/mmtune-unsigned.ko" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
magic = b"~Module signature appended~\n"
assert data.endswith(magic)
sig_len = struct.unpack(">I", data[-len(magic) - 4:-len(magic)])[0]
open(sys.argv[2], "wb").write(data[:len(data) - len(magic) - 12 - sig_len])
PY
openssl req -new -x509 -nodes -days 2 -subj "/CN=mmtune untrusted key/" -newkey rsa:2048 \
	-keyout "$work/other.key" -outform DER -out "$work/other.der" >/dev/null 2>&1
cp "$g/mmtune-unsigned.ko" "$g/mmtune-otherkey.ko"
"$hdir/usr/src/linux-headers-$rel/scripts/sign-file" sha256 "$work/other.key" "$work/other.der" "$g/mmtune-otherkey.ko"

# The initramfs: busybox and the image's own virtio modules (signed by the
# same build: they load under sig_enforce too), in modprobe's order;
# ext4 too where it is a module (Debian's cloud config builds it in).
ird=$work/initramfs
mkdir -p "$ird"/{bin,dev,proc,sys,newroot,lib/modules}
cp /bin/busybox "$ird/bin/busybox"
modprobe -a -d "$r" -S "$rel" --show-depends virtio_pci virtio_blk ext4 >"$work/initramfs-modules.txt" 2>&1
note "initramfs modules: $(tr '\n' ' ' <"$work/initramfs-modules.txt")"
: >"$ird/modules"
while read -r kind path _; do
	[ "$kind" = insmod ] || continue
	grep -qxF "${path#"$r"}" "$ird/modules" && continue
	install -D -m 0644 "$path" "$ird${path#"$r"}"
	echo "${path#"$r"}" >>"$ird/modules"
done <"$work/initramfs-modules.txt"
cat >"$ird/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs devtmpfs /dev
for m in $(cat /modules); do insmod "$m" || echo "initramfs: insmod $m failed"; done
i=0
while [ ! -b /dev/vda ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
mount -t ext4 -o rw /dev/vda /newroot || { echo "initramfs: no root on /dev/vda"; poweroff -f; }
umount /proc /sys /dev
exec switch_root /newroot /sbin/init
EOF
chmod 0755 "$ird/init"
(cd "$ird" && find . | cpio -o -H newc --quiet | gzip -1) >"$work/initramfs.gz"

size=$(( $(du -sm "$r" | cut -f1) + 512 ))
rm -f "$work/root.img" "$work/swap.img"
if ! mkfs.ext4 -q -F -L root -d "$r" "$work/root.img" "${size}M" >"$logs/mkfs.log" 2>&1; then
	not_ok "boot: root file system image"; note "$(cat "$logs/mkfs.log")"; tap_plan "$tap_n"; exit 1
fi
truncate -s 512M "$work/swap.img"
console=$logs/console.log results=$logs/results.tap qrc=0
: >"$console"; : >"$results"
t0=$SECONDS
qemu_timed "$logs" "${MMTUNE_CLOUD_VM_TIMEOUT:-1500}" -accel tcg,thread=single \
	-cpu max -smp 2 -m 2G -nodefaults -no-reboot -display none \
	-kernel "$r/boot/vmlinuz-$rel" -initrd "$work/initramfs.gz" \
	-append "console=ttyS0,115200 module.sig_enforce=1 panic=-1 systemd.show_status=1 sysrq_always_enabled" \
	-serial "file:$console" -serial "file:$results" \
	-drive "file=$work/root.img,if=virtio,format=raw,cache=unsafe" \
	-drive "file=$work/swap.img,if=virtio,format=raw,cache=unsafe" >"$logs/qemu.log" 2>&1 || qrc=$?
sed -i 's/\r$//' "$console" "$results"
note "boot and guest checks took $((SECONDS - t0))s (qemu exit $qrc; console $console)"
if ! grep -q '^# e2e: done' "$results"; then
	not_ok "boot: the guest ran its checks (qemu exit $qrc)"
	note "$(cat "$results")"
	note "console (last 60 lines):"; note "$(tail -n 60 "$console")"
else
	while IFS= read -r line; do
		case "$line" in
		"ok "*) ok "boot (guest): ${line#ok [0-9]* }" ;;
		"not ok "*) not_ok "boot (guest): ${line#not ok [0-9]* }" ;;
		"#"*) note "${line#\# }" ;;
		esac
	done <"$results"
fi
report_re='WARNING:|BUG:|Oops|Kernel panic|Call Trace:'
if grep -Eq "$report_re" "$console"; then
	not_ok "boot: kernel console free of warnings, BUGs and oopses"
	note "$(grep -En -A5 "$report_re" "$console" | head -n 40)"
else
	ok "boot: kernel console free of warnings, BUGs and oopses"
fi
note "cloud kernel package tests took $((SECONDS - start))s"
tap_plan "$tap_n"
echo "cloud: $((tap_n - tap_failed - tap_skipped)) passed, $tap_failed failed, $tap_skipped skipped"
[ $tap_failed -eq 0 ]
