#!/bin/bash
# A signed apt repository and a signed rpm repository from the built
# packages, ready to copy to any static web server or bucket ("make repo").
#
#   MMTUNE_REPO_KEY=<gpg key id> packaging/repo/make-repo.sh [--out DIR]
#       [--suite SUITE]... [--origin mmtune] [PACKAGE-or-DIR...]
#
# MMTUNE_REPO_KEY: the operator's signing key (fingerprint, id or user id)
# in gpg's keyring ($GNUPGHOME, default ~/.gnupg). The key signs; only its
# public half is written out. It must sign without a prompt: a key with a
# passphrase that gpg-agent does not hold is refused before anything is
# made. --suite: the apt suites (default bookworm and trixie, Debian 12 and
# 13): one tree, one pool, every suite listing every published .deb (the
# mmtune packages serve both releases). Inputs (default): build/packaging/out/deb,
# build/packaging/out/rpm (mmtune, mmtune-dkms) and
# build/packaging/kernel-pkgs-6.1/deb, .../rpm (6.1's last kernel package set:
# kernel, headers, mmtune-modules-<rel>, mmtune-kernel-<flavour>). A
# directory means its *.deb and *.rpm; more than one kernel set may be
# given (apt and dnf pick the newest build).
#
# Published are only packages that cannot shadow the distribution's: mmtune*,
# linux-image-*-mmtune*, linux-headers-*-mmtune* (.deb), kernel-mmtune*
# (.rpm). Left out, with one line each: linux-libc-dev, kernel-*-headers
# (userspace headers above the distribution's version), -dbg packages
# (hundreds of MB of debug info; --with-dbg keeps them), anything else.
# Nothing is published if any package carries a private key
# (check-no-private-keys.py, run on every package and then on every file
# of the finished tree); on any failure no DIR.tmp is left.
#
# Output (default build/repo/; made in DIR.tmp, then renamed):
#   apt/dists/<suite>/{Release,InRelease,Release.gpg}   each suite
#   apt/dists/<suite>/main/binary-amd64/Packages{,.gz,.xz}
#   apt/pool/main/*.deb                                  shared
#   mmtune.pref                  the apt pin for /etc/apt/preferences.d/
#   rpm/*.rpm (signed, rpmsign), rpm/repodata/ (createrepo_c),
#   rpm/repodata/repomd.xml.asc (detached signature)
#   mmtune-archive-keyring.gpg   the public key for /etc/apt/keyrings/
#   RPM-GPG-KEY-mmtune           the same, armored, for dnf's gpgkey=
#   contents/                    every published package's file list
# Release: Origin and Label (apt preferences pin on them), Suite and
# Codename <suite>, Components main, Architectures amd64, no entry for
# itself.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$repo/build/repo origin=mmtune with_dbg=0
inputs=() suites=()
while [ $# -gt 0 ]; do
	case "$1" in
	--out) out=${2:?}; shift ;;
	--suite) suites+=("${2:?}"); shift ;;
	--origin) origin=${2:?}; shift ;;
	--with-dbg) with_dbg=1 ;;
	-*) echo "usage: $0 [--out DIR] [--suite SUITE]... [--origin NAME] [--with-dbg] [PACKAGE-or-DIR...]" >&2; exit 2 ;;
	*) inputs+=("$1") ;;
	esac
	shift
