# Quick packaging checks (part of "make check"): build the mmtune and
# mmtune-dkms .deb and .rpm and their source packages, gate on lintian and
# rpmlint, check versions, file lists, conffiles, maintainer scripts, the
# kernel hooks' states, how mmtune.ko is loaded, and rebuild the binaries
# from the .dsc and the source RPM. Sourced by run.sh.

. tests/packaging/source.sh
. tests/packaging/keyscan.sh

quick_checks() {
	local ver debdir rpmdir srcdir d
	ver=$(packaging/version.sh)
	debdir=build/packaging/out/deb
	rpmdir=build/packaging/out/rpm
	srcdir=build/packaging/out/source

	if ! check "packages: build mmtune, mmtune-dkms .deb and .rpm, the .dsc and the source RPM (version $ver)" \
		packaging/build.sh deb rpm; then
		return 1
	fi
	local deb_tools=$debdir/mmtune_${ver}_all.deb deb_dkms=$debdir/mmtune-dkms_${ver}_all.deb
	local rpm_tools=$rpmdir/mmtune-$ver-1.noarch.rpm rpm_dkms=$rpmdir/mmtune-dkms-$ver-1.noarch.rpm

	# --- lint gates ---------------------------------------------------------
	check "lintian: no error or warning (pedantic and info shown; binaries and the .dsc)" lint_debs "$debdir"/*.changes "$srcdir/mmtune_$ver.dsc"
	check "lintian: every override has a comment saying why" overrides_justified packaging/debian/*lintian-overrides
	check "rpmlint: no error or warning with packaging/rpm/rpmlint.toml (binary and source RPMs)" lint_rpms "$rpm_tools" "$rpm_dkms" "$srcdir/mmtune-$ver-1.src.rpm"
	check "rpmlint: every filter has a comment saying why" filters_justified packaging/rpm/rpmlint.toml

	# --- versions: one source, module/version.h -----------------------------
	check "version: .deb, .rpm and both dkms.conf say $ver" versions_agree "$ver" \
		"$deb_tools" "$deb_dkms" "$rpm_tools" "$rpm_dkms"

	# --- file lists ---------------------------------------------------------
	check "mmtune-dkms.deb: /usr/src/mmtune-$ver holds exactly the module sources and dkms.conf" \
		dkms_files_exact "$ver" "$deb_dkms"
	check "mmtune-dkms.rpm: /usr/src/mmtune-$ver holds exactly the module sources and dkms.conf" \
		dkms_files_exact "$ver" "$rpm_dkms"
	check "dkms.conf: version filled in, BUILD_EXCLUSIVE_CONFIG set, no AUTOINSTALL (the kernel hooks decide; deb and rpm)" \
		dkms_conf_ok "$ver" "$deb_dkms" "$rpm_dkms"
	check "mmtune.deb: CLI and its man page, private Python package, units and the modprobe drop-in; no modules-load.d entry, no litter" \
		tools_files_ok "$deb_tools" /usr/lib/systemd/system
	check "mmtune.rpm: CLI and its man page, private Python package, units and the modprobe drop-in; no modules-load.d entry, no litter" \
		tools_files_ok "$rpm_tools" /usr/lib/systemd/system
	check "mmtune.deb and mmtune.rpm: every man page of packaging/man (man5, man8) installed, compressed, in its section" \
		man_pages_ok "$deb_tools" "$rpm_tools"
	check "mmtune.deb: the file each unit's Documentation= names is in the package" \
		unit_docs_ok "$deb_tools"
	check "mmtune.rpm: the file each unit's Documentation= names is in the package" \
		unit_docs_ok "$rpm_tools"
	check "mmtune.deb: every file under /etc is a conffile, and nothing else" \
		deb_conffiles_ok "$deb_tools"
	check "mmtune.rpm: every file under /etc is %config(noreplace), and nothing else" \
		rpm_config_ok "$rpm_tools"
	check "mmtune.deb: mmtune.service wants and is ordered after modprobe@mmtune.service (drop-in), systemd-analyze verify clean" \
		module_load_ok "$deb_tools" /usr/lib/systemd/system
	check "mmtune.rpm: mmtune.service wants and is ordered after modprobe@mmtune.service (drop-in), systemd-analyze verify clean" \
		module_load_ok "$rpm_tools" /usr/lib/systemd/system
	check "modprobe@.service's command on a kernel without mmtune.ko prints nothing (systemd-modules-load would log an error) and cannot fail the unit" \
		modprobe_unit_silent

	# --- maintainer scripts -------------------------------------------------
	check "mmtune-dkms.deb: postinst registers with DKMS and builds through mmtune-dkms-kernel, prerm unregisters, /usr/src trigger, kernel hooks are conffiles" \
		deb_dkms_scripts_ok "$deb_dkms" "$ver"
	check "mmtune.deb: installing enables and starts only the metrics timer, mmtune.service is not enabled (a disabled unit is not started); both stopped on removal; reapply and metrics services never started; upgrade reloads (no stop, no restart); Suggests, not Recommends, mmtune-modules | mmtune-dkms" \
		deb_tools_scripts_ok "$deb_tools"
	check "mmtune-dkms.rpm: %post add + build through mmtune-dkms-kernel, %preun remove, %filetriggerin on /usr/src/kernels, kernel-install plugin, Requires dkms >= 3.0.11" \
		rpm_dkms_scripts_ok "$rpm_dkms" "$ver"
	check "mmtune.rpm: the preset disables mmtune.service and enables the metrics timer, disable --now of both on erase, reload on upgrade (no try-restart); Suggests (mmtune-modules or mmtune-dkms), no Recommends" \
		rpm_tools_scripts_ok "$rpm_tools"
	check "mmtune.spec: the rich Suggests only where rpm has rpmlib(RichDependencies), none otherwise" \
		rpm_rich_gate_ok "$ver"

	# --- the kernel hooks ---------------------------------------------------
	check "mmtune-dkms-kernel: one line per kernel and state (no hooks, hooks, prebuilt, no headers, failing and 77 builds) however often the hooks run; a failed build retried only when the kernel or sources change (attempts in the log); status of every kernel; removed-not-purged" \
		tests/packaging/hook-unit.sh

	# --- source packages ----------------------------------------------------
	check "source packages: mmtune_$ver.dsc (3.0 native) + .tar.xz in the .changes, mmtune-$ver-1.src.rpm (spec with the version, Source0)" \
		src_artifacts_ok "$ver"
	check "source packages: dpkg-source -x of the .dsc in an empty directory, dpkg-buildpackage -b: the same .debs" \
		dsc_rebuild_ok "$ver"
	check "source packages: rpmbuild --rebuild of the source RPM: the same .rpms" \
		srpm_rebuild_ok "$ver"
	check "source packages: an untracked packaging/repo/backup.asc (a PGP secret key) and module file ship in no artifact of a scratch git copy, all 6 artifacts scanned; tracked, the key fails the build (source RPM named)" \
		untracked_never_ships
	check "private key scan: a .deb and an .rpm with a throwaway private key in every encoding (PEM, OpenSSH, PGP armored and binary, DER PKCS#1/PKCS#8/encrypted/EC/PKCS#12, base64 of PEM, DER and PGP) under innocent names, and a key's file name: each one found" \
		keyscan_encodings
	check "private key scan: a DER key under an innocent name in deb data.tar.gz/.zst and control, rpm xz/zstd payload, zip, wheel, tar in tar.gz, gzip/xz/zstd single files, a deb in a tar.xz: each caught" \
		keyscan_containers
	check "private key scan: public keys and certificates (PEM, DER, base64, OpenSSH, OpenPGP keyrings, zipped) in a .deb and an .rpm: no finding" \
		keyscan_clean
	check "no private key in any artifact: .dsc and its tarball, .debs, source and binary RPMs" \
		no_private_keys "$srcdir/mmtune_$ver.dsc" "$deb_tools" "$deb_dkms" \
		"$srcdir/mmtune-$ver-1.src.rpm" "$rpm_tools" "$rpm_dkms"
	if command -v shellcheck >/dev/null; then
		check "shellcheck: kernel hooks, maintainer scripts, build.sh and these tests" \
			shellcheck_all
	else
		skip "shellcheck: kernel hooks and maintainer scripts" "shellcheck not installed (apt-get install shellcheck)"
	fi
}

shellcheck_all() {
	shellcheck -s sh packaging/dkms/mmtune-dkms-kernel packaging/dkms/kernel-hook \
		packaging/dkms/50-mmtune-dkms.install packaging/debian/*.postinst \
		packaging/debian/*.prerm packaging/debian/*.postrm &&
	shellcheck packaging/build.sh tests/packaging/hook-unit.sh tests/packaging/source.sh \
		tests/packaging/dkms-states.sh tests/packaging/stock-boot.sh tests/packaging/guest/stock-boot-check.sh \
		tests/packaging/guest/profiles-check.sh \
		packaging/repo/*.sh tests/packaging/keyscan.sh &&
	shellcheck -x tests/packaging/suites.sh tests/packaging/profiles-boot.sh
}

deb_files() { dpkg-deb -c "$1" | awk '{ print $6 }' | sed 's|^\./|/|; s|/$||' | grep -v '^$'; }

# pkg_files PKG: its paths, one a line, into a temporary file; prints the name.
pkg_files() {
	local f
	f=$(mktemp)
	case "$1" in
	*.deb) deb_files "$1" >"$f" ;;
	*.rpm) rpm -qpl "$1" >"$f" ;;
	esac
	echo "$f"
}

lint_debs() {
	local out
	out=$(lintian --pedantic --display-info --show-overrides "$@" 2>&1 | grep -v 'running with root privileges')
	echo "$out"
	! grep -qE '^[EW]: ' <<<"$out"
}

lint_rpms() {
	local out
	out=$(rpmlint -c packaging/rpm/rpmlint.toml "$@" 2>&1)
	echo "$out"
	! grep -qE ': [EW]: ' <<<"$out"
}

# Each override / filter line must follow a comment line.
overrides_justified() {
	local f
	for f in "$@"; do
		[ -f "$f" ] || continue
		awk -v f="$f" '/^#/ { c = 1; next } /^[[:space:]]*$/ { c = 0; next }
			{ if (!c) { print f ":" NR ": override without a comment: " $0; bad = 1 } }
			END { exit bad }' "$f" || return 1
		echo "$f: $(grep -cvE '^#|^[[:space:]]*$' "$f") override(s), all commented"
	done
}

filters_justified() {
	awk '/^Filters/ { in_f = 1; next } in_f && /^\]/ { in_f = 0 }
		in_f && /^[[:space:]]*#/ { c = 1; next }
		in_f && /^[[:space:]]*'\''/ { if (!c) { print FILENAME ":" NR ": filter without a comment: " $0; bad = 1 }; n++; c = 0 }
		END { print n " filter(s)"; exit bad }' "$1"
}

versions_agree() {
	local ver=$1 bad=0 v f tmp
	for f in "$2" "$3"; do
		v=$(dpkg-deb -f "$f" Version); echo "$f: $v"
		[ "$v" = "$ver" ] || bad=1
	done
	for f in "$4" "$5"; do
		v=$(rpm -qp --qf '%{VERSION}' "$f"); echo "$f: $v"
		[ "$v" = "$ver" ] || bad=1
	done
	tmp=$(mktemp -d)
	dpkg-deb -x "$3" "$tmp"
	v=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$tmp/usr/src/mmtune-$ver/dkms.conf"); echo "deb dkms.conf: $v"
	[ "$v" = "$ver" ] || bad=1
	rm -rf "$tmp"
	v=$(rpm2cpio "$5" | cpio -i --quiet --to-stdout "./usr/src/mmtune-$ver/dkms.conf" | sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p')
	echo "rpm dkms.conf: $v"
	[ "$v" = "$ver" ] || bad=1
	return $bad
}

# stdin-like file of package paths; compares /usr/src/mmtune-<ver> with the
# module's tracked sources.
dkms_files_exact() {
	local ver=$1 list want got
	list=$(pkg_files "$2")
	want=$( { echo Kbuild; echo Makefile; echo dkms.conf
		git ls-files module 2>/dev/null | sed -n 's|^module/\([^/]*\.[ch]\)$|\1|p' | grep -v '\.mod\.c$'
	} | sort)
	got=$(grep "^/usr/src/mmtune-$ver/" "$list" | sed "s|^/usr/src/mmtune-$ver/||" | sort)
	echo "files: $(echo $got)"
	if grep '^/usr/src' "$list" | grep -vE "^/usr/src(/mmtune-$ver(/.*)?)?$"; then
		echo "files outside /usr/src/mmtune-$ver (above)"; return 1
	fi
	if grep -E '/\.|\.(o|ko|cmd|mod|mod\.c|order|symvers)$' "$list"; then
		echo "hidden files or build litter (above)"; return 1
	fi
	[ "$want" = "$got" ] || { diff <(echo "$want") <(echo "$got"); return 1; }
}

dkms_conf_ok() {
	local ver=$1 tmp conf rc=0
	tmp=$(mktemp -d)
	dpkg-deb -x "$2" "$tmp/deb"
	mkdir -p "$tmp/rpm"
	(cd "$tmp/rpm" && rpm2cpio "$OLDPWD/$3" | cpio -idm --quiet)
	for conf in "$tmp/deb/usr/src/mmtune-$ver/dkms.conf" "$tmp/rpm/usr/src/mmtune-$ver/dkms.conf"; do
		grep -qx 'PACKAGE_NAME="mmtune"' "$conf" &&
		grep -qx "PACKAGE_VERSION=\"$ver\"" "$conf" &&
		grep -qx 'BUILD_EXCLUSIVE_CONFIG="CONFIG_MMTUNE_HOOKS"' "$conf" &&
		! grep -q '^[[:space:]]*AUTOINSTALL' "$conf" &&
		grep -qx 'BUILT_MODULE_NAME\[0\]="mmtune"' "$conf" || { echo "bad: $conf"; cat "$conf"; rc=1; }
	done
	rm -rf "$tmp"
	return $rc
}

tools_files_ok() {
	local list unitdir=$2 bad=0 p
	list=$(pkg_files "$1")
	for p in /usr/sbin/mmtunectl /usr/share/man/man8/mmtunectl.8.gz "$unitdir/mmtune.service" \
		"$unitdir/mmtune.service.d/10-modprobe.conf" "$unitdir/mmtune-metrics.timer"; do
		grep -qx "$p" "$list" || { echo "missing: $p"; bad=1; }
	done
	if grep 'modules-load.d' "$list"; then echo "a modules-load.d entry (above): an error at every boot of a stock kernel"; bad=1; fi
	grep -q '^/usr/lib/mmtune/python/.*\.py$' "$list" || { echo "missing: Python package under /usr/lib/mmtune/python"; bad=1; }
	if grep -E '/\.[^/]*$|__pycache__|\.pyc$|\.o$|~$' "$list"; then echo "hidden files or litter (above)"; bad=1; fi
	if grep -E '^/usr/src' "$list"; then echo "module sources in the tools package (above)"; bad=1; fi
	echo "$(wc -l <"$list") paths, e.g.:"; grep -E 'mmtunectl|\.service$|\.timer$|\.conf$' "$list"
	return $bad
}

# man_pages_ok DEB RPM: each packaging/man/NAME.N (tracked) is
# /usr/share/man/manN/NAME.N.gz in both packages, and no other man page.
man_pages_ok() {
	local want p list rc=0
	want=$(git ls-files 'packaging/man/*.[1-9]' | sed 's|.*/\(.*\)\.\([1-9]\)$|/usr/share/man/man\2/\1.\2.gz|' | sort)
	[ -n "$want" ] || { echo "no man page in packaging/man"; return 1; }
	for p in "$@"; do
		list=$(pkg_files "$p")
		if [ "$(grep '^/usr/share/man/man[1-9]/.' "$list" | sort)" = "$want" ]; then echo "$p: $(echo $want)"
		else echo "$p: want $(echo $want), has $(grep '^/usr/share/man/' "$list" | tr '\n' ' ')"; rc=1; fi
		rm -f "$list"
	done
	return $rc
}

