#!/bin/bash
# The kernel packages built from Debian's cloud config, tested as a host
# gets them ("make check-packaging-cloud [LINE=6.12] [RELEASE=trixie]";
# not part of "make check" or "make check-packaging": it needs the
# distribution build, over an hour cold).
#
#   tests/packaging/cloud.sh [--line 6.1|6.12] [--release bookworm|trixie]
#                            [--from 6.1-SET] [KERNEL-PKGS-DIR]
#
# --line (default 6.1): the kernel line of the set. --release (default
# bookworm): the Debian root the host is, Debian 12 (bookworm) or 13
# (trixie; 6.12 only: Debian 13 has no 6.1). KERNEL-PKGS-DIR: the output
# of "build-kernel-pkgs.sh --line LINE --distro debian-cloud --deb"
# (default: the newest finished debian-cloud set of the line in
# $MMTUNE_CACHE/kernel-pkgs). --from: the 6.1 cloud set the Debian 12 LTS
# path starts from (line 6.12 on bookworm only; default the newest
# finished 6.1 debian-cloud set; without one that part is skipped).
# Work and logs: build/packaging/cloud-LINE-RELEASE/. What it asserts, in
# order:
#   packages  linux-image, linux-headers, mmtune-modules-<rel> for the same
#             release; the kept certificate (signing/) is the one built into
#             vmlinux; mmtune-modules Depends on exactly linux-image-<rel>
#             at this build's version, the meta package
#             (mmtune-kernel-cloud-amd64; 6.12: mmtune-kernel-6.12-cloud-amd64)
#             on exactly both; no private key in any package (issue 27);
#             its mmtune.ko carries the kernel build's signature, which
#             verifies against that certificate
#   rebuild   mmtune-modules-<rel> rebuilt from the headers package and the
#             kept key alone (a new mmtune without a kernel build)
#   headers   in a root of the release (mmdebstrap, cached): the headers
#             package builds mmtune.ko with "make M=", and mmtune-dkms
#             builds, signs (MOK) and installs it with DKMS
#   repository  make-repo.sh (a throwaway key) publishes mmtune <ver>, a
#             bumped <ver>+up1, the set (and the 6.1 set for the LTS path):
#             signed dists/<release> layout
#   operator  in another copy of the root, apt installs from that signed
#             repository mmtune and the meta package (every package ii),
#             then a stock Debian kernel of the line beside ours (Debian 12:
#             6.1's linux-image-6.1.0-<abi>-amd64, 6.12's
#             linux-image-6.12-cloud-amd64 from bookworm-security; Debian
#             13: its linux-image-6.12.<n>+deb13-amd64), with
#             /usr/bin/containerd there so the recommend rules pick the
#             host-class profile container-host. Booted twice
#             (guest/cloud-check.sh): ours with module.sig_enforce=1 through
#             a busybox initramfs that only loads the image's own virtio
#             modules and switches to systemd: the signed module loaded, no
#             E taint, unsigned and foreign-key copies refused, the profile
#             picked, recorded and in force (verify 0), swap round trips
#             byte-equal through zswap and disk, on 6.12 64K and 2M folios
#             stored whole in zswap (the size's zswpout, the module's
#             thp_stored and subpages_stored) and read back equal, "apt-get
#             upgrade" to mmtune <ver>+up1 keeps every tuned value, stop
#             rolls back, no failed units, a clean console; the stock
#             kernel (its own initramfs): "no mmtune hooks", verify 5, no
#             failed units
#   lts       (6.12 on bookworm) a Debian 12 host on our 6.1 cloud kernel
#             (mmtune-kernel-cloud-amd64, container-host recorded) installs
#             mmtune-kernel-6.12-cloud-amd64 from the repository and reboots
#             (guest/cloud-lts-check.sh): the 6.12 kernel the guest
#             installed is the set's, its module (the 6.12 build's key)
#             loaded under sig_enforce, 6.1's refused, the recorded profile
#             kept with every value, its per-size settings now in force
#   grub      (trixie) packaging/README.md's GRUB pin booted through GRUB
#             (tests/packaging/grub-pin.sh on the same set, its TAP
#             re-emitted as "grub-pin: ..."): Debian's higher cloud kernel
#             without the pin, ours with it
# Guest time limits: lib.sh (load_scale).
set -uo pipefail
# shellcheck source=tests/packaging/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/packaging/full.sh
. tests/packaging/full.sh

