"""mmtunectl: host-class memory-management profiles for mmtune (issue 7)."""

import os
import re

# make install writes the package version here (packaging/version.sh, from
# module/version.h); from the source tree it is read from there directly.
VERSION = "@VERSION@"
if VERSION.startswith("@"):
    try:
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                               "..", "..", "module", "version.h")) as _f:
            VERSION = re.search(r'#define\s+MMTUNE_VERSION\s+"([^"]+)"', _f.read()).group(1)
    except (OSError, AttributeError):
        VERSION = "unknown"
