#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# hold_check.py - a client that holds many half-open connections to perflib-exporter while
# another scrapes it (issue 30, item 5; tests/tools/test_exporter_hold.sh).
#
#   hold_check.py HOST PORT HOLD_ADDR CONNS SECONDS SCRAPE_CMD...
#
# From HOLD_ADDR it opens CONNS connections to HOST:PORT, each sending half a request
# (a request line and one header, never the blank line), and for SECONDS reopens every one
# the server closes (with HOLD_SILENT=1 in the environment they send nothing: a TLS
# handshake never started). Meanwhile it runs SCRAPE_CMD (a curl command line printing the HTTP
# code and the time taken) once a second. It prints one line per scrape and a summary:
#   held N (open at the end), refused N (closed by the server), scrapes OK/ALL, max S s
# Exit 0 when every scrape gave 200, else 1.
import os
import select
import socket
import subprocess
import sys
import threading
import time

HALF = b"" if os.environ.get("HOLD_SILENT") == "1" else b"GET /metrics HTTP/1.1\r\nHost: hold\r\n"


def opener(host, port, addr):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setblocking(False)
    s.bind((addr, 0))
    try:
        s.connect((host, port))
    except BlockingIOError:
        pass
    return s


def main():
    host, port, addr = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    conns, seconds = int(sys.argv[4]), float(sys.argv[5])
    scrape = sys.argv[6:]
    socks = {}  # fd -> [socket, sent]
    refused = 0
    stop = threading.Event()
    results = []

    def scraper():
        while not stop.is_set():
            t = time.monotonic()
            p = subprocess.run(scrape, capture_output=True, text=True)
            took = time.monotonic() - t
            code = p.stdout.strip().split()[0] if p.stdout.strip() else "none"
            results.append((code, took))
            print(f"scrape: {code} in {took:.3f} s {p.stderr.strip()}", flush=True)
            stop.wait(max(0.0, 1.0 - took))

    for _ in range(conns):
        s = opener(host, port, addr)
        socks[s.fileno()] = [s, False]
    th = threading.Thread(target=scraper)
    th.start()
    poller = select.poll()
    for fd in socks:
        poller.register(fd, select.POLLOUT | select.POLLIN)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for fd, ev in poller.poll(100):
            s, sent = socks[fd]
            if ev & (select.POLLIN | select.POLLERR | select.POLLHUP):
                # the server closed it (or answered): count, and open another in its place
                try:
                    data = s.recv(4096)
                except OSError:
                    data = b""
                if data:
                    continue
                poller.unregister(fd)
                del socks[fd]
                s.close()
                refused += 1
                n = opener(host, port, addr)
                socks[n.fileno()] = [n, False]
                poller.register(n.fileno(), select.POLLOUT | select.POLLIN)
            elif ev & select.POLLOUT and not sent:
                try:
                    if HALF:
                        s.send(HALF)
                except OSError:
                    pass
                socks[fd][1] = True
                poller.modify(fd, select.POLLIN)
    stop.set()
    th.join()
    # the connections the server still holds: not readable (no EOF) once the last ones
    # opened have had time to be refused
    time.sleep(1.0)
    held = 0
    for fd, (s, sent) in socks.items():
        r, _, _ = select.select([s], [], [], 0)
        if sent and not r:
            held += 1
        s.close()
    ok = sum(1 for c, _ in results if c == "200")
    worst = max((t for _, t in results), default=0.0)
    print(f"held {held}, refused {refused}, scrapes {ok}/{len(results)}, max {worst:.3f} s")
    return 0 if results and ok == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