usage() { echo "usage: $0 [--line 6.1|6.12] [--release bookworm|trixie] [--from 6.1-SET] [KERNEL-PKGS-DIR]" >&2; exit 2; }
line=6.1 release=bookworm from='' kp=''
while [ $# -gt 0 ]; do
	case $1 in
	--line) line=${2:-}; shift ;;
	--release) release=${2:-}; shift ;;
	--from) from=${2:-}; [ -n "$from" ] || usage; shift ;;
	-*) usage ;;
	*) kp=$1 ;;
	esac
	shift
done
case $line in 6.1|6.12) ;; *) echo "cloud: no kernel line '$line' (6.1 or 6.12)" >&2; usage ;; esac
case $release in bookworm|trixie) ;; *) echo "cloud: no release '$release' (bookworm or trixie)" >&2; usage ;; esac
if [ "$line" = 6.1 ] && [ "$release" = trixie ]; then
	echo "cloud: 6.1 is Debian 12's line; Debian 13 (trixie) runs 6.12 (--line 6.12)" >&2; exit 2
fi
[ -z "$from" ] || [ "$line:$release" = 6.12:bookworm ] ||
	{ echo "cloud: --from (the Debian 12 LTS path from 6.1) goes with --line 6.12 --release bookworm" >&2; exit 2; }
# image_deb SET: the set's linux-image .deb (not the -dbg one).
image_deb() {
	local f
	for f in "$1"/deb/linux-image-"$(cat "$1/kernel.release")"_*.deb; do
		[ -f "$f" ] && echo "$f"
	done
}
# The meta package of the line (6.1's has no line in its name).
meta_of() { if [ "$1" = 6.1 ]; then echo mmtune-kernel-cloud-amd64; else echo "mmtune-kernel-$1-cloud-amd64"; fi; }
meta=$(meta_of "$line")
work=build/packaging/cloud-$line-$release
logs=$work/logs
# full.sh's helpers (make_repo, bump_debs, guest_boot, apt_run) write here.
pk_work=$work pk_logs=$logs

[ -n "$kp" ] || kp=$(newest_set "$line")
start=$SECONDS
tap_header
if [ -z "$kp" ] || [ ! -f "$kp/kernel.release" ]; then
	skip "$line cloud kernel packages" "none built (make kernel-packages-cloud LINE=$line)"
	tap_plan "$tap_n"; exit 0
fi
rm -rf "$work"; mkdir -p "$logs"
rel=$(cat "$kp/kernel.release")
ver=$(packaging/version.sh)
case $rel:$(cat "$kp/flavour" 2>/dev/null) in
"$line".*:debian-cloud) ;;
*) not_ok "$kp is a debian-cloud set of line $line (release $rel, flavour $(cat "$kp/flavour" 2>&1))"; tap_plan "$tap_n"; exit 1 ;;
esac
note "line $line on Debian $release; kernel packages: $kp ($rel); load $(cut -d' ' -f1-3 /proc/loadavg)"
note "$(cat "$kp/build-info.txt" 2>/dev/null)"

