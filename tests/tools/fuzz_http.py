#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# fuzz_http.py - random and malformed requests at a running perflib-exporter
# (tests/tools/test_exporter_fuzz.sh): request lines, paths and query strings of the
# consumer operations mutated, headers (garbage, huge, many, bad Content-Length, bad
# chunking), bodies of PERF_COUNTER_IDENTIFIER blocks with random fields for a real query,
# and plain random bytes. Every 25 requests it checks the server still answers GET /metrics
# with 200 on a fresh connection.
#
#   fuzz_http.py HOST PORT SEED COUNT
#
# A request the server neither answers nor closes in WAIT seconds (a body it still waits
# for: an incomplete chunk) is left open, as a slow client's would be; the server must go
# on serving everyone else, which the next check of /metrics shows.
# Prints the seed (a failure replays with it), the count of each answer class, and exits 1
# when the server stopped answering or answered a malformed request with a 5xx other than
# 503 (too many queries) and 505 (an HTTP version other than 1.0 and 1.1).
import random
import socket
import struct
import sys
import time
import uuid

TIMEOUT = 10.0  # seconds the server may take to answer GET /metrics: longer is a stall
WAIT = 1.0  # seconds a fuzzed request is waited for before it is left open

ROUTES = [
    "/", "/metrics", "/perflib/v1/countersets", "/perflib/v1/queries",
    "/perflib/v1/countersets/{g}/instances",
    "/perflib/v1/countersets/{g}/registration?code=1",
    "/perflib/v1/countersets/{g}/registration?code=4&lang=1033",
    "/perflib/v1/queries/{t}/add", "/perflib/v1/queries/{t}/delete",
    "/perflib/v1/queries/{t}/info", "/perflib/v1/queries/{t}/data", "/perflib/v1/queries/{t}",
]
METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "TRACE", "CONNECT", "PATCH",
           "get", "G\x00T", "", "X" * 300]
JUNK = ["%00", "%zz", "%", "..", "/../..", "//", "?", "&", "=", "#", "\xff", "\t", " ",
        "%2e%2e", "?code=", "?code=99999999999", "?code=-1", "?code=1&code=2", "?lang=x",
        ";", "\\", "{", "}", "%25", "?" + "a=" * 500]


held = []  # connections left open (the server waits for more of their request)


def exchange(host, port, data, wait=TIMEOUT, source=None):
    """send @data on a new connection (from @source); the status line's code, None when
    the server closed without one, "open" when it still waits after @wait seconds"""
    s = socket.create_connection((host, port), timeout=TIMEOUT,
                                 source_address=(source, 0) if source else None)
    s.settimeout(wait)
    try:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        got = b""
        while len(got) < 65536:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
            if b"\r\n" in got and not got.startswith(b"HTTP/1.1 100"):
                break
    except socket.timeout:
        if wait == TIMEOUT:
            raise
        held.append(s)  # closed at the end: the server keeps it until its idle timeout
        return "open"
    except OSError:
        s.close()
        return None
    s.close()
    if got.startswith(b"HTTP/") and len(got) >= 12:
        try:
            return int(got[9:12])
        except ValueError:
            return -1
    return None


def open_query(host, port):
    s = socket.create_connection((host, port), timeout=TIMEOUT)
    s.sendall(b"POST /perflib/v1/queries HTTP/1.1\r\nHost: f\r\nContent-Length: 0\r\n"
              b"Connection: close\r\n\r\n")
    got = b""
    while True:
        c = s.recv(4096)
        if not c:
            break
        got += c
    s.close()
    return got.split(b"\r\n\r\n", 1)[-1].decode(errors="replace").strip()


