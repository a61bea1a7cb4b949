#!/usr/bin/python3
"""Fail if any artifact carries a private key.

    packaging/repo/check-no-private-keys.py [--list-dir DIR] ARTIFACT...

The one scanner of the tree: packaging/build.sh runs it on every package
and source package it builds, make-repo.sh on everything it publishes, the
packaging tests on every kernel package set.

Archives are opened by their contents, whatever their names, and what they
hold is opened again, to any depth: ar (.deb), rpm (rpm2cpio), cpio, tar,
zip (.jar, .whl), gzip, xz, bzip2 and zstd (single files and compressed
tars); a .dsc named as an ARTIFACT brings the files it lists. Every file is
checked for
  - a private key's name: signing_key.pem, *.key, *.priv;
  - PEM or text private keys: "-----BEGIN ... PRIVATE KEY-----" (PKCS#1,
    PKCS#8, encrypted PKCS#8, EC, DSA, OpenSSH, "PGP PRIVATE KEY BLOCK"),
    SSH2 and PuTTY key files, gpg-agent key files;
  - binary private keys at the start of the file: DER PKCS#1 (RSA, DSA),
    PKCS#8, encrypted PKCS#8, SEC1 EC, PKCS#12, OpenSSH's binary format,
    OpenPGP secret key packets (gpg --export-secret-keys);
  - base64 of any of these (one line or wrapped, one level of base64 in
    base64 too): every run of 60 or more base64 characters is decoded and
    checked.
Public keys and certificates (PEM, DER, OpenSSH .pub, OpenPGP public keys)
are not private keys: packages ship them (the module signing certificate,
apt keyrings). A file inside an archive is named OUTER!INNER.

Why not a maintained secret scanner: gitleaks and trufflehog are not in
Debian 12; detect-secrets (PyPI) matches the PEM "BEGIN ... PRIVATE KEY"
lines only, opens no archive and decodes neither DER nor base64.

One line per artifact ("<file>: N files, no private key") on stdout, one
line per finding on stderr; exit 1 on any finding, 2 on an artifact (or an
archive inside) that cannot be read. --list-dir DIR: each artifact's file
list into DIR/<artifact>.list (the record of what was shipped).

Allowed, by content hash and path (nothing trusts it, it is public):
tools/testing/selftests/sgx/sign_key.pem, the SGX selftest's enclave
signing key in the kernel source, which rpm-pkg's kernel-devel carries.
"""
import base64
import binascii
import bz2
import gzip
import hashlib
import io
import lzma
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import zipfile

ALLOWED = {("1f6566d02247dc09d4dcb542ee2399522ceebf9b435ee00fe2053aa5582541e2",
            "tools/testing/selftests/sgx/sign_key.pem")}
KEY_NAMES = re.compile(r"(^signing_key\.pem|\.key|\.priv)$")
TEXT_KEYS = re.compile(
    rb"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
    rb"|---- BEGIN SSH2 ENCRYPTED PRIVATE[ ]KEY ----"
    rb"|PuTTY-User-Key-File-\d+:"
    rb"|\((?:11:private-key|21:protected-private-key)"
    rb"|^Key: \((?:protected-)?private-key", re.M)
B64_RUN = re.compile(rb"[A-Za-z0-9+/]{16,}={0,2}")
B64_MIN = 60    # an Ed25519 PKCS#8 key: 48 bytes, 64 characters
OID_RSADSI = bytes.fromhex("2a864886f70d01")    # 1.2.840.113549.1
PBE_OIDS = (OID_RSADSI + b"\x05", OID_RSADSI + b"\x0c\x01")  # PKCS#5, PKCS#12 PBE
OID_DATA = OID_RSADSI + b"\x07\x01"             # PKCS#7 data (PKCS#12 authSafe)
PGP_ALGOS = {1, 2, 3, 16, 17, 18, 19, 20, 22, 25, 26, 27, 28}


# --- binary keys -----------------------------------------------------------
def tlv(b, i, end):
    """The DER element at b[i:end]: (tag, value start, value end) or None."""
    if i + 2 > end:
        return None
    tag, n, j = b[i], b[i + 1], i + 2
    if n & 0x80:
        k = n & 0x7F
        if not 0 < k <= 4 or j + k > end:
            return None
        n, j = int.from_bytes(b[j:j + k], "big"), j + k
    return (tag, j, j + n) if j + n <= end else None