# --- packages -----------------------------------------------------------------
img=$(image_deb "$kp")
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
	bash -c "$(declare -f headers_config); t=\$(mktemp -d); dpkg-deb -x '$hdr' \$t; c=\$(headers_config \$t/usr/src/linux-headers-$rel)
		grep -E '^CONFIG_(ENA_ETHERNET|BLK_DEV_NVME|XFS_FS|BLK_DEV_DM|MMTUNE_HOOKS|ZSWAP|ZSMALLOC|MODULE_SIG|MODULE_SIG_ALL|DEBUG_INFO_BTF)=' \$c
		n=\$(grep -cE '^CONFIG_(PROVE_LOCKING|DEBUG_VM|LOCKDEP|KASAN|DEBUG_OBJECTS|DEBUG_PAGEALLOC)=y' \$c); rm -rf \$t
		[ \$n -eq 0 ]"
kv=$(dpkg-deb -f "$img" Version)
modver=$(dpkg-deb -f "$mods" Version)
check "mmtune-modules-$rel Depends on exactly this kernel build: linux-image-$rel (= $kv)" \
	bash -c "dpkg-deb -f '$mods' Depends; dpkg-deb -f '$mods' Depends | grep -qE '(^|, )linux-image-$rel \(= $kv\)(\$|,)'"
metadeb=$(ls "$kp"/deb/"$meta"_*.deb 2>/dev/null)
check "$meta depends on exactly linux-image-$rel (= $kv) and mmtune-modules-$rel (= $modver)" \
	bash -c "[ -n '$metadeb' ] && dpkg-deb -f '$metadeb' Depends | tee /dev/stderr | grep -qF 'linux-image-$rel (= $kv), mmtune-modules-$rel (= $modver)'"