# Every file:/ URL in the units' Documentation= lines is shipped.
unit_docs_ok() {
	local tmp rc=0 u doc
	tmp=$(mktemp -d)
	case "$1" in
	*.deb) dpkg-deb -x "$1" "$tmp" ;;
	*.rpm) (cd "$tmp" && rpm2cpio "$OLDPWD/$1" | cpio -idm --quiet) ;;
	esac
	for u in "$tmp"/lib/systemd/system/*.service "$tmp"/usr/lib/systemd/system/*.service; do
		[ -f "$u" ] || continue
		for doc in $(sed -n 's/^Documentation=//p' "$u"); do
			case "$doc" in file:*) doc=${doc#file:} ;; *) continue ;; esac
			if [ -f "$tmp$doc" ]; then echo "$(basename "$u"): $doc shipped"
			else echo "$(basename "$u"): $doc missing"; rc=1; fi
		done
	done
	rm -rf "$tmp"
	return $rc
}

deb_conffiles_ok() {
	local etc conf
	etc=$(deb_files "$1" | grep '^/etc/' | while read -r p; do
		dpkg-deb -c "$1" | awk -v p=".$p" '$6 == p && $1 !~ /^d/' | grep -q . && echo "$p"; done | sort)
	conf=$(dpkg-deb -I "$1" conffiles 2>/dev/null | sed 's/^remove-on-upgrade //' | sort)
	echo "files in /etc: $(echo $etc)"
	echo "conffiles:     $(echo $conf)"
	[ "$etc" = "$conf" ]
}

rpm_config_ok() {
	local etc conf noreplace
	etc=$(rpm -qp --qf '[%{FILEMODES:perms} %{FILENAMES}\n]' "$1" | awk '$1 !~ /^d/ && $2 ~ /^\/etc\// { print $2 }' | sort)
	conf=$(rpm -qpc "$1" | sort)
	noreplace=$(rpm -qp --qf '[%{FILEFLAGS:fflags} %{FILENAMES}\n]' "$1" | awk '$1 ~ /c/ && $1 !~ /n/ { print "not noreplace: " $2 }')
	echo "files in /etc: $(echo $etc)"
	echo "%config:       $(echo $conf)"
	[ -z "$noreplace" ] || { echo "$noreplace"; return 1; }
	[ "$etc" = "$conf" ]
}

# extract PKG DIR
extract() {
	mkdir -p "$2"
	case "$1" in
	*.deb) dpkg-deb -x "$1" "$2" ;;
	*.rpm) (cd "$2" && rpm2cpio "$OLDPWD/$1" | cpio -idm --quiet) ;;
	esac
}

# module_load_ok PKG UNITDIR: mmtune.ko is loaded by modprobe@mmtune.service,
# pulled in and ordered by the drop-in; systemd itself loads the drop-in
# cleanly (systemd-analyze verify on the package's files, with the host's
# targets and modprobe@.service).
module_load_ok() {
	local t rc=0 u=$2 out d
	t=$(mktemp -d)
	extract "$1" "$t"
	d=$t$u/mmtune.service.d/10-modprobe.conf
	cat "$d"
	grep -qx 'Wants=modprobe@mmtune.service' "$d" && grep -qx 'After=modprobe@mmtune.service' "$d" ||
		{ echo "the drop-in does not pull in modprobe@mmtune.service"; rc=1; }
	[ -z "$(find "$t" -path '*modules-load.d*')" ] || { echo "modules-load.d entry shipped"; rc=1; }
	cp -n /lib/systemd/system/*.target /lib/systemd/system/*.slice /lib/systemd/system/modprobe@.service "$t$u/" 2>/dev/null
	install -D -m 0755 /dev/null "$t/usr/bin/systemctl"
	out=$(systemd-analyze verify --man=no --root="$t" "$u/mmtune.service" "$u/modprobe@mmtune.service" 2>&1) || rc=1
	echo "systemd-analyze verify: ${out:-clean}"
	grep -qE 'mmtune|modprobe' <<<"$out" && rc=1
	rm -rf "$t"
	return $rc
}

# modprobe_unit_silent: the ExecStart of this host's modprobe@.service for
# "mmtune", run against a module tree of a kernel without mmtune.ko
# (-d/-S added to point modprobe at it): no output, and the "-" prefix
# makes its failure no unit failure. Without -q modprobe would warn, as
# systemd-modules-load logs "Failed to find module" at error level.
modprobe_unit_silent() {
	local t cmd out k=6.1.0-99-amd64 rc=0
	cmd=$(sed -n 's/^ExecStart=//p' /lib/systemd/system/modprobe@.service)
	echo "modprobe@.service: ExecStart=$cmd"
	case "$cmd" in -*) ;; *) echo "no '-' prefix: a missing module fails the unit"; rc=1 ;; esac
	cmd=${cmd#-}; cmd=${cmd//%i/mmtune}; cmd=${cmd//%I/mmtune}
	t=$(mktemp -d)
	mkdir -p "$t/lib/modules/$k/kernel"
	depmod -b "$t" "$k" 2>/dev/null
	# shellcheck disable=SC2086 # the unit's command line, split as systemd does
	out=$($cmd -d "$t" -S "$k" 2>&1)
	echo "$cmd -d ROOT -S $k: exit $?, output: '${out}'"
	[ -z "$out" ] || rc=1
	# shellcheck disable=SC2086
	out=$(${cmd/ -abq/ -ab} -d "$t" -S "$k" 2>&1)
	echo "without -q it says: $out"
	rm -rf "$t"
	return $rc
}

deb_dkms_scripts_ok() {
	local ver=$2 tmp rc=0
	tmp=$(mktemp -d)
	dpkg-deb -e "$1" "$tmp"
	sed 's/^/postinst: /' "$tmp/postinst"
	sed 's/^/prerm: /' "$tmp/prerm"
	grep -qx "	\$helper add $ver" "$tmp/postinst" || { echo "postinst does not add $ver to DKMS"; rc=1; }
	grep -qx '	$helper all' "$tmp/postinst" || { echo "postinst does not build for the installed kernels"; rc=1; }
	grep -q 'common.postinst' "$tmp/postinst" && { echo "postinst uses dkms's common.postinst (fails the package on a failed build)"; rc=1; }
	grep -qx "	/usr/lib/mmtune-dkms/mmtune-dkms-kernel remove $ver" "$tmp/prerm" || { echo "prerm does not remove $ver"; rc=1; }
	grep -qx 'interest-noawait /usr/src' "$tmp/triggers" || { echo "no /usr/src trigger"; rc=1; }
	grep -qx '	$helper all --changed' "$tmp/postinst" || { echo "postinst does not handle the trigger (all --changed)"; rc=1; }
	grep -q 'rm -rf /var/lib/mmtune-dkms' "$tmp/postrm" || { echo "postrm leaves the per-kernel states"; rc=1; }
	grep -qx 'dkms' <<<"$(dpkg-deb -f "$1" Depends | tr ',' '\n' | sed 's/^ *//; s/ .*//')" || { echo "no Depends on dkms"; rc=1; }
	for h in /etc/kernel/postinst.d/50-mmtune-dkms /etc/kernel/header_postinst.d/50-mmtune-dkms; do
		grep -qx "$h" "$tmp/conffiles" || { echo "$h is not a conffile"; rc=1; }
	done
	deb_files "$1" | grep -qx /usr/lib/mmtune-dkms/mmtune-dkms-kernel || { echo "no mmtune-dkms-kernel"; rc=1; }
	local x
	x=$(mktemp -d)
	dpkg-deb -x "$1" "$x"
	grep -qx "ver=\${MMTUNE_DKMS_VERSION:-$ver}" "$x/usr/lib/mmtune-dkms/mmtune-dkms-kernel" || { echo "mmtune-dkms-kernel: version not filled in"; rc=1; }
	rm -rf "$tmp" "$x"
	return $rc
}

