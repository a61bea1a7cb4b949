#!/bin/sh
# Adapt a distribution's kernel config (Debian: linux-config-6.1, Amazon
# Linux / Fedora: /boot/config-*) for a linux-source tree that has the
# mmtune patch series applied. Run in the top of that tree:
#
#   packaging/kernel/distro-config.sh .config
#
# Turns the hook core and zswap with every zpool on, empties the local version (the release comes from
# "make LOCALVERSION=-mmtune ..."), clears certificate paths that point
# into the distribution's own packaging tree, runs "make olddefconfig" and
# fails unless CONFIG_MMTUNE_HOOKS=y survived.
set -eu
cfg=${1:?usage: $0 CONFIG (in the patched kernel tree)}
[ -f Kconfig ] && [ -x scripts/config ] || { echo "distro-config: run this in the top of the kernel tree" >&2; exit 1; }
grep -q '^config MMTUNE_HOOKS' mm/Kconfig 2>/dev/null ||
	{ echo "distro-config: this tree has no mmtune patches (mm/Kconfig lacks MMTUNE_HOOKS)" >&2; exit 1; }
# What mmtune's features need at boot: zswap (off in Debian 12's cloud
# config), zsmalloc built in (a module there) and the other zpools, so any
# zpool a profile names is there before the first swap-out; likewise the
# compressors the profiles name (lzo is zswap's default, lz4 and zstd the
# profiles'): modules in Debian's config, and zswap cannot create its
# boot-time pool from a module that is not loadable yet. (Later 6.1
# stable releases, Debian's 6.1.192 among them, ask for z3fold through
# Z3FOLD_DEPRECATED; setting a symbol a tree lacks is harmless.)
scripts/config --file "$cfg" \
	--enable MMTUNE_HOOKS \
	--enable ZSWAP \
	--enable ZSMALLOC \
	--enable ZBUD \
	--enable Z3FOLD \
	--enable Z3FOLD_DEPRECATED \
	--enable CRYPTO_LZO \
	--enable CRYPTO_LZ4 \
	--enable CRYPTO_ZSTD \
	--set-str LOCALVERSION "" \
	--disable LOCALVERSION_AUTO \
	--set-str SYSTEM_TRUSTED_KEYS "" \
	--set-str SYSTEM_REVOCATION_KEYS "" \
	--set-str BUILD_SALT ""
KCONFIG_CONFIG=$cfg make -s olddefconfig
for sym in MMTUNE_HOOKS ZSWAP ZSMALLOC ZBUD Z3FOLD CRYPTO_LZO CRYPTO_LZ4 CRYPTO_ZSTD; do
	grep -qx "CONFIG_$sym=y" "$cfg" ||
		{ echo "distro-config: CONFIG_$sym=y did not survive olddefconfig in $cfg" >&2; exit 1; }
done
echo "distro-config: $cfg ready: CONFIG_MMTUNE_HOOKS=y, CONFIG_ZSWAP=y, CONFIG_ZSMALLOC=y, CONFIG_ZBUD=y, CONFIG_Z3FOLD=y, CONFIG_CRYPTO_{LZO,LZ4,ZSTD}=y, release $(make -s --no-print-directory KCONFIG_CONFIG="$cfg" LOCALVERSION="${LOCALVERSION:--mmtune}" kernelrelease)"
