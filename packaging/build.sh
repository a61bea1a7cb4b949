#!/bin/bash
# Build the mmtune and mmtune-dkms packages (.deb and/or .rpm), and their
# source packages, from this tree.
#
#   packaging/build.sh [deb] [rpm]        (default: both)
#   packaging/build.sh --sources          the top-level paths it packages
#   packaging/build.sh --rpmbuild ARGS... rpmbuild with this host's options
#                                         (below), e.g. --rebuild X.src.rpm
#
# Stages the sources the packages need under build/packaging/stage/ (only
# files git tracks, as they are in the work tree: an uncommitted change to
# a tracked file ships and is named in the log, an untracked file never
# ships, however it is named; no build litter, no hidden files), adds
# debian/ there (dpkg-buildpackage wants it at the top of the source tree,
# the repo keeps it in packaging/debian), and builds source and binaries:
#   build/packaging/out/deb/mmtune_<ver>_all.deb, mmtune-dkms_<ver>_all.deb
#   build/packaging/out/rpm/mmtune-<ver>-1.noarch.rpm, mmtune-dkms-...
#   build/packaging/out/source/mmtune_<ver>.dsc, mmtune_<ver>.tar.xz (3.0
#     native), mmtune-<ver>-1.src.rpm (the spec with the version written in)
# The source packages have a directory of their own: out/deb and out/rpm
# hold what a binary repository publishes. Every artifact is scanned for
# private keys (packaging/repo/check-no-private-keys.py; file lists in
# build/packaging/contents/): the build fails on a find.
# The version comes from module/version.h; debian/changelog is maintained
# by hand, and when its last entry is for another version (a development
# build, a bumped test copy) an entry for this one is put on top.
# The kernel packages are built by packaging/kernel/build-kernel-pkgs.sh.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
# What the source packages are made of; tests copy the same list.
sources=(README.md module packaging systemd sysfs-docs)
if [ "${1:-}" = --sources ]; then
	echo "${sources[@]}"
	exit 0
fi

# rpmbuild options for this host.
rpmopts=(--define "packager mmtune developers <mmtune-dev@example.com>")
# Debian's rpm has no systemd-rpm-macros: load our stand-in, which
# expands like the real ones (see packaging/rpm/macros.systemd-fallback).
# On a dnf system the spec's BuildRequires pull the real macros instead.
if [ "$(rpm --eval '%{?systemd_post:yes}' 2>/dev/null)" != yes ]; then
	rpmopts+=(--load "$repo/packaging/rpm/macros.systemd-fallback" --nodeps)
fi
# Debian's /bin/sh is dash, and rpm's brp-compress uses bash's "read -d":
# run it with bash, as it runs on Fedora, so man pages get compressed.
if [ "$(readlink -f /bin/sh)" = /usr/bin/dash ]; then
	rpmopts+=(--define "__brp_compress bash $(rpm --eval '%__brp_compress')")
fi
if [ "${1:-}" = --rpmbuild ]; then
	shift
	exec rpmbuild "${rpmopts[@]}" "$@"
fi
out=$repo/build/packaging/out
srcout=$out/source
stage_root=$repo/build/packaging/stage
want=()
for a in "$@"; do
	case "$a" in
	deb|rpm) want+=("$a") ;;
	*) echo "usage: $0 [deb] [rpm]" >&2; exit 2 ;;
	esac