done
[ ${#suites[@]} -gt 0 ] || suites=(bookworm trixie)
log() { echo "repo: $*" >&2; }
die() { log "error: $*"; exit 1; }

keyid=${MMTUNE_REPO_KEY:-}
[ -n "$keyid" ] || die "MMTUNE_REPO_KEY is not set: the gpg key (id or fingerprint) that signs the repository (see packaging/PACKAGING.md, 'Signing keys')"
gpg --batch --list-secret-keys "$keyid" >/dev/null 2>&1 || die "no secret key '$keyid' in gpg's keyring (GNUPGHOME=${GNUPGHOME:-~/.gnupg})"
for t in apt-ftparchive createrepo_c rpmsign gpg; do
	command -v $t >/dev/null || die "$t missing (scripts/setup-host.sh)"
done
# Never a prompt (make repo runs unattended): a passphrase gpg-agent does
# not hold is an error here, before anything is made.
sign() { gpg --batch --yes --pinentry-mode error --local-user "$keyid" "$@"; }
# (To stdout: on a failure gpg removes its -o file, /dev/null too, as root.)
if ! err=$(echo mmtune | sign --sign 2>&1 >/dev/null); then
	log "$err"
	die "cannot sign with '$keyid' without a prompt: the key has a passphrase gpg-agent does not hold. Unlock it for this run (echo | gpg --local-user '$keyid' --sign >/dev/null asks once, gpg-agent keeps it), or use a signing key without a passphrase kept offline (packaging/PACKAGING.md, 'Signing keys')"
fi

[ ${#inputs[@]} -gt 0 ] || inputs=("$repo/build/packaging/out/deb" "$repo/build/packaging/out/rpm"
	"$repo/build/packaging/kernel-pkgs-6.1/deb" "$repo/build/packaging/kernel-pkgs-6.1/rpm")
files=()
for i in "${inputs[@]}"; do
	if [ -d "$i" ]; then
		for f in "$i"/*.deb "$i"/*.rpm; do [ -f "$f" ] && files+=("$(realpath "$f")"); done
	elif [ -f "$i" ]; then files+=("$(realpath "$i")")
	else log "skipping $i: no such file or directory"
	fi
done
[ ${#files[@]} -gt 0 ] || die "no packages in ${inputs[*]} (make packages, make kernel-packages)"

# --- what may be published ------------------------------------------------
debs=() rpms=()
for f in "${files[@]}"; do
	case "$f" in
	*.deb) n=$(dpkg-deb -f "$f" Package)
	       case "$n" in
	       *-dbg) [ $with_dbg -eq 1 ] && ok=1 || ok=0; why="debug info (--with-dbg)" ;;
	       mmtune|mmtune-*|linux-image-*-mmtune*|linux-headers-*-mmtune*) ok=1 ;;
	       *) ok=0 why="not ours alone: would shadow or stand in for a distribution package" ;;
	       esac ;;
	*.rpm) n=$(rpm -qp --qf '%{NAME}' "$f" 2>/dev/null)
	       case "$n" in
	       kernel-mmtune*-headers) ok=0 why="userspace headers: would stand in for the distribution's kernel-headers" ;;
	       mmtune|mmtune-*|kernel-mmtune*) ok=1 ;;
	       *) ok=0 why="not ours alone: would shadow or stand in for a distribution package" ;;
	       esac ;;
	esac
	if [ "$ok" -eq 0 ]; then log "left out: $(basename "$f") ($n: $why)"; continue; fi
	case "$f" in *.deb) debs+=("$f") ;; *.rpm) rpms+=("$f") ;; esac
done
[ ${#debs[@]} -gt 0 ] || [ ${#rpms[@]} -gt 0 ] || die "nothing to publish"

tmp=$out.tmp
rm -rf "$tmp"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/contents"
log "checking ${#debs[@]} .deb and ${#rpms[@]} .rpm for private keys"
"$repo/packaging/repo/check-no-private-keys.py" --list-dir "$tmp/contents" "${debs[@]}" "${rpms[@]}" >&2 ||
	{ rm -rf "$tmp"; die "a package carries a private key (above): nothing published"; }

gpg --batch --export "$keyid" >"$tmp/mmtune-archive-keyring.gpg"
gpg --batch --armor --export "$keyid" >"$tmp/RPM-GPG-KEY-mmtune"
install -m 0644 "$repo/packaging/repo/mmtune.pref" "$tmp/mmtune.pref"

# --- apt: dists/<suite>/main/binary-amd64 for each suite, one pool/main ------
if [ ${#debs[@]} -gt 0 ]; then
	a=$tmp/apt
	mkdir -p "$a/pool/main"
	cp "${debs[@]}" "$a/pool/main/"
	{ cat <<EOF
Dir { ArchiveDir "$a"; CacheDir "$tmp"; };
Default { Packages::Compress ". gzip xz"; };
TreeDefault { Directory "pool/\$(SECTION)"; Packages "\$(DIST)/\$(SECTION)/binary-\$(ARCH)/Packages"; Contents " "; };
EOF
	for suite in "${suites[@]}"; do
		mkdir -p "$a/dists/$suite/main/binary-amd64"
		echo "Tree \"dists/$suite\" { Sections \"main\"; Architectures \"amd64\"; };"
	done; } >"$tmp/ftparchive.conf"
	apt-ftparchive generate "$tmp/ftparchive.conf" >&2
	rm -f "$tmp"/*.db
	for suite in "${suites[@]}"; do
		cat >"$tmp/release.conf" <<EOF
APT::FTPArchive::Release {
  Origin "$origin";
  Label "$origin";
  Suite "$suite";
  Codename "$suite";
  Components "main";
  Architectures "amd64";
  Description "mmtune packages: tools, DKMS sources, patched kernels and their signed modules";
};
EOF
		d=$a/dists/$suite
		# Release written beside, then moved in: it must not list itself.
		apt-ftparchive -c "$tmp/release.conf" release "$d" >"$tmp/Release"
		mv "$tmp/Release" "$d/Release"
		sign --clearsign -o "$d/InRelease" "$d/Release"
		sign -abs -o "$d/Release.gpg" "$d/Release"
		gpgv --keyring "$tmp/mmtune-archive-keyring.gpg" "$d/InRelease" 2>/dev/null ||
			die "dists/$suite/InRelease does not verify against the exported key"
		log "apt: $(grep -c '^Package: ' "$d/main/binary-amd64/Packages") package versions in dists/$suite (Origin $origin)"
	done
fi

# --- rpm: signed packages, createrepo_c, signed repomd.xml ----------------------
if [ ${#rpms[@]} -gt 0 ]; then
	r=$tmp/rpm
	mkdir -p "$r"
	cp "${rpms[@]}" "$r/"
	# rpmsign on Debian: gpg through the rpm macro, the key by name.
	rpmsign --addsign --define "_gpg_name $keyid" --define "__gpg /usr/bin/gpg" \
		--define "_gpg_sign_cmd_extra_args --pinentry-mode error" "$r"/*.rpm >"$tmp/rpmsign.log" 2>&1 ||
		{ cat "$tmp/rpmsign.log" >&2; die "rpmsign failed"; }
	createrepo_c --quiet "$r" >&2
	sign --armor --detach-sign -o "$r/repodata/repomd.xml.asc" "$r/repodata/repomd.xml"
	# Check the signatures as dnf would: the key imported into an empty
	# rpm database.
	db=$(mktemp -d)
	rpmkeys --dbpath "$db" --import "$tmp/RPM-GPG-KEY-mmtune"
	for f in "$r"/*.rpm; do
		rpmkeys --dbpath "$db" --checksig "$f" | grep -q 'signatures OK' ||
			{ rm -rf "$db"; die "$(basename "$f"): signature does not verify"; }
	done
	rm -rf "$db"
	log "rpm: $(find "$r" -maxdepth 1 -name "*.rpm" | wc -l) packages, signed, repodata/repomd.xml.asc"
fi
rm -f "$tmp"/*.conf "$tmp/rpmsign.log"

# The finished tree, signed packages and exported keys included.
find "$tmp" -path "$tmp/contents" -prune -o -type f -print0 | xargs -0 \
	"$repo/packaging/repo/check-no-private-keys.py" >"$tmp/scan.log" 2>&1 ||
	{ cat "$tmp/scan.log" >&2; die "a file of the repository carries a private key (above): nothing published"; }
log "private key scan of the finished tree: $(wc -l <"$tmp/scan.log") files, no private key"
rm -f "$tmp/scan.log"

rm -rf "$out"
mv "$tmp" "$out"
log "done: $out (copy it as it is; clients: packaging/README.md)"
