# Full packaging checks ("make check-packaging"), in this order:
#   apt      a local apt repository (apt-ftparchive, signed Release,
#            signed-by=) in a Debian 12 root: mmtune + mmtune-dkms, then a
#            stock Debian kernel and headers (every package ii, initramfs
#            made, one skip line for both hooks), a failing DKMS build,
#            mmtune-dkms removed but not purged, an upgrade to a bumped
#            version that reloads mmtune.service and starts neither
#            mmtune-reapply nor mmtune-metrics (systemctl shim), removal
#            that stops it, purge that removes /var/lib/mmtune; the DKMS
#            states (dkms-states.sh) in the Debian 12 root and in a Debian
#            13 (trixie, dkms 3.2.2) root; Debian 12's stock kernel booted
#            with mmtune installed (stock-boot.sh: no error line at boot,
#            modprobe@mmtune.service, no failed unit); suites.sh (Debian
#            13's lintian, a stock Debian 12 install, make-repo's suites)
#   modules  mmtune-modules-<rel> .deb/.rpm against a built kernel tree,
#            signature checked after packaging
#   kernel   the patched kernel as packages, DKMS against its headers, the
#            DKMS-built .ko in the VM, the RPMs in a scratch root, the
#            end-to-end install and boot with systemd (DKMS), and the
#            prebuilt lifecycle booted twice: apt installs our kernel,
#            mmtune-modules-<rel> and mmtune from a signed repository, a
#            stock kernel and headers beside them (every package ii); on
#            our kernel the profile is in force (verify 0), apt-get upgrade
#            to a bumped mmtune reloads in place (journal, and a sampler
#            that sees no value change); on the stock kernel mmtunectl says
#            it has no mmtune hooks and verify exits 5
#   release  the same inputs built again (--variant rebuild: a new build
#            id and key, ccache-warm); no private key in any artifact
#            (every .deb and .rpm listed and scanned; the quick suite shows
#            the scanner catching keys); versions carry the build id,
#            mmtune-modules and mmtune-kernel-test pin the exact kernel
#            build, RPMs are kernel-mmtune*, nothing named like a
#            distribution package; make-repo.sh: signed dists/ layout and
#            signed rpm repository, leaves out linux-libc-dev and
#            kernel-mmtune-headers, refuses a package with a key; a Debian
#            12 root with Debian's and our repository: apt-get upgrade
#            takes nothing of ours (and the pin holds where a repository
#            did carry linux-libc-dev); each build a release of its own,
#            newer for dpkg, rpm and sort -V; booted four times (no
#            network, the repository served on 127.0.0.1 inside the
#            guest): the quick start installs mmtune + mmtune-kernel-test,
#            build 1's module loads under module.sig_enforce=1, build 2 is
#            published and apt-get upgrade --with-new-pkgs installs its
#            kernel and module beside build 1's (/lib/modules/<rel1>
#            unchanged, overlay loads from it before the reboot), build
#            2's module loads after the reboot and build 1's is refused,
#            build 1 booted again still loads its modules
# MMTUNE_PKG_PARTS="apt modules kernel release" (default: all) picks parts
# (release alone builds the kernel packages and runs only its own checks).
# Sourced by run.sh.

pk_logs=build/packaging/logs
pk_work=build/packaging/work

# relay NAME CMD...: a test script's own results as TAP points of this
# suite: its "ok ..."/"ok N ..." and "FAIL ..."/"not ok N ..." lines,
# named "NAME: ...", the rest as notes; a failing exit without a failed
# case is a failure of its own.
relay() {
	local name=$1 t0=$SECONDS out rc=0 line failed=0
	shift
	out=$("$@" 2>&1) || rc=$?
	while IFS= read -r line; do
		case "$line" in
		"ok "*" # SKIP "*) line=${line#ok [0-9]* }; skip "$name: ${line% # SKIP *}" "${line##* # SKIP }" ;;
		"ok "[0-9]*) ok "$name: ${line#ok [0-9]* }" ;;
		"ok "*) line=${line#ok }; ok "$name: ${line#"${line%%[! ]*}"}" ;;
		"not ok "*) not_ok "$name: ${line#not ok [0-9]* }"; failed=1 ;;
		"FAIL "*) not_ok "$name: ${line#FAIL }"; failed=1 ;;
		*) note "$line" ;;
		esac
	done <<<"$out"
	[ $rc -eq 0 ] || [ $failed -eq 1 ] || not_ok "$name: $1 exit $rc"
	note "$name: took $((SECONDS - t0))s"
}

# timed NAME CMD...: like check, and notes how long the command took.
timed() {
	local t0=$SECONDS rc=0
	check "$@" || rc=$?
	note "took $((SECONDS - t0))s"
	return $rc
}

