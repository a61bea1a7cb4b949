#!/usr/bin/python3
"""guest-dump.py QMP-SOCKET OUTDIR [DUMP_MEMORY]: a hung guest's state.

Blocked tasks and every CPU's backtrace onto the guest console (sysrq w,
then l, sent as keys: they work while the kernel still takes interrupts),
the vCPUs' registers into OUTDIR/registers.txt (they work when it does
not), and with DUMP_MEMORY=1 the memory into OUTDIR/vmcore. What the
monitor answers goes to stdout. Used by tests/vm/run.sh and
tests/lib/qemu-timed.sh, on a time limit's expiry, before qemu is killed.
"""
import json, socket, sys, time
sock_path, out, dump_memory = sys.argv[1], sys.argv[2], len(sys.argv) > 3 and sys.argv[3] == "1"
s = socket.socket(socket.AF_UNIX)
s.settimeout(60)
s.connect(sock_path)
f = s.makefile("rw")
f.readline()  # greeting

def qmp(cmd, **args):
    f.write(json.dumps({"execute": cmd, "arguments": args}) + "\n")
    f.flush()
    while True:
        r = json.loads(f.readline())
        if "event" not in r:
            print(cmd, json.dumps(r)[:200])
            return r.get("return")

def sysrq(key):
    keys = [{"type": "qcode", "data": k} for k in ("alt", "sysrq", key)]
    qmp("send-key", keys=keys, **{"hold-time": 200})

qmp("qmp_capabilities")
sysrq("w")
time.sleep(5)
sysrq("l")
time.sleep(10)
with open(out + "/registers.txt", "w") as r:
    r.write(qmp("human-monitor-command", **{"command-line": "info registers -a"}) or "")
if dump_memory:
    s.settimeout(600)
    qmp("dump-guest-memory", paging=False, protocol="file:" + out + "/vmcore")
