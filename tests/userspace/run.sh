#!/bin/bash
# The userspace suite (issue 7): mmtunectl's pytest tests against a fake root,
# as TAP lines for tests/run-all.sh.
#   1. on the host's /usr/bin/python3 (Debian 12: 3.11), with the checks that
#      need the tools venv: vermin (no construct newer than python3.9) and
#      ansible-playbook --syntax-check of systemd/examples/ansible;
#      tuned 2.20's shipped profiles (unpacked by venv.sh) for the golden
#      tests of the coexistence with tuned;
#   2. again on python3.9 (Amazon Linux 2023's version) when one is found
#      (MMTUNE_PY39, python3.9 on PATH, or ~/.pyenv/versions/3.9.*), else one
#      SKIP line saying so.
# The venvs are made once under ~/.cache/mmtune by tests/userspace/venv.sh.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
export PYTHONDONTWRITEBYTECODE=1
pytest_args=(-q -p no:cacheprovider tests/userspace)
rc=0

if venvs=$(tests/userspace/venv.sh); then
	eval "$venvs"
else
	echo "not ok 1 userspace-venv: cannot create the tools venv (see above)"
	tools= py39= tuned= rc=1
fi

host_py=$(/usr/bin/python3 -c 'import sys; print("py%d.%d" % sys.version_info[:2])')
start=$(date +%s.%N)
export MMTUNE_TUNED=${tuned:-}
MMTUNE_TAP=$host_py MMTUNE_TOOLS_VENV=${tools:-} /usr/bin/python3 -m pytest "${pytest_args[@]}" || rc=1
echo "# userspace: $host_py suite in $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $start }")s"

if [ -n "${py39:-}" ]; then
	start=$(date +%s.%N)
	# The static checks ran once above; this run is about the interpreter.
	MMTUNE_TAP=py3.9 "$py39/bin/python" -m pytest "${pytest_args[@]}" -k "not vermin and not ansible" || rc=1
	echo "# userspace: py3.9 suite in $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $start }")s"
else
	echo "ok 1 userspace-py3.9 # SKIP no python3.9 interpreter found (set MMTUNE_PY39 to one)"
fi
exit $rc
