#!/bin/sh
# Print mmtune's version: the one place it is written is MMTUNE_VERSION in
# module/version.h. dkms.conf, the Debian changelog and the RPM Version are
# all derived from it at build time (packaging/build.sh).
set -eu
h=$(dirname "$0")/../module/version.h
v=$(sed -n 's/^#define[[:space:]]\{1,\}MMTUNE_VERSION[[:space:]]\{1,\}"\([^"]*\)".*/\1/p' "$h")
case "$v" in
[0-9]*.[0-9]*) ;;
*) echo "version.sh: $h: no MMTUNE_VERSION \"X.Y[.Z]\" found" >&2; exit 1 ;;
esac
case "$v" in
*[!0-9A-Za-z.+~]*) echo "version.sh: $h: MMTUNE_VERSION '$v' is not a valid package version" >&2; exit 1 ;;
esac
echo "$v"