timed "no private key in any package of the set ($kp: deb/, unpublished/; file lists in $logs/contents/)" \
	no_private_keys "$kp"/deb/*.deb "$kp"/unpublished/*.deb
tmp=$(mktemp -d)
dpkg-deb -x "$mods" "$tmp"
ko=$tmp/lib/modules/$rel/extra/mmtune.ko
signer=$(cn "$cert" 2>/dev/null)
[ -n "$signer" ] && ok "the kept certificate ($cert) names the signer: '$signer'" ||
	not_ok "the kept certificate $cert is readable and has a commonName"
# The kept certificate is the one compiled into this kernel's
# .builtin_trusted_keys: its bytes are in vmlinux (from the -dbg package).
dbg=$(ls "$kp"/deb/linux-image-"$rel"-dbg_*.deb 2>/dev/null)
if [ -n "$dbg" ]; then
	timed "the kept certificate is built into vmlinux (system certificate list), from linux-image-$rel-dbg" \
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

# --- headers in a root of the release: make M= and DKMS ---------------------------
if ! base=$(tests/packaging/rootfs.sh "$release" 2>"$logs/rootfs.log"); then
	not_ok "Debian $release root (mmdebstrap)"; note "$(tail -n 20 "$logs/rootfs.log")"
	tap_plan "$tap_n"; exit 1
fi
note "root: $(sed -n 's/^PRETTY_NAME=//p' "$base/etc/os-release") ($base)"
# Built every run (seconds): a package left from another checkout's
# sources would test those.
packaging/build.sh deb >"$logs/build-deb.log" 2>&1 ||
	{ not_ok "mmtune and mmtune-dkms .debs build"; note "$(tail -n 20 "$logs/build-deb.log")"; tap_plan "$tap_n"; exit 1; }
r=$work/headers-root
copy_root "$base" "$r"
mkdir -p "$r/var/tmp/pkgs" "$r/tmp/mmtune"
cp "$img" "$hdr" build/packaging/out/deb/mmtune-dkms_"$ver"_all.deb "$r/var/tmp/pkgs/"
(cd module && cp Kbuild Makefile ./*.h "$OLDPWD/$r/tmp/mmtune/" &&
	for f in ./*.c; do case "$f" in *.mod.c) ;; *) cp "$f" "$OLDPWD/$r/tmp/mmtune/" ;; esac; done)
rc=0
in_root "$r" sh -c "apt-get install -y /var/tmp/pkgs/$(basename "$img") /var/tmp/pkgs/$(basename "$hdr")" \
	>"$logs/headers-apt.log" 2>&1 || rc=$?
[ $rc -eq 0 ] && ok "headers root ($release): apt installs linux-image-$rel and linux-headers-$rel" ||
	{ not_ok "headers root ($release): apt installs linux-image-$rel and linux-headers-$rel (exit $rc)"; note "$(tail -n 20 "$logs/headers-apt.log")"; }
t0=$SECONDS
rc=0
in_root "$r" make -C "/lib/modules/$rel/build" M=/tmp/mmtune modules >"$logs/headers-make.log" 2>&1 || rc=$?
note "$(grep -iE 'warning|error|skipping|differs' "$logs/headers-make.log" | head -n 10)"
if [ $rc -eq 0 ] && [ -f "$r/tmp/mmtune/mmtune.ko" ]; then
	check "headers root ($release): 'make -C /lib/modules/$rel/build M=' builds mmtune.ko in $((SECONDS - t0))s, vermagic $rel" \
		ko_matches "$r/tmp/mmtune/mmtune.ko" "$rel" "$ver"
else
	not_ok "headers root ($release): make M= against linux-headers-$rel (exit $rc)"; note "$(tail -n 20 "$logs/headers-make.log")"
fi
make_mok "$r"
t0=$SECONDS
rc=0
out=$(in_root "$r" apt-get install -y "/var/tmp/pkgs/mmtune-dkms_${ver}_all.deb" 2>&1) || rc=$?
echo "$out" >"$logs/headers-dkms.log"
note "$(grep '^mmtune-dkms: ' <<<"$out")"
# dkms compresses the module as the kernel's config does (6.12's Debian
# configs: xz): the signature is inside.
dk=
for f in "$r/lib/modules/$rel/updates/dkms"/mmtune.ko*; do [ -f "$f" ] && dk=$f; done
case $dk in
*.xz) xz -dc "$dk" >"$work/mmtune-dkms.ko"; note "DKMS installed ${dk##*/} (xz, as the kernel's modules)"; dk=$work/mmtune-dkms.ko ;;
esac
if [ $rc -eq 0 ] && grep -q "^mmtune-dkms: $rel: built, signed and installed mmtune $ver" <<<"$out" && [ -n "$dk" ]; then
	ok "headers root ($release): mmtune-dkms builds, signs and installs mmtune $ver for $rel in $((SECONDS - t0))s"
	check "headers root ($release): the DKMS module is signed with the MOK and verifies" \
		bash -c "$(declare -f ko_signed ko_sig_verifies); ko_signed '$dk' 'mmtune test MOK' && ko_sig_verifies '$dk' '$r/var/lib/dkms/mok.pub'"
else
	not_ok "headers root ($release): mmtune-dkms builds mmtune for $rel (apt exit $rc)"; note "$(tail -n 30 <<<"$out")"
fi
rm -rf "$r"

# --- the signed repository ------------------------------------------------------
# The LTS path's 6.1 set.
kp61=
if [ "$line:$release" = 6.12:bookworm ]; then
	kp61=${from:-$(newest_set 6.1)}
	if [ -n "$kp61" ] && { [ "$(cat "$kp61/flavour" 2>/dev/null)" != debian-cloud ] ||
		case $(cat "$kp61/kernel.release" 2>/dev/null) in 6.1.*) false ;; *) true ;; esac; }; then
		not_ok "--from $kp61 is a finished 6.1 debian-cloud set (flavour: $(cat "$kp61/flavour" 2>&1))"; kp61=
	fi
fi
if ! bdir=$(bump_debs "$ver"); then
	not_ok "mmtune $ver+up1 (a copy of this tree with the version bumped) builds"; note "$(tail -n 20 "$logs/bump-build.log")"
	tap_plan "$tap_n"; exit 1