full_checks() {
	local ver base kp rel stock parts=" ${MMTUNE_PKG_PARTS:-apt modules kernel release} "
	ver=$(packaging/version.sh)
	mkdir -p "$pk_logs"
	rm -rf "$pk_work"
	mkdir -p "$pk_work"

	# --- Debian 12 root -----------------------------------------------------
	if ! base=$(tests/packaging/rootfs.sh 2>"$pk_logs/rootfs.log"); then
		not_ok "Debian 12 root (mmdebstrap)"; note "$(tail -n 20 "$pk_logs/rootfs.log")"
		return 0
	fi
	ok "Debian 12 root with systemd, dkms and stock headers (mmdebstrap, cached)"
	stock=$(basename "$(ls -d "$base"/usr/src/linux-headers-*-amd64 | head -n 1)")
	stock=${stock#linux-headers-}

	# --- apt repository, stock Debian kernels, upgrade (no mmtune kernel) ---
	if [[ $parts == *" apt "* ]]; then
		stock_apt_checks "$base" "$ver"
		relay "DKMS states (real dkms, dpkg triggers, rpm scriptlets)" tests/packaging/dkms-states.sh "$base"
		relay "DKMS states, Debian 13 (dkms 3.2.2, linux-run-hooks)" tests/packaging/dkms-states.sh trixie
		relay "Debian 12 stock kernel booted with mmtune" tests/packaging/stock-boot.sh "$base"
		relay "Debian 12 and 13: lintian, stock install, make-repo suites" tests/packaging/suites.sh
	fi

	# --- mmtune-modules-<release> from a kernel build tree ------------------
	[[ $parts == *" modules "* ]] && module_pkg_checks "$ver"

	[[ $parts == *" kernel "* || $parts == *" release "* ]] || return 0
	# --- kernel packages ----------------------------------------------------
	if ! timed "kernel packages: bindeb-pkg and rpm-pkg (cached in \$MMTUNE_CACHE/kernel-pkgs)" \
		packaging/kernel/build-kernel-pkgs.sh; then
		skip "kernel package contents, DKMS, VM, RPM and end-to-end tests" "no kernel packages"
		return 0
	fi
	kp=build/packaging/kernel-pkgs-6.1
	rel=$(cat "$kp/kernel.release")
	if [[ $parts != *" kernel "* ]]; then
		release_checks "$base" "$kp" "$rel" "$ver"
		return 0
	fi
	check "kernel .debs: linux-image and linux-headers for $rel; headers have CONFIG_MMTUNE_HOOKS and sign-file" \
		kernel_debs_ok "$kp" "$rel"
	check "kernel .rpms: kernel-mmtune, kernel-mmtune-devel for $rel; kernel-mmtune-devel is a module build tree" \
		kernel_rpms_ok "$kp" "$rel"

	timed "operator recipe: Debian's linux-config-6.1 + the series, distro-config.sh gives CONFIG_MMTUNE_HOOKS=y, release 6.1.*-mmtune" \
		distro_config_ok

	dkms_root_checks "$base" "$kp" "$rel" "$ver" "$stock"
	rpm_root_checks "$base" "$kp" "$rel" "$ver"
	e2e_checks "$base" "$kp" "$rel" "$ver"
	lifecycle_checks "$base" "$kp" "$rel" "$ver"
	[[ $parts == *" release "* ]] && release_checks "$base" "$kp" "$rel" "$ver"
	return 0
}

# The documented recipe (packaging/PACKAGING.md, distro-config.sh) up to the build itself.
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

# headers_config DIR: the kernel configuration a headers tree carries:
# .config (6.1's bindeb-pkg), else include/config/auto.conf (6.12's, which
# has no .config; the same CONFIG_X=y lines).
headers_config() {
	if [ -f "$1/.config" ]; then echo "$1/.config"; else echo "$1/include/config/auto.conf"; fi
}

kernel_debs_ok() {
	local kp=$1 rel=$2 img hdr tmp rc=0
	img=$(ls "$kp"/deb/linux-image-"$rel"_*.deb 2>/dev/null | grep -v -- -dbg_) || { echo "no linux-image-$rel"; return 1; }
	hdr=$(ls "$kp"/deb/linux-headers-"$rel"_*.deb 2>/dev/null) || { echo "no linux-headers-$rel"; return 1; }
	ls -l "$kp"/deb/
	tmp=$(mktemp -d)
	dpkg-deb -x "$hdr" "$tmp"
	grep -x 'CONFIG_MMTUNE_HOOKS=y' "$(headers_config "$tmp/usr/src/linux-headers-$rel")" || { echo "headers config lacks CONFIG_MMTUNE_HOOKS=y"; rc=1; }
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
	for p in kernel-mmtune kernel-mmtune-devel; do
		ls "$kp"/rpm/"$p-$rv"-*.rpm >/dev/null 2>&1 || { echo "no $p-$rv RPM"; rc=1; }
	done
	[ $rc -eq 0 ] || return 1
	p=$(ls "$kp"/rpm/kernel-mmtune-devel-"$rv"-*.rpm)
	local list
	list=$(rpm -qpl "$p")
	for f in "/usr/src/kernels/$rel/.config" "/usr/src/kernels/$rel/Makefile" \
		"/usr/src/kernels/$rel/Module.symvers" "/usr/src/kernels/$rel/include/linux/mmtune_hooks.h" \
		"/usr/src/kernels/$rel/scripts/sign-file" "/lib/modules/$rel/build"; do
		grep -qx "$f" <<<"$list" || { echo "kernel-mmtune-devel lacks $f"; rc=1; }
	done
	grep -q "/boot/vmlinuz-$rel" <<<"$(rpm -qpl "$(ls "$kp"/rpm/kernel-mmtune-"$rv"-*.rpm)")" || { echo "kernel-mmtune RPM lacks vmlinuz"; rc=1; }
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
	if [ $rc -eq 0 ] && grep -qx "mmtune-dkms: $stock has no mmtune hooks (CONFIG_MMTUNE_HOOKS is not set), mmtune.ko skipped (no mmtune knobs on this kernel)" <<<"$out" &&
		[ "$(in_root "$r" dkms status -m mmtune)" = "mmtune/$ver: added" ] &&
		[ ! -e "$r/var/lib/dkms/mmtune/$ver/$stock" ]; then
		ok "stock headers $stock: mmtune-dkms installs, the build is skipped with one line naming CONFIG_MMTUNE_HOOKS, status 'added' only"
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
	local hs
	hs=$(in_root "$r" /usr/lib/mmtune-dkms/mmtune-dkms-kernel status 2>&1)
	note "mmtune-dkms-kernel status: $hs"
	if [ $rc -eq 0 ] && grep -q "^mmtune-dkms: $rel: built, signed and installed mmtune $ver" <<<"$out" &&
		grep -q ": installed" <<<"$st" && [ -f "$r/lib/modules/$rel/updates/dkms/mmtune.ko" ] &&
		grep -q "^$rel  *built: mmtune $ver installed with DKMS" <<<"$hs"; then
		ok "linux-headers-$rel after the image: the trigger builds and installs mmtune with DKMS; mmtune-dkms-kernel status says built"
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
	out=$(KDIR=$kdir MMTUNE_VM_KO=$ko tests/vm/run.sh --tests 'core-module-load,core-sysfs-docs' 2>&1) || rc=$?
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
rpm_root_checks() {
	local base=$1 kp=$2 rel=$3 ver=$4 r=$pk_work/rpm-root out rc=0 rv st
	rv=${rel//-/_}
	copy_root "$base" "$r"
	make_mok "$r"
	# The kernel RPM's name is per line and flavour (kernel-mmtune,
	# kernel-mmtune6.12-cloud-amd64, ...): the devel package is <name>-devel.
	local kpkgs=() kname f
	for f in "$kp"/rpm/kernel-mmtune*-"$rv"-*.rpm; do
		case $f in *-devel-"$rv"-*) ;; *) [ -f "$f" ] && kpkgs+=("$f") ;; esac
	done
	[ ${#kpkgs[@]} -eq 1 ] || { not_ok "one kernel RPM of $rel in $kp/rpm (found ${#kpkgs[@]})"; return 0; }
	kname=$(rpm -qp --qf '%{NAME}' "${kpkgs[0]}")
	kpkgs+=("$kp"/rpm/"$kname"-devel-"$rv"-*.rpm)
	local pkgs=(build/packaging/out/rpm/mmtune-dkms-"$ver"-1.noarch.rpm build/packaging/out/rpm/mmtune-"$ver"-1.noarch.rpm)
	# --nodeps: the scratch root's rpm database is empty (Debian's dpkg owns
	# dkms, systemd, python3). Scriptlets run chrooted, with /proc and /dev.
	# The kernel first, then mmtune-dkms, whose %post builds for every
	# kernel with headers: in one transaction without dependencies rpm's
	# order is arbitrary, and the other order needs the kernel-devel
	# trigger (checked below).
	out=$(rpm_root "$r" -ivh --nodeps "${kpkgs[@]}" 2>&1 && rpm_root "$r" -ivh --nodeps "${pkgs[@]}" 2>&1) || rc=$?
	echo "$out" >"$pk_logs/rpm-root.log"
	note "rpm -ivh --root output, scriptlets included:"
	note "$out"
	if [ $rc -eq 0 ]; then
		ok "RPMs install with rpm --root --nodeps into a Debian 12 scratch root: $kname, $kname-devel, mmtune-dkms, mmtune"
	else
		not_ok "RPMs install into a scratch root (rpm exit $rc)"
		return 0
	fi
	# The trigger that builds for headers arriving after mmtune-dkms is a
	# file trigger on /usr/src/kernels, which covers every devel package's
	# name (its effect is checked below, with this line's $kname-devel).
	if rpm -qp --filetriggers build/packaging/out/rpm/mmtune-dkms-"$ver"-1.noarch.rpm | grep -q 'filetriggerin.*/usr/src/kernels'; then
		ok "RPM: mmtune-dkms has a %filetriggerin on /usr/src/kernels (any <name>-devel installed after it gets the module)"
	else
		not_ok "RPM: mmtune-dkms has a %filetriggerin on /usr/src/kernels (packaging/rpm/mmtune.spec)"
	fi
	check "RPM scratch root: rpm -q lists the four packages" \
		rpm --root "$(realpath "$r")" -q "$kname" "$kname-devel" mmtune-dkms mmtune
	st=$(in_root "$r" dkms status -m mmtune -v "$ver" -k "$rel")
	# DKMS compresses as the tree does (6.12's Debian configs: .ko.xz).
	local dk=$r/lib/modules/$rel/updates/dkms/mmtune.ko
	[ -f "$dk" ] || dk=$dk.xz
	if grep -q ": installed" <<<"$st" && [ -f "$dk" ] &&
		[ "$(modinfo -F signer "$dk")" = "mmtune test MOK" ]; then
		ok "RPM scriptlets: DKMS built, signed and installed mmtune for $rel ($st)"
	else
		not_ok "RPM scriptlets: DKMS built and installed mmtune for $rel (status: $st)"
	fi
	[ -f "$dk" ] && check "RPM scriptlets: the DKMS module's signature verifies against the MOK" \
		bash -c "$(declare -f ko_sig_verifies); f=\$(mktemp); xz -dcf '$dk' >\$f && ko_sig_verifies \$f '$r/var/lib/dkms/mok.pub'; rc=\$?; rm -f \$f; exit \$rc"
	local en_svc en_timer
	en_svc=$(in_root "$r" systemctl is-enabled mmtune.service 2>&1)
	en_timer=$(in_root "$r" systemctl is-enabled mmtune-metrics.timer 2>&1)
	if [ "$en_svc" = disabled ] && [ "$en_timer" = enabled ]; then
		ok "RPM scriptlets: %systemd_post left mmtune.service disabled (installing changes nothing) and enabled the metrics timer, by the preset"
	else
		not_ok "RPM scriptlets: by the preset mmtune.service disabled, the timer enabled (is-enabled: $en_svc, $en_timer)"
	fi
	rc=0
	out=$(rpm_root "$r" -e --nodeps mmtune-dkms 2>&1) || rc=$?
	note "$out"
	if [ $rc -eq 0 ] && [ ! -e "$dk" ] && [ ! -e "$r/var/lib/dkms/mmtune/$ver" ]; then
		ok "RPM scriptlets: erasing mmtune-dkms removes the module from DKMS and /lib/modules"
	else
		not_ok "RPM scriptlets: erasing mmtune-dkms removes the module (rpm exit $rc)"
	fi
	# The other order: mmtune-dkms first (no build tree for $rel, so no
	# build), then $kname-devel: its files under /usr/src/kernels fire
	# mmtune-dkms's file trigger, which builds the module.
	rc=0
	out=$(rpm_root "$r" -e --nodeps "$kname-devel" 2>&1 &&
		rpm_root "$r" -ivh --nodeps build/packaging/out/rpm/mmtune-dkms-"$ver"-1.noarch.rpm 2>&1) || rc=$?
	note "$out"
	if [ $rc -ne 0 ] || [ -e "$dk" ]; then
		not_ok "RPM: mmtune-dkms installed while $rel has no $kname-devel builds nothing (rpm exit $rc)"
		return 0
	fi
	out=$(rpm_root "$r" -ivh --nodeps "$kp"/rpm/"$kname"-devel-"$rv"-*.rpm 2>&1) || rc=$?
	note "$out"
	st=$(in_root "$r" dkms status -m mmtune -v "$ver" -k "$rel")
	if [ $rc -eq 0 ] && grep -q ": installed" <<<"$st" && [ -f "$dk" ]; then
		ok "RPM: $kname-devel installed after mmtune-dkms: the file trigger built and installed mmtune for $rel ($st)"
	else
		not_ok "RPM: $kname-devel installed after mmtune-dkms gets the module from the file trigger (rpm exit $rc, status: $st)"
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
	check "e2e: mmtune.service is not enabled by the install (installing changes nothing)" \
		test "$(in_root "$r" systemctl is-enabled mmtune.service)" = disabled
	# The operator's choice (README.md): the rules pick the profile.
	check "e2e: systemctl enable mmtune.service (the operator's choice)" \
		in_root "$r" systemctl enable mmtune.service

	install_e2e_guest "$r" e2e-check.sh "$rel" "$ver"

	local img=$pk_work/e2e.img size
	size=$(( $(du -sm "$r" | cut -f1) + 768 ))
	rm -f "$img"
	if ! mkfs.ext4 -q -F -L root -d "$r" "$img" "${size}M" >"$pk_logs/e2e-mkfs.log" 2>&1; then
		not_ok "e2e: root file system image"; note "$(cat "$pk_logs/e2e-mkfs.log")"; return 0
	fi

	guest_boot e2e "$img" "$r/boot/vmlinuz-$rel"
}

# guest_boot NAME IMAGE KERNEL [INITRD [APPEND [QEMU-ARG...]]]: boot IMAGE
# (root on virtio, its mmtune-e2e.service runs the checks and powers off)
# under qemu TCG and re-emit the guest's TAP as ours, "NAME (booted):
# ..."; then scan the kernel console for reports. QEMU-ARGs follow the
# root drive (a second -drive is /dev/vdb). The time limit,
# MMTUNE_E2E_TIMEOUT (default 1200 s), is multiplied by the host's load
# (load_scale). An empty KERNEL boots IMAGE through its own boot loader
# (the firmware reads the disk; the command line is the loader's; the
# console on ttyS0 and sysrq_always_enabled are then its job). Logs:
# $pk_logs/NAME-console.log and NAME-results.tap. Returns 1 when the guest
# did not finish its checks.
guest_boot() {
	local name=$1 img=$2 kernel=$3 initrd=${4:-} append=${5:-} t0=$SECONDS qrc=0 line limit
	shift $(($# < 5 ? $# : 5))
	local console=$pk_logs/$name-console.log results=$pk_logs/$name-results.tap
	: >"$console"; : >"$results"
	limit=$(( ${MMTUNE_E2E_TIMEOUT:-1200} * $(load_scale) ))
	qemu_timed "$pk_logs/$name-dump" "$limit" -accel tcg,thread=single \
		-smp 2 -m 2G -nodefaults -no-reboot -display none \
		${kernel:+-kernel "$kernel"} ${initrd:+-initrd "$initrd"} \
		${kernel:+-append "root=/dev/vda rw console=ttyS0,115200 panic=-1 systemd.show_status=1 sysrq_always_enabled${append:+ $append}"} \
		-serial "file:$console" -serial "file:$results" \
		-drive "file=$img,if=virtio,format=raw,cache=unsafe" "$@" >"$pk_logs/$name-qemu.log" 2>&1 || qrc=$?
	sed -i 's/\r$//' "$console" "$results"
	note "$name: boot and checks took $((SECONDS - t0))s (qemu exit $qrc$([ $qrc = 124 ] && echo ": the ${limit}s limit; blocked tasks and backtraces (sysrq w, l) at the end of $console, registers in $pk_logs/$name-dump/"); load $(cut -d' ' -f1-3 /proc/loadavg))"
	if ! grep -q '^# e2e: done' "$results"; then
		not_ok "$name: the booted system ran its checks (qemu exit $qrc)"
		note "console (last 60 lines; full log $console):"
		note "$(tail -n 60 "$console")"
		return 1
	fi
	while IFS= read -r line; do
		case "$line" in
		"ok "*) ok "$name (booted): ${line#ok [0-9]* }" ;;
		"not ok "*) not_ok "$name (booted): ${line#not ok [0-9]* }" ;;
		"#"*) note "${line#\# }" ;;
		esac
	done <"$results"
	local report_re='WARNING:|BUG:|Oops|Kernel panic|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|Call Trace:'
	if grep -Eq "$report_re" "$console"; then
		not_ok "$name: kernel console free of warnings, BUGs and lockdep reports"
		note "$(grep -En -A5 "$report_re" "$console" | head -n 40)"
	else
		ok "$name: kernel console free of warnings, BUGs and lockdep reports"
	fi
}

# --- The prebuilt path, booted twice: apt installs linux-image-<rel>,
# mmtune-modules-<rel> and mmtune <ver> from a local signed repository
# (host side, in the root); boot 1, our kernel: the profile is in force,
# "apt-get upgrade" to <ver>+up1 re-applies it in place
# (guest/lifecycle-check.sh); boot 2, the stock Debian kernel installed
# beside ours: mmtunectl reports a kernel without hooks.
lifecycle_checks() {
	local base=$1 kp=$2 rel=$3 ver=$4 r=$pk_work/life-root repo bdir mods kver rc=0
	local cache=${MMTUNE_CACHE:-$HOME/.cache/mmtune} img=$pk_work/life.img size
	mods=$(ls "$kp"/deb/mmtune-modules-"$rel"_*.deb 2>/dev/null) ||
		{ not_ok "lifecycle: $kp has mmtune-modules-$rel"; return 0; }
	bdir=$(bump_debs "$ver") ||
		{ not_ok "lifecycle: mmtune $ver+up1 builds"; note "$(tail -n 20 "$pk_logs/bump-build.log")"; return 0; }
	copy_root "$base" "$r"
	kver=$(basename "$(ls -d "$r"/usr/src/linux-headers-*-amd64 | head -n 1)")
	kver=${kver#linux-headers-}
	repo=$r/srv/mmtune-repo
	mkdir -p "$repo" "$cache/apt-archives"
	cp "$kp"/deb/linux-image-"$rel"_*.deb "$mods" build/packaging/out/deb/mmtune_"$ver"_all.deb \
		"$bdir/mmtune_$ver+up1_all.deb" "$repo/"
	rm -f "$repo"/*-dbg_*.deb
	repo_trust "$r"
	repo_publish "$repo" >"$pk_logs/life-repo.log" 2>&1 || { not_ok "lifecycle: repository indexed and signed"; return 0; }

	rc=0; apt_run "$r" life-2-install sh -c "apt-get update && apt-get install -y linux-image-$rel mmtune-modules-$rel mmtune=$ver" || rc=$?
	note "$(grep -E '^(Setting up|E:|W:)' <<<"$apt_out")"
	if [ $rc -eq 0 ] && [ -z "$(dpkg_not_ii "$r")" ] && [ -f "$r/lib/modules/$rel/extra/mmtune.ko" ] &&
		[ "$(in_root "$r" dpkg-query -W -f '${db:Status-Status}' mmtune-dkms 2>/dev/null)" != installed ] &&
		in_root "$r" systemctl enable mmtune.service >/dev/null 2>&1; then
		ok "lifecycle: apt-get install linux-image-$rel mmtune-modules-$rel mmtune=$ver from the signed repository: every package ii, no DKMS package; systemctl enable mmtune.service (the operator's choice)"
	else
		not_ok "lifecycle: apt-get install of our kernel, mmtune-modules and mmtune (apt exit $rc, not ii: $(dpkg_not_ii "$r"))"; note "$apt_out"
		return 0
	fi
	# A stock Debian kernel and its headers beside ours, with mmtune and
	# mmtune-modules installed (here, not in the guest: unpacking 400 MB
	# and making an initramfs under TCG takes over ten minutes).
	cp "$cache"/apt-archives/*.deb "$r/var/cache/apt/archives/" 2>/dev/null || true
	rc=0; apt_run "$r" life-3-stock-kernel apt-get install -y --reinstall "linux-image-$kver" "linux-headers-$kver" || rc=$?
	cp -n "$r"/var/cache/apt/archives/*.deb "$cache/apt-archives/" 2>/dev/null || true
	rm -f "$r"/var/cache/apt/archives/*.deb
	note "$(grep -E '^(Setting up|update-initramfs|E:|W:)' <<<"$apt_out")"
	if [ $rc -eq 0 ] && [ -z "$(dpkg_not_ii "$r")" ] && [ -s "$r/boot/initrd.img-$kver" ] &&
		[ ! -e "$r/lib/modules/$kver/extra/mmtune.ko" ]; then
		ok "lifecycle: apt-get install linux-image-$kver linux-headers-$kver beside ours, mmtune and mmtune-modules: every package ii, /boot/initrd.img-$kver made, no mmtune.ko for it"
	else
		not_ok "lifecycle: stock kernel and headers install beside ours (apt exit $rc, not ii: $(dpkg_not_ii "$r"))"; note "$apt_out"
		return 0
	fi
	# From here on the repository is all the guest has (no network).
	rm -f "$r/etc/apt/sources.list" "$r"/etc/apt/sources.list.d/*.sources
	install_e2e_guest "$r" lifecycle-check.sh "$rel" "$ver"
	echo "$kver" >"$r/usr/local/lib/mmtune-e2e/expected-stock-release"
	echo "$ver+up1" >"$r/usr/local/lib/mmtune-e2e/expected-bump"
	size=$(( $(du -sm "$r" | cut -f1) + 768 ))
	rm -f "$img"
	if ! mkfs.ext4 -q -F -L root -d "$r" "$img" "${size}M" >"$pk_logs/life-mkfs.log" 2>&1; then
		not_ok "lifecycle: root file system image"; note "$(cat "$pk_logs/life-mkfs.log")"; return 0
	fi
	cp "$r/boot/vmlinuz-$rel" "$pk_work/life-ours-vmlinuz"
	cp "$r/boot/vmlinuz-$kver" "$pk_work/life-stock-vmlinuz"
	cp "$r/boot/initrd.img-$kver" "$pk_work/life-stock-initrd.img"
	rm -rf "$r"
	guest_boot life-ours "$img" "$pk_work/life-ours-vmlinuz" &&
		guest_boot life-stock "$img" "$pk_work/life-stock-vmlinuz" "$pk_work/life-stock-initrd.img"
	rm -f "$img" "$pk_work"/life-*vmlinuz "$pk_work"/life-stock-initrd.img
}

# --- Local apt repository and stock Debian kernels (no mmtune kernel needed)
# A flat repository made with apt-ftparchive, Release signed with a
# throwaway key, "signed-by=" in the sources; a copy of the Debian 12 root;
# a systemctl and policy-rc.d shim that log what the maintainer scripts ask
# of systemd (no systemd runs in a chroot).

# in_shim ROOT CMD...: in_root with the shims first in PATH.
in_shim() {
	local r=$1; shift
	in_root "$r" env PATH=/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

# apt_run ROOT LOGNAME CMD...: run an apt command in the root; output into
# $pk_logs/LOGNAME.log and into $apt_out; returns its exit status.
apt_out=
apt_run() {
	local r=$1 name=$2 rc=0; shift 2
	apt_out=$(in_shim "$r" "$@" 2>&1) || rc=$?
	apt_out=${apt_out//$'\r'/}
	printf '%s\n' "$apt_out" >"$pk_logs/$name.log"
	return $rc
}

# Packages not in state "ii" (a package removed on purpose is given as an
# exception: it must be "rc").
dpkg_not_ii() {
	local r=$1 except=${2:-}
	in_root "$r" dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' |
		awk -v ex="$except" '$1 == "rc" && $2 == ex { next } $1 != "ii" { print }'
}

# repo_publish DIR: index and sign the flat repository in DIR.
repo_publish() {
	local dir=$1 g=$PWD/$pk_work/gnupg
	(cd "$dir" &&
		apt-ftparchive packages . >Packages &&
		gzip -9nkf Packages &&
		apt-ftparchive -o APT::FTPArchive::Release::Origin=mmtune-test \
			-o APT::FTPArchive::Release::Label=mmtune-test release . >Release &&
		rm -f InRelease Release.gpg &&
		GNUPGHOME=$g gpg --batch --yes --clearsign -o InRelease Release &&
		GNUPGHOME=$g gpg --batch --yes -abs -o Release.gpg Release)
}

# repo_trust ROOT: ROOT's apt trusts file:/srv/mmtune-repo, signed-by= the
# run's throwaway repository key (made on first use; full_checks starts
# each run with an empty $pk_work).
repo_trust() {
	local r=$1 g=$PWD/$pk_work/gnupg
	if [ ! -d "$g" ]; then
		mkdir -m 0700 "$g"
		GNUPGHOME=$g gpg --batch --pinentry-mode loopback --passphrase '' \
			--quick-gen-key 'mmtune test repository <mmtune-test@localhost>' rsa3072 sign 1d >/dev/null 2>&1
	fi
	mkdir -p "$r/etc/apt/keyrings"
	GNUPGHOME=$g gpg --batch --export >"$r/etc/apt/keyrings/mmtune-test.gpg"
	echo "deb [signed-by=/etc/apt/keyrings/mmtune-test.gpg] file:/srv/mmtune-repo ./" \
		>"$r/etc/apt/sources.list.d/mmtune-test.list"
}

# The shims: every systemctl and policy-rc.d call is logged; the unit
# counts as enabled and active, as on a running host.
install_shims() {
	local r=$1
	mkdir -p "$r/usr/local/sbin" "$r/run/systemd/system"
	cat >"$r/usr/local/sbin/systemctl" <<'SH'
#!/bin/sh
echo "systemctl $*" >>/var/log/systemctl-shim.log
for a in "$@"; do
	case "$a" in
	is-enabled) echo enabled; exit 0 ;;
	is-active|is-system-running) exit 0 ;;
	esac
done
exit 0
SH
	cat >"$r/usr/sbin/policy-rc.d" <<'SH'
#!/bin/sh
echo "policy-rc.d $*" >>/var/log/systemctl-shim.log
exit 0
SH
	chmod 0755 "$r/usr/local/sbin/systemctl" "$r/usr/sbin/policy-rc.d"
	# apt runs dpkg with its own PATH (DPkg::Path): put the shim first there.
	echo 'DPkg::Path "/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin";' \
		>"$r/etc/apt/apt.conf.d/99mmtune-test-shim"
}

# Lines of the systemd shim log written since the mark (a line count).
shim_since() { tail -n +"$(( $2 + 1 ))" "$1/var/log/systemctl-shim.log" 2>/dev/null; }
shim_mark() { wc -l 2>/dev/null <"$1/var/log/systemctl-shim.log" || echo 0; }

# Our one line per hook run: the lines that start with "mmtune-dkms: ".
mm_lines() { grep '^mmtune-dkms: ' <<<"$1" || true; }

# bump_debs VER: mmtune and mmtune-dkms VER+up1, built once per run from a
# copy of this tree with the version bumped (the "newer release" of the
# upgrade tests); prints the directory that holds the .debs.
bump_debs() {
	local bump="$1+up1" out=$pk_work/bump bsrc
	if [ ! -f "$out/mmtune_${bump}_all.deb" ]; then
		# Outside this git tree: build.sh would take its file list from git.
		bsrc=$(mktemp -d "${TMPDIR:-/tmp}/mmtune-bump.XXXXXX")
		# shellcheck disable=SC2046 # a list of paths without spaces
		(git ls-files -co --exclude-standard -- $(packaging/build.sh --sources) 2>/dev/null |
			tar -cf - -T - --ignore-failed-read) | tar -xf - -C "$bsrc"
		sed -i "s/^#define MMTUNE_VERSION .*/#define MMTUNE_VERSION \"$bump\"/" "$bsrc/module/version.h"
		if ! (cd "$bsrc" && packaging/build.sh deb) >"$pk_logs/bump-build.log" 2>&1; then
			rm -rf "$bsrc"
			return 1
		fi
		mkdir -p "$out"
		cp "$bsrc"/build/packaging/out/deb/mmtune_"$bump"_all.deb "$bsrc"/build/packaging/out/deb/mmtune-dkms_"$bump"_all.deb "$out/"
		rm -rf "$bsrc"
	fi
	echo "$out"
}

stock_apt_checks() {
	local base=$1 ver=$2 r=$pk_work/apt-root repo=$pk_work/apt-root/srv/mmtune-repo
	local cache=${MMTUNE_CACHE:-$HOME/.cache/mmtune} t0=$SECONDS rc kver mark lines bump out
	bump="$ver+up1"

	# --- the bumped version, built from a copy of this tree -------------
	local bdir
	if ! bdir=$(bump_debs "$ver"); then
		not_ok "apt: mmtune $bump (bumped copy of this tree) builds"; note "$(tail -n 20 "$pk_logs/bump-build.log")"
		return 0
	fi
	ok "apt: mmtune and mmtune-dkms $bump (a copy of this tree with the version bumped) build"

	# --- the root, the repository with the current version ---------------
	copy_root "$base" "$r"
	install_shims "$r"
	mkdir -p "$repo"
	cp build/packaging/out/deb/mmtune_"$ver"_all.deb build/packaging/out/deb/mmtune-dkms_"$ver"_all.deb "$repo/"
	repo_trust "$r"
	repo_publish "$repo" >"$pk_logs/apt-repo.log" 2>&1 || { not_ok "apt: repository indexed and signed"; return 0; }
	# Debian archives downloaded by earlier runs (the stock kernel image).
	mkdir -p "$cache/apt-archives"
	cp "$cache"/apt-archives/*.deb "$r/var/cache/apt/archives/" 2>/dev/null || true

	rc=0; apt_run "$r" apt-1-update apt-get update || rc=$?
	if [ $rc -eq 0 ] && ! grep -qiE 'NO_PUBKEY|not signed|insecure|^W: |^E: ' <<<"$apt_out" &&
		grep -q 'file:/srv/mmtune-repo' <<<"$apt_out"; then
		ok "apt: local repository (apt-ftparchive, InRelease signed with a throwaway key, signed-by=) accepted by apt-get update"
	else
		not_ok "apt: apt-get update accepts the signed local repository (exit $rc)"; note "$apt_out"
	fi

	# The stock kernel whose headers the root has (Debian's linux-headers-amd64).
	kver=$(basename "$(ls -d "$r"/usr/src/linux-headers-*-amd64 | head -n 1)")
	kver=${kver#linux-headers-}

	# --- 1. mmtune + mmtune-dkms from the repository, stock headers only --
	mark=$(shim_mark "$r")
	rc=0; apt_run "$r" apt-2-install-mmtune apt-get install -y mmtune mmtune-dkms || rc=$?
	note "$(mm_lines "$apt_out")"
	lines=$(mm_lines "$apt_out")
	if [ $rc -eq 0 ] && [ -z "$(dpkg_not_ii "$r")" ] &&
		[ "$lines" = "mmtune-dkms: $kver has no mmtune hooks (CONFIG_MMTUNE_HOOKS is not set), mmtune.ko skipped (no mmtune knobs on this kernel)" ] &&
		[ "$(in_root "$r" dkms status -m mmtune)" = "mmtune/$ver: added" ] &&
		! grep -q 'Error!' <<<"$apt_out"; then
		ok "apt: mmtune, mmtune-dkms $ver install from the repository; stock $kver: one skip line, dkms status 'added', every package ii"
	else
		not_ok "apt: mmtune, mmtune-dkms install cleanly beside stock headers (apt exit $rc)"
		note "$apt_out"; note "not ii: $(dpkg_not_ii "$r")"
	fi
	if [ ! -e "$r/etc/systemd/system/sysinit.target.wants/mmtune.service" ] &&
		[ -L "$r/etc/systemd/system/timers.target.wants/mmtune-metrics.timer" ]; then
		ok "apt: the first installation does not enable mmtune.service (installing changes nothing), enables the metrics timer"
	else
		not_ok "apt: the first installation leaves mmtune.service disabled and enables the timer"; note "$(ls -l "$r"/etc/systemd/system/*.wants/ 2>&1)"
	fi

	# --- 2. a stock kernel image + headers (reinstalled) with mmtune-dkms -
	rc=0; apt_run "$r" apt-3-stock-kernel apt-get install -y --reinstall \
		"linux-image-$kver" "linux-headers-$kver" || rc=$?
	cp -n "$r"/var/cache/apt/archives/*.deb "$cache/apt-archives/" 2>/dev/null || true
	note "$(grep -E '^(/etc/kernel|run-parts|mmtune-dkms|dkms|update-initramfs)' <<<"$apt_out")"
	lines=$(mm_lines "$apt_out")
	if [ $rc -eq 0 ] && [ -z "$(dpkg_not_ii "$r")" ] && [ -s "$r/boot/initrd.img-$kver" ] &&
		[ "$(wc -l <<<"$lines")" = 1 ] && grep -q "^mmtune-dkms: $kver has no mmtune hooks" <<<"$lines" &&
		! grep -qE 'Error!|exited with return code' <<<"$apt_out"; then
		ok "apt: linux-image-$kver + linux-headers-$kver (reinstalled) with mmtune-dkms: every package ii, /boot/initrd.img-$kver made, one skip line from the image and headers hooks together, no dkms error"
	else
		not_ok "apt: stock kernel and headers configure cleanly with mmtune-dkms (apt exit $rc)"
		note "$apt_out"; note "not ii: $(dpkg_not_ii "$r")"; note "initrd: $(ls -l "$r"/boot/ 2>&1)"
	fi
	[ -e "$r/lib/modules/$kver/updates/dkms/mmtune.ko" ] &&
		not_ok "apt: no mmtune.ko for the stock kernel" || ok "apt: no mmtune.ko was built or installed for the stock kernel $kver"

	# --- 3. bad input: a patched kernel whose DKMS build fails ------------
	local bad=6.1.0-mmtune-broken
	mkdir -p "$r/lib/modules/$bad/build/include"
	echo 'CONFIG_MMTUNE_HOOKS=y' >"$r/lib/modules/$bad/build/.config"
	rc=0; out=$(in_root "$r" /etc/kernel/postinst.d/50-mmtune-dkms "$bad" 2>&1) || rc=$?
	note "$out"
	if [ $rc -eq 0 ] && [ "$(grep -c . <<<"$out")" = 1 ] &&
		grep -q "^mmtune-dkms: $bad: building mmtune $ver FAILED (dkms exit [0-9]*;" <<<"$out" &&
		[ ! -e "$r/lib/modules/$bad/updates/dkms/mmtune.ko" ] &&
		! grep -q ': installed' <<<"$(in_root "$r" dkms status -m mmtune)"; then
		ok "bad input: a DKMS build that fails on a patched kernel: the hook exits 0 with one FAILED line, nothing installed"
	else
		not_ok "bad input: a failing DKMS build does not fail the kernel hook (exit $rc)"
	fi
	rm -rf "$r/lib/modules/$bad"

	# --- 4. mmtune-dkms removed, not purged: kernels still install --------
	rc=0; apt_run "$r" apt-4-remove-dkms apt-get remove -y mmtune-dkms || rc=$?
	local st
	st=$(in_root "$r" dpkg-query -W -f '${db:Status-Abbrev}' mmtune-dkms)
	if [ $rc -eq 0 ] && [ "$st" = "rc " ] && [ -x "$r/etc/kernel/postinst.d/50-mmtune-dkms" ] &&
		[ -z "$(in_root "$r" dkms status -m mmtune)" ]; then
		ok "apt: mmtune-dkms removed (rc): hooks left as conffiles, mmtune unregistered from DKMS"
	else
		not_ok "apt: mmtune-dkms removed, not purged (apt exit $rc, state '$st')"; note "$apt_out"
	fi
	local before
	before=$(stat -c %Y "$r/boot/initrd.img-$kver" 2>/dev/null || echo 0)
	sleep 1
	rc=0; apt_run "$r" apt-5-stock-kernel-rc apt-get install -y --reinstall \
		"linux-image-$kver" "linux-headers-$kver" || rc=$?
	if [ $rc -eq 0 ] && [ -z "$(dpkg_not_ii "$r" mmtune-dkms)" ] &&
		[ "$(stat -c %Y "$r/boot/initrd.img-$kver" 2>/dev/null || echo 0)" -gt "$before" ] &&
		[ -z "$(mm_lines "$apt_out")" ] && ! grep -qE 'Error!|exited with return code' <<<"$apt_out"; then
		ok "apt: with mmtune-dkms removed but not purged, reinstalling the stock kernel and headers configures cleanly, initramfs regenerated, the left hooks are silent"
	else
		not_ok "apt: stock kernel reinstall with mmtune-dkms in state rc (apt exit $rc)"
		note "$apt_out"; note "not ii: $(dpkg_not_ii "$r" mmtune-dkms)"
	fi

	# --- 5. back, then upgrade both packages through the repository -------
	rc=0; apt_run "$r" apt-6-reinstall-dkms apt-get install -y mmtune-dkms || rc=$?
	[ $rc -eq 0 ] && [ -z "$(dpkg_not_ii "$r")" ] ||
		{ not_ok "apt: mmtune-dkms installs again from state rc (apt exit $rc)"; note "$apt_out"; }
	cp "$bdir"/mmtune_"$bump"_all.deb "$bdir"/mmtune-dkms_"$bump"_all.deb "$repo/"
	repo_publish "$repo" >>"$pk_logs/apt-repo.log" 2>&1
	mark=$(shim_mark "$r")
	rc=0; apt_run "$r" apt-7-upgrade sh -c 'apt-get update && apt-get upgrade -y' || rc=$?
	local calls
	calls=$(shim_since "$r" "$mark")
	echo "$calls" >"$pk_logs/apt-7-upgrade-systemctl.log"
	note "systemctl and policy-rc.d calls during the upgrade:"; note "$calls"
	note "$(mm_lines "$apt_out")"
	if [ $rc -eq 0 ] && [ -z "$(dpkg_not_ii "$r")" ] &&
		[ "$(in_root "$r" dpkg-query -W -f '${Version}' mmtune)" = "$bump" ] &&
		[ "$(in_root "$r" dpkg-query -W -f '${Version}' mmtune-dkms)" = "$bump" ] &&
		[ "$(in_root "$r" dkms status -m mmtune)" = "mmtune/$bump: added" ]; then
		ok "apt: apt-get upgrade to $bump from the re-signed repository: both packages ii at $bump, DKMS has only $bump"
	else
		not_ok "apt: apt-get upgrade to $bump (apt exit $rc, dkms: $(in_root "$r" dkms status -m mmtune))"; note "$apt_out"
	fi
	if grep -qx 'systemctl reload mmtune.service' <<<"$calls" &&
		! grep -E '(stop|restart|try-restart|reload-or-restart) .*mmtune\.service' <<<"$calls" | grep -q . &&
		! grep -E ' (start|restart|try-restart|reload-or-restart) .*mmtune-(reapply|metrics)\.service' <<<"$calls" | grep -q .; then
		ok "apt: the upgrade re-applies in place: 'systemctl reload mmtune.service', no stop, no restart; mmtune-reapply and mmtune-metrics not started"
	else
		not_ok "apt: the upgrade reloads mmtune.service instead of stopping or restarting it"
	fi

	# --- 6. removal rolls back (ExecStop=mmtunectl rollback) --------------
	mark=$(shim_mark "$r")
	rc=0; apt_run "$r" apt-8-remove apt-get remove -y mmtune || rc=$?
	calls=$(shim_since "$r" "$mark")
	if [ $rc -eq 0 ] && grep -qE '^systemctl (--quiet )?stop .*mmtune\.service' <<<"$calls"; then
		ok "apt: removing mmtune stops mmtune.service (its ExecStop rolls back to stock values)"
	else
		not_ok "apt: removing mmtune stops mmtune.service (apt exit $rc)"; note "$calls"
	fi
	# --- 7. purge: the recorded profile pick goes with the package ---------
	mkdir -p "$r/var/lib/mmtune"; echo database-host >"$r/var/lib/mmtune/auto-profile"
	rc=0; apt_run "$r" apt-9-purge apt-get purge -y mmtune || rc=$?
	if [ $rc -eq 0 ] && [ ! -e "$r/var/lib/mmtune" ] && ! in_root "$r" dpkg-query -W -f '${db:Status-Abbrev}' mmtune 2>/dev/null | grep -q '^[ri]'; then
		ok "apt: purging mmtune removes /var/lib/mmtune (the recorded automatic pick) and the package's records"
	else
		not_ok "apt: purging mmtune removes /var/lib/mmtune (apt exit $rc)"; note "$apt_out"; note "$(ls -la "$r/var/lib/mmtune" 2>&1)"
	fi
	note "apt repository and stock kernel tests took $((SECONDS - t0))s"
}

# --- mmtune-modules-<release>: built and signed against a kernel tree -------
# The tree: MMTUNE_MODULES_TREE, else the cached test kernel (the one
# "make kernel" builds). The test kernel has no CONFIG_MODULE_SIG: the
# module is signed with a throwaway key then, and the test says so.
# refused DESC MESSAGE OUTDIR TREE: build-module-pkgs.sh on TREE fails,
# says MESSAGE, and leaves no package in OUTDIR.
refused() {
	local rc=0 msg
	msg=$(packaging/kernel/build-module-pkgs.sh "$4" --out "$3" 2>&1) || rc=$?
	note "$msg"
	if [ $rc -ne 0 ] && grep -q "$2" <<<"$msg" && ! ls "$3"/*.deb "$3"/*.rpm >/dev/null 2>&1; then
		ok "$1"
	else
		not_ok "$1 (exit $rc)"
	fi
}

module_pkg_checks() {
	local ver=$1 cache=${MMTUNE_CACHE:-$HOME/.cache/mmtune} tree out=$pk_work/modules t0=$SECONDS
	local rel deb rpm keyargs=() signer_want tmp rc=0 msg
	tree=${MMTUNE_MODULES_TREE:-}
	if [ -z "$tree" ]; then
		# The test kernel that make kernel linked, else the newest cached
		# test kernel built from this checkout's patch series (the cache
		# is shared: another checkout's series may have another hook API;
		# the bench kernels are no test: bench-unpatched has no hooks).
		local want
		want=$(cd kernel-patches/6.1 && while read -r p; do
			case "$p" in ''|'#'*) continue ;; esac
			echo "patch: $p $(sha256sum <"$p" | cut -d' ' -f1)"; done <series)
		tree=$( (readlink -f build/6.1/kernel 2>/dev/null; ls -td "$cache"/kernels/*/linux 2>/dev/null) |
			while read -r d; do
				[ -f "$d/Module.symvers" ] &&
					grep -q -- '-mmtune-test$' "$d/include/config/kernel.release" 2>/dev/null &&
					[ "$(grep '^patch: ' "$d/../build-info.txt" 2>/dev/null)" = "$want" ] &&
					{ echo "$d"; break; }
			done)
	fi
	if [ -z "$tree" ]; then
		skip "mmtune-modules packages" "no built kernel tree (make kernel, or MMTUNE_MODULES_TREE)"
		return 0
	fi
	rel=$(cat "$tree/include/config/kernel.release")
	rm -rf "$out"; mkdir -p "$out"
	if grep -qx 'CONFIG_MODULE_SIG=y' "$tree/.config"; then
		signer_want=$(openssl x509 -inform DER -in "$tree/certs/signing_key.x509" -noout -subject -nameopt multiline |
			sed -n 's/^ *commonName *= *//p')
		note "$rel has CONFIG_MODULE_SIG: signing with its own key (certs/signing_key.pem)"
	else
		openssl req -new -x509 -nodes -days 2 -subj "/CN=mmtune throwaway module key/" \
			-newkey rsa:2048 -keyout "$out/key.pem" -outform DER -out "$out/cert.der" >/dev/null 2>&1
		keyargs=(--key "$out/key.pem" --cert "$out/cert.der")
		signer_want="mmtune throwaway module key"
		note "$rel has no CONFIG_MODULE_SIG (the test kernel): signed with a throwaway key instead; nothing in that kernel checks it"
	fi
	if ! packaging/kernel/build-module-pkgs.sh "$tree" --out "$out" "${keyargs[@]}" >"$pk_logs/modules.log" 2>&1; then
		not_ok "mmtune-modules-$rel: build-module-pkgs.sh builds .deb and .rpm"; note "$(tail -n 30 "$pk_logs/modules.log")"
		return 0
	fi
	note "$(cat "$pk_logs/modules.log")"
	deb=$(ls "$out"/mmtune-modules-"$rel"_"$ver"_amd64.deb 2>/dev/null)
	rpm=$(ls "$out"/mmtune-modules-"$rel"-"$ver"-1*.x86_64.rpm 2>/dev/null)
	if [ -n "$deb" ] && [ -n "$rpm" ]; then
		ok "mmtune-modules-$rel: .deb and .rpm built against $tree in $((SECONDS - t0))s ($(stat -c %s "$deb") and $(stat -c %s "$rpm") bytes)"
	else
		not_ok "mmtune-modules-$rel: .deb and .rpm built"; return 0
	fi
	tmp=$(mktemp -d)
	dpkg-deb -x "$deb" "$tmp/deb"
	mkdir -p "$tmp/rpm"; (cd "$tmp/rpm" && rpm2cpio "$OLDPWD/$rpm" | cpio -idm --quiet)
	local k
	for k in deb rpm; do
		local ko=$tmp/$k/lib/modules/$rel/extra/mmtune.ko
		if [ -f "$ko" ]; then
			check "mmtune-modules .$k: /lib/modules/$rel/extra/mmtune.ko, vermagic $rel, version $ver" ko_matches "$ko" "$rel" "$ver"
			check "mmtune-modules .$k: the packaged module is signed ('$signer_want', modinfo -F signer)" ko_signed "$ko" "$signer_want"
			if [ ${#keyargs[@]} -gt 0 ]; then
				check "mmtune-modules .$k: the signature survived packaging and verifies against the certificate" ko_sig_verifies "$ko" "$out/cert.der"
			else
				check "mmtune-modules .$k: the signature survived packaging and verifies against the kernel's certs/signing_key.x509" ko_sig_verifies "$ko" "$tree/certs/signing_key.x509"
			fi
		else
			not_ok "mmtune-modules .$k: carries /lib/modules/$rel/extra/mmtune.ko"
		fi
	done
	check "mmtune-modules .deb: Depends on linux-image-$rel, Provides mmtune-modules" \
		bash -c "dpkg-deb -f '$deb' Depends | grep -q 'linux-image-$rel' && dpkg-deb -f '$deb' Provides | grep -qx mmtune-modules"
	# kernel-uname-r = REL only where rpm can parse REL as a version (one '-').
	local req="(kernel-$rel or kernel-uname-r = $rel)"
	[ "$(tr -cd - <<<"$rel" | wc -c)" -le 1 ] || req="kernel-$rel"
	check "mmtune-modules .rpm: Requires $req, Provides mmtune-modules" \
		bash -c "rpm -qp --requires '$rpm' | grep -qxF '$req' && rpm -qp --provides '$rpm' | grep -q '^mmtune-modules = '"
	check "lintian: mmtune-modules .deb has no error" bash -c "! lintian '$deb' 2>&1 | grep -v 'root privileges' | tee /dev/stderr | grep -q '^E: '"
	rm -rf "$tmp"

	# Bad input: a tree without the hooks, a kernel without module signing
	# and no key given: one clear error each, no package.
	local bad=$pk_work/modules-bad
	rm -rf "$bad"; mkdir -p "$bad/include/config"
	echo '# CONFIG_MMTUNE_HOOKS is not set' >"$bad/.config"; : >"$bad/Module.symvers"; echo 6.1.0-stock >"$bad/include/config/kernel.release"
	refused "bad input: build-module-pkgs.sh on a kernel without the hooks fails with one clear error, no package" \
		'no CONFIG_MMTUNE_HOOKS=y' "$bad/out" "$bad"
	grep -qx 'CONFIG_MODULE_SIG=y' "$tree/.config" ||
		refused "bad input: no key for a kernel without CONFIG_MODULE_SIG: one clear error, no unsigned package" \
			'has no CONFIG_MODULE_SIG' "$bad/out2" "$tree"
	note "mmtune-modules tests took $((SECONDS - t0))s"
}

# --- Issue 27: keys, versions, the repository, a kernel rebuild -------------
# The set's meta package: mmtune-kernel-<flavour> (test for these sets).
rel_meta=mmtune-kernel-test

# deb_field PKGFILE FIELD
deb_field() { dpkg-deb -f "$1" "$2"; }

# versions_ok KP REL VER: every version carries the set's build id, the
# module package and the meta package pin this exact kernel build.
versions_ok() {
	local kp=$1 rel=$2 ver=$3 b img hdr mods meta rc=0 rv
	b=$(cat "$kp/build-id")
	img=$(ls "$kp"/deb/linux-image-"$rel"_*.deb | grep -v -- -dbg_)
	hdr=$(ls "$kp"/deb/linux-headers-"$rel"_*.deb)
	mods=$(ls "$kp"/deb/mmtune-modules-"$rel"_*.deb)
	meta=$(ls "$kp"/deb/"$rel_meta"_*.deb)
	echo "build id $b"
	for f in "$img" "$hdr" "$mods" "$meta"; do echo "$(deb_field "$f" Package) $(deb_field "$f" Version): Depends: $(deb_field "$f" Depends)"; done
	[ "$(deb_field "$img" Version)" = "$rel-$b" ] && [ "$(deb_field "$hdr" Version)" = "$rel-$b" ] ||
		{ echo "kernel .debs are not at $rel-$b"; rc=1; }
	[ "$(deb_field "$mods" Version)" = "$ver+$b" ] || { echo "mmtune-modules is not at $ver+$b"; rc=1; }
	grep -qE "(^|, )linux-image-$rel \(= $rel-$b\)(,|$)" <<<"$(deb_field "$mods" Depends)" ||
		{ echo "mmtune-modules does not depend on linux-image-$rel (= $rel-$b)"; rc=1; }
	grep -qE "(^|, )linux-image-$rel \(= $rel-$b\), mmtune-modules-$rel \(= $ver\+$b\)(,|$)" <<<"$(deb_field "$meta" Depends)" ||
		{ echo "$rel_meta does not depend on exactly both"; rc=1; }
	[ -d "$kp/rpm" ] || return $rc
	rv=${rel//-/_}
	rpm -qp --qf '%{NAME} %{VERSION}-%{RELEASE}\n' "$kp"/rpm/*.rpm "$kp"/unpublished/*.rpm
	[ "$(rpm -qp --qf '%{VERSION}-%{RELEASE}' "$kp"/rpm/kernel-mmtune-"$rv"-*.rpm)" = "$rv-$b" ] ||
		{ echo "kernel-mmtune is not at $rv-$b"; rc=1; }
	rpm -qp --requires "$kp"/rpm/mmtune-modules-"$rel"-*.rpm | grep -qx "kernel-mmtune = $rv-$b" ||
		{ echo "mmtune-modules .rpm does not require kernel-mmtune = $rv-$b"; rc=1; }
	[ "$(rpm -qp --requires "$kp"/rpm/"$rel_meta"-*.rpm | grep -cxE "kernel-mmtune = $rv-$b|mmtune-modules-$rel = $ver-$b")" = 2 ] ||
		{ echo "$rel_meta .rpm does not require exactly both"; rpm -qp --requires "$kp"/rpm/"$rel_meta"-*.rpm; rc=1; }
	return $rc
}

# no_distro_names KP: nothing published under a distribution's name, no
# Obsoletes or Provides that would replace or stand in for one.
no_distro_names() {
	local kp=$1 rc=0 n
	echo "unpublished: $(cd "$kp/unpublished" && ls)"
	for f in "$kp"/deb/*.deb; do
		n=$(deb_field "$f" Package)
		case "$n" in linux-libc-dev) echo "$f: linux-libc-dev among the published"; rc=1 ;; esac
	done
	ls "$kp"/unpublished/linux-libc-dev_*.deb >/dev/null 2>&1 || { echo "no linux-libc-dev in unpublished/"; rc=1; }
	[ -d "$kp/rpm" ] || return $rc
	for f in "$kp"/rpm/*.rpm; do
		n=$(rpm -qp --qf '%{NAME}' "$f")
		case "$n" in kernel|kernel-devel|kernel-headers|kernel-core|kernel-modules|*-headers) echo "$f: published as $n"; rc=1 ;; esac
		if rpm -qp --obsoletes "$f" | grep -q .; then echo "$n obsoletes: $(rpm -qp --obsoletes "$f")"; rc=1; fi
		if rpm -qp --provides "$f" | grep -qE '^kernel(-headers|-devel)?( |$)'; then echo "$n provides a distribution name: $(rpm -qp --provides "$f")"; rc=1; fi
	done
	[ "$(rpm -qp --qf '%{NAME}' "$kp"/unpublished/kernel-mmtune-headers-*.rpm)" = kernel-mmtune-headers ] &&
		! rpm -qp --obsoletes "$kp"/unpublished/kernel-mmtune-headers-*.rpm | grep -q . &&
		! rpm -qp --provides "$kp"/unpublished/kernel-mmtune-headers-*.rpm | grep -q '^kernel-headers' ||
		{ echo "kernel-mmtune-headers (unpublished) still obsoletes or provides kernel-headers"; rc=1; }
	return $rc
}

# signing_kept KP: the key lives in KP/signing (0700, key 0600), the
# headers' .config names it by an absolute path outside /usr/src.
signing_kept() {
	local kp=$1 t k rc=0
	ls -la "$kp/signing"
	[ "$(stat -c %a "$kp/signing")" = 700 ] && [ "$(stat -c %a "$kp/signing/signing_key.pem")" = 600 ] ||
		{ echo "signing/ is not 0700 or signing_key.pem not 0600"; rc=1; }
	t=$(mktemp -d)
	dpkg-deb -x "$(ls "$kp"/deb/linux-headers-*_*.deb)" "$t"
	k=$(sed -n 's/^CONFIG_MODULE_SIG_KEY="\(.*\)"$/\1/p' "$t"/usr/src/linux-headers-*/.config)
	rm -rf "$t"
	echo "CONFIG_MODULE_SIG_KEY=\"$k\""
	case "$k" in /usr/src/*|certs/*|'') echo "the key path is inside the tree"; rc=1 ;; /*) ;; *) rc=1 ;; esac
	# The stage is one fixed path, used by whichever kernel build holds the
	# build lock: another set's build may have its own key there now, so
	# the check is that this set's key is not left behind.
	if [ -e "$k" ] && cmp -s "$k" "$kp/signing/signing_key.pem"; then
		echo "$k still holds this set's key after the build"; rc=1
	elif [ -e "$k" ]; then
		echo "$k exists, with another key (a kernel build holds the lock: $(cat /proc/loadavg))"
	fi
	return $rc
}

# cn CERT(DER)
cn() { openssl x509 -inform DER -in "$1" -noout -subject -nameopt multiline | sed -n 's/^ *commonName *= *//p'; }

release_checks() {
	local base=$1 kp=$2 rel=$3 ver=$4 kp2=build/packaging/kernel-pkgs-6.1-rebuild t0=$SECONDS arts=() f
	if ! timed "kernel packages built again from the same inputs (--variant rebuild: new build id, new key; .deb, ccache-warm)" \
		packaging/kernel/build-kernel-pkgs.sh --deb --variant rebuild; then
		skip "release checks of two builds" "the second build failed"; return 0
	fi
	for f in build/packaging/out/deb/*.deb build/packaging/out/rpm/*.rpm "$kp"/deb/*.deb "$kp"/rpm/*.rpm \
		"$kp"/unpublished/* "$kp2"/deb/*.deb "$kp2"/unpublished/* "$pk_work"/modules/*.deb "$pk_work"/modules/*.rpm; do
		[ -f "$f" ] && arts+=("$f")
	done
	timed "no private key in any of the ${#arts[@]} artifacts (.deb and .rpm: mmtune, mmtune-dkms, kernel, headers, kernel-mmtune-devel, mmtune-modules, $rel_meta, unpublished ones; file lists in $pk_logs/contents/)" \
		no_private_keys "${arts[@]}"
	check "the module signing key is kept outside the tree: signing/ 0700, signing_key.pem 0600, the headers' CONFIG_MODULE_SIG_KEY an absolute path outside /usr/src, gone after the build" \
		signing_kept "$kp"
	check "build 1 ($(cat "$kp/build-id")): kernel packages at <rel>-<build id>, mmtune-modules and $rel_meta pin that exact kernel build (.deb and .rpm)" \
		versions_ok "$kp" "$rel" "$ver"
	local v1 v2 rel2 b1 b2
	rel2=$(cat "$kp2/kernel.release") b1=$(cat "$kp/build-id") b2=$(cat "$kp2/build-id")
	check "build 2 ($b2): the same for the rebuild, release $rel2" versions_ok "$kp2" "$rel2" "$ver"
	check "every build is a release of its own: $rel and $rel2 are <line>.<n>-mmtune<build id>, within utsname's 64 characters" \
		bash -c "[ '$rel' != '$rel2' ] && [[ '$rel' == *-mmtune$b1 && '$rel2' == *-mmtune$b2 ]] && [ ${#rel2} -lt 65 ]"
	v1=$(deb_field "$(ls "$kp"/deb/"$rel_meta"_*.deb)" Version) v2=$(deb_field "$(ls "$kp2"/deb/"$rel_meta"_*.deb)" Version)
	check "build 2 is newer than build 1 for dpkg (linux-image, mmtune-modules, $rel_meta: $v1 < $v2), rpm and sort -V (GRUB's order): $rel < $rel2" bash -c "
		dpkg --compare-versions '$rel-$b1' lt '$rel2-$b2' && dpkg --compare-versions '$ver+$b1' lt '$ver+$b2' &&
		dpkg --compare-versions '$v1' lt '$v2' && [ \"\$(rpm --eval '%{lua: print(rpm.vercmp(\"${rel//-/_}\", \"${rel2//-/_}\"))}')\" = -1 ] &&
		[ \"\$(printf '%s\\n' '$rel2' '$rel' | sort -V | tail -n 1)\" = '$rel2' ]"
	check "nothing published under a distribution's name: linux-libc-dev and kernel-mmtune-headers unpublished, no kernel/kernel-devel/kernel-headers, no Obsoletes, no Provides of those" \
		no_distro_names "$kp"
	local c1 c2 m2 tmp
	c1=$kp/signing/signing_key.x509 c2=$kp2/signing/signing_key.x509
	tmp=$(mktemp -d)
	dpkg-deb -x "$(ls "$kp2"/deb/mmtune-modules-"$rel2"_*.deb)" "$tmp"
	m2=$tmp/lib/modules/$rel2/extra/mmtune.ko
	check "build 2's key is new ('$(cn "$c2")' vs '$(cn "$c1")'); its mmtune.ko verifies against build 2's certificate and not build 1's" \
		bash -c "$(declare -f ko_sig_verifies); ! cmp -s '$c1' '$c2' && ko_sig_verifies '$m2' '$c2' && ! ko_sig_verifies '$m2' '$c1'"
	rm -rf "$tmp"

	repo_checks "$kp" "$kp2" "$rel" "$rel2"
	shadow_checks "$base" "$kp"
	repo_upgrade_checks "$base" "$kp" "$kp2" "$rel" "$rel2" "$ver"
	note "release checks took $((SECONDS - t0))s"
}

# make_repo OUT INPUT...: packaging/repo/make-repo.sh with the run's
# throwaway key.
make_repo() {
	local out=$1; shift
	[ -d "$pk_work/gnupg" ] || repo_trust "$pk_work/keyring-root" >/dev/null
	GNUPGHOME=$PWD/$pk_work/gnupg MMTUNE_REPO_KEY='mmtune test repository' packaging/repo/make-repo.sh --out "$out" "$@"
}

repo_checks() {
	local kp=$1 kp2=$2 rel=$3 rel2=$4 out=$pk_work/repo rc=0 log=$pk_logs/make-repo.log d rel_f
	if make_repo "$out" build/packaging/out/deb build/packaging/out/rpm "$kp"/deb "$kp"/rpm "$kp"/unpublished "$kp2"/deb "$kp2"/unpublished \
		>"$log" 2>&1; then
		ok "make-repo.sh: apt and rpm repositories from the mmtune packages, both kernel builds and the unpublished packages given on purpose"
	else
		not_ok "make-repo.sh builds the repositories"; note "$(tail -n 30 "$log")"; return 0
	fi
	note "$(grep -E 'left out|apt:|rpm:' "$log")"
	d=$out/apt/dists/bookworm
	rel_f=$d/Release
	check "apt repository: dists/bookworm/main/binary-amd64, Release with Origin mmtune, Label, Suite and Codename bookworm, Components main; Release lists neither itself nor InRelease" \
		bash -c "cat '$rel_f' | head -n 9; grep -qx 'Origin: mmtune' '$rel_f' && grep -qx 'Label: mmtune' '$rel_f' &&
			grep -qx 'Suite: bookworm' '$rel_f' && grep -qx 'Codename: bookworm' '$rel_f' && grep -qx 'Components: main' '$rel_f' &&
			grep -q ' main/binary-amd64/Packages.xz\$' '$rel_f' && ! grep -qE ' (In)?Release(\.gpg)?\$' '$rel_f'"
	check "apt repository: InRelease and Release.gpg verify against the exported mmtune-archive-keyring.gpg (gpgv)" \
		bash -c "gpgv --keyring '$out/mmtune-archive-keyring.gpg' '$d/InRelease' && gpgv --keyring '$out/mmtune-archive-keyring.gpg' '$d/Release.gpg' '$rel_f'"
	check "apt repository: both kernel builds published (linux-image-$rel, linux-image-$rel2), linux-libc-dev and -dbg left out" bash -c "
		p='$d/main/binary-amd64/Packages'; grep -E '^(Package|Version):' \$p | paste - - | sed 's/Package: //; s/\tVersion: / /'
		grep -qx 'Package: linux-image-$rel' \$p && grep -qx 'Package: linux-image-$rel2' \$p && [ \$(grep -c '^Package: $rel_meta\$' \$p) = 2 ] &&
		! grep -qE '^Package: (linux-libc-dev|.*-dbg)\$' \$p"
	check "rpm repository: createrepo_c metadata, repomd.xml.asc verifies, every package signed (rpmkeys --checksig), no kernel-mmtune-headers" \
		bash -c "ls '$out/rpm'; gpgv --keyring '$out/mmtune-archive-keyring.gpg' '$out/rpm/repodata/repomd.xml.asc' '$out/rpm/repodata/repomd.xml' &&
			db=\$(mktemp -d) && rpmkeys --dbpath \$db --import '$out/RPM-GPG-KEY-mmtune' &&
			for f in '$out'/rpm/*.rpm; do rpmkeys --dbpath \$db --checksig \$f | grep -q 'signatures OK' || exit 1; done; rm -rf \$db
			! ls '$out'/rpm/kernel-mmtune-headers-* 2>/dev/null && ls '$out'/rpm/kernel-mmtune-devel-*.rpm >/dev/null"
	# Bad input: a package with a private key is never published.
	local bad=$pk_work/repo-bad t
	t=$(mktemp -d)
	mkdir -p "$t/p/DEBIAN" "$t/p/usr/share/mmtune-leak"
	printf 'Package: mmtune-leak\nVersion: 1\nArchitecture: all\nMaintainer: t <t@localhost>\nDescription: t\n' >"$t/p/DEBIAN/control"
	openssl genpkey -algorithm RSA -out "$t/p/usr/share/mmtune-leak/x.pem" >/dev/null 2>&1
	dpkg-deb -b "$t/p" "$t/mmtune-leak_1_all.deb" >/dev/null
	rc=0
	make_repo "$bad" build/packaging/out/deb "$t/mmtune-leak_1_all.deb" >"$pk_logs/make-repo-bad.log" 2>&1 || rc=$?
	rm -rf "$t"
	note "$(tail -n 3 "$pk_logs/make-repo-bad.log")"
	if [ $rc -ne 0 ] && [ ! -e "$bad" ] && [ ! -e "$bad.tmp" ] && grep -q 'PRIVATE KEY: /usr/share/mmtune-leak/x.pem' "$pk_logs/make-repo-bad.log"; then
		ok "bad input: make-repo.sh refuses a package that carries a private key, names the file, publishes nothing"
	else
		not_ok "bad input: make-repo.sh refuses a package with a private key (exit $rc)"
	fi
}

# --- Debian's repositories and ours on one host: apt-get upgrade takes
# nothing of ours. A copy of the Debian 12 root (build-essential's
# linux-libc-dev installed, from Debian), its Debian sources (network) and
# make-repo.sh's repository. Control: a repository that does carry our
# linux-libc-dev (what the old flat recipe indexed) is upgraded to, so the
# check can see a shadowing package; the documented pin (mmtune.pref) keeps
# Debian's then.
shadow_checks() {
	local base=$1 kp=$2 r=$pk_work/shadow-root rc=0 inst ours libc
	copy_root "$base" "$r"
	rm -rf "$r/srv/mmtune-repo"; mkdir -p "$r/srv" "$r/etc/apt/keyrings"
	cp -a "$pk_work/repo" "$r/srv/mmtune-repo"
	cp "$r/srv/mmtune-repo/mmtune-archive-keyring.gpg" "$r/etc/apt/keyrings/mmtune.gpg"
	echo "deb [signed-by=/etc/apt/keyrings/mmtune.gpg] file:/srv/mmtune-repo/apt bookworm main" >"$r/etc/apt/sources.list.d/mmtune.list"
	libc=$(in_root "$r" dpkg-query -W -f '${Version}' linux-libc-dev)
	rc=0; apt_run "$r" shadow-1-update apt-get update || rc=$?
	if [ $rc -ne 0 ] || grep -qE '^(W|E): ' <<<"$apt_out"; then
		not_ok "shadow: apt-get update with Debian's repositories and ours (exit $rc)"; note "$apt_out"; return 0
	fi
	apt_run "$r" shadow-2-upgrade apt-get -s upgrade
	inst=$(grep '^Inst ' <<<"$apt_out")
	# Ours: every "package version" pair in our Packages file.
	ours=$(grep -E '^(Package|Version):' "$r/srv/mmtune-repo/apt/dists/bookworm/main/binary-amd64/Packages" | paste - - |
		sed 's/Package: //; s/\tVersion: / /')
	note "apt-get -s upgrade would install $(grep -c '^Inst ' <<<"$apt_out") package(s); from ours: none expected"
	local hit pol
	# Ours is really enabled: its mmtune is a candidate source.
	pol=$(in_root "$r" apt-cache policy mmtune)
	hit=$(awk 'NR == FNR { o[$1 " " $2] = 1; next } { v = $0; sub(/.*\(/, "", v); sub(/ .*/, "", v); if (o[$2 " " v]) print }' \
		<(echo "$ours") <(echo "$inst"))
	if [ -n "$libc" ] && [ -z "$hit" ] && grep -q 'file:/srv/mmtune-repo/apt bookworm/main' <<<"$pol"; then
		ok "shadow: Debian's repositories and make-repo.sh's both enabled, linux-libc-dev $libc (Debian) installed: apt-get upgrade takes nothing from ours"
	else
		not_ok "shadow: apt-get upgrade takes nothing from ours (linux-libc-dev '$libc'; taken: $hit)"; note "$pol"
	fi
	# Control: a repository with our linux-libc-dev, Origin mmtune.
	local c=$r/srv/mmtune-control g=$PWD/$pk_work/gnupg
	mkdir -p "$c"
	cp "$kp"/unpublished/linux-libc-dev_*.deb "$c/"
	(cd "$c" && apt-ftparchive packages . >Packages &&
		apt-ftparchive -o APT::FTPArchive::Release::Origin=mmtune -o APT::FTPArchive::Release::Label=mmtune release . >Release.tmp &&
		mv Release.tmp Release && GNUPGHOME=$g gpg --batch --yes --clearsign -o InRelease Release) >"$pk_logs/shadow-control-repo.log" 2>&1
	echo "deb [signed-by=/etc/apt/keyrings/mmtune.gpg] file:/srv/mmtune-control ./" >"$r/etc/apt/sources.list.d/mmtune-control.list"
	apt_run "$r" shadow-3-update-control apt-get update
	apt_run "$r" shadow-4-upgrade-control apt-get -s upgrade
	local lv
	lv=$(deb_field "$(ls "$kp"/unpublished/linux-libc-dev_*.deb)" Version)
	if grep -q "^Inst linux-libc-dev \[$libc\] ($lv " <<<"$apt_out"; then
		ok "shadow control: a repository that carries our linux-libc-dev ($lv) would replace Debian's $libc on apt-get upgrade (the check above can see it)"
	else
		not_ok "shadow control: our linux-libc-dev $lv is taken from a repository that carries it"; note "$(grep '^Inst' <<<"$apt_out")"
	fi
	install -m 0644 packaging/repo/mmtune.pref "$r/etc/apt/preferences.d/mmtune.pref"
	apt_run "$r" shadow-5-upgrade-pinned apt-get -s upgrade
	if ! grep -q '^Inst linux-libc-dev ' <<<"$apt_out" &&
		grep -q "Candidate: $libc" <<<"$(in_root "$r" apt-cache policy linux-libc-dev)"; then
		ok "shadow: with packaging/repo/mmtune.pref (Pin: release o=mmtune) Debian's linux-libc-dev $libc stays the candidate even then"
	else
		not_ok "shadow: mmtune.pref keeps Debian's linux-libc-dev"; note "$(in_root "$r" apt-cache policy linux-libc-dev)"
	fi
	note "$(in_root "$r" apt-cache policy linux-libc-dev "linux-image-$(cat "$kp/kernel.release")" 2>&1)"
	rm -rf "$r"
}

# --- The operator quick start and a kernel rebuild, booted four times -------
# (guest/upgrade-check.sh). The guest has no network device; both
# repositories (build 1; builds 1 and 2) are in the image and served on
# 127.0.0.1. Between boots the host takes /boot/vmlinuz-<rel> out of the
# image, as a boot loader would: build 1's, build 2's (installed beside it
# by the upgrade), then build 1's again, booted with module.sig_enforce=1.
repo_upgrade_checks() {
	local base=$1 kp=$2 kp2=$3 rel=$4 rel2=$5 ver=$6 r=$pk_work/upg-root img=$pk_work/upg.img kver size
	local cache=${MMTUNE_CACHE:-$HOME/.cache/mmtune} g=$PWD/$pk_work/upg-boot n b k
	copy_root "$base" "$r"
	kver=$(basename "$(ls -d "$r"/usr/src/linux-headers-*-amd64 | head -n 1)")
	kver=${kver#linux-headers-}
	# The stock kernel the host boots first (host side: an initramfs under
	# TCG takes minutes).
	mkdir -p "$cache/apt-archives"
	cp "$cache"/apt-archives/*.deb "$r/var/cache/apt/archives/" 2>/dev/null || true
	rc=0; apt_run "$r" upg-1-stock-kernel sh -c "apt-get update && apt-get install -y linux-image-$kver" || rc=$?
	cp -n "$r"/var/cache/apt/archives/*.deb "$cache/apt-archives/" 2>/dev/null || true
	rm -f "$r"/var/cache/apt/archives/*.deb
	[ $rc -eq 0 ] && [ -s "$r/boot/initrd.img-$kver" ] ||
		{ not_ok "upgrade: stock kernel $kver installs into the root (exit $rc)"; note "$apt_out"; return 0; }
	mkdir -p "$r/srv/www"
	if ! make_repo "$r/srv/www/repo1" build/packaging/out/deb "$kp"/deb >"$pk_logs/upg-repo1.log" 2>&1 ||
		! make_repo "$r/srv/www/repo2" build/packaging/out/deb "$kp"/deb "$kp2"/deb >"$pk_logs/upg-repo2.log" 2>&1; then
		not_ok "upgrade: make-repo.sh for build 1, then builds 1 and 2"; note "$(tail -n 20 "$pk_logs"/upg-repo*.log)"; return 0
	fi
	rm -rf "$r"/srv/www/repo*/contents
	ok "upgrade: repositories made with make-repo.sh: build 1, and builds 1 and 2, copied into the image"
	# No network in the guest: nothing but our repository.
	rm -f "$r/etc/apt/sources.list" "$r"/etc/apt/sources.list.d/*
	install_e2e_guest "$r" upgrade-check.sh "$rel" "$ver"
	echo "$rel_meta" >"$r/usr/local/lib/mmtune-e2e/expected-meta"
	n=1
	for k in "$kp" "$kp2"; do
		b=$(cat "$k/build-id")
		cat "$k/kernel.release" >"$r/usr/local/lib/mmtune-e2e/expected-rel$n"
		echo "$(cat "$k/kernel.release")-$b" >"$r/usr/local/lib/mmtune-e2e/expected-kver$n"
		echo "$ver+$b" >"$r/usr/local/lib/mmtune-e2e/expected-mver$n"
		deb_field "$(ls "$k"/deb/"$rel_meta"_*.deb)" Version >"$r/usr/local/lib/mmtune-e2e/expected-metaver$n"
		cn "$k/signing/signing_key.x509" >"$r/usr/local/lib/mmtune-e2e/expected-signer$n"
		n=$((n + 1))
	done
	mkdir -p "$g"
	cp "$r/boot/vmlinuz-$kver" "$g/stock-vmlinuz"; cp "$r/boot/initrd.img-$kver" "$g/stock-initrd"
	size=$(( $(du -sm "$r" | cut -f1) + 1024 ))
	rm -f "$img"
	if ! mkfs.ext4 -q -F -L root -d "$r" "$img" "${size}M" >"$pk_logs/upg-mkfs.log" 2>&1; then
		not_ok "upgrade: root file system image"; note "$(cat "$pk_logs/upg-mkfs.log")"; return 0
	fi
	rm -rf "$r"
	guest_boot upgrade-install "$img" "$g/stock-vmlinuz" "$g/stock-initrd" || { rm -rf "$g" "$img"; return 0; }
	# Boots 2-4: build 1, build 2 (installed beside it by the upgrade),
	# build 1 again (the previous build still boots).
	local boot
	for boot in build1 build2 build1-fallback; do
		n=${boot:5:1} k=$kp
		[ $n = 1 ] || k=$kp2
		rm -f "$g/ours"
		debugfs -R "dump /boot/vmlinuz-$(cat "$k/kernel.release") $g/ours" "$img" >/dev/null 2>&1
		check "upgrade: /boot/vmlinuz-$(cat "$k/kernel.release") in the image is build $n's kernel ($(cat "$k/build-id"))" cmp "$g/ours" "$k/vmlinuz" ||
			{ rm -rf "$g" "$img"; return 0; }
		guest_boot "upgrade-$boot" "$img" "$g/ours" "" "module.sig_enforce=1" || { rm -rf "$g" "$img"; return 0; }
	done
	rm -rf "$g" "$img"
}