def der_children(b, el):
    kids, i = [], el[1]
    while i < el[2]:
        k = tlv(b, i, el[2])
        if k is None:
            return None
        kids.append(k)
        i = k[2]
    return kids


def der_key(b):
    """What kind of DER private key b starts with, or None."""
    top = tlv(b, 0, len(b))
    if top is None or top[0] != 0x30:
        return None
    kids = der_children(b, top)
    if not kids:
        return None
    tags = [k[0] for k in kids]
    val = [b[k[1]:k[2]] for k in kids]
    first = kids[0]
    if len(kids) >= 6 and tags[:6] == [2] * 6 and val[0] in (b"\0", b"\1"):
        return "a DER PKCS#1 RSA or DSA private key"
    if first[0] == 2 and len(kids) >= 3 and tags[1] == 0x30 and tags[2] == 4 and val[0] in (b"\0", b"\1"):
        alg = der_children(b, kids[1])
        if alg and alg[0][0] == 6:
            return "a DER PKCS#8 private key"
    if tags[:2] == [2, 4] and val[0] == b"\1" and all(t in (0xA0, 0xA1) for t in tags[2:]):
        return "a DER SEC1 EC private key"
    if tags == [0x30, 4]:
        alg = der_children(b, kids[0])
        if alg and alg[0][0] == 6 and b[alg[0][1]:alg[0][2]].startswith(PBE_OIDS):
            return "a DER encrypted PKCS#8 private key"
    if len(kids) >= 2 and tags[:2] == [2, 0x30] and val[0] == b"\3":
        auth = der_children(b, kids[1])
        if auth and auth[0][0] == 6 and b[auth[0][1]:auth[0][2]] == OID_DATA:
            return "a PKCS#12 key store"
    return None


def pgp_secret(b):
    """b starts with an OpenPGP secret key or subkey packet (its header,
    a length that fits, a key version and a public key algorithm)."""
    if len(b) < 12 or not b[0] & 0x80:
        return False
    if b[0] & 0x40:                     # new format
        tag, n = b[0] & 0x3F, b[1]
        if n < 192:
            hdr, size = 2, n
        elif n < 224:
            hdr, size = 3, ((n - 192) << 8) + b[2] + 192
        elif n == 255:
            hdr, size = 6, int.from_bytes(b[2:6], "big")
        else:
            return False
    else:                               # old format
        tag, lt = (b[0] >> 2) & 0xF, b[0] & 3
        if lt == 3:
            return False
        hdr = 2 + (1 << lt) - 1
        size = int.from_bytes(b[1:hdr], "big")
    if tag not in (5, 7) or not 20 <= size <= len(b) - hdr or b[hdr] not in (3, 4, 5, 6):
        return False
    return b[hdr + (7 if b[hdr] == 3 else 5)] in PGP_ALGOS


def b64_blocks(data):
    """Runs of base64, lines of a wrapped block joined."""
    block, last = [], None
    for m in B64_RUN.finditer(data):
        if block and not (last[1] - last[0] >= 40 and not data[last[1]:m.start()].strip()
                          and b"\n" in data[last[1]:m.start()]):
            yield b"".join(block)
            block = []
        block.append(m.group())
        last = m.span()
    if block:
        yield b"".join(block)


def key_in(data, depth=0):
    """Why data is (or holds) a private key, or None."""
    m = TEXT_KEYS.search(data)
    if m:
        return "a private key in text form (%s)" % m.group().decode("ascii", "replace")
    if b"openssh-key-v1\0" in data:
        return "an OpenSSH private key (binary)"
    why = der_key(data)
    if why:
        return why
    if pgp_secret(data):
        return "an OpenPGP secret key (binary)"
    if depth < 2:
        for s in b64_blocks(data):
            s = s.rstrip(b"=")
            if len(s) < B64_MIN:
                continue
            s = s[:len(s) - (len(s) % 4 == 1)]
            try:
                dec = base64.b64decode(s + b"=" * (-len(s) % 4))
            except (binascii.Error, ValueError):
                continue
            why = key_in(dec, depth + 1)
            if why:
                return "base64 of " + why
    return None