deb_tools_scripts_ok() {
	local tmp rc=0
	tmp=$(mktemp -d)
	dpkg-deb -e "$1" "$tmp"
	sed 's/^/postinst: /' "$tmp/postinst"
	sed 's/^/prerm: /' "$tmp/prerm"
	# mmtune.service: enabled only where it was enabled before (an upgrade),
	# never on a new installation: debhelper's "was-enabled" guard, inside
	# "debian-installed" (--no-enable).
	awk "/deb-systemd-helper debian-installed 'mmtune.service'/ { g = 1 } g && /^\tfi\$/ { g = 0 }
		/deb-systemd-helper enable 'mmtune.service'/ && !g { bad = 1 } END { exit bad }" "$tmp/postinst" &&
		grep -q "deb-systemd-helper debian-installed 'mmtune.service'" "$tmp/postinst" ||
		{ echo "postinst enables mmtune.service on a new installation"; rc=1; }
	grep -q "deb-systemd-helper enable 'mmtune-metrics.timer'" "$tmp/postinst" || { echo "postinst does not enable the metrics timer"; rc=1; }
	# Started on configure: the timer, and mmtune.service where enabled
	# (deb-systemd-invoke starts no disabled unit). The static services
	# are not: mmtune-reapply.service would reload a second time.
	[ "$(grep -o "deb-systemd-invoke start .*" "$tmp/postinst" | sed 's/ >.*//' | sort | tr '\n' ' ')" = "deb-systemd-invoke start 'mmtune-metrics.timer' deb-systemd-invoke start 'mmtune.service' " ] ||
		{ echo "postinst does not start exactly mmtune.service (if enabled) and mmtune-metrics.timer"; rc=1; }
	grep -qE "mmtune-reapply.service|mmtune-metrics.service" "$tmp/postinst" "$tmp/prerm" "$tmp/postrm" &&
		{ echo "a maintainer script starts or stops a static service"; rc=1; }
	grep -q 'deb-systemd-invoke reload mmtune.service' "$tmp/postinst" || { echo "postinst does not reload on upgrade"; rc=1; }
	grep -qE 'restart' "$tmp/postinst" && { echo "postinst restarts"; rc=1; }
	[ -e "$tmp/preinst" ] && grep -q 'stop' "$tmp/preinst" && { echo "preinst stops the unit"; rc=1; }
	grep -q '"$1" = remove' "$tmp/prerm" && grep -q "deb-systemd-invoke stop 'mmtune.service'" "$tmp/prerm" &&
		grep -q "deb-systemd-invoke stop 'mmtune-metrics.timer'" "$tmp/prerm" ||
		{ echo "prerm does not stop mmtune.service (roll back) and the timer on removal only"; rc=1; }
	grep -q "deb-systemd-helper purge 'mmtune.service'" "$tmp/postrm" && grep -q "deb-systemd-helper purge 'mmtune-metrics.timer'" "$tmp/postrm" ||
		{ echo "postrm does not purge the units' state"; rc=1; }
	[ "$(dpkg-deb -f "$1" Suggests)" = 'mmtune-modules | mmtune-dkms' ] || { echo "Suggests is not 'mmtune-modules | mmtune-dkms'"; rc=1; }
	[ -z "$(dpkg-deb -f "$1" Recommends)" ] || { echo "Recommends: $(dpkg-deb -f "$1" Recommends)"; rc=1; }
	rm -rf "$tmp"
	return $rc
}

