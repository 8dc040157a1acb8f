# SPDX-License-Identifier: MIT
# remote_parallel_check.py - run by test_remote_parallel.sh: what a client does with several
# machines at once and how many requests it makes. Two perflib-exporters (127.0.0.2, .3,
# each with the test provider under its own PERFLIB_ROOT), each also reached through a TCP
# proxy of this process (127.0.0.8 -> A, 127.0.0.9 -> B) that counts the data requests
# passing through and can hold every request without answering (a machine that accepts and
# never answers). This process's own root has a provider too (this machine's values).
#
#   - one request per sample: PerfQueryCounterData sized with NULL and then filled is one
#     request; a buffer still too small, a call in between, an answer kept too long: a new
#     one; every PdhCollectQueryData of a remote counter one request, the first too;
#   - a PDH query with counters on both proxies, on A directly and on this machine: with
#     both proxies holding, both requests are in flight at once (each proxy saw its request
#     before either saw the client give up: one timeout, not two, observed by the order of
#     the proxies' events, never by a duration), A's and this machine's values are read in
#     that same collection, the held machines' counters are PDH_CSTATUS_NO_MACHINE, and when
#     the proxies answer again the next collection reads every machine;
#   - PdhLookupPerfIndexByName / PdhLookupPerfNameByIndex on another machine: its names
#     (not this machine's), both spellings of the machine, the size rules, a name or index
#     it does not have, a machine that cannot be reached or never answers, a hostile one;
#   - typeperf records the three machines into one log and relog filters it by machine
#     (-c, -cf, any case, no machine, \\*, a machine the log does not have).
#
#   remote_parallel_check.py run OUTPUT ROOT_A ROOT_B ROOT_C TMP
import ctypes
import http.server
import os
import socket
import subprocess
import threading
import time
import uuid

from perfwire import identifier, statuses
from remote_client_check import (ERROR_NOT_ENOUGH_MEMORY, PDH_FMT_LARGE, PDH_NO_MACHINE, SET1,
                                  Client, FmtValue, check, instance_names, load, main,
                                  provider_cmd, start_exporter, start_provider, stop, wstr)
import remote_client_check

PDH_MORE_DATA = 0x800007D2
PDH_INVALID_ARGUMENT = 0xC0000BBD
PDH_STRING_NOT_FOUND = 0xC0000BD4
PDH_CSTATUS_INVALID_DATA = 0xC0000BBA
DATA_LINE = b"/data HTTP/1.1\r\n"


class Proxy:
    """a TCP proxy to @target on @addr: counts data requests; holds requests when hold is set"""

    def __init__(self, tag, addr, target, events):
        self.tag, self.target, self.events = tag, target, events
        self.hold = False
        self.data_requests = 0
        self.lock = threading.Lock()
        self.sock = socket.socket()
        self.sock.bind((addr, 0))
        self.sock.listen(16)
        self.name = "%s:%d" % (addr, self.sock.getsockname()[1])
        threading.Thread(target=self.accept, daemon=True).start()

    def event(self, what):
        with self.lock:
            self.events.append((self.tag, what))

    def accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(c,), daemon=True).start()

    def serve(self, c):
        up = socket.create_connection(self.target)

        def back():
            try:
                while True:
                    data = up.recv(1 << 16)
                    if not data:
                        break
                    c.sendall(data)
            except OSError:
                pass
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        threading.Thread(target=back, daemon=True).start()
        held, tail = False, b""
        try:
            while True:
                data = c.recv(1 << 16)
                if not data:
                    break
                if self.hold:
                    if not held:
                        self.event("held")  # a request arrived and is never answered
                    held = True
                    continue
                seen = tail + data
                with self.lock:
                    self.data_requests += seen.count(DATA_LINE)
                tail = seen[-(len(DATA_LINE) - 1):]
                up.sendall(data)
        except OSError:
            pass
        if held:
            self.event("gave up")  # the client closed the connection it waited on
        c.close()
        up.close()


