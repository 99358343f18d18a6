#!/usr/bin/env python3
"""Tears the test node down when its owner process dies without doing it (kill -9, a JVM whose SIGTERM was
swallowed by a native library's signal handler, a build killed on timeout).

usage: guard.py OWNER_PID LOCK_FILE   (environment as for down.sh; started detached by test-support's RealNode)

Waits for OWNER_PID to end, then takes the machine-wide node lock without waiting: a POSIX record lock, the same
kind as Java's FileChannel.lock, so it excludes a JVM that starts the next node. If someone else holds the lock,
that owner sweeps the remains itself at its start, and this guard leaves. Exits early if the state marker goes
(the owner tore the node down properly)."""
import fcntl, os, subprocess, sys, time

owner, lock_file = int(sys.argv[1]), sys.argv[2]
state = os.environ.get("IPAM_REAL_NODE_STATE", "/var/tmp/ipam-real-node")
here = os.path.dirname(os.path.abspath(__file__))

def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True

while alive(owner):
    if not os.path.exists(os.path.join(state, "started")):
        sys.exit(0)
    time.sleep(2)
if not os.path.exists(os.path.join(state, "started")):
    sys.exit(0)
with open(lock_file, "a") as f:
    try:
        fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        sys.exit(0)
    with open(os.path.join(state, "logs", "guard.log"), "a") as log:
        log.write(time.strftime("%FT%TZ", time.gmtime()) + " owner %d gone without teardown: down.sh\n" % owner)
        log.flush()
        subprocess.run(["bash", os.path.join(here, "down.sh")], stdout=log, stderr=log, check=False)