rpm_dkms_scripts_ok() {
	local ver=$2 s t rc=0
	s=$(rpm -qp --scripts "$1"); t=$(rpm -qp --filetriggers "$1")
	printf '%s\n%s\n' "$s" "$t"
	grep -qx "/usr/lib/mmtune-dkms/mmtune-dkms-kernel add $ver --rpm_safe_upgrade" <<<"$s" || { echo "%post does not add the module"; rc=1; }
	grep -qx '/usr/lib/mmtune-dkms/mmtune-dkms-kernel all' <<<"$s" || { echo "%post does not build/install"; rc=1; }
	grep -qx "/usr/lib/mmtune-dkms/mmtune-dkms-kernel remove $ver --rpm_safe_upgrade" <<<"$s" || { echo "%preun does not remove"; rc=1; }
	grep -q 'filetriggerin scriptlet.* -- /usr/src/kernels$' <<<"$t" && grep -qx '/usr/lib/mmtune-dkms/mmtune-dkms-kernel all --changed' <<<"$t" ||
		{ echo "no %filetriggerin on /usr/src/kernels (every kernel's -devel)"; rc=1; }
	grep -qx '/usr/lib/kernel/install.d/50-mmtune-dkms.install' <<<"$(rpm -qpl "$1")" || { echo "no kernel-install plugin"; rc=1; }
	grep -q 'rm -rf /var/lib/mmtune-dkms' <<<"$s" || { echo "%postun leaves the per-kernel states"; rc=1; }
	grep -qx 'dkms >= 3.0.11' <<<"$(rpm -qp --requires "$1")" || { echo "no Requires: dkms >= 3.0.11"; rc=1; }
	return $rc
}