def one_request_per_sample(lib, proxy):
    """the consumer API and PDH: one request per sample"""
    c = Client(lib, proxy.name)
    st, h = c.open()
    st2, b = c.add(h, identifier(SET1, 3, name="*"))
    check(st == 0 and st2 == 0 and statuses(b) == [0], "a query through the counting proxy")
    n = ctypes.c_uint32(0)

    def data(size):
        buf = ctypes.create_string_buffer(max(size, 1))
        return lib.PerfQueryCounterData(h, buf if size else None, size, ctypes.byref(n)), buf
    n0 = proxy.data_requests
    st, _ = data(0)
    need = n.value
    st2, buf = data(need)
    check(st == ERROR_NOT_ENOUGH_MEMORY and st2 == 0 and n.value == need and
          proxy.data_requests == n0 + 1,
          "sized with NULL, then filled: one request (%d), %d bytes" %
          (proxy.data_requests - n0, need))
    check(instance_names(buf.raw[:need]) == ["alpha", "beta", 'quote"back\\slash', "café €", "alpha"],
          "the answer kept for the retry is the sample's bytes")
    st, _ = data(need)
    check(st == 0 and proxy.data_requests == n0 + 2, "the next sample: one more request")
    st, _ = data(48)
    st2, _ = data(48)
    check(st == st2 == ERROR_NOT_ENOUGH_MEMORY and proxy.data_requests == n0 + 4,
          "a buffer still too small: a new sample each time (%d)" % (proxy.data_requests - n0))
    st, _ = data(0)
    st2, _ = c.add(h, identifier(SET1, 3, name="*"))
    st3, _ = data(need)
    check(st == ERROR_NOT_ENOUGH_MEMORY and st2 == 0 and st3 == 0 and
          proxy.data_requests == n0 + 6,
          "another call in between: the kept answer is dropped, the fill is a new sample")
    st, _ = data(0)
    time.sleep(1.2)
    st2, _ = data(need)
    check(st == ERROR_NOT_ENOUGH_MEMORY and st2 == 0 and proxy.data_requests == n0 + 8,
          "a fill more than a second after the sizing call: a new sample")
    lib.PerfCloseQueryHandle(h)


def pdh_lib(output):
    pdh = ctypes.CDLL(output + "/libpdh.so")
    for f in ("PdhOpenQueryA", "PdhAddCounterA", "PdhCollectQueryData",
              "PdhGetFormattedCounterValue", "PdhCloseQuery", "PdhLookupPerfIndexByNameA",
              "PdhLookupPerfNameByIndexA", "PdhLookupPerfIndexByNameW",
              "PdhLookupPerfNameByIndexW"):
        getattr(pdh, f).restype = ctypes.c_uint32
    return pdh


def pdh_one_request(pdh, proxy):
    q = ctypes.c_void_p()
    h = ctypes.c_void_p()
    pdh.PdhOpenQueryA(None, 0, ctypes.byref(q))
    st = pdh.PdhAddCounterA(q, ("\\\\%s\\Exporter Test(*)\\Queue Length" % proxy.name).encode(),
                            0, ctypes.byref(h))
    counts = []
    for _ in range(3):
        n0 = proxy.data_requests
        pdh.PdhCollectQueryData(q)
        counts.append(proxy.data_requests - n0)
    check(st == 0 and counts == [1, 1, 1],
          "PdhCollectQueryData of a remote counter: one request each, the first too (%s)" % counts)
    pdh.PdhCloseQuery(q)


