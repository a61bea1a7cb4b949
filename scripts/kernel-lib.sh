# Shared by scripts/kernel-build.sh (the test kernels),
# scripts/check-build-matrix.sh and packaging/kernel/build-kernel-pkgs.sh
# (the kernel packages): a kernel line's row, Debian's kernel source, the
# machine-wide build lock, the hash of a build's inputs and a patched,
# configured tree. Sourced, not run.
#
# The caller sets repo, cache and log_name, the prefix of the messages of
# log() and die() below (a caller may define its own instead).

declare -F log >/dev/null || log() { echo "$log_name: $*" >&2; }
declare -F die >/dev/null || die() { log "error: $*"; exit 1; }

# The kernel lines: every kernel-patches/LINE with a line.conf, oldest first.
kernel_lines() {
	local f
	for f in "$repo"/kernel-patches/*/line.conf; do
		[ -f "$f" ] && basename "$(dirname "$f")"
	done | sort -V
}

# kernel_line LINE: read the line's row, kernel-patches/LINE/line.conf
# (src_pkg, fragments, vm_fragments, bench_peer, cloud_releases, vm_lane,
# known_reports, debug_pressure_tests; see the 6.1
# one), and set line_conf, series_dir, line_fragments and
# line_vm_fragments (the fragments' paths).
kernel_line() {
	local f
	line_conf=$repo/kernel-patches/$1/line.conf
	series_dir=$repo/kernel-patches/$1
	[ -f "$line_conf" ] || die "no kernel line '$1' (kernel-patches/$1/line.conf; lines: $(kernel_lines | paste -sd' '))"
	[ -f "$series_dir/series" ] || die "no series in kernel-patches/$1"
	src_pkg='' fragments='' vm_fragments='' bench_peer='' cloud_releases='' vm_lane='' known_reports='' debug_pressure_tests=''
	. "$line_conf"
	[ -n "$src_pkg" ] && [ -n "$fragments" ] || die "$line_conf: src_pkg and fragments must be set"
	line_fragments=() line_vm_fragments=()
	for f in $fragments; do line_fragments+=("$(fragment_path "$f")") || exit 1; done
	for f in $vm_fragments; do line_vm_fragments+=("$(fragment_path "$f")") || exit 1; done
}

# fragment_path NAME: kernel-patches/configs/NAME, which must exist.
fragment_path() {
	[ -f "$repo/kernel-patches/configs/$1" ] || die "$line_conf: no fragment kernel-patches/configs/$1"
	echo "$repo/kernel-patches/configs/$1"
}

# Sets pkgver and pristine; unpacks the source package once into
# $cache/pristine, a tree that is never modified.
kernel_source() {
	local tarball=/usr/src/$src_pkg.tar.xz

	pkgver=$(dpkg-query -W -f='${Version}' "$src_pkg" 2>/dev/null) ||
		die "$src_pkg is not installed (run scripts/setup-host.sh)"
	[ -f "$tarball" ] || die "$tarball missing; reinstall $src_pkg"
	mkdir -p "$cache/pristine" "$cache/ccache"
	pristine=$cache/pristine/${src_pkg}_$pkgver
	[ -f "$pristine/.complete" ] && return
	log "unpacking $tarball ($src_pkg $pkgver)"
	rm -rf "$pristine" "$pristine.tmp"
	mkdir -p "$pristine.tmp"
	tar -xf "$tarball" -C "$pristine.tmp" --strip-components=1
	touch "$pristine.tmp/.complete"
	mv "$pristine.tmp" "$pristine"
}

# One kernel build at a time on the machine (2 cores): held until exit.
kernel_lock() {
	exec 9>"$cache/.build.lock"
	if ! flock -n 9; then
		log "waiting for another kernel build (lock $cache/.build.lock)"
		flock 9
	fi
}

# The applied series as "patch: NAME SHA256" lines, read once, so that the
# build info names what was built even if the series changes meanwhile.
kernel_series_info() {
	local p

	while read -r p; do
		case "$p" in ''|'#'*) continue ;; esac
		echo "patch: $p $(sha256sum <"$series_dir/$p" | cut -d' ' -f1)"
	done <"$series_dir/series"
}

# kernel_inputs_key WORD FILE...: 16 hex digits over the source version,
# the compiler, WORD, the contents (never the paths: a fresh clone elsewhere
# must hit the cache) of FILE..., of this library and of the patch series.
# Of the line's row only what builds the kernel counts (src_pkg here, the
# fragments among FILE...): its test options change no kernel.
kernel_inputs_key() {
	local word=$1 f
	shift
	{
		echo "$src_pkg $pkgver $word"
		gcc --version | head -n 1
		for f in "$@" "${BASH_SOURCE[0]}" "$series_dir/series"; do
			sha256sum <"$f"
		done
		kernel_series_info
	} | sha256sum | cut -c1-16
}

# kernel_prepare_tree TREE LOGDIR FRAGMENT...: copy the pristine tree to
# TREE, apply the series with quilt (--fuzz=0: a patch that does not apply
# stops the build, naming the patch and the hunk), configure
# x86_64_defconfig + kvm_guest.config + FRAGMENT... with merge_config.sh,
# and fail if a config line of the fragments did not make it into .config
# (merge_config only warns). Logs go to LOGDIR/{patch,config}.log.
kernel_prepare_tree() {
	local tree=$1 logdir=$2 lost
	shift 2

	rm -rf "$tree"
	cp -a "$pristine" "$tree"
	rm -f "$tree/.complete"
	if ! (cd "$tree" && QUILT_PATCHES="$series_dir" QUILT_PC=.pc \
		quilt --quiltrc=- push -a --fuzz=0) >"$logdir/patch.log" 2>&1; then
		cat "$logdir/patch.log" >&2
		die "a patch in $series_dir does not apply to $src_pkg $pkgver (see above)"
	fi
	grep '^Applying patch' "$logdir/patch.log" | while read -r line; do log "$line"; done
	# quilt's bookkeeping must not end up in rpm-pkg's source tarball.
	rm -rf "$tree/.pc"
	(
		cd "$tree"
		make -s x86_64_defconfig
		scripts/kconfig/merge_config.sh -m .config kernel/configs/kvm_guest.config "$@"
		make -s olddefconfig
	) >"$logdir/config.log" 2>&1 || { tail -n 20 "$logdir/config.log" >&2; die "configuring failed"; }
	# The last fragment that sets a symbol wins; check each symbol once.
	lost=$(cat "$@" | grep -E '^(CONFIG_|# CONFIG_)' | awk '
		{ sym = ($1 == "#") ? $2 : substr($0, 1, index($0, "=") - 1); last[sym] = $0; order[NR] = sym }
		END { for (i = 1; i <= NR; i++) if (order[i] != "" && !(order[i] in done)) { done[order[i]] = 1; print last[order[i]] } }' |
		while read -r line; do
			case "$line" in
			'# CONFIG_'*)
				sym=${line#\# }; sym=${sym%% *}
				grep -qE "^$sym=[ym]" "$tree/.config" && echo "$line" ;;
			*)
				grep -qxF "$line" "$tree/.config" || echo "$line" ;;
			esac
		done) || true
	[ -z "$lost" ] || die "config lines not in the final .config:"$'\n'"$lost"
}