done
[ ${#want[@]} -gt 0 ] || want=(deb rpm)

log() { echo "packaging: $*" >&2; }
die() { log "error: $*"; exit 1; }

ver=$("$repo/packaging/version.sh")
# The tools come from issue 7's install target; say so instead of failing
# somewhere inside debhelper or rpmbuild.
grep -qE '^install:' "$repo/systemd/Makefile" 2>/dev/null ||
	die "systemd/Makefile has no install target: the mmtune tools package needs it (issue 7)"

# Reproducible dates: the last commit, else now.
SOURCE_DATE_EPOCH=$(git -C "$repo" log -1 --format=%ct 2>/dev/null || date +%s)
export SOURCE_DATE_EPOCH

# --- stage -----------------------------------------------------------------
src=$stage_root/mmtune-$ver
rm -rf "$stage_root"
mkdir -p "$src" "$out"
# Tracked files only: an untracked file (a key backup, a scratch copy)
# must not ship. Outside git (an unpacked source package): every file.
list_files() {
	if git -C "$repo" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git -C "$repo" ls-files -- "$@"
		local n
		n=$(git -C "$repo" ls-files -o --exclude-standard -- "$@" | wc -l)
		[ "$n" -eq 0 ] || log "left out: $n untracked files under ${*} (git ls-files -o)"
		n=$(git -C "$repo" diff --name-only HEAD -- "$@" | tr '\n' ' ')
		[ -z "$n" ] || log "building with uncommitted changes to: $n"
	else
		(cd "$repo" && find "$@" -type f)
	fi
}
list_files "${sources[@]}" |
	grep -vE '(^|/)\.|(^|/)__pycache__/|\.(o|ko|mod|mod\.c|pyc|cmd)$|(^|/)(modules\.order|Module\.symvers)$' |
	while read -r f; do
		[ -f "$repo/$f" ] || continue	# deleted but still in the index
		install -D -m "$(stat -c %a "$repo/$f")" "$repo/$f" "$src/$f"
	done
cp -a "$repo/packaging/debian" "$src/debian"
if [ "$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)" != "$ver" ]; then
	commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
	{ cat <<EOF
mmtune ($ver) unstable; urgency=medium

  * mmtune $ver, built from commit $commit (version from module/version.h).

 -- mmtune developers <mmtune-dev@example.com>  $(date -u -R -d "@$SOURCE_DATE_EPOCH")

EOF
	cat "$repo/packaging/debian/changelog"; } >"$src/debian/changelog"
fi
# The spec of the source RPM: the version written in, so that
# "rpmbuild --rebuild" needs no --define; like debian/changelog, an entry
# on top of %changelog when its last one is for another version.
spec=$repo/packaging/rpm/mmtune.spec
{ sed -n '1,/^%{!?mmtune_version:/{/^%{!?mmtune_version:/!p}' "$spec"
	echo "# Written by packaging/build.sh from module/version.h."
	echo "%global mmtune_version $ver"
	sed -n '/^%{!?mmtune_version:/,/^%changelog/p' "$spec"
	if [ "$(sed -n '/^%changelog/{n;s/.* - //p;q}' "$spec")" != "$ver-1" ]; then
		echo "* $(date -u -d "@$SOURCE_DATE_EPOCH" '+%a %b %d %Y') mmtune developers <mmtune-dev@example.com> - $ver-1"
		echo "- mmtune $ver, built from commit ${commit:-$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)}."
		echo
	fi
	sed -n '/^%changelog/,${/^%changelog/!p}' "$spec"
} >"$stage_root/mmtune.spec"
find "$src" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

# --- deb -------------------------------------------------------------------
if [[ " ${want[*]} " == *" deb "* ]]; then
	log "dpkg-source -b, dpkg-buildpackage -b: mmtune $ver source and binaries (log: build/packaging/deb.log)"
	rm -rf "$out/deb" "$srcout"/*.dsc "$srcout"/*.tar.*
	mkdir -p "$out/deb" "$srcout"
	# The source package first, from the pristine staged tree.
	if ! { (cd "$stage_root" && dpkg-source -b "mmtune-$ver") &&
		(cd "$src" && dpkg-buildpackage -b -us -uc); } >"$repo/build/packaging/deb.log" 2>&1; then
		tail -n 30 "$repo/build/packaging/deb.log" >&2
		die "dpkg-source or dpkg-buildpackage failed; full log: build/packaging/deb.log"
	fi
	mv "$stage_root"/*.deb "$out/deb/"
	mv "$stage_root"/*.changes "$stage_root"/*.buildinfo "$out/deb/" 2>/dev/null || true
	mv "$stage_root"/*.dsc "$stage_root"/*.tar.* "$srcout/"
	(cd "$out" && ls -- deb/*.deb source/*.dsc source/*.tar.*) | sed 's/^/packaging: built /' >&2
fi

# --- rpm -------------------------------------------------------------------
if [[ " ${want[*]} " == *" rpm "* ]]; then
	log "rpmbuild -ba: mmtune $ver source RPM and binaries (log: build/packaging/rpm.log)"
	top=$repo/build/packaging/rpmbuild
	rm -rf "$top" "$out/rpm" "$srcout"/*.src.rpm
	mkdir -p "$top/SOURCES" "$out/rpm" "$srcout"
	tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
		--exclude=debian -C "$stage_root" -czf "$top/SOURCES/mmtune-$ver.tar.gz" "mmtune-$ver"
	if ! rpmbuild -ba "${rpmopts[@]}" --define "_topdir $top" "$stage_root/mmtune.spec" \
		>"$repo/build/packaging/rpm.log" 2>&1; then
		tail -n 30 "$repo/build/packaging/rpm.log" >&2
		die "rpmbuild failed; full log: build/packaging/rpm.log"
	fi
	mv "$top"/RPMS/noarch/*.rpm "$out/rpm/"
	mv "$top"/SRPMS/*.src.rpm "$srcout/"
	rm -rf "$top"
	(cd "$out" && ls -- rpm/*.rpm source/*.src.rpm) | sed 's/^/packaging: built /' >&2
fi

# --- no private key in any artifact -------------------------------------------
arts=()
for f in "$out"/deb/*.deb "$out"/rpm/*.rpm "$srcout"/*.dsc "$srcout"/*.src.rpm; do
	[ -f "$f" ] && arts+=("$f")
done
log "scanning ${#arts[@]} artifacts for private keys (file lists: build/packaging/contents/)"
"$repo/packaging/repo/check-no-private-keys.py" --list-dir "$repo/build/packaging/contents" "${arts[@]}" >&2 ||
	die "an artifact carries a private key or cannot be read (above): do not publish it"