def parallel(pdh, p1, p2, name_a, events):
    paths = ["\\\\%s\\Exporter Test(alpha)\\Queue Length" % p1.name,
             "\\\\%s\\Exporter Test(alpha)\\Queue Length" % p2.name,
             "\\\\%s\\Exporter Test(alpha)\\Queue Length" % name_a,
             "\\Exporter Test(alpha)\\Queue Length"]
    q = ctypes.c_void_p()
    check(pdh.PdhOpenQueryA(None, 0, ctypes.byref(q)) == 0, "PdhOpenQuery")
    hs = []
    for p in paths:
        h = ctypes.c_void_p()
        st = pdh.PdhAddCounterA(q, p.encode(), 0, ctypes.byref(h))
        check(st == 0, "PdhAddCounter %s (%x)" % (p, st))
        hs.append(h)

    def values():
        out = []
        for h in hs:
            v = FmtValue()
            st = pdh.PdhGetFormattedCounterValue(h, PDH_FMT_LARGE, None, ctypes.byref(v))
            out.append(v.large if st == 0 else hex(v.CStatus))
        return out
    st = pdh.PdhCollectQueryData(q)
    check(st == 0 and values() == [5, 4242, 5, 77],
          "four counters, three machines (two through proxies): %s" % values())
    p1.hold = p2.hold = True
    del events[:]
    st = pdh.PdhCollectQueryData(q)
    got = values()
    p1.hold = p2.hold = False
    # (the proxies' threads notice the closed connections in their own time: wait for them)
    for _ in range(300):
        if sum(e[1] == "gave up" for e in events) >= 2:
            break
        time.sleep(0.1)
    seen = list(events)
    check(st == 0 and got[2] == 5 and got[3] == 77,
          "two machines that never answer: the others' values in the same collection (%s)" % got)
    check(got[0] == got[1] == hex(PDH_NO_MACHINE),
          "the two silent machines' counters: PDH_CSTATUS_NO_MACHINE (%s)" % got[:2])
    held = [i for i, e in enumerate(seen) if e[1] == "held"]
    gave_up = [i for i, e in enumerate(seen) if e[1] == "gave up"]
    tags = sorted(seen[i][0] for i in held)
    check(tags == ["p1", "p2"] and len(gave_up) == 2 and max(held) < min(gave_up),
          "both silent machines' requests in flight at once, before the client gave up on "
          "either (one timeout, not two): %s" % seen)
    st = pdh.PdhCollectQueryData(q)
    check(st == 0 and values() == [5, 4242, 5, 77],
          "the machines answer again: read at the next collection (%s)" % values())
    pdh.PdhCloseQuery(q)


def lookups(pdh, name_a, p1):
    idx = ctypes.c_uint32(0)
    st = pdh.PdhLookupPerfIndexByNameA(None, b"Queue Length", ctypes.byref(idx))
    check(st == PDH_STRING_NOT_FOUND, "this machine has no Queue Length yet: %x" % st)
    ma = ("\\\\" + name_a).encode()
    st = pdh.PdhLookupPerfIndexByNameA(ma, b"Queue Length", ctypes.byref(idx))
    check(st == 0 and idx.value and idx.value % 2 == 0,
          "IndexByName on %s: its counter's index %d" % (name_a, idx.value))
    i2 = ctypes.c_uint32(0)
    st = pdh.PdhLookupPerfIndexByNameA(name_a.encode(), b"queue length", ctypes.byref(i2))
    check(st == 0 and i2.value == idx.value,
          "the machine without backslashes, the name in another case: the same index")
    iw = ctypes.c_uint32(0)
    st = pdh.PdhLookupPerfIndexByNameW(wstr("\\\\" + name_a), wstr("Exporter Test"),
                                      ctypes.byref(iw))
    check(st == 0 and iw.value and iw.value != idx.value, "IndexByNameW of the set's name")
    size = ctypes.c_uint32(0)
    one = ctypes.create_string_buffer(1)
    st = pdh.PdhLookupPerfNameByIndexA(ma, idx.value, one, ctypes.byref(size))
    check(st == PDH_MORE_DATA and size.value == len("Queue Length") + 1,
          "NameByIndex into 0 characters: PDH_MORE_DATA, %d" % size.value)
    buf = ctypes.create_string_buffer(64)
    size.value = 64
    st = pdh.PdhLookupPerfNameByIndexA(ma, idx.value, buf, ctypes.byref(size))
    check(st == 0 and buf.value == b"Queue Length" and size.value == 13,
          "NameByIndex on %s: the index back to its name (%r, %d)" % (name_a, buf.value, size.value))
    wbuf = ctypes.create_string_buffer(128)
    size.value = 64
    st = pdh.PdhLookupPerfNameByIndexW(wstr(p1.name), iw.value, wbuf, ctypes.byref(size))
    wname = wbuf.raw[: 2 * size.value].decode("utf-16-le")
    check(st == 0 and wname == "Exporter Test\0" and size.value == 14,
          "NameByIndexW through the proxy (another machine name, the same server)")
    size.value = 64
    st = pdh.PdhLookupPerfNameByIndexA(None, idx.value, buf, ctypes.byref(size))
    check(st == PDH_INVALID_ARGUMENT, "that index on this machine: not there (%x)" % st)
    st = pdh.PdhLookupPerfIndexByNameA(ma, b"No Such Counter", ctypes.byref(idx))
    check(st == PDH_STRING_NOT_FOUND, "a name %s does not have: PDH_STRING_NOT_FOUND" % name_a)
    size.value = 64
    st = pdh.PdhLookupPerfNameByIndexA(ma, 3, buf, ctypes.byref(size))
    check(st == PDH_INVALID_ARGUMENT, "an index %s does not have: PDH_INVALID_ARGUMENT" % name_a)
    st = pdh.PdhLookupPerfIndexByNameA(ma, None, ctypes.byref(idx))
    check(st == PDH_INVALID_ARGUMENT, "no name: PDH_INVALID_ARGUMENT (before any request)")
    free = socket.socket()
    free.bind(("127.0.0.4", 0))
    dead = "\\\\127.0.0.4:%d" % free.getsockname()[1]
    free.close()
    st = pdh.PdhLookupPerfIndexByNameA(dead.encode(), b"Queue Length", ctypes.byref(idx))
    size.value = 64
    st2 = pdh.PdhLookupPerfNameByIndexA(dead.encode(), 2, buf, ctypes.byref(size))
    check(st == st2 == PDH_NO_MACHINE,
          "a machine nobody serves: PDH_CSTATUS_NO_MACHINE both ways (%x %x)" % (st, st2))
    p1.hold = True
    st = pdh.PdhLookupPerfIndexByNameA(("\\\\" + p1.name).encode(), b"Queue Length",
                                       ctypes.byref(idx))
    p1.hold = False
    check(st == PDH_NO_MACHINE, "a machine that never answers: PDH_CSTATUS_NO_MACHINE (%x)" % st)
    hostile_lookups(pdh)


