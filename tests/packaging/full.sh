# Full packaging checks ("make check-packaging"): the patched kernel as
# packages, DKMS in a Debian 12 root against its headers and against
# Debian's stock headers, the DKMS-built .ko in the VM, the RPMs in a scratch
# root, and the end-to-end install and boot with systemd. Sourced by run.sh.

pk_logs=build/packaging/logs
pk_work=build/packaging/work

# timed NAME CMD...: like check, and notes how long the command took.
timed() {
	local t0=$SECONDS rc=0
	check "$@" || rc=$?
	note "took $((SECONDS - t0))s"
	return $rc
}

full_checks() {
	local ver base kp rel stock
	ver=$(packaging/version.sh)
	mkdir -p "$pk_logs"
	rm -rf "$pk_work"
	mkdir -p "$pk_work"

	# --- kernel packages ----------------------------------------------------
	if ! timed "kernel packages: bindeb-pkg and rpm-pkg (cached in \$MMTUNE_CACHE/kernel-pkgs)" \
		packaging/kernel/build-kernel-pkgs.sh; then
		skip "kernel package contents, DKMS, VM, RPM and end-to-end tests" "no kernel packages"
		return 0
	fi
	kp=build/packaging/kernel-pkgs
	rel=$(cat "$kp/kernel.release")
	check "kernel .debs: linux-image and linux-headers for $rel; headers have CONFIG_MMTUNE_HOOKS and sign-file" \
		kernel_debs_ok "$kp" "$rel"
	check "kernel .rpms: kernel, kernel-devel, kernel-headers for $rel; kernel-devel is a module build tree" \
		kernel_rpms_ok "$kp" "$rel"

	timed "operator recipe: Debian's linux-config-6.1 + the series, distro-config.sh gives CONFIG_MMTUNE_HOOKS=y, release 6.1.*-mmtune" \
		distro_config_ok

	# --- Debian 12 root -----------------------------------------------------
	if ! base=$(tests/packaging/rootfs.sh 2>"$pk_logs/rootfs.log"); then
		not_ok "Debian 12 root (mmdebstrap)"; note "$(tail -n 20 "$pk_logs/rootfs.log")"
		return 0
	fi
	ok "Debian 12 root with systemd, dkms and stock headers (mmdebstrap, cached)"
	stock=$(basename "$(ls -d "$base"/usr/src/linux-headers-*-amd64 | head -n 1)")
	stock=${stock#linux-headers-}

	dkms_root_checks "$base" "$kp" "$rel" "$ver" "$stock"
	rpm_root_checks "$base" "$kp" "$rel" "$ver"
	e2e_checks "$base" "$kp" "$rel" "$ver"
}

# The documented recipe (packaging/README.md) up to the build itself.
distro_config_ok() {
	local cache=${MMTUNE_CACHE:-$HOME/.cache/mmtune} pristine tree=$pk_work/distro-tree out
	pristine=$cache/pristine/linux-source-6.1_$(dpkg-query -W -f='${Version}' linux-source-6.1)
	[ -f "$pristine/.complete" ] || { echo "no pristine tree at $pristine"; return 1; }
	[ -f /usr/src/linux-config-6.1/config.amd64_none_amd64.xz ] || { echo "linux-config-6.1 is not installed"; return 1; }
	rm -rf "$tree"
	cp -a "$pristine" "$tree"
	(cd "$tree" && QUILT_PATCHES="$repo/kernel-patches/6.1" QUILT_PC=.pc quilt --quiltrc=- push -a --fuzz=0 -q) || return 1
	xzcat /usr/src/linux-config-6.1/config.amd64_none_amd64.xz >"$tree/.config"
	out=$(cd "$tree" && "$repo/packaging/kernel/distro-config.sh" .config) || { echo "$out"; return 1; }
	echo "$out"
	rm -rf "$tree"
	grep -qE 'release 6\.1\.[0-9]+-mmtune$' <<<"$out"
}

kernel_debs_ok() {
	local kp=$1 rel=$2 img hdr tmp rc=0
	img=$(ls "$kp"/deb/linux-image-"$rel"_*.deb 2>/dev/null | grep -v -- -dbg_) || { echo "no linux-image-$rel"; return 1; }
	hdr=$(ls "$kp"/deb/linux-headers-"$rel"_*.deb 2>/dev/null) || { echo "no linux-headers-$rel"; return 1; }
	ls -l "$kp"/deb/
	tmp=$(mktemp -d)
	dpkg-deb -x "$hdr" "$tmp"
	grep -x 'CONFIG_MMTUNE_HOOKS=y' "$tmp/usr/src/linux-headers-$rel/.config" || { echo "headers .config lacks CONFIG_MMTUNE_HOOKS=y"; rc=1; }
	grep -q 'mmtune_register' "$tmp/usr/src/linux-headers-$rel/include/linux/mmtune_hooks.h" || { echo "headers lack mmtune_hooks.h"; rc=1; }
	[ -x "$tmp/usr/src/linux-headers-$rel/scripts/sign-file" ] || { echo "headers lack scripts/sign-file"; rc=1; }
	[ "$(readlink "$tmp/lib/modules/$rel/build")" = "/usr/src/linux-headers-$rel" ] || { echo "no /lib/modules/$rel/build link"; rc=1; }
	rm -rf "$tmp"
	grep -q "\./boot/vmlinuz-$rel\$" <<<"$(dpkg-deb -c "$img")" || { echo "image lacks /boot/vmlinuz-$rel"; rc=1; }
	return $rc
}

kernel_rpms_ok() {
	local kp=$1 rel=$2 rv rc=0 p
	rv=${rel//-/_}
	ls -l "$kp"/rpm/
	for p in kernel kernel-devel kernel-headers; do
		ls "$kp"/rpm/"$p-$rv"-*.rpm >/dev/null 2>&1 || { echo "no $p-$rv RPM"; rc=1; }
	done
	[ $rc -eq 0 ] || return 1
	p=$(ls "$kp"/rpm/kernel-devel-"$rv"-*.rpm)
	local list
	list=$(rpm -qpl "$p")
	for f in "/usr/src/kernels/$rel/.config" "/usr/src/kernels/$rel/Makefile" \
		"/usr/src/kernels/$rel/Module.symvers" "/usr/src/kernels/$rel/include/linux/mmtune_hooks.h" \
		"/usr/src/kernels/$rel/scripts/sign-file" "/lib/modules/$rel/build"; do
		grep -qx "$f" <<<"$list" || { echo "kernel-devel lacks $f"; rc=1; }
	done
	grep -q "/boot/vmlinuz-$rel" <<<"$(rpm -qpl "$(ls "$kp"/rpm/kernel-"$rv"-*.rpm)")" || { echo "kernel RPM lacks vmlinuz"; rc=1; }
	return $rc
}

# The test MOK: DKMS signs with /var/lib/dkms/mok.key + mok.pub when present.
make_mok() {
	mkdir -p "$1/var/lib/dkms"
	openssl req -new -x509 -nodes -days 36500 -subj "/CN=mmtune test MOK/" \
		-newkey rsa:2048 -keyout "$1/var/lib/dkms/mok.key" \
		-outform DER -out "$1/var/lib/dkms/mok.pub" >/dev/null 2>&1
}

# --- DKMS in a Debian 12 root, in the order the issue names: mmtune-dkms,
# then the patched kernel's image, then its headers. -----------------------
dkms_root_checks() {
	local base=$1 kp=$2 rel=$3 ver=$4 stock=$5 r=$pk_work/dkms-root out rc img hdr
	img=$(ls "$kp"/deb/linux-image-"$rel"_*.deb | grep -v -- -dbg_)
	hdr=$(ls "$kp"/deb/linux-headers-"$rel"_*.deb)
	copy_root "$base" "$r"
	mkdir -p "$r/var/tmp/pkgs"
	cp build/packaging/out/deb/mmtune-dkms_"$ver"_all.deb "$kp"/deb/linux-image-"$rel"_*.deb \
		"$kp"/deb/linux-headers-"$rel"_*.deb "$r/var/tmp/pkgs/"
	rm -f "$r"/var/tmp/pkgs/*-dbg_*.deb
	make_mok "$r"

	# 1. mmtune-dkms on a system with only Debian's stock kernel headers.
	rc=0
	out=$(in_root "$r" apt-get install -y /var/tmp/pkgs/mmtune-dkms_"$ver"_all.deb 2>&1) || rc=$?
	out=${out//$'\r'/}
	echo "$out" >"$pk_logs/dkms-1-mmtune-dkms.log"
	note "$out"
	if [ $rc -eq 0 ] && grep -q 'BUILD_EXCLUSIVE directive which does not match' <<<"$out" &&
		grep -qx 'Skipped.' <<<"$out" &&
		[ "$(in_root "$r" dkms status -m mmtune)" = "mmtune/$ver: added" ] &&
		[ ! -e "$r/var/lib/dkms/mmtune/$ver/$stock" ]; then
		ok "stock headers $stock: mmtune-dkms installs, the build is skipped with the BUILD_EXCLUSIVE reason, status 'added' only"
	else
		not_ok "stock headers $stock: mmtune-dkms install skips the build cleanly (apt exit $rc)"
	fi
	rc=0
	out=$(in_root "$r" dkms build -m mmtune -v "$ver" -k "$stock" 2>&1) || rc=$?
	note "$out"
	if [ $rc -eq 77 ] && grep -q 'BUILD_EXCLUSIVE' <<<"$out" && [ ! -e "$r/var/lib/dkms/mmtune/$ver/$stock" ] &&
		! grep -q "$stock" <<<"$(in_root "$r" dkms status -m mmtune)"; then
		ok "stock headers $stock: 'dkms build' exits 77 naming BUILD_EXCLUSIVE, leaves no build behind"
	else
		not_ok "stock headers $stock: 'dkms build' exits 77 and leaves nothing (exit $rc)"
	fi

	# 2. The patched kernel's image, before its headers.
	rc=0
	out=$(in_root "$r" apt-get install -y "/var/tmp/pkgs/$(basename "$img")" 2>&1) || rc=$?
	out=${out//$'\r'/}
	echo "$out" >"$pk_logs/dkms-2-linux-image.log"
	note "$(grep -iE 'dkms|header' <<<"$out")"
	if [ $rc -eq 0 ] && [ ! -e "$r/lib/modules/$rel/updates/dkms/mmtune.ko" ]; then
		ok "linux-image-$rel installs first; no headers yet, so no module yet"
	else
		not_ok "linux-image-$rel installs before its headers (apt exit $rc)"
	fi

	# 3. The headers arrive: mmtune-dkms's /usr/src trigger builds the module.
	local t0=$SECONDS
	rc=0
	out=$(in_root "$r" apt-get install -y "/var/tmp/pkgs/$(basename "$hdr")" 2>&1) || rc=$?
	out=${out//$'\r'/}
	echo "$out" >"$pk_logs/dkms-3-linux-headers.log"
	note "$out"
	note "took $((SECONDS - t0))s"
	local st
	st=$(in_root "$r" dkms status -m mmtune -v "$ver" -k "$rel")
	note "dkms status: $st"
	if [ $rc -eq 0 ] && grep -q "kernel headers for $rel arrived" <<<"$out" &&
		grep -q ": installed" <<<"$st" && [ -f "$r/lib/modules/$rel/updates/dkms/mmtune.ko" ]; then
		ok "linux-headers-$rel after the image: the trigger builds and installs mmtune with DKMS"
	else
		not_ok "linux-headers-$rel after the image: DKMS builds mmtune (apt exit $rc)"
	fi
	local ko=$r/lib/modules/$rel/updates/dkms/mmtune.ko
	if [ -f "$ko" ]; then
		cp "$ko" "$pk_work/mmtune-dkms.ko"
		check "DKMS-built mmtune.ko: vermagic $rel, version $ver" \
			ko_matches "$ko" "$rel" "$ver"
		check "Secure Boot: with a MOK present DKMS signs mmtune.ko (modinfo -F signer)" \
			ko_signed "$ko" "mmtune test MOK"
		check "Secure Boot: the signature verifies against the MOK certificate" \
			ko_sig_verifies "$ko" "$r/var/lib/dkms/mok.pub"
		ko_in_vm "$pk_work/mmtune-dkms.ko" "$kp" "$rel"
	else
		skip "DKMS-built mmtune.ko checks and VM load" "no module was built"
	fi
}

ko_matches() {
	local vm v
	vm=$(modinfo -F vermagic "$1"); v=$(modinfo -F version "$1")
	echo "vermagic: $vm"; echo "version: $v"
	[ "${vm%% *}" = "$2" ] && [ "$v" = "$3" ]
}

ko_signed() {
	local s
	s=$(modinfo -F signer "$1")
	echo "signer: $s"; echo "sig_hashalgo: $(modinfo -F sig_hashalgo "$1")"
	[ "$s" = "$2" ]
}

# Check the appended PKCS#7 signature with openssl, as the kernel would
# with the MOK in its keyring.
ko_sig_verifies() {
	local ko=$1 cert=$2 tmp size total
	tmp=$(mktemp -d)
	python3 - "$ko" "$tmp" <<'PY' || { rm -rf "$tmp"; return 1; }
import struct, sys
data = open(sys.argv[1], "rb").read()
magic = b"~Module signature appended~\n"
assert data.endswith(magic), "no appended signature"
sig_len = struct.unpack(">I", data[-len(magic) - 4:-len(magic)])[0]
end = len(data) - len(magic) - 12
open(sys.argv[2] + "/sig.p7", "wb").write(data[end - sig_len:end])
open(sys.argv[2] + "/content", "wb").write(data[:end - sig_len])
PY
	openssl x509 -inform DER -in "$cert" -out "$tmp/mok.pem"
	openssl smime -verify -binary -inform DER -in "$tmp/sig.p7" -content "$tmp/content" \
		-certfile "$tmp/mok.pem" -nointern -noverify -CAfile "$tmp/mok.pem" >/dev/null 2>"$tmp/err" &&
		{ echo "signature verifies"; rm -rf "$tmp"; return 0; }
	cat "$tmp/err"; rm -rf "$tmp"; return 1
}

# The DKMS-built module in the busybox VM on the packaged kernel: the
# module-load and sysfs-docs guest tests against it.
ko_in_vm() {
	local ko=$1 kp=$2 rel=$3 kdir=$pk_work/vm-kdir out rc=0 t0=$SECONDS
	mkdir -p "$kdir/arch/x86/boot" "$kdir/include/config"
	cp "$kp/vmlinuz" "$kdir/arch/x86/boot/bzImage"
	echo "$rel" >"$kdir/include/config/kernel.release"
	out=$(KDIR=$kdir MMTUNE_VM_KO=$ko tests/vm/run.sh --tests '2[01]-*' 2>&1) || rc=$?
	echo "$out" >"$pk_logs/vm-dkms-ko.log"
	note "$out"
	if [ $rc -eq 0 ] && grep -q '^ok .*module-load' <<<"$out" && grep -q '^ok .*sysfs-docs' <<<"$out"; then
		ok "DKMS-built mmtune.ko loads in the VM on $rel: module-load and sysfs-docs guest tests pass"
	else
		not_ok "DKMS-built mmtune.ko loads in the VM on $rel (run.sh exit $rc)"
	fi
	note "took $((SECONDS - t0))s"
}

# --- RPMs in a scratch root ------------------------------------------------
# rpm_root ROOT ARGS...: the host's rpm on ROOT; scriptlets run chrooted
# there, with /proc and /dev mounted for DKMS.
rpm_root() {
	local r
	r=$(realpath "$1"); shift
	unshare --mount --propagation private -- /bin/sh -c '
		r=$1; shift
		mount -t proc proc "$r/proc" && mount --rbind /dev "$r/dev" &&
		exec rpm --root "$r" "$@"' sh "$r" "$@"
}

rpm_root_checks() {
	local base=$1 kp=$2 rel=$3 ver=$4 r=$pk_work/rpm-root out rc=0 rv st
	rv=${rel//-/_}
	copy_root "$base" "$r"
	make_mok "$r"
	local pkgs=("$kp"/rpm/kernel-"$rv"-*.rpm "$kp"/rpm/kernel-devel-"$rv"-*.rpm
		build/packaging/out/rpm/mmtune-dkms-"$ver"-1.noarch.rpm build/packaging/out/rpm/mmtune-"$ver"-1.noarch.rpm)
	# --nodeps: the scratch root's rpm database is empty (Debian's dpkg owns
	# dkms, systemd, python3). Scriptlets run chrooted, with /proc and /dev.
	out=$(rpm_root "$r" -ivh --nodeps "${pkgs[@]}" 2>&1) || rc=$?
	echo "$out" >"$pk_logs/rpm-root.log"
	note "rpm -ivh --root output, scriptlets included:"
	note "$out"
	if [ $rc -eq 0 ]; then
		ok "RPMs install with rpm --root --nodeps into a Debian 12 scratch root: kernel, kernel-devel, mmtune-dkms, mmtune"
	else
		not_ok "RPMs install into a scratch root (rpm exit $rc)"
		return 0
	fi
	check "RPM scratch root: rpm -q lists the four packages" \
		rpm --root "$(realpath "$r")" -q kernel kernel-devel mmtune-dkms mmtune
	st=$(in_root "$r" dkms status -m mmtune -v "$ver" -k "$rel")
	if grep -q ": installed" <<<"$st" && [ -f "$r/lib/modules/$rel/updates/dkms/mmtune.ko" ] &&
		[ "$(modinfo -F signer "$r/lib/modules/$rel/updates/dkms/mmtune.ko")" = "mmtune test MOK" ]; then
		ok "RPM scriptlets: DKMS built, signed and installed mmtune for $rel ($st)"
	else
		not_ok "RPM scriptlets: DKMS built and installed mmtune for $rel (status: $st)"
	fi
	if [ -L "$r/etc/systemd/system/multi-user.target.wants/mmtune.service" ] ||
		[ "$(in_root "$r" systemctl is-enabled mmtune.service 2>&1)" = enabled ]; then
		ok "RPM scriptlets: %systemd_post enabled mmtune.service by its preset"
	else
		not_ok "RPM scriptlets: %systemd_post enabled mmtune.service (is-enabled: $(in_root "$r" systemctl is-enabled mmtune.service 2>&1))"
	fi
	rc=0
	out=$(rpm_root "$r" -e --nodeps mmtune-dkms 2>&1) || rc=$?
	note "$out"
	if [ $rc -eq 0 ] && [ ! -e "$r/lib/modules/$rel/updates/dkms/mmtune.ko" ] && [ ! -e "$r/var/lib/dkms/mmtune/$ver" ]; then
		ok "RPM scriptlets: erasing mmtune-dkms removes the module from DKMS and /lib/modules"
	else
		not_ok "RPM scriptlets: erasing mmtune-dkms removes the module (rpm exit $rc)"
	fi
}

# --- End to end: apt install everything into a Debian 12 root, boot it ------
e2e_checks() {
	local base=$1 kp=$2 rel=$3 ver=$4 r=$pk_work/e2e-root out rc=0 st t0
	copy_root "$base" "$r"
	mkdir -p "$r/var/tmp/pkgs"
	cp build/packaging/out/deb/mmtune_"$ver"_all.deb build/packaging/out/deb/mmtune-dkms_"$ver"_all.deb \
		"$kp"/deb/linux-image-"$rel"_*.deb "$kp"/deb/linux-headers-"$rel"_*.deb "$r/var/tmp/pkgs/"
	rm -f "$r"/var/tmp/pkgs/*-dbg_*.deb
	t0=$SECONDS
	out=$(in_root "$r" sh -c 'apt-get install -y /var/tmp/pkgs/*.deb' 2>&1) || rc=$?
	out=${out//$'\r'/}
	echo "$out" >"$pk_logs/e2e-apt.log"
	note "$out"
	note "took $((SECONDS - t0))s"
	st=$(in_root "$r" dkms status -m mmtune -v "$ver" -k "$rel")
	if [ $rc -eq 0 ] && grep -q ": installed" <<<"$st"; then
		ok "e2e: apt install of linux-image, linux-headers, mmtune-dkms, mmtune; DKMS built mmtune during the install"
	else
		not_ok "e2e: apt install of the four .debs builds mmtune with DKMS (apt exit $rc, status: $st)"
		return 0
	fi
	check "e2e: mmtune.service is enabled after the install (dh_installsystemd)" \
		test "$(in_root "$r" systemctl is-enabled mmtune.service)" = enabled

	# The guest side: a oneshot unit after multi-user.target writes TAP to
	# the second serial port and powers off.
	install -D -m 0755 tests/packaging/guest/e2e-check.sh "$r/usr/local/lib/mmtune-e2e/check.sh"
	install -D -m 0644 tests/packaging/guest/mmtune-e2e.service "$r/etc/systemd/system/mmtune-e2e.service"
	ln -sf /etc/systemd/system/mmtune-e2e.service "$r/etc/systemd/system/multi-user.target.wants/mmtune-e2e.service"
	echo "$rel" >"$r/usr/local/lib/mmtune-e2e/expected-release"
	echo "$ver" >"$r/usr/local/lib/mmtune-e2e/expected-version"

	local img=$pk_work/e2e.img size
	size=$(( $(du -sm "$r" | cut -f1) + 768 ))
	rm -f "$img"
	if ! mkfs.ext4 -q -F -L root -d "$r" "$img" "${size}M" >"$pk_logs/e2e-mkfs.log" 2>&1; then
		not_ok "e2e: root file system image"; note "$(cat "$pk_logs/e2e-mkfs.log")"; return 0
	fi

	local console=$pk_logs/e2e-console.log results=$pk_logs/e2e-results.tap qrc=0
	: >"$console"; : >"$results"
	t0=$SECONDS
	timeout --foreground "${MMTUNE_E2E_TIMEOUT:-900}" qemu-system-x86_64 -accel tcg,thread=multi \
		-smp 2 -m 2G -nodefaults -no-reboot -display none \
		-kernel "$r/boot/vmlinuz-$rel" \
		-append "root=/dev/vda rw console=ttyS0,115200 panic=-1 systemd.show_status=1" \
		-serial "file:$console" -serial "file:$results" \
		-drive "file=$img,if=virtio,format=raw,cache=unsafe" >"$pk_logs/e2e-qemu.log" 2>&1 || qrc=$?
	sed -i 's/\r$//' "$console" "$results"
	note "boot and checks took $((SECONDS - t0))s (qemu exit $qrc)"
	if ! grep -q '^# e2e: done' "$results"; then
		not_ok "e2e: the booted system ran its checks (qemu exit $qrc)"
		note "console (last 60 lines; full log $console):"
		note "$(tail -n 60 "$console")"
		return 0
	fi
	# Re-emit the guest's results as ours.
	local line
	while IFS= read -r line; do
		case "$line" in
		"ok "*) ok "e2e (booted): ${line#ok [0-9]* }" ;;
		"not ok "*) not_ok "e2e (booted): ${line#not ok [0-9]* }" ;;
		"#"*) note "${line#\# }" ;;
		esac
	done <"$results"
	local report_re='WARNING:|BUG:|Oops|Kernel panic|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|Call Trace:'
	if grep -Eq "$report_re" "$console"; then
		not_ok "e2e: kernel console free of warnings, BUGs and lockdep reports"
		note "$(grep -En -A5 "$report_re" "$console" | head -n 40)"
	else
		ok "e2e: kernel console free of warnings, BUGs and lockdep reports"
	fi
}
