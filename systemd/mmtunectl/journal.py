"""The audit trail: one journal entry per apply and rollback, and priorities
on the lines systemd puts in the journal.

Entries go to journald's native socket (/run/systemd/journal/socket) with
structured fields (MMTUNE_ACTION, MMTUNE_PROFILE, MMTUNE_UID, MMTUNE_RESULT,
MMTUNE_CHANGES) and a PRIORITY, so that `journalctl -t mmtunectl -p warning`
finds failures whether mmtunectl ran from the unit, from Ansible or by hand.
Without journald the entry goes to syslog (/dev/log); without either it is
dropped: the audit trail must never make an apply fail.

Lines printed to stdout/stderr get a "<N>" priority prefix (sd-daemon(3))
only when the stream is the journal (JOURNAL_STREAM, systemd.exec(5)), so a
terminal never sees them.
"""

import os
import socket
import struct

ERR, WARNING, NOTICE, INFO = 3, 4, 5, 6
SOCKET = "run/systemd/journal/socket"

# MESSAGE_ID per (action, success): `journalctl MESSAGE_ID=...` finds them.
MESSAGE_IDS = {
    ("apply", True): "7c5a3d0e9b8f4f6a9d2e1b4c6a8f0e11",
    ("apply", False): "7c5a3d0e9b8f4f6a9d2e1b4c6a8f0e12",
    ("rollback", True): "7c5a3d0e9b8f4f6a9d2e1b4c6a8f0e13",
    ("rollback", False): "7c5a3d0e9b8f4f6a9d2e1b4c6a8f0e14",
}


def encode(fields):
    """journald's native protocol: KEY=value lines; values with a newline
    as KEY, newline, 64-bit little-endian length, bytes, newline."""
    out = b""
    for key, value in fields:
        v = str(value).encode("utf-8", "replace")
        if b"\n" in v:
            out += key.encode() + b"\n" + struct.pack("<Q", len(v)) + v + b"\n"
        else:
            out += key.encode() + b"=" + v + b"\n"
    return out


def send(ctx, priority, message, **fields):
    items = [("MESSAGE", message), ("PRIORITY", priority),
             ("SYSLOG_IDENTIFIER", "mmtunectl")] + sorted(fields.items())
    path = ctx.path(SOCKET)
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        try:
            s.connect(path)
            s.send(encode(items))
        finally:
            s.close()
        return True
    except OSError:
        pass
    if ctx.root != "/":
        return False        # a test tree or an image: never the host's syslog
    try:
        import syslog
        syslog.openlog("mmtunectl", 0, syslog.LOG_DAEMON)
        syslog.syslog(priority, message)
        return True
    except (ImportError, OSError):
        return False


def stream_is_journal(fd):
    """True when fd is the journal stream systemd connected (JOURNAL_STREAM
    holds "device:inode" of it)."""
    want = os.environ.get("JOURNAL_STREAM", "")
    try:
        dev, ino = want.split(":")
        st = os.fstat(fd)
        return st.st_dev == int(dev) and st.st_ino == int(ino)
    except (ValueError, OSError):
        return False