fi
t0=$SECONDS
if make_repo "$work/repo" --suite "$release" build/packaging/out/deb "$bdir" "$kp/deb" ${kp61:+"$kp61/deb"} >"$logs/make-repo.log" 2>&1 &&
	gpgv --keyring "$work/repo/mmtune-archive-keyring.gpg" "$work/repo/apt/dists/$release/InRelease" >>"$logs/make-repo.log" 2>&1; then
	ok "make-repo.sh: signed apt repository (dists/$release, InRelease verifies) with mmtune $ver and $ver+up1, the $line set${kp61:+ and the 6.1 set} in $((SECONDS - t0))s"
else
	not_ok "make-repo.sh builds the signed repository"; note "$(tail -n 30 "$logs/make-repo.log")"
	tap_plan "$tap_n"; exit 1
fi
note "$(grep -E 'left out|apt:' "$logs/make-repo.log")"
rm -rf "$work/repo/contents"

# repo_root ROOT: ROOT's apt has the repository at file:/srv/mmtune-repo
# (signed-by= its key) beside Debian's sources.
repo_root() {
	mkdir -p "$1/srv" "$1/etc/apt/keyrings"
	cp -a "$work/repo" "$1/srv/mmtune-repo"
	cp "$work/repo/mmtune-archive-keyring.gpg" "$1/etc/apt/keyrings/mmtune.gpg"
	echo "deb [signed-by=/etc/apt/keyrings/mmtune.gpg] file:/srv/mmtune-repo/apt $release main" \
		>"$1/etc/apt/sources.list.d/mmtune.list"
}
# only_ours ROOT: from here on the repository is all the guest has (no network).
only_ours() {
	rm -f "$1/etc/apt/sources.list"
	find "$1/etc/apt/sources.list.d" -type f ! -name mmtune.list -delete
}
# container_host ROOT: what the container-host recommend rule looks for.
container_host() {
	printf '#!/bin/sh\necho "a stand-in: the container-host recommend rule looks for /usr/bin/containerd (tests/packaging/cloud.sh)"\n' \
		>"$1/usr/bin/containerd"
	chmod 0755 "$1/usr/bin/containerd"
}
# install_ours ROOT META NAME: apt-get install mmtune=<ver> META from the
# repository; one TAP line: every package ii, META's kernel and module
# installed, mmtune.ko in modules.dep.
install_ours() {
	local r=$1 m=$2 name=$3 k t0=$SECONDS rc=0 krel
	k=$(ls "$work"/repo/apt/pool/main/"$m"_*.deb 2>/dev/null | tail -n 1)
	krel=$(deb_field "$k" Depends | sed -n 's/^linux-image-\([^ ]*\) .*/\1/p')
	apt_run "$r" "$name-apt" sh -c "apt-get update && apt-get install -y mmtune=$ver $m" || rc=$?
	note "$(grep -E '^(Get|Setting up|E:|W:)' <<<"$apt_out")"
	if [ $rc -eq 0 ] && [ -z "$(dpkg_not_ii "$r")" ] && [ -n "$krel" ] &&
		[ "$(in_root "$r" dpkg-query -W -f '${Version}' "$m")" = "$(deb_field "$k" Version)" ] &&
		[ -f "$r/boot/vmlinuz-$krel" ] && grep -q 'extra/mmtune.ko' "$r/lib/modules/$krel/modules.dep" &&
		in_root "$r" systemctl enable mmtune.service >/dev/null 2>&1; then
		ok "$name: apt-get install mmtune=$ver $m from the signed repository in $((SECONDS - t0))s: every package ii, linux-image-$krel and its mmtune.ko (in modules.dep); systemctl enable mmtune.service (the operator's choice)"
	else
		not_ok "$name: apt-get install mmtune=$ver $m (apt exit $rc, not ii: $(dpkg_not_ii "$r"))"; note "$apt_out"
		return 1
	fi
}

