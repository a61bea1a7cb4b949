#!/bin/bash
# Create (once) the virtual environments the userspace checks use, under
# $MMTUNE_CACHE (default ~/.cache/mmtune), and print their paths:
#   tools=<venv with vermin and ansible-core, on the host's python3>
#   py39=<venv with pytest on python3.9>  (empty when no python3.9 is found)
# A venv is rebuilt when its requirements change (stamp file). Quiet unless
# it has to install something.
set -euo pipefail

cache=${MMTUNE_CACHE:-$HOME/.cache/mmtune}
mkdir -p "$cache"

# vermin: static check that mmtunectl runs on python3.9 (AL2023).
# ansible-core: syntax check of the config-management example; 2.18 and
# 2.19 are the lines whose controller runs on Debian 12's python3.11.
# prometheus-client: its parser reads status --prometheus in a test (the
# product itself stays standard-library only).
tools_req="vermin==1.9.2 ansible-core>=2.18,<2.20 prometheus-client>=0.20,<1"
py39_req="pytest>=7.2,<9"

make_venv() { # DIR PYTHON REQUIREMENTS
	local dir=$1 py=$2 req=$3
	if [ -x "$dir/bin/python" ] && [ "$(cat "$dir/.stamp" 2>/dev/null)" = "$py $req" ]; then
		return 0
	fi
	echo "venv: creating $dir ($req)" >&2
	rm -rf "$dir"
	"$py" -m venv "$dir" >&2
	# shellcheck disable=SC2086
	"$dir/bin/pip" install -q --disable-pip-version-check $req >&2
	echo "$py $req" >"$dir/.stamp"
}

# The requirements' hash in the name: worktrees with different requirements
# (branches) each keep their own venv instead of rebuilding a shared one.
tag() { echo "$*" | sha256sum | cut -c1-8; }
tools_dir=$cache/venv-userspace-tools-$(tag "$tools_req")
make_venv "$tools_dir" /usr/bin/python3 "$tools_req"
echo "tools=$tools_dir"

# Debian 12's tuned (2.20): its shipped profiles for the coexistence golden
# tests, unpacked from the .deb, never installed (no tuned.service runs on
# the test host). Empty when apt cannot fetch it: those tests skip.
tuned_ver=2.20.0-1
tuned_dir=$cache/tuned-$tuned_ver
if [ ! -f "$tuned_dir/usr/lib/tuned/throughput-performance/tuned.conf" ]; then
	echo "tuned: unpacking tuned $tuned_ver into $tuned_dir" >&2
	tmp=$(mktemp -d)
	rm -rf "$tuned_dir"
	if (cd "$tmp" && apt-get download -q "tuned=$tuned_ver" >/dev/null 2>&1) &&
		dpkg-deb -x "$tmp"/tuned_*.deb "$tuned_dir"; then :; else rm -rf "$tuned_dir"; fi
	rm -rf "$tmp"
fi
[ -d "$tuned_dir/usr/lib/tuned" ] && echo "tuned=$tuned_dir" || echo "tuned="

py39=${MMTUNE_PY39:-}
if [ -z "$py39" ]; then
	py39=$(command -v python3.9 2>/dev/null || true)
	case "$py39" in */shims/*) py39= ;; esac	# a pyenv shim may point nowhere
	[ -n "$py39" ] || py39=$(ls -d "$HOME"/.pyenv/versions/3.9.*/bin/python3.9 2>/dev/null | tail -n 1 || true)
fi
if [ -n "$py39" ] && "$py39" -c 'import sys, venv; sys.exit(sys.version_info[:2] != (3, 9))' 2>/dev/null; then
	py39_dir=$cache/venv-userspace-py39-$(tag "$py39_req")
	make_venv "$py39_dir" "$py39" "$py39_req"
	echo "py39=$py39_dir"
else
	echo "py39="
fi