# --- archives ----------------------------------------------------------------
def kind_of(head):
    for magic, kind in ((b"!<arch>\n", "ar"), (b"\xed\xab\xee\xdb", "rpm"),
                        (b"\x1f\x8b", "gz"), (b"\xfd7zXZ\0", "xz"),
                        (b"\x28\xb5\x2f\xfd", "zst"), (b"PK\3\4", "zip"),
                        (b"PK\5\6", "zip"), (b"070701", "cpio"),
                        (b"070702", "cpio"), (b"070707", "odc")):
        if head.startswith(magic):
            return kind
    if head[:3] == b"BZh" and head[4:10] == b"1AY&SY":
        return "bz2"
    if head[257:262] == b"ustar":
        return "tar"
    return None


class Chain(io.RawIOBase):
    """head, then the rest of stream: a stream whose start was read."""
    def __init__(self, head, stream):
        self.head, self.stream = head, stream

    def readable(self):
        return True

    def readinto(self, buf):
        if self.head:
            n = min(len(buf), len(self.head))
            buf[:n], self.head = self.head[:n], self.head[n:]
            return n
        d = self.stream.read(len(buf))
        buf[:len(d)] = d
        return len(d)


def read_exact(s, n):
    out = b""
    while len(out) < n:
        d = s.read(n - len(out))
        if not d:
            raise EOFError("truncated archive")
        out += d
    return out


def decompress(kind, s):
    if kind == "zst":
        p = subprocess.run(["zstd", "-qdc"], input=s.read(), stdout=subprocess.PIPE, check=True)
        return io.BytesIO(p.stdout)
    return {"gz": lambda: gzip.GzipFile(fileobj=s), "xz": lambda: lzma.LZMAFile(s),
            "bz2": lambda: bz2.BZ2File(s)}[kind]()