# busybox_initramfs IMAGE-DEB REL OUT: an initramfs of busybox and the
# image's own virtio modules (signed by the same build: they load under
# sig_enforce too; decompressed, 6.12's are .ko.xz), in modprobe's order;
# ext4 too where it is a module (Debian's cloud config builds it in). It
# mounts /dev/vda and switches to systemd.
busybox_initramfs() {
	local deb=$1 krel=$2 out=$3 t kind path p
	t=$(mktemp -d)
	mkdir -p "$t/root" "$t/ird"/{bin,dev,proc,sys,newroot}
	dpkg-deb -x "$deb" "$t/root"
	cp /bin/busybox "$t/ird/bin/busybox"
	modprobe -a -d "$t/root" -S "$krel" --show-depends virtio_pci virtio_blk ext4 >"$logs/initramfs-$krel.txt" 2>&1
	: >"$t/ird/modules"
	while read -r kind path _; do
		[ "$kind" = insmod ] || continue
		p=${path#"$t/root"}
		case $p in
		*.xz) p=${p%.xz}; mkdir -p "$t/ird${p%/*}"; xz -dc "$path" >"$t/ird$p" ;;
		*.zst) p=${p%.zst}; mkdir -p "$t/ird${p%/*}"; zstd -qdc "$path" >"$t/ird$p" ;;
		*) install -D -m 0644 "$path" "$t/ird$p" ;;
		esac
		grep -qxF "$p" "$t/ird/modules" || echo "$p" >>"$t/ird/modules"
	done <"$logs/initramfs-$krel.txt"
	note "initramfs for $krel: $(tr '\n' ' ' <"$t/ird/modules")"
	cat >"$t/ird/init" <<'EOF'
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
	chmod 0755 "$t/ird/init"
	(cd "$t/ird" && find . | cpio -o -H newc --quiet | gzip -1) >"$out"
	rm -rf "$t"
	[ -s "$out" ] && grep -q virtio_blk "$logs/initramfs-$krel.txt"
}

