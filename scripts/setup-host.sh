#!/bin/bash
# Install what building and testing mmtune needs on a Debian 12 host.
# Idempotent and quiet when everything is already there.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)

# Each kernel line's source package, from its row, and its Debian config
# package (linux-source-6.12 and linux-config-6.12 are in bookworm-security).
lines_pkgs=()
for conf in "$repo"/kernel-patches/*/line.conf; do
	src=$(src_pkg=; . "$conf"; echo "$src_pkg")
	lines_pkgs+=("$src" "linux-config-${src#linux-source-}")
done

pkgs=(
	"${lines_pkgs[@]}"
	# kernel build
	build-essential make gcc libc6-dev bc bison flex libssl-dev libelf-dev
	dwarves cpio kmod xz-utils zstd lz4 ccache quilt rsync python3
	# VM runner and guest userspace
	qemu-system-x86 busybox-static util-linux procps e2fsprogs
	# unit tests
	libcmocka-dev pkg-config
	# style and ABI doc checks (checkpatch, get_abi.pl)
	perl python3-ply
	# mmtunectl tests: pytest, venvs for vermin and ansible-core, systemd-analyze
	python3-pytest python3-venv systemd
	# the kernel tree's mm selftests in the VM (selftests-mm): ksm_tests links libnuma
	libnuma-dev
	# packaging: .deb/.rpm builds, lint, Debian 12 roots (packaging/, tests/packaging/)
	debhelper dh-dkms dkms lintian rpm rpmlint mmdebstrap openssl shellcheck apt-utils gnupg
	# the GRUB pin test's partitioned disk image (sfdisk; GRUB itself runs in the guest)
	fdisk
	# make repo: the rpm repository metadata (apt-ftparchive is in apt-utils)
	createrepo-c
)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed' ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "setup-host: missing packages: ${missing[*]}; run as root or install them" >&2
	exit 1
fi
echo "setup-host: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
