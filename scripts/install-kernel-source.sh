#!/bin/bash
# Install Debian's linux-source-LINE from another suite than the host's
# (Debian 12 has 6.1 and 6.12 itself): the upstream kernel the 6.12
# instruction counts compare with (7.3, trixie-backports; see
# tests/bench/README.md, "Instruction counts").
#
#   scripts/install-kernel-source.sh LINE [SUITE]    (SUITE: trixie-backports)
#
# Does nothing when linux-source-LINE is installed. Otherwise a scratch apt
# configuration under $MMTUNE_CACHE/apt-LINE (the host's sources stay as
# they are) lists SUITE from the mirror the host's own Debian sources name,
# downloads linux-source-LINE and installs it with dpkg (it depends only on
# binutils and xz-utils): /usr/src/linux-source-LINE.tar.xz, which
# scripts/kernel-lib.sh unpacks as it does 6.1's and 6.12's.
set -euo pipefail

line=${1:-}
suite=${2:-trixie-backports}
[[ $line =~ ^[0-9]+\.[0-9]+$ ]] || { echo "usage: $0 LINE [SUITE]" >&2; exit 2; }
pkg=linux-source-$line
log() { echo "install-kernel-source: $*" >&2; }

if dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q '^install ok installed'; then
	exit 0
fi
[ "$(id -u)" -eq 0 ] || { log "$pkg is missing; run as root"; exit 1; }
# Deb822 sources (Debian 13, and 12 where set up so) or the one-line
# sources.list a Debian 12 install writes; either may be missing.
mirror=${MMTUNE_DEBIAN_MIRROR:-$(sed -n 's/^URIs: *\([^ ]*\/debian\)\/\{0,1\}\( .*\)\{0,1\}$/\1/p' /dev/null /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1 || true)}
[ -n "$mirror" ] || mirror=$(sed -n 's/^deb \(\[[^]]*\] \)\{0,1\}\([^ ]*\/debian\)\/\{0,1\} .*/\2/p' /dev/null /etc/apt/sources.list 2>/dev/null | head -n 1 || true)
[ -n "$mirror" ] || { log "no Debian mirror in the host's apt sources (set MMTUNE_DEBIAN_MIRROR)"; exit 1; }

dir=${MMTUNE_CACHE:-$HOME/.cache/mmtune}/apt-$line
mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main" >"$dir/sources.list"
cat >"$dir/apt.conf" <<EOF
Dir::Etc::SourceList "$dir/sources.list";
Dir::Etc::SourceParts "/dev/null";
Dir::State::Lists "$dir/lists";
Dir::Cache "$dir/cache";
APT::Sandbox::User "root";
EOF
export APT_CONFIG=$dir/apt.conf
log "$pkg from $suite"
apt-get update -qq
rm -f "$dir"/cache/archives/*.deb
(cd "$dir/cache/archives" && apt-get download -q "$pkg" >/dev/null)
dpkg -i "$dir"/cache/archives/"$pkg"_*.deb >/dev/null
rm -f "$dir"/cache/archives/*.deb
log "installed $pkg $(dpkg-query -W -f='${Version}' "$pkg")"
