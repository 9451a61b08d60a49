#!/usr/bin/env python3
"""Bounded load test of the HTTP layer (issue 18) against a live `astraeus serve` on 127.0.0.1.

usage: http_slow_clients.py PORT SERVER_PID TOKEN [SLOW=5000] [CALLS=500] [BODIES=100]
1. SLOW connections that send half a header and then one byte a second (slowloris), held open;
   meanwhile CALLS sequential `GET /v1/whoami` calls of a normal client (a new connection each):
   p50/p99/max in ms, and the same CALLS before the slow connections (baseline).
2. BODIES parallel clients each try to POST a 1 GiB chunked body (with a token, 64 KiB chunks)
   until the server answers; the server's RSS sampled every 50 ms: its peak, and bytes sent.
Prints one JSON object. Needs RLIMIT_NOFILE >= SLOW + 100 (raised to the hard limit here).
"""
import json
import resource
import select
import socket
import sys
import threading
import time

PORT, PID, TOKEN = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
SLOW = int(sys.argv[4]) if len(sys.argv) > 4 else 5000
CALLS = int(sys.argv[5]) if len(sys.argv) > 5 else 500
BODIES = int(sys.argv[6]) if len(sys.argv) > 6 else 100
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def rss_kib():
    with open(f"/proc/{PID}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def call():
    t0 = time.perf_counter()
    s = socket.create_connection(("127.0.0.1", PORT), timeout=10)
    s.sendall(f"GET /v1/whoami HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\nConnection: close\r\n\r\n".encode())
    data = b""
    while True:
        d = s.recv(65536)
        if not d:
            break
        data += d
    s.close()
    assert data.startswith(b"HTTP/1.1 200"), data[:60]
    return (time.perf_counter() - t0) * 1000


def stats(ms):
    ms = sorted(ms)
    return {"p50_ms": round(ms[len(ms) // 2], 2), "p99_ms": round(ms[int(len(ms) * 0.99) - 1], 2),
            "max_ms": round(ms[-1], 2)}


out = {"slow_connections": SLOW, "calls": CALLS}
out["baseline"] = stats([call() for _ in range(CALLS)])
rss0 = rss_kib()
slow = []
t0 = time.monotonic()
for i in range(SLOW):
    s = socket.create_connection(("127.0.0.1", PORT), timeout=10)
    s.sendall(b"GET /v1/runs HTTP/1.1\r\nHost: x\r\nX-Slow: ")
    slow.append(s)
out["slow_open_s"] = round(time.monotonic() - t0, 2)
stop = threading.Event()


def trickle():  # one byte a second on every slow connection
    while not stop.is_set():
        for s in slow:
            try:
                s.send(b"a")
            except OSError:
                pass
        stop.wait(1.0)


tr = threading.Thread(target=trickle)
tr.start()
out["beside_slow"] = stats([call() for _ in range(CALLS)])
out["rss_with_slow_mib"] = round(rss_kib() / 1024, 1)
out["rss_before_slow_mib"] = round(rss0 / 1024, 1)
alive = 0
for s in slow:
    s.setblocking(False)
    try:
        alive += 1 if s.recv(1) != b"" else 0
    except BlockingIOError:
        alive += 1
    except OSError:
        pass
out["slow_still_open"] = alive
stop.set()
tr.join()
for s in slow:
    s.close()

# --- 2: parallel 1 GiB chunked bodies ---------------------------------------------------------------
peak = [rss_kib()]
out["rss_before_bodies_mib"] = round(peak[0] / 1024, 1)
sampling = threading.Event()


def sample():
    while not sampling.is_set():
        peak[0] = max(peak[0], rss_kib())
        time.sleep(0.05)


answers = []
sent_total = []
lock = threading.Lock()
chunk = b"10000\r\n" + b"z" * 0x10000 + b"\r\n"


def body_client():
    s = socket.create_connection(("127.0.0.1", PORT), timeout=30)
    s.sendall(f"POST /v1/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
              "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".encode())
    sent, got = 0, b""
    s.settimeout(0.002)
    s.settimeout(30)
    try:
        while sent < (1 << 30):
            if select.select([s], [], [], 0)[0]:  # the answer (or the close) has come
                got = s.recv(64)
                break
            s.sendall(chunk)
            sent += len(chunk)
    except OSError:
        pass
    if not got:
        s.settimeout(10)
        try:
            got = s.recv(64)
        except OSError:
            pass
    s.close()
    with lock:
        answers.append(got[:12].decode("latin-1") or "reset or closed before the answer was read")
        sent_total.append(sent)


smp = threading.Thread(target=sample)
smp.start()
t0 = time.monotonic()
threads = [threading.Thread(target=body_client) for _ in range(BODIES)]
for t in threads:
    t.start()
for t in threads:
    t.join()
out["bodies"] = BODIES
out["bodies_s"] = round(time.monotonic() - t0, 2)
sampling.set()
smp.join()
out["bodies_answers"] = {a: answers.count(a) for a in set(answers)}
out["bodies_sent_mib_max"] = round(max(sent_total) / (1 << 20), 1)
out["bodies_rss_peak_mib"] = round(peak[0] / 1024, 1)
out["rss_after_mib"] = round(rss_kib() / 1024, 1)
print(json.dumps(out))
