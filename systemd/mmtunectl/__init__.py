"""mmtunectl: host-class memory-management profiles for mmtune (issue 7)."""

VERSION = "0.1"
