#!/usr/bin/env python3
"""sbcemud under a service manager, as systemd runs it (Type=notify, sd_notify(3);
the journal's stream, systemd.exec(5) $JOURNAL_STREAM), without systemd: this
script plays its part.  It listens on a datagram socket named by
$NOTIFY_SOCKET and checks that the daemon sends READY=1 with a STATUS= line
once it serves, WATCHDOG=1 at half of $WATCHDOG_USEC, RELOADING=1 then READY=1
around a SIGHUP, STOPPING=1 at SIGTERM, and exits 0; and that with
$JOURNAL_STREAM naming its stderr, each line starts with its syslog priority
("<6>info: ready") and carries no timestamp.

Usage: service_sbcemud.py PATH/TO/sbcemud"""
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time

failures = 0


def fail(msg):
    global failures
    print("FAIL: " + msg, file=sys.stderr)
    failures += 1


def messages(sock, until, deadline):
    """Notifications received until one contains `until` (or the deadline)."""
    got = []
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        sock.settimeout(max(0.01, end - time.monotonic()))
        try:
            data = sock.recv(4096).decode()
        except socket.timeout:
            break
        got.append(data)
        if until in data.split("\n"):
            break
    return got


def main():
    binary = sys.argv[1]
    work = tempfile.mkdtemp(prefix="sbcemud-service.")
    notify_path = os.path.join(work, "notify")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(notify_path)
    stderr_path = os.path.join(work, "stderr")
    stderr = open(stderr_path, "wb")
    st = os.fstat(stderr.fileno())
    port = 20000 + random.randrange(10000)
    env = dict(os.environ, NOTIFY_SOCKET=notify_path, WATCHDOG_USEC="200000",
               JOURNAL_STREAM="%d:%d" % (st.st_dev, st.st_ino))
    env.pop("WATCHDOG_PID", None)
    proc = subprocess.Popen([binary, "--listen", "127.0.0.1:%d" % port, "--state-dir",
                             os.path.join(work, "state")], stdout=subprocess.DEVNULL,
                            stderr=stderr, env=env)
    try:
        got = messages(sock, "READY=1", 30)
        ready = [m for m in got if "READY=1" in m.split("\n")]
        if not ready:
            fail("no READY=1 within 30 s: %r" % got)
        elif "STATUS=serving 7 LUs of 1 target" not in ready[0]:
            fail("READY=1 without the STATUS= line of the default configuration: %r" % ready[0])
        # The daemon listens once it says READY=1 (Type=notify's contract).
        try:
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
        except OSError as e:
            fail("READY=1 sent but 127.0.0.1:%d refuses: %s" % (port, e))
        got = messages(sock, "never", 0.7)
        dogs = sum(m == "WATCHDOG=1" for m in got)
        if dogs < 3:
            fail("%d WATCHDOG=1 in 0.7 s with WATCHDOG_USEC=200000 (one per 0.1 s expected): %r" % (dogs, got))
        proc.send_signal(signal.SIGHUP)
        got = [m for m in messages(sock, "READY=1", 10) if m != "WATCHDOG=1"]
        if not got or "RELOADING=1" not in got[0].split("\n") or "READY=1" not in got[-1].split("\n"):
            fail("SIGHUP: RELOADING=1 then READY=1 expected: %r" % got)
        proc.send_signal(signal.SIGTERM)
        got = [m for m in messages(sock, "STOPPING=1", 10) if m != "WATCHDOG=1"]
        if not got or "STOPPING=1" not in got[0].split("\n"):
            fail("SIGTERM: STOPPING=1 expected: %r" % got)
        rc = proc.wait(30)
        if rc != 0:
            fail("exit status %d after SIGTERM" % rc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    stderr.close()
    lines = open(stderr_path).read().splitlines()
    if "<6>info: ready" not in lines:
        fail("stderr is the journal's stream: \"<6>info: ready\" expected, got %r" % lines[:5])
    bad = [l for l in lines if not (l.startswith("<") and l[1] in "3467" and l[2] == ">")]
    if bad:
        fail("lines without a syslog priority in the journal's stream: %r" % bad[:3])
    subprocess.run(["rm", "-rf", work])
    print("service_sbcemud: %d failure%s" % (failures, "" if failures == 1 else "s"))
    return 1 if failures else 0


sys.exit(main())