def identifiers(rnd, sets):
    """PERF_COUNTER_IDENTIFIER blocks, their fields (Size above all) chosen to hurt"""
    out = b""
    for _ in range(rnd.randint(0, 6)):
        guid = rnd.choice(sets) if sets and rnd.random() < 0.7 else rnd.randbytes(16)
        name = rnd.choice(["", "*", "a", "x" * rnd.randint(0, 600), "\x00", "é"])
        raw = name.encode("utf-16-le") + b"\x00\x00" if rnd.random() < 0.8 else rnd.randbytes(7)
        size = rnd.choice([40, 40 + len(raw), 0, 1, 39, 41, 0xFFFFFFFF, 0x7FFFFFFF,
                           rnd.randint(0, 5000), 40 + len(raw) + 8])
        cid = rnd.choice([0, 1, 2, 0xFFFFFFFF, rnd.randint(0, 100)])
        iid = rnd.choice([0, 0xFFFFFFFF, rnd.randint(0, 100)])
        block = guid + struct.pack("<6I", rnd.randint(0, 3), size, cid, iid,
                                   rnd.randint(0, 9), rnd.randint(0, 1)) + raw
        if rnd.random() < 0.2:
            block = block[:rnd.randint(0, len(block))]
        out += block
    if rnd.random() < 0.1:
        out += rnd.randbytes(rnd.randint(1, 300))
    return out


def mutate_path(rnd, sets, token):
    path = rnd.choice(ROUTES)
    g = str(uuid.UUID(bytes_le=rnd.choice(sets))) if sets and rnd.random() < 0.7 \
        else rnd.choice(["", "x", str(uuid.uuid4()), "{" + str(uuid.uuid4()) + "}", "0" * 36])
    t = token if rnd.random() < 0.7 else rnd.choice(["", "0" * 16, "g" * 16, token + "0", "ffff"])
    path = path.replace("{g}", g).replace("{t}", t)
    for _ in range(rnd.randint(0, 3)):
        pos = rnd.randint(0, len(path))
        path = path[:pos] + rnd.choice(JUNK) + path[pos:]
    if rnd.random() < 0.05:
        path = "/" + "a" * rnd.choice([100, 5000, 40000])
    return path


def clean(rnd, sets, token):
    """a well-formed request of a real operation, with hostile identifiers or arguments"""
    g = str(uuid.UUID(bytes_le=rnd.choice(sets))) if sets else "0" * 36
    op = rnd.random()
    if op < 0.5:
        method, path = "POST", f"/perflib/v1/queries/{token}/" + rnd.choice(["add", "delete"])
    elif op < 0.7:
        method, path = "GET", f"/perflib/v1/queries/{token}/" + rnd.choice(["info", "data"])
    else:
        method = "GET"
        path = f"/perflib/v1/countersets/{g}/registration?code=" + rnd.choice(
            [str(rnd.randint(0, 20)), str(rnd.randint(0, 2**32 - 1)), "0x1", "1 "]) + \
            rnd.choice(["", f"&lang={rnd.randint(0, 70000)}", "&lang=", "&lang=1&lang=2"])
    body = identifiers(rnd, sets) if method == "POST" else b""
    return (f"{method} {path} HTTP/1.1\r\nHost: fuzz\r\nContent-Length: {len(body)}\r\n\r\n"
            .encode() + body)