rpm_tools_scripts_ok() {
	local s rc=0
	s=$(rpm -qp --scripts "$1")
	printf '%s\n' "$s"
	grep -qE '(systemctl --no-reload preset|install-system-units) mmtune.service mmtune-metrics.timer( |$)' <<<"$s" || { echo "%post: no preset of mmtune.service and the timer"; rc=1; }
	grep -qE '(systemctl --no-reload disable --now|remove-system-units) mmtune.service mmtune-metrics.timer( |$)' <<<"$s" || { echo "%preun: no disable --now of mmtune.service and the timer"; rc=1; }
	grep -qE 'mmtune-reapply.service|mmtune-metrics.service' <<<"$s" && { echo "a scriptlet starts or stops a static service"; rc=1; }
	grep -q 'systemctl reload mmtune.service' <<<"$s" || { echo "%post: no reload on upgrade"; rc=1; }
	grep -qE 'try-restart|mark-restart-system-units' <<<"$s" && { echo "a scriptlet restarts mmtune.service"; rc=1; }
	grep -qx /usr/lib/systemd/system-preset/50-mmtune.preset <<<"$(rpm -qpl "$1")" || { echo "no preset file"; rc=1; }
	[ "$(rpm2cpio "$1" | cpio -i --quiet --to-stdout ./usr/lib/systemd/system-preset/50-mmtune.preset | grep -v '^#')" = \
		"$(printf 'disable mmtune.service\nenable mmtune-metrics.timer')" ] || { echo "the preset does not disable mmtune.service and enable the timer"; rc=1; }
	[ "$(rpm -qp --suggests "$1")" = '(mmtune-modules or mmtune-dkms)' ] || { echo "Suggests: $(rpm -qp --suggests "$1")"; rc=1; }
	[ -z "$(rpm -qp --recommends "$1")" ] || { echo "Recommends: $(rpm -qp --recommends "$1")"; rc=1; }
	grep -q '^rpmlib(RichDependencies)' <<<"$(rpm -qp --requires "$1")" || { echo "no rpmlib(RichDependencies)"; rc=1; }
	return $rc
}

# rpm_rich_gate_ok VER: the spec's suggests of mmtune, by rpmspec, with
# the gate forced off (an rpm without rich dependencies), forced on, and
# left to this host's rpm (which has them: 4.18).
rpm_rich_gate_ok() {
	local q rc=0 off on auto
	q() { rpmspec -q --define "mmtune_version $1" "${@:2}" --qf '%{NAME}: [%{SUGGESTNAME} ]\n' packaging/rpm/mmtune.spec 2>&1 | grep '^mmtune:'; }
	off=$(q "$1" --define 'mmtune_rich_deps 0'); on=$(q "$1" --define 'mmtune_rich_deps 1'); auto=$(q "$1")
	printf 'gate off: %s\ngate on:  %s\nthis rpm: %s (%s)\n' "$off" "$on" "$auto" "$(rpm --version)"
	[ "$off" = 'mmtune: ' ] || rc=1
	[ "$on" = 'mmtune: (mmtune-modules or mmtune-dkms) ' ] || rc=1
	[ "$auto" = "$on" ] || rc=1
	return $rc
}