class Hostile(http.server.BaseHTTPRequestHandler):
    """a server that answers 200 with nonsense: 17 bytes of GUIDs, or one set whose
    registration is garbage"""
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path.endswith("/countersets"):
            body = b"x" * 17 if self.server.odd else uuid.UUID(SET1).bytes_le
        else:
            body = b"\xff" * 24  # a registration buffer that is none
        self.send_response(200)
        self.send_header("X-Perflib-Status", "0")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def hostile_lookups(pdh):
    srv = http.server.ThreadingHTTPServer(("127.0.0.7", 0), Hostile)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    name = ("\\\\127.0.0.7:%d" % srv.server_address[1]).encode()
    idx = ctypes.c_uint32(0)
    srv.odd = True
    st = pdh.PdhLookupPerfIndexByNameA(name, b"Queue Length", ctypes.byref(idx))
    check(st == PDH_CSTATUS_INVALID_DATA,
          "a hostile machine (17 bytes of GUIDs): PDH_CSTATUS_INVALID_DATA (%x)" % st)
    srv.odd = False
    st = pdh.PdhLookupPerfIndexByNameA(name, b"Queue Length", ctypes.byref(idx))
    check(st == PDH_STRING_NOT_FOUND,
          "a hostile machine (a set whose registration is garbage): its names are none "
          "(%x)" % st)
    srv.shutdown()
    srv.server_close()


def header(log):
    """the counter paths of a CSV log's header"""
    line = open(log, encoding="utf-8").readline().rstrip("\r\n")
    return [c.strip('"') for c in line.split('","')[1:]]