def request(rnd, sets, token):
    kind = rnd.random()
    if kind < 0.08:
        return rnd.randbytes(rnd.randint(0, 4096))
    if kind < 0.45:
        return clean(rnd, sets, token)
    method = rnd.choice(METHODS) if rnd.random() < 0.3 else rnd.choice(["GET", "POST", "DELETE"])
    version = rnd.choice(["HTTP/1.1"] * 8 + ["HTTP/1.0", "HTTP/2.0", "HTTP/9.9", "HTTP/1.1x", ""])
    path = mutate_path(rnd, sets, token)
    body = identifiers(rnd, sets) if rnd.random() < 0.6 else rnd.randbytes(rnd.randint(0, 2000))
    headers = ["Host: fuzz"]
    length = rnd.random()
    if length < 0.6:
        headers.append(f"Content-Length: {len(body)}")
    elif length < 0.7:
        headers.append("Content-Length: " + rnd.choice(["-1", "abc", "99999999999999999999",
                                                         str(len(body) + 100), "0, 5", ""]))
    elif length < 0.85:
        headers.append("Transfer-Encoding: chunked")
        if rnd.random() < 0.5:
            body = b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n"
        else:
            body = rnd.choice([b"zz\r\n", b"ffffffffffffffff\r\nab", b"5\r\nab", b"0\r\n"]) + body
    for _ in range(rnd.randint(0, 6)):
        headers.append(rnd.choice([
            "Accept: application/openmetrics-text; version=1.0.0; q=" + rnd.choice(["0.5", "x", ""]),
            "Accept: " + "a/b," * rnd.randint(1, 3000),
            "Authorization: Basic " + rnd.choice(["", "!!!", "YWxpY2U6", "Og==", "x" * 3000]),
            "Expect: 100-continue", "Connection: " + rnd.choice(["close", "keep-alive", "x"]),
            "X-" + "y" * rnd.randint(1, 9000) + ": z", "NoColonHere", ": empty name",
            "Bad\x01Name: v", "Folded: a\r\n continued",
        ]))
    if rnd.random() < 0.03:
        headers += [f"H{i}: {i}" for i in range(rnd.choice([100, 500, 2000]))]
    head = f"{method} {path} {version}".strip() + "\r\n" + "\r\n".join(headers) + "\r\n\r\n"
    return head.encode("latin-1", errors="replace") + body


def alive(host, port):
    return exchange(host, port, b"GET /metrics HTTP/1.1\r\nHost: f\r\nConnection: close\r\n\r\n")


def main():
    host, port, seed, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    rnd = random.Random(seed)
    print(f"seed {seed}", flush=True)
    # the counter sets and a real query, so that fuzzed operations reach the consumer API
    s = socket.create_connection((host, port), timeout=TIMEOUT)
    s.sendall(b"GET /perflib/v1/countersets HTTP/1.1\r\nHost: f\r\nConnection: close\r\n\r\n")
    got = b""
    while True:
        c = s.recv(65536)
        if not c:
            break
        got += c
    s.close()
    raw = got.split(b"\r\n\r\n", 1)[-1]
    sets = [raw[i:i + 16] for i in range(0, len(raw) - 15, 16)]
    token = open_query(host, port)
    classes = {}
    bad = []
    start = time.monotonic()
    for i in range(count):
        if i % 50 == 49:
            token = open_query(host, port)  # the fuzzing may have closed it
        data = request(rnd, sets, token)
        # the fuzzer's connections come from many loopback addresses, the checks from
        # 127.0.0.1: requests left open count against their own address's limit only
        code = exchange(host, port, data, wait=WAIT, source=f"127.0.1.{rnd.randint(1, 254)}")
        key = "closed" if code is None else code if code == "open" else f"{code // 100}xx"
        classes[key] = classes.get(key, 0) + 1
        if code == "open":
            # a request the server still waits for must not stall anyone else
            try:
                a = alive(host, port)
            except socket.timeout:
                a = "no answer"
            if a != 200:
                print(f"request {i} left open, then GET /metrics gave {a}: {data[:200]!r}")
                return 1
        elif code is not None and code >= 500 and code not in (503, 505):
            bad.append((i, code, data[:120]))
        if i % 25 == 24:
            try:
                a = alive(host, port)
            except socket.timeout:
                a = "no answer"
            if a != 200:
                print(f"after request {i}: GET /metrics gave {a}: last {data[:200]!r}")
                return 1
    took = time.monotonic() - start
    for h in held:
        h.close()
    print(f"{count} requests in {took:.1f} s: " +
          ", ".join(f"{k} {v}" for k, v in sorted(classes.items())))
    for i, code, data in bad[:10]:
        print(f"request {i}: HTTP {code} for {data!r}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
