"""Where mmtunectl looks: every path is relative to one root.

Tests point the root at a fake tree with its own sys/, proc/, etc/, run/ and
usr/lib/mmtune; the installed program uses "/". Paths shown to the user are
always written as if the root were "/", so messages and golden files do not
depend on where a test tree lives.
"""

import os
import stat
import subprocess
import time

# The most a profile, drop-in, override, rules or sysctl.d file may hold: a
# larger one is not such a file (a symlink to a log, a disk image).
MAX_FILE = 1 << 20
KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
         (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


class BadFile(OSError):
    """A configuration file that must not be read: not a regular file, a
    dangling symlink, or too large. str() is the reason."""

    def __str__(self):
        return self.args[0]


def read_file(path, limit=MAX_FILE):
    """The bytes of the regular file at path, or None when there is none.

    Never opens anything else: a FIFO would block, a device (/dev/zero)
    never ends. A dangling symlink is an error, not an absent file: the
    file it stands for must not silently fall back to a lower layer.
    Raises BadFile, or OSError (EISDIR, EACCES...) with the file name.
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            raise BadFile("dangling symlink to %s" % os.readlink(path))
        return None
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(21, os.strerror(21), path)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    try:
        # Checked on what was opened: the path may have changed since.
        mode = os.fstat(fd).st_mode
        for test, kind in KINDS:
            if test(mode):
                raise BadFile("not a regular file (%s)" % kind)
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > limit:
        raise BadFile("larger than %d KiB: not a file mmtunectl reads" % (limit >> 10))
    return b"".join(chunks)


class Context(object):
    def __init__(self, root="/", vendor="usr/lib/mmtune", euid=None, now=None,
                 clock=None, detect_virt=None, lock_timeout=30, uid=None):
        self.root = root
        self.vendor = vendor.strip("/")
        self.euid = os.geteuid() if euid is None else euid
        self.uid = os.getuid() if uid is None else uid
        if uid is None and self.uid == 0:
            # Under sudo the audit record names who ran it, not root.
            sudo = os.environ.get("SUDO_UID", "")
            self.uid = int(sudo) if sudo.isdigit() else 0
        self.clock = clock or time.time
        self.now = now or (lambda: time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                 time.gmtime(self.clock())))
        # Tests pass another program; the installed mmtunectl takes no
        # environment variable for it (nor for the root).
        self.detect_virt = detect_virt or "systemd-detect-virt"
        self.lock_timeout = lock_timeout
        # {rel path: host file}: files read in place of the ones under the
        # root (check FILE=PATH, diff --dropin), never written.
        self.overlay = {}

    # Layers, highest priority first, as in systemd: runtime, admin, vendor.
    def layers(self):
        return [("runtime", "run/mmtune"), ("admin", "etc/mmtune"),
                ("vendor", self.vendor)]

    def path(self, rel):
        rel = os.path.normpath(rel.lstrip("/"))
        if rel in self.overlay:
            return self.overlay[rel]
        return os.path.join(self.root, rel)

    def show(self, rel):
        """rel as the user knows it: "/rel", or the file given in its place."""
        rel = os.path.normpath(rel.lstrip("/"))
        return self.overlay.get(rel, "/" + rel)

    def rel_of(self, path):
        """The root-relative path of a host path under the root, else of
        path read as relative to the root."""
        path = os.path.abspath(path)
        root = os.path.abspath(self.root)
        if root != "/" and path.startswith(root + "/"):
            return path[len(root) + 1:]
        return path.lstrip("/")

    def listdir(self, rel):
        """File names in a directory, with the files placed by the overlay."""
        rel = os.path.normpath(rel.lstrip("/"))
        try:
            names = set(os.listdir(os.path.join(self.root, rel)))
        except OSError:
            names = set()
        names |= set(os.path.basename(r) for r in self.overlay if os.path.dirname(r) == rel)
        return sorted(names)

    def read(self, rel):
        """A kernel file's content, or None when it does not exist. Bytes
        that are not UTF-8 (a Latin-1 /proc/cmdline) read as U+FFFD."""
        try:
            with open(self.path(rel), "rb") as f:
                return f.read().decode("utf-8", "replace")
        except (FileNotFoundError, NotADirectoryError):
            return None

    def read_config(self, rel):
        """A file of another program (sysctl.d, tuned): its text, or None
        when it is absent or cannot be read as a file (not regular, too
        large, unreadable). Undecodable bytes read as U+FFFD."""
        try:
            data = read_file(self.path(rel))
        except (OSError, ValueError):
            return None
        return None if data is None else data.decode("utf-8", "replace")

    def exists(self, rel):
        return os.path.lexists(self.path(rel))

    def is_masked(self, rel):
        """A symlink to /dev/null masks a vendor file, as in systemd."""
        p = self.path(rel)
        return os.path.islink(p) and os.readlink(p) == "/dev/null"

    def write_raw(self, rel, value):
        """One write() of the value: sysfs and procfs take one call.

        O_TRUNC is a no-op on sysfs and procfs, but keeps regular files of a
        fake test tree exact. Tests replace this method to inject failures.
        """
        fd = os.open(self.path(rel), os.O_WRONLY | os.O_TRUNC)
        try:
            os.write(fd, value.encode())
        finally:
            os.close(fd)

    def run_detect_virt(self):
        """systemd-detect-virt's answer, or "unknown" when it cannot tell.

        It exits 1 and prints "none" on bare metal, so only the output
        counts. A missing program (busybox guests, containers without
        systemd) or a hang gives "unknown", never an exception.
        """
        try:
            p = subprocess.run([self.detect_virt], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return "unknown"
        out = p.stdout.decode(errors="replace").strip()
        return out or "unknown"