class Scan:
    """One artifact's files; a path is /NAME, a file inside an archive
    OUTER!INNER (a .deb's data and control archives and a compressed
    tar's tar are no level of their own: /usr/..., /DEBIAN/postinst)."""
    def __init__(self, art):
        self.art, self.files, self.found, self.errors, self.allowed = art, [], [], [], 0

    @staticmethod
    def member(parent, name, sub=""):
        name = sub + (name[2:] if name.startswith("./") else name.lstrip("/"))
        return parent + "!" + name if parent else "/" + name

    def data(self, path, data):
        """A file's bytes: an archive is opened, anything else checked."""
        kind = kind_of(data[:512])
        if not kind:
            return self.leaf(path, data)
        self.files.append(path)
        try:
            self.open(path, kind, io.BytesIO(data))
        except Exception as e:      # a damaged archive would hide its contents
            self.errors.append("cannot unpack %s (%s): %s" % (path, kind, e))

    def leaf(self, path, data):
        self.files.append(path)
        sha = hashlib.sha256(data).hexdigest()
        if any(sha == h and path.endswith("/" + p) for h, p in ALLOWED):
            self.allowed += 1
            print("%s: allowed: %s (a public test key of the kernel source)" % (self.art, path), file=sys.stderr)
            return
        why = [w for w in ("a private key's file name" if KEY_NAMES.search(re.split("[/!]", path)[-1]) else None,
                           key_in(data)) if w]
        if why:
            self.found.append("%s: %s" % (path, ", ".join(why)))

    def open(self, path, kind, s, sub=""):
        """The members of the archive of this kind in stream s, under path
        (top level: ""); sub: a prefix for a tar's member names."""
        if kind in ("gz", "xz", "bz2", "zst"):
            d = decompress(kind, s)
            head = d.read(512)
            if kind_of(head) == "tar":
                return self.tar(path, io.BufferedReader(Chain(head, d), 1 << 16), sub)
            base = re.split("[/!]", path)[-1] if path else self.art
            self.data(self.member(path, re.sub(r"\.(gz|xz|bz2|zst)$", "", base)), head + d.read())
        elif kind == "tar":
            self.tar(path, s, sub)
        elif kind == "ar":
            read_exact(s, 8)
            deb = False
            while True:
                h = s.read(60)
                if len(h) < 60:
                    break
                name, size = h[:16].decode().strip().rstrip("/"), int(h[48:58])
                body = read_exact(s, size)
                s.read(size % 2)
                deb = deb or name == "debian-binary"
                if deb and name.startswith(("control.tar", "data.tar")) and kind_of(body[:512]):
                    self.open(path, kind_of(body[:512]), io.BytesIO(body),
                              "DEBIAN/" if name.startswith("control") else "")
                else:
                    self.data(self.member(path, name), body)
        elif kind == "zip":
            with zipfile.ZipFile(s) as z:
                for i in z.infolist():
                    if not i.is_dir():
                        self.data(self.member(path, i.filename), z.read(i))
        elif kind in ("cpio", "odc"):
            self.cpio(path, s)
        elif kind == "rpm":
            with tempfile.NamedTemporaryFile() as f:
                f.write(s.read())
                f.flush()
                p = subprocess.Popen(["rpm2cpio", f.name], stdout=subprocess.PIPE)
                self.cpio(path, p.stdout)
                p.stdout.read()
                if p.wait():
                    raise OSError("rpm2cpio failed")

    def tar(self, path, s, sub=""):
        with tarfile.open(fileobj=s, mode="r|") as t:
            for m in t:
                if m.isfile():
                    self.data(self.member(path, m.name, sub), t.extractfile(m).read())

    def cpio(self, path, s):
        """newc (rpm2cpio's) and odc cpio archives."""
        while True:
            if read_exact(s, 6) == b"070707":
                h = read_exact(s, 70)
                mode, nsize, size, align = int(h[12:18], 8), int(h[53:59], 8), int(h[59:70], 8), 1
                name = read_exact(s, nsize)[:-1].decode("utf-8", "replace")
            else:
                h = read_exact(s, 104)
                mode, size, nsize, align = int(h[8:16], 16), int(h[48:56], 16), int(h[88:96], 16), 4
                name = read_exact(s, nsize)[:-1].decode("utf-8", "replace")
                read_exact(s, -(110 + nsize) % 4)
            if name == "TRAILER!!!":
                return
            body = read_exact(s, size)
            read_exact(s, -size % align)
            if mode & 0o170000 == 0o100000:
                self.data(self.member(path, name), body)

    def artifact(self, art):
        with open(art, "rb") as f:
            if not art.endswith(".dsc"):
                kind = kind_of(f.read(512))
                f.seek(0)
                return self.open("", kind, f) if kind else self.leaf("/" + self.art, f.read())
            self.leaf("/" + self.art, f.read())
        # A .dsc: the files it lists, beside it.
        listed = re.search(r"^Files:\n((?: .*\n)+)", open(art).read(), re.M)
        for line in listed.group(1).splitlines() if listed else []:
            other = os.path.join(os.path.dirname(art), line.split()[-1])
            with open(other, "rb") as o:
                self.data("/" + os.path.basename(other), o.read())


def main(argv):
    list_dir = None
    if argv[:1] == ["--list-dir"] and len(argv) > 1:
        list_dir = argv[1]
        os.makedirs(list_dir, exist_ok=True)
        argv = argv[2:]
    if not argv:
        print("usage: check-no-private-keys.py [--list-dir DIR] ARTIFACT...", file=sys.stderr)
        return 2
    rc = 0
    for art in argv:
        s = Scan(os.path.basename(art))
        try:
            s.artifact(art)
        except Exception as e:
            s.errors.append("cannot read: %s" % e)
        name = os.path.basename(art)
        for e in s.errors:
            print("%s: %s" % (art, e), file=sys.stderr)
        for f in s.found:
            print("%s: PRIVATE KEY: %s" % (name, f), file=sys.stderr)
        if list_dir:
            with open(os.path.join(list_dir, name + ".list"), "w") as out:
                out.writelines(p + "\n" for p in sorted(s.files))
        if s.found:
            print("%s: %d files, %d with a private key" % (name, len(s.files), len(s.found)))
            rc = max(rc, 1)
        else:
            a = " (%d allowed public test key)" % s.allowed if s.allowed else ""
            print("%s: %d files, no private key%s" % (name, len(s.files), a))
        if s.errors:
            rc = 2
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