def relog_remote(output, tmp, name_a, p2):
    """typeperf records three machines into one log; relog filters it by machine"""
    log, out = tmp + "/machines.csv", tmp + "/relogged.csv"
    here = socket.gethostname()
    qlen = "\\Exporter Test(%s)\\Queue Length"
    conns = "\\Exporter Single\\Connections"
    r = subprocess.run([output + "/tools/typeperf",
                        "\\\\%s\\Exporter Test(*)\\Queue Length" % name_a,
                        "\\\\%s\\Exporter Single\\Connections" % p2.name,
                        "\\Exporter Single\\Connections", "-sc", "2", "-si", "1",
                        "-o", log, "-y"], capture_output=True, text=True, timeout=60)
    cols = header(log)
    check(r.returncode == 0 and len(cols) == 7 and cols[0] == "\\\\" + name_a + qlen % "alpha"
          and cols[6] == "\\\\" + here + conns,
          "typeperf: a log of three machines, each column under its machine (%s)" % cols)

    def relog(*args):
        if os.path.exists(out):
            os.unlink(out)
        r = subprocess.run([output + "/tools/relog", log, "-o", out, "-y"] + list(args),
                           capture_output=True, text=True, timeout=60)
        if r.returncode:
            return r.returncode, r.stderr.strip()
        return 0, header(out)
    st, got = relog("-c", "\\\\%s\\Exporter Test(*)\\Queue Length" % name_a)
    check(st == 0 and got == cols[:5],
          "relog -c \\\\%s\\...(*): that machine's five columns (%s)" % (name_a, got))
    st, got = relog("-c", "\\Exporter Single\\Connections")
    check(st == 0 and got == cols[5:],
          "relog -c without a machine: the counter of every machine in the log (%s)" % (got,))
    st, got = relog("-c", "\\\\%s\\Exporter Single\\*" % p2.name)
    check(st == 0 and got == cols[5:6],
          "relog -c \\\\HOST:PORT\\...\\*: that machine's column only (%s)" % (got,))
    st, got = relog("-c", "\\\\%s\\Exporter Single\\Connections" % here.upper())
    check(st == 0 and got == cols[6:],
          "relog -c \\\\HOST in another case: that machine's column only (%s)" % (got,))
    st, got = relog("-c", "\\\\*\\Exporter Single\\Connections")
    check(st == 0 and len(got) == 2, "relog -c \\\\*\\...: every machine (%s)" % (got,))
    cf = tmp + "/counters.txt"
    with open(cf, "w") as f:
        f.write("; by machine\n\\\\%s\\Exporter Single\\Connections\n\\\\%s\\Exporter Test(beta)\\*\n"
                % (here, name_a))
    st, got = relog("-cf", cf)
    check(st == 0 and got == [cols[6], "\\\\" + name_a + qlen % "beta"],
          "relog -cf with \\\\host paths: those columns, in the file's order (%s)" % (got,))
    # a machine the log does not have: not contacted (127.0.0.4: nobody listens), refused
    st, err = relog("-c", "\\\\127.0.0.4:1\\Exporter Single\\Connections")
    check(st == 1 and "not in the log" in err, "relog -c of a machine not in the log: %s" % err)
    st, err = relog("-c", "\\\\%s\\Exporter Single\\Connections" % name_a)
    check(st == 1 and "not in the log" in err,
          "relog -c of a counter the log has of other machines only: %s" % err)


def run(output, root_a, root_b, root_c, tmp):
    prov_a = start_provider(output, root_a, tmp, "a")
    prov_b = start_provider(output, root_b, tmp, "b")
    check(provider_cmd(prov_b, "set 0 0 3 4242") == "ok", "server B's alpha differs")
    exp_a, port_a = start_exporter(output, root_a, "127.0.0.2:0", tmp, "a")
    exp_b, port_b = start_exporter(output, root_b, "127.0.0.3:0", tmp, "b")
    name_a = "127.0.0.2:%d" % port_a
    events = []
    p1 = Proxy("p1", "127.0.0.8", ("127.0.0.2", port_a), events)
    p2 = Proxy("p2", "127.0.0.9", ("127.0.0.3", port_b), events)
    os.environ["PERFLIB_ROOT"] = root_c
    lib = load(output + "/libperflib.so")
    pdh = pdh_lib(output)
    lookups(pdh, name_a, p1)
    one_request_per_sample(lib, p1)
    pdh_one_request(pdh, p1)
    prov_c = start_provider(output, root_c, tmp, "c")
    check(provider_cmd(prov_c, "set 0 0 3 77") == "ok", "this machine: a provider, alpha 77")
    parallel(pdh, p1, p2, name_a, events)
    relog_remote(output, tmp, name_a, p2)
    for p in (prov_a, prov_b, prov_c):
        p.stdin.close()
        p.wait(10)
    stop(exp_a)
    stop(exp_b)
    return remote_client_check.failures


if __name__ == "__main__":
    main(run)
