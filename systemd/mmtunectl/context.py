"""Where mmtunectl looks: every path is relative to one root.

Tests point the root at a fake tree with its own sys/, proc/, etc/, run/ and
usr/lib/mmtune; the installed program uses "/". Paths shown to the user are
always written as if the root were "/", so messages and golden files do not
depend on where a test tree lives.
"""

import os
import subprocess
import time


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
        """File content, or None when it does not exist."""
        try:
            with open(self.path(rel)) as f:
                return f.read()
        except (FileNotFoundError, NotADirectoryError):
            return None

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