# make_image ROOT IMAGE HEADROOM-MB: ROOT as an ext4 image, then ROOT goes.
make_image() {
	local size=$(( $(du -sm "$1" | cut -f1) + $3 ))
	rm -f "$2"
	if ! mkfs.ext4 -q -F -L root -d "$1" "$2" "${size}M" >"$logs/mkfs-${2##*/}.log" 2>&1; then
		not_ok "root file system image ${2##*/}"; note "$(cat "$logs/mkfs-${2##*/}.log")"; return 1
	fi
	rm -rf "$1"
}

# --- the operator image: ours and a stock kernel beside it, booted ----------------
operator_checks() {
	local r=$work/op-root im=$work/op.img archives=$cache/apt-archives stockpkg stock g rc=0 f
	[ "$release" = bookworm ] || archives=$cache/apt-archives-$release
	copy_root "$base" "$r"
	repo_root "$r"
	install_ours "$r" "$meta" operator || return 0
	# The stock kernel of the line, from Debian (cached archives first).
	case $line:$release in
	6.1:*|*:trixie) stockpkg=$(basename "$(ls -d "$r"/usr/src/linux-headers-*-amd64 | head -n 1)"); stockpkg=linux-image-${stockpkg#linux-headers-} ;;
	*) stockpkg=linux-image-$line-cloud-amd64 ;;
	esac
	mkdir -p "$archives"
	cp "$archives"/*.deb "$r/var/cache/apt/archives/" 2>/dev/null || true
	rc=0; apt_run "$r" operator-stock-apt apt-get install -y --reinstall "$stockpkg" || rc=$?
	cp -n "$r"/var/cache/apt/archives/*.deb "$archives/" 2>/dev/null || true
	rm -f "$r"/var/cache/apt/archives/*.deb
	stock=
	for f in "$r"/boot/vmlinuz-*; do
		case ${f##*/vmlinuz-} in "$rel") ;; "$line".*) stock=${f##*/vmlinuz-} ;; esac
	done
	note "$(grep -E '^(Get|Setting up|update-initramfs|E:|W:)' <<<"$apt_out")"
	if [ $rc -eq 0 ] && [ -n "$stock" ] && [ -s "$r/boot/initrd.img-$stock" ] && [ -z "$(dpkg_not_ii "$r")" ] &&
		[ ! -e "$r/lib/modules/$stock/extra/mmtune.ko" ]; then
		ok "operator: apt-get install $stockpkg ($stock) beside ours: every package ii, /boot/initrd.img-$stock made, no mmtune.ko for it"
	else
		not_ok "operator: a stock $line kernel ($stockpkg) installs beside ours (apt exit $rc, not ii: $(dpkg_not_ii "$r"))"; note "$apt_out"
		return 0
	fi
	only_ours "$r"
	container_host "$r"
	g=$r/usr/local/lib/mmtune-e2e
	install_e2e_guest "$r" cloud-check.sh "$rel" "$ver"
	echo "$signer" >"$g/expected-signer"
	echo "$line" >"$g/expected-line"
	echo container-host >"$g/expected-profile"
	echo "$stock" >"$g/expected-stock-release"
	echo "$ver+up1" >"$g/expected-bump"
	gcc -O2 -Wall -Wextra -Werror -static -pthread -o "$r/usr/local/bin/swap_integrity" tests/vm/progs/swap_integrity.c
	# Bad input for the guest: mmtune.ko without its signature, and signed
	# by a key this kernel does not trust. Listed first: the guest fails
	# on a listed module that a failed step below did not make.
	echo "unsigned otherkey" >"$g/expected-bad-modules"
	python3 - "$work/mmtune-signed.ko" "$g/mmtune-unsigned.ko" <<'PY' ||
import struct, sys
data = open(sys.argv[1], "rb").read()
magic = b"~Module signature appended~\n"
assert data.endswith(magic)
sig_len = struct.unpack(">I", data[-len(magic) - 4:-len(magic)])[0]
open(sys.argv[2], "wb").write(data[:len(data) - len(magic) - 12 - sig_len])
PY
		not_ok "operator: mmtune.ko without its signature (from $work/mmtune-signed.ko)"
	{ openssl req -new -x509 -nodes -days 2 -subj "/CN=mmtune untrusted key/" -newkey rsa:2048 \
		-keyout "$work/other.key" -outform DER -out "$work/other.der" >/dev/null 2>&1 &&
		cp "$g/mmtune-unsigned.ko" "$g/mmtune-otherkey.ko" &&
		"$hdir/usr/src/linux-headers-$rel/scripts/sign-file" sha256 "$work/other.key" "$work/other.der" "$g/mmtune-otherkey.ko"
	} || { rm -f "$g/mmtune-otherkey.ko"; not_ok "operator: mmtune.ko signed by an untrusted key (openssl, sign-file)"; }
	busybox_initramfs "$img" "$rel" "$work/initramfs-ours.gz" ||
		{ not_ok "operator: a busybox initramfs with $rel's virtio modules"; return 0; }
	cp "$r/boot/vmlinuz-$rel" "$work/ours-vmlinuz"
	cp "$r/boot/vmlinuz-$stock" "$work/stock-vmlinuz"; cp "$r/boot/initrd.img-$stock" "$work/stock-initrd"
	make_image "$r" "$im" 768 || return 0
	rm -f "$work/swap.img"; truncate -s 512M "$work/swap.img"
	guest_boot "operator-$line-ours" "$im" "$work/ours-vmlinuz" "$work/initramfs-ours.gz" "module.sig_enforce=1" \
		-cpu max -drive "file=$work/swap.img,if=virtio,format=raw,cache=unsafe"
	guest_boot "operator-$line-stock" "$im" "$work/stock-vmlinuz" "$work/stock-initrd" "" -cpu max
	rm -f "$im" "$work/swap.img"
}

