#!/usr/bin/env python3
"""The HTTP layer's bounds (issue 18) against a live `astraeus serve` on 127.0.0.1, raw sockets.

usage: http_bounds_test.py PORT AGENT_PORT SERVER_PID WORKSPACE_TOKEN AGENT_TOKEN
The server runs with --header-timeout 2 --body-timeout 3. Each check tries the attack for real
and asserts the value it must have; prints "FAIL: ..." per failure, exits 1 if any failed.
"""
import os
import socket
import sys
import time

PORT, AGENT_PORT, PID = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
TOKEN, AGENT_TOKEN = sys.argv[4], sys.argv[5]
fails = 0
passes = 0


def check(what, ok, detail=""):
    global fails, passes
    if ok:
        passes += 1
    else:
        fails += 1
        print(f"FAIL: {what} {detail}")


def connect(port=PORT):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def read_responses(s, n, timeout=10):
    """Reads n responses (Content-Length framed); [(status, headers dict, body bytes)]."""
    s.settimeout(timeout)
    buf = b""
    out = []
    while len(out) < n:
        while b"\r\n\r\n" not in buf:
            chunk = s.recv(65536)
            if not chunk:
                return out
            buf += chunk
        head, buf = buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
        length = int(headers.get("content-length", "0"))
        while len(buf) < length:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
        out.append((status, headers, buf[:length]))
        buf = buf[length:]
    return out


def request(raw, port=PORT):
    s = connect(port)
    s.sendall(raw)
    r = read_responses(s, 1)
    s.close()
    return r[0] if r else (None, {}, b"")


# The RSS bound: 8 MiB, against the 200-256 MiB each attack sends. A sanitizer's allocator keeps
# more resident (TSan's per-thread caches, ASan's shadow); there 32 MiB, still far below buffering.
RSS_BOUND_KIB = 32768 if os.environ.get("ASTRAEUS_SANITIZED") else 8192


