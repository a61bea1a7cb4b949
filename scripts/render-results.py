#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Render results/*.tsv into the docs' results regions (make results).

    scripts/render-results.py [--check]

--check: write nothing, print a diff and exit 1 if a region is stale or a
result file lacks its command, date, commit or machine. The format and
the writers: tests/bench/README.md, "Results".
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "bench"))
from results import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["render"] + sys.argv[1:]))