# --- the Debian 12 LTS path: our 6.1 kernel, then the 6.12 line --------------------
lts_checks() {
	local r=$work/lts-root im=$work/lts.img g rel61 img61 meta61 k n
	rel61=$(cat "$kp61/kernel.release")
	img61=$(image_deb "$kp61")
	meta61=$(meta_of 6.1)
	note "LTS path: from $kp61 ($rel61) to $kp ($rel)"
	copy_root "$base" "$r"
	repo_root "$r"
	install_ours "$r" "$meta61" lts || return 0
	only_ours "$r"
	container_host "$r"
	g=$r/usr/local/lib/mmtune-e2e
	install_e2e_guest "$r" cloud-lts-check.sh "$rel61" "$ver"
	echo container-host >"$g/expected-profile"
	echo "$rel" >"$g/expected-release-next"
	n=
	for k in "$kp61" "$kp"; do
		cn "$k/signing/signing_key.x509" >"$g/expected-signer$n"
		deb_field "$(image_deb "$k")" Version >"$g/expected-kver$n"
		deb_field "$(ls "$k"/deb/mmtune-modules-*_*.deb)" Version >"$g/expected-mver$n"
		n=-next
	done
	echo "$meta61" >"$g/expected-meta"; echo "$meta" >"$g/expected-meta-next"
	deb_field "$(ls "$kp61"/deb/"$meta61"_*.deb)" Version >"$g/expected-metaver"
	deb_field "$metadeb" Version >"$g/expected-metaver-next"
	busybox_initramfs "$img61" "$rel61" "$work/initramfs-61.gz" && busybox_initramfs "$img" "$rel" "$work/initramfs-612.gz" ||
		{ not_ok "lts: busybox initramfs with the virtio modules of $rel61 and $rel"; return 0; }
	cp "$r/boot/vmlinuz-$rel61" "$work/lts-61-vmlinuz"
	make_image "$r" "$im" 1024 || return 0
	guest_boot lts-6.1 "$im" "$work/lts-61-vmlinuz" "$work/initramfs-61.gz" "module.sig_enforce=1" -cpu max ||
		{ rm -f "$im"; return 0; }
	# What a boot loader would take: the kernel the guest installed.
	rm -f "$work/lts-612-vmlinuz"
	debugfs -R "dump /boot/vmlinuz-$rel $work/lts-612-vmlinuz" "$im" >/dev/null 2>&1
	check "lts: /boot/vmlinuz-$rel in the image after boot 1 is the 6.12 set's kernel (build $(cat "$kp/build-id"))" \
		cmp "$work/lts-612-vmlinuz" "$kp/vmlinuz" || { rm -f "$im"; return 0; }
	guest_boot lts-6.12 "$im" "$work/lts-612-vmlinuz" "$work/initramfs-612.gz" "module.sig_enforce=1" -cpu max
	rm -f "$im"
}

operator_checks
# Debian 13: the README's GRUB pin, booted through GRUB, on the same set
# (grub-pin.sh, also "make check-packaging-grub").
[ "$release" = trixie ] && relay grub-pin tests/packaging/grub-pin.sh "$kp"
if [ "$line:$release" = 6.12:bookworm ]; then
	if [ -n "$kp61" ]; then
		lts_checks
	else
		skip "lts: Debian 12 on our 6.1 cloud kernel moves to 6.12" "no finished 6.1 debian-cloud set (make kernel-packages-cloud, or --from DIR)"
	fi
fi
note "cloud kernel package tests ($line, Debian $release) took $((SECONDS - start))s; load $(cut -d' ' -f1-3 /proc/loadavg)"
tap_plan "$tap_n"
echo "cloud ($line, $release): $((tap_n - tap_failed - tap_skipped)) passed, $tap_failed failed, $tap_skipped skipped"
[ $tap_failed -eq 0 ]