def rss_kib():
    with open(f"/proc/{PID}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def flood(s, unit, max_units):
    """Sends unit up to max_units times, watching for an answer after each; (bytes sent, the
    answer's first bytes or b"")."""
    sent = 0
    got = b""
    s.settimeout(0.005)
    try:
        for _ in range(max_units):
            s.sendall(unit)
            sent += len(unit)
            try:
                got = s.recv(4096)
                if got:
                    break
            except socket.timeout:
                pass
    except OSError:
        pass
    if not got:
        s.settimeout(5)
        try:
            got = s.recv(4096)
        except OSError:
            pass
    return sent, got


AUTH = f"Authorization: Bearer {TOKEN}\r\n".encode()
H = b"Host: 127.0.0.1\r\n"

# --- pipelining: three requests in one write, three answers in their order ------------------------
s = connect()
s.sendall(b"GET /healthz HTTP/1.1\r\n" + H + b"\r\n" +
          b"GET /v1/whoami HTTP/1.1\r\n" + H + AUTH + b"\r\n" +
          b"GET /v1/runs/nope HTTP/1.1\r\n" + H + AUTH + b"\r\n")
rs = read_responses(s, 3)
s.close()
check("pipelining: three answers", len(rs) == 3, f"got {len(rs)}")
check("pipelining: in order (200 healthz, 200 whoami, 404 nope)",
      [r[0] for r in rs] == [200, 200, 404] and b'"ok"' in rs[0][2] and b"workspace" in rs[1][2]
      and b"nope" in rs[2][2], str([(r[0], r[2][:60]) for r in rs]))

# Ten pipelined requests, a POST with a body among them: answered in order, none dropped.
s = connect()
batch = b""
for i in range(10):
    if i == 5:
        body = b'{"name": 5}'
        batch += (b"POST /v1/runs HTTP/1.1\r\n" + H + AUTH + b"Content-Type: application/json\r\n" +
                  f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
    else:
        batch += f"GET /v1/runs/r{i} HTTP/1.1\r\n".encode() + H + AUTH + b"\r\n"
s.sendall(batch)
rs = read_responses(s, 10)
s.close()
check("pipelining: ten answers, the POST's (400) fifth", [r[0] for r in rs] == [404] * 5 + [400] + [404] * 4,
      str([r[0] for r in rs]))
check("pipelining: each 404 names its own run",
      all(f"r{i}".encode() in rs[i if i < 5 else i][2] for i in [0, 1, 2, 3, 4, 6, 7, 8, 9]))

# --- conflicting lengths ------------------------------------------------------------------------
st, _, body = request(b"POST /v1/runs HTTP/1.1\r\n" + H + AUTH +
                      b"Content-Length: 5\r\nContent-Length: 6\r\n\r\n{\"a\":1}")
check("two different Content-Length values: 400", st == 400, str((st, body)))
st, _, body = request(b"POST /v1/runs HTTP/1.1\r\n" + H + AUTH +
                      b"Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
check("Content-Length with chunked: 400", st == 400, str((st, body)))
st, _, body = request(b"POST /v1/runs HTTP/1.1\r\n" + H + AUTH + b"Transfer-Encoding: gzip\r\n\r\n")
check("a Transfer-Encoding other than chunked: 400", st == 400, str((st, body)))
st, _, body = request(b"POST /v1/runs HTTP/1.1\r\n" + H + AUTH + b"Content-Length: 1x\r\n\r\n")
check("a malformed Content-Length: 400", st == 400, str((st, body)))

# --- header bounds: 431 ----------------------------------------------------------------------------
many = b"".join(f"X-F{i}: v\r\n".encode() for i in range(101))
st, _, body = request(b"GET /healthz HTTP/1.1\r\n" + H + many + b"\r\n")
check("101 header fields: 431", st == 431 and b"too many header fields" in body, str((st, body)))
few = b"".join(f"X-F{i}: v\r\n".encode() for i in range(90))
st, _, _ = request(b"GET /healthz HTTP/1.1\r\n" + H + few + b"\r\n")
check("91 header fields: 200", st == 200, str(st))
st, _, body = request(b"GET /healthz HTTP/1.1\r\n" + H + b"X-Big: " + b"x" * 40000 + b"\r\n\r\n")
check("a 40 kB header field: 431", st == 431 and b"32 KiB" in body, str((st, body)))
st, _, body = request(b"GET /healthz?" + b"a" * 40000 + b" HTTP/1.1\r\n" + H + b"\r\n")
check("a 40 kB request line: 431", st == 431, str((st, body)))
st, _, body = request(b"GET /v1/runs?" + b"a" * 9000 + b" HTTP/1.1\r\n" + H + AUTH + b"\r\n")
check("a 9 kB target: 414", st == 414, str((st, body)))
# 200 MiB of header lines (the attack): cut at 32 KiB, the server's memory unchanged.
before = rss_kib()
s = connect()
s.sendall(b"GET /healthz HTTP/1.1\r\n" + H)
sent, got = flood(s, b"X-Pad: " + b"p" * 1000 + b"\r\n", 200 * 1024)
s.close()
check(f"endless header lines: 431 after {sent} bytes sent (< 8 MiB)",
      got.startswith(b"HTTP/1.1 431") and sent < 8 << 20, str(got[:40]))
check(f"endless header lines: RSS {before} -> {rss_kib()} KiB (+ < {RSS_BOUND_KIB >> 10} MiB)", rss_kib() - before < RSS_BOUND_KIB)

# --- absolute-form target -------------------------------------------------------------------------
st, _, body = request(f"GET http://127.0.0.1:{PORT}/v1/whoami HTTP/1.1\r\n".encode() + H + AUTH + b"\r\n")
check("absolute-form target: 200", st == 200 and b"workspace" in body, str((st, body)))
st, _, body = request(f"GET http://127.0.0.1:{PORT} HTTP/1.1\r\n".encode() + H + b"\r\n")
check("absolute-form without a path: '/' (the page, 200)", st == 200, str(st))
st, _, body = request(b"GET runs HTTP/1.1\r\n" + H + b"\r\n")
check("a target that is neither a path nor a URL: 400", st == 400, str((st, body)))

# --- unauthenticated bodies: refused before any byte of the body is read ---------------------------
t0 = time.monotonic()
s = connect()
s.sendall(b"POST /v1/runs HTTP/1.1\r\n" + H + b"Content-Type: application/json\r\n"
          b"Content-Length: 1073741824\r\n\r\n")
rs = read_responses(s, 1, timeout=5)
dt = time.monotonic() - t0
s.close()
check(f"no token, Content-Length 1 GiB, no body sent: 401 at once ({dt:.2f} s)",
      rs and rs[0][0] == 401 and dt < 1.5, str(rs[:1]))
check("the 401 closes the connection", rs and rs[0][1].get("connection", "").lower() == "close", str(rs[:1]))
before = rss_kib()
s = connect()
s.sendall(b"POST /v1/runs HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked\r\n\r\n")
chunk = b"10000\r\n" + b"z" * 0x10000 + b"\r\n"
sent, got = flood(s, chunk, 4096)  # up to 256 MiB
s.close()
check(f"no token, chunked body: 401 ({sent >> 20} MiB sent before it)",
      got.startswith(b"HTTP/1.1 401"), str(got[:40]))
check(f"no token, chunked body: RSS {before} -> {rss_kib()} KiB (+ < {RSS_BOUND_KIB >> 10} MiB)", rss_kib() - before < RSS_BOUND_KIB)

# --- bodies with a token: 413 as soon as the bound is passed ----------------------------------------
st, _, body = request(b"POST /v1/runs HTTP/1.1\r\n" + H + AUTH + b"Content-Length: 1048577\r\n\r\n")
check("Content-Length 1 MiB + 1: 413 before the body", st == 413 and b"larger than 1 MiB" in body, str((st, body)))
before = rss_kib()
results = []
for _ in range(4):
    s = connect()
    s.sendall(b"POST /v1/runs HTTP/1.1\r\n" + H + AUTH + b"Transfer-Encoding: chunked\r\n\r\n")
    sent, got = flood(s, chunk, 16384)  # up to 1 GiB
    s.close()
    results.append((sent, got[:12]))
check("chunked bodies over 1 MiB: 413 each", all(g.startswith(b"HTTP/1.1 413") for _, g in results), str(results))
check(f"chunked: refused after at most 1 MiB + the socket buffers ({[r[0] >> 10 for r in results]} KiB sent)",
      all(r[0] < 24 << 20 for r in results))
check(f"chunked bodies: RSS {before} -> {rss_kib()} KiB (+ < {RSS_BOUND_KIB >> 10} MiB)", rss_kib() - before < RSS_BOUND_KIB)
# A chunked body under the bound is read whole (a 400 from the service, not 413).
body = b'{"name": "x", "workers": 1, "gpus_per_worker": 9}'
st, _, rb = request(b"POST /v1/runs HTTP/1.1\r\n" + H + AUTH + b"Transfer-Encoding: chunked\r\n\r\n" +
                    f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n")
check("a small chunked body: read (400 no placement)", st == 400 and b"no placement" in rb, str((st, rb)))

# --- slow clients: headers and body bounded in time (--header-timeout 2 --body-timeout 3) ----------
def closed_after(s, limit):
    """Seconds until the server closes s (reading and dropping what it sends), or None."""
    t0 = time.monotonic()
    s.settimeout(limit)
    try:
        while True:
            d = s.recv(4096)
            if not d:
                return time.monotonic() - t0
    except OSError:
        return time.monotonic() - t0 if time.monotonic() - t0 < limit else None


s = connect()
s.sendall(b"GET /v1/runs HTTP/1.1\r\n" + H + b"X-Slow: ")
dt = closed_after(s, 8)
check(f"headers never finished: closed after the 2-s header timeout ({dt})", dt is not None and 1.5 < dt < 4)
s = connect()
t0 = time.monotonic()
s.sendall(b"GET /v1/runs HTTP/1.1\r\n")
dead = None
for i in range(20):  # one header byte every 0.5 s: the deadline is for the whole header
    time.sleep(0.5)
    try:
        s.sendall(b"X")
    except OSError:
        dead = time.monotonic() - t0
        break
if dead is None:
    dead = closed_after(s, 3)
    dead = dead and time.monotonic() - t0
s.close()
check(f"a header trickled a byte per 0.5 s: closed at the header deadline ({dead})", dead is not None and dead < 5)
s = connect()
s.sendall(b"POST /v1/runs HTTP/1.1\r\n" + H + AUTH + b"Content-Length: 100\r\n\r\n{")
dt = closed_after(s, 8)
s.close()
check(f"a body never finished: closed after the 3-s body timeout ({dt})", dt is not None and 2 < dt < 6)
s = connect()
dt = closed_after(s, 8)
check(f"an idle connection: closed after the header timeout ({dt})", dt is not None and 1.5 < dt < 4)
# 300 stalled connections: a normal call is not delayed.
stalled = []
for _ in range(300):
    c = connect()
    c.sendall(b"GET /v1/runs HTTP/1.1\r\n" + H + b"X-Slow: ")
    stalled.append(c)
t0 = time.monotonic()
st, _, _ = request(b"GET /v1/whoami HTTP/1.1\r\n" + H + AUTH + b"\r\n")
dt = time.monotonic() - t0
check(f"beside 300 stalled connections: a call answers in {dt * 1000:.0f} ms (< 100)", st == 200 and dt < 0.1)
for c in stalled:
    c.close()

# --- the agents' listener: agent endpoints and health only ------------------------------------------
st, _, _ = request(b"GET /healthz HTTP/1.1\r\n" + H + b"\r\n", AGENT_PORT)
check("agent listener: /healthz 200", st == 200, str(st))
st, _, _ = request(b"GET /v1/whoami HTTP/1.1\r\n" + H + AUTH + b"\r\n", AGENT_PORT)
check("agent listener: a user endpoint is 404 (even with a token)", st == 404, str(st))
st, _, _ = request(b"GET / HTTP/1.1\r\n" + H + b"\r\n", AGENT_PORT)
check("agent listener: no web pages (404)", st == 404, str(st))
hb = b'{"name": "n1", "session": "s", "commands_acked": 0, "events": []}'
st, _, _ = request(b"POST /v1/agent/heartbeat HTTP/1.1\r\n" + H + f"Content-Length: {len(hb)}\r\n\r\n".encode() + hb,
                   AGENT_PORT)
check("agent listener: a heartbeat without a token: 401", st == 401, str(st))
st, _, body = request(b"POST /v1/agent/heartbeat HTTP/1.1\r\n" + H + f"Authorization: Bearer {AGENT_TOKEN}\r\n".encode() +
                      f"Content-Length: {len(hb)}\r\n\r\n".encode() + hb, AGENT_PORT)
check("agent listener: a heartbeat with an agent token reaches the service (its answer: 409, no agents)",
      st == 409, str((st, body)))
st, _, _ = request(b"POST /v1/agent/heartbeat HTTP/1.1\r\n" + H + AUTH + f"Content-Length: {len(hb)}\r\n\r\n".encode() + hb,
                   AGENT_PORT)
check("agent listener: a workspace token on an agent endpoint: 403", st == 403, str(st))

print(f"http bounds: {passes} passed, {fails} failed")
sys.exit(1 if fails else 0)
