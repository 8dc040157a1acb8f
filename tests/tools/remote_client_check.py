# SPDX-License-Identifier: MIT
# remote_client_check.py - run by test_remote_client.sh: the consumer API of libperflib.so
# (ctypes) given other machines' names, against two perflib-exporters on 127.0.0.2 and
# 127.0.0.3 (each with a provider under its own PERFLIB_ROOT) while this process's own root
# is empty: the bytes of every call are those of the same call made locally on the server's
# side; errors of unreachable, refused, silent and killed servers; a remote instance that
# disappears and comes back; a server that restarts in the middle of a query.
#
#   remote_client_check.py run OUTPUT ROOT_A ROOT_B ROOT_C TMP   the whole test
#   remote_client_check.py dump LIB FILE                         (internal) local calls, as JSON
import ctypes
import json
import os
import re
import socket
import struct
import subprocess
import sys
import time
import uuid

from perfwire import identifier, statuses, without_times

ERROR_SUCCESS = 0
ERROR_ACCESS_DENIED = 5
ERROR_INVALID_HANDLE = 6
ERROR_NOT_ENOUGH_MEMORY = 8
ERROR_BAD_NETPATH = 53
ERROR_INVALID_PARAMETER = 87
ERROR_NOT_FOUND = 1168
ERROR_WMI_GUID_NOT_FOUND = 4200
SET1 = "e4b0e7a0-0001-4e5f-8a6b-000000000001"
SET2 = "e4b0e7a0-0002-4e5f-8a6b-000000000002"
UNKNOWN = "00000000-0000-0000-0000-0000000000aa"

failures = 0


def check(cond, what):
    global failures
    print(("ok    " if cond else "FAIL  ") + what, flush=True)
    if not cond:
        failures += 1


def load(libpath):
    lib = ctypes.CDLL(libpath)
    for f in ("PerfEnumerateCounterSet", "PerfEnumerateCounterSetInstances",
              "PerfQueryCounterSetRegistrationInfo", "PerfOpenQueryHandle", "PerfAddCounters",
              "PerfDeleteCounters", "PerfQueryCounterInfo", "PerfQueryCounterData",
              "PerfCloseQueryHandle"):
        getattr(lib, f).restype = ctypes.c_uint32
    return lib


def wstr(s):
    return None if s is None else ctypes.create_string_buffer((s + "\0").encode("utf-16-le"))


def gbuf(g):
    return ctypes.create_string_buffer(uuid.UUID(g).bytes_le, 16)


def sized(call):
    """the Windows buffer protocol: (status, bytes); the sizing call first"""
    need = ctypes.c_uint32(0)
    st = call(None, 0, ctypes.byref(need))
    for _ in range(8):
        if st != ERROR_NOT_ENOUGH_MEMORY:
            break
        buf = ctypes.create_string_buffer(need.value + 64)
        st = call(buf, len(buf), ctypes.byref(need))
        if st == ERROR_SUCCESS:
            return st, buf.raw[: need.value]
    return st, b""


def instance_names(data):
    """the instance names of the first block (PERF_MULTIPLE_INSTANCES), None when not one"""
    if len(data) < 48 + 16 + 8:
        return None
    status, typ, size, _ = struct.unpack_from("<IIII", data, 48)
    if status or typ != 4:  # PERF_MULTIPLE_INSTANCES
        return None
    _, nr = struct.unpack_from("<II", data, 64)
    names, p = [], 72
    for _ in range(nr):
        isize, _ = struct.unpack_from("<II", data, p)
        names.append(data[p + 8: p + isize].decode("utf-16-le").split("\0")[0])
        p += isize
        _, dsize = struct.unpack_from("<II", data, p)
        p += dsize
    return names


class Client:
    """the consumer calls with a machine name"""

    def __init__(self, lib, machine):
        self.lib, self.m = lib, wstr(machine)

    def sets(self):
        def call(buf, size, need):
            st = self.lib.PerfEnumerateCounterSet(self.m, buf, size // 16, need)
            need._obj.value *= 16
            return st
        return sized(call)

    def reg(self, g, code, lang=0):
        gb = gbuf(g)
        return sized(lambda buf, size, need: self.lib.PerfQueryCounterSetRegistrationInfo(
            self.m, gb, code, lang, buf, size, need))

    def instances(self, g):
        gb = gbuf(g)
        return sized(lambda buf, size, need: self.lib.PerfEnumerateCounterSetInstances(
            self.m, gb, buf, size, need))

    def open(self):
        h = ctypes.c_void_p()
        st = self.lib.PerfOpenQueryHandle(self.m, ctypes.byref(h))
        return st, h

    def add(self, h, ids, delete=False):
        b = ctypes.create_string_buffer(ids, len(ids))
        f = self.lib.PerfDeleteCounters if delete else self.lib.PerfAddCounters
        st = f(h, b, len(ids))
        return st, b.raw

    def data(self, h):
        return sized(lambda buf, size, need: self.lib.PerfQueryCounterData(h, buf, size, need))

    def info(self, h):
        return sized(lambda buf, size, need: self.lib.PerfQueryCounterInfo(h, buf, size, need))


QUERY = identifier(SET1, 3, name="*") + identifier(SET2, 0xFFFFFFFF)
WHOLE = identifier(SET1, 0xFFFFFFFF, name="*")
ADD = identifier(SET1, 3, name="*") + identifier(SET1, 99, name="*") + identifier(UNKNOWN, 1)


def calls(c):
    """every call of the test, with its answer: what dump writes and run compares"""
    out = {}
    st, b = c.sets()
    out["sets"] = [st, b.hex()]
    for g in (SET1, SET2, UNKNOWN):
        for code in range(1, 11):
            st, b = c.reg(g, code, 1 if code == 2 else 0)
            out["reg %s %d" % (g, code)] = [st, b.hex()]
        st, b = c.instances(g)
        out["instances " + g] = [st, b.hex()]
    st, h = c.open()
    out["open"] = [st, ""]
    st, b = c.add(h, ADD)
    out["add"] = [st, b.hex()]
    st, b = c.add(h, QUERY + WHOLE)
    out["add query"] = [st, b.hex()]
    st, b = c.add(h, identifier(SET1, 3, name="*"), delete=True)
    out["delete"] = [st, b.hex()]
    st, b = c.info(h)
    out["info"] = [st, b.hex()]
    st, b = c.data(h)
    out["data"] = [st, without_times(b).hex()]
    out["close"] = [c.lib.PerfCloseQueryHandle(h), ""]
    return out


def dump(libpath, path):
    with open(path, "w") as f:
        json.dump(calls(Client(load(libpath), None)), f)


# ---- processes ---------------------------------------------------------------------------
procs = []


def start_provider(output, root, tmp, tag):
    env = dict(os.environ, PERFLIB_ROOT=root)
    p = subprocess.Popen([output + "/tests/helpers/exp_provider"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=open(tmp + "/prov-%s.err" % tag, "w"),
                         env=env, text=True)
    procs.append(p)
    line = p.stdout.readline().strip()
    if line != "ready":
        raise SystemExit("FAIL: provider %s did not start: %r" % (tag, line))
    return p


def provider_cmd(p, cmd):
    p.stdin.write(cmd + "\n")
    p.stdin.flush()
    return p.stdout.readline().strip()


def start_exporter(output, root, listen, tmp, tag):
    err = tmp + "/exp-%s.err" % tag
    env = dict(os.environ, PERFLIB_ROOT=root)
    p = subprocess.Popen([output + "/tools/perflib-exporter", "--listen", listen],
                         stdout=subprocess.DEVNULL, stderr=open(err, "w"), env=env)
    procs.append(p)
    for _ in range(200):
        m = re.search(r"listening on https?://[^ ]*:(\d+)/", open(err).read())
        if m:
            return p, int(m.group(1))
        if p.poll() is not None:
            break
        time.sleep(0.05)
    raise SystemExit("FAIL: exporter %s did not start: %s" % (tag, open(err).read()))


def stop(p):
    if p.poll() is None:
        p.terminate()
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def compare(lib, machine, local, what):
    got = calls(Client(lib, machine))
    same = [k for k in local if got.get(k) == local[k]]
    diff = [k for k in local if got.get(k) != local[k]]
    check(not diff, "%s: %d calls give the local calls' status and bytes%s" %
          (what, len(same), "" if not diff else "; differ: %s" % diff[:4]))
    for k in diff[:2]:
        print("      %s local %s remote %s" % (k, str(local[k])[:160], str(got.get(k))[:160]))


def run(output, root_a, root_b, root_c, tmp):
    pyself = os.path.abspath(__file__)
    libpath = output + "/libperflib.so"
    prov_a = start_provider(output, root_a, tmp, "a")
    prov_b = start_provider(output, root_b, tmp, "b")
    # the servers differ: B's alpha has another queue length
    check(provider_cmd(prov_b, "set 0 0 3 4242") == "ok", "server B's values differ from A's")
    exp_a, port_a = start_exporter(output, root_a, "127.0.0.2:0", tmp, "a")
    exp_b, port_b = start_exporter(output, root_b, "127.0.0.3:0", tmp, "b")
    local = {}
    for tag, root in (("a", root_a), ("b", root_b)):
        path = tmp + "/local-%s.json" % tag
        subprocess.run([sys.executable, pyself, "dump", libpath, path], check=True,
                       env=dict(os.environ, PERFLIB_ROOT=root))
        local[tag] = json.load(open(path))
    check(local["a"]["data"] != local["b"]["data"], "the two servers' data differ")

    # this process: an empty root of its own
    os.environ["PERFLIB_ROOT"] = root_c
    lib = load(libpath)
    here = Client(lib, None)
    st, b = here.sets()
    check(st == 0 and b == b"", "the client's own root is empty")
    name_a, name_b = "127.0.0.2:%d" % port_a, "127.0.0.3:%d" % port_b
    compare(lib, name_a, local["a"], "\\\\" + name_a)
    compare(lib, "\\\\" + name_b, local["b"], "\\\\" + name_b)
    # the port from the settings file, not the name
    conf = tmp + "/remote.conf"
    with open(conf, "w") as f:
        f.write("# test settings\ntimeout = 2\n[127.0.0.3]\nport = %d\n" % port_b)
    # (read once per process: a child process reads it)
    r = subprocess.run([sys.executable, "-c", """
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
n = ctypes.c_uint32(0)
st = lib.PerfEnumerateCounterSet(ctypes.create_string_buffer("127.0.0.3".encode("utf-16-le") + b"\\0\\0"), None, 0, ctypes.byref(n))
print(st, n.value)
""", libpath], env=dict(os.environ, PERFLIB_REMOTE_CONFIG=conf), capture_output=True, text=True)
    check(r.stdout.split() == [str(ERROR_NOT_ENOUGH_MEMORY), "2"],
          "a [host] section of the settings file gives its port: %s %s" % (r.stdout.strip(), r.stderr.strip()[:200]))
    r = subprocess.run([sys.executable, "-c", """
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
n = ctypes.c_uint32(0)
st = lib.PerfEnumerateCounterSet(ctypes.create_string_buffer("127.0.0.2".encode("utf-16-le") + b"\\0\\0"), None, 0, ctypes.byref(n))
print(st, n.value)
""", libpath], env=dict(os.environ, PERFLIB_REMOTE_PORT=str(port_a), PERFLIB_REMOTE_CONFIG=""),
        capture_output=True, text=True)
    check(r.stdout.split() == [str(ERROR_NOT_ENOUGH_MEMORY), "2"],
          "PERFLIB_REMOTE_PORT gives the port: %s %s" % (r.stdout.strip(), r.stderr.strip()[:200]))

    # the size protocol of each call, remotely
    ca = Client(lib, name_a)
    n = ctypes.c_uint32(0)
    one = ctypes.create_string_buffer(16)
    st = lib.PerfEnumerateCounterSet(ca.m, one, 1, ctypes.byref(n))
    check(st == ERROR_NOT_ENOUGH_MEMORY and n.value == 2, "sets into room for 1: 8, 2 needed")
    st = lib.PerfEnumerateCounterSetInstances(ca.m, gbuf(SET1), None, 0, ctypes.byref(n))
    check(st == ERROR_NOT_ENOUGH_MEMORY and n.value > 0, "instances sized: 8, %d" % n.value)
    st = lib.PerfEnumerateCounterSetInstances(ca.m, None, None, 0, ctypes.byref(n))
    check(st == ERROR_INVALID_PARAMETER, "a NULL set: 87 (before any request)")

    # handles: a remote one checked like a local one
    st, h = ca.open()
    check(st == 0 and h.value, "PerfOpenQueryHandle(\\\\%s)" % name_a)
    st, _ = ca.add(h, b"\0" * 39)
    check(st == ERROR_INVALID_PARAMETER, "a truncated block on a remote query: 87")
    st, b = ca.add(h, QUERY)
    check(st == 0 and statuses(b) == [0, 0], "add: both specifications")
    st, d1 = ca.data(h)
    check(st == 0 and instance_names(d1) == ["alpha", "beta", 'quote"back\\slash', "café €", "alpha"],
          "data: the instances of server A (%s)" % (instance_names(d1),))
    small = ctypes.create_string_buffer(48)
    st = lib.PerfQueryCounterData(h, small, 48, ctypes.byref(n))
    check(st == ERROR_NOT_ENOUGH_MEMORY and n.value == len(d1), "data into 48 bytes: 8 and the size")
    st = lib.PerfQueryCounterData(h, None, 0, None)
    check(st == ERROR_INVALID_PARAMETER, "data without a size pointer: 87")
    forged = ctypes.c_void_p(h.value + 1000)
    check(lib.PerfQueryCounterData(forged, small, 48, ctypes.byref(n)) == ERROR_INVALID_HANDLE,
          "a forged remote handle: 6")

    # an instance that disappears and comes back between samples
    check(provider_cmd(prov_a, "delete 0 1") == "ok", "server A: beta deleted")
    st, d = ca.data(h)
    check(st == 0 and "beta" not in (instance_names(d) or []), "beta gone from the next sample")
    check(provider_cmd(prov_a, "create 0 1") == "ok", "server A: beta created again")
    st, d = ca.data(h)
    check(st == 0 and "beta" in (instance_names(d) or []), "beta back in the next sample")

    # the server killed in the middle of the query, then back on its port: the query is
    # opened again there, with its specifications
    t0 = time.monotonic()
    exp_a.kill()
    exp_a.wait()
    st, _ = ca.data(h)
    check(st == ERROR_BAD_NETPATH, "server A killed: data gives 53 (%d) in %.2f s" %
          (st, time.monotonic() - t0))
    st, _ = ca.sets()
    check(st == ERROR_BAD_NETPATH, "server A killed: enumerate gives 53")
    exp_a, _ = start_exporter(output, root_a, name_a, tmp, "a2")
    st, d = ca.data(h)
    # (beta came back in another slot: the same instances, perhaps in another order)
    check(st == 0 and sorted(instance_names(d) or []) == sorted(instance_names(d1)),
          "server A back on its port: the same query's data again (%d)" % st)
    st, b = ca.info(h)
    check(st == 0 and statuses(b) == [0, 0], "its specifications were added again")
    check(lib.PerfCloseQueryHandle(h) == 0, "close")
    check(lib.PerfCloseQueryHandle(h) == ERROR_INVALID_HANDLE, "close again: 6")
    check(lib.PerfQueryCounterData(h, small, 48, ctypes.byref(n)) == ERROR_INVALID_HANDLE,
          "data on a closed remote handle: 6")

    # a connection kept: many requests, one TCP connection (the server sees one peer port)
    st, h = ca.open()
    ca.add(h, QUERY)
    before = conns_to(port_a)
    for _ in range(20):
        ca.data(h)
    after = conns_to(port_a)
    check(len(after) == 1 and after == before, "20 samples on one kept connection (%s -> %s)" %
          (before, after))
    lib.PerfCloseQueryHandle(h)

    # unreachable: nothing listens (refused, at once)
    free = socket.socket()
    free.bind(("127.0.0.4", 0))
    dead = "127.0.0.4:%d" % free.getsockname()[1]
    free.close()
    t0 = time.monotonic()
    cd = Client(lib, dead)
    res = [cd.sets()[0], cd.instances(SET1)[0], cd.reg(SET1, 1)[0], cd.open()[0]]
    check(res == [ERROR_BAD_NETPATH] * 4 and time.monotonic() - t0 < 2,
          "refused: every call 53 at once (%s, %.2f s)" % (res, time.monotonic() - t0))
    st = lib.PerfEnumerateCounterSet(wstr("no-such-host.invalid"), None, 0, ctypes.byref(n))
    check(st == ERROR_BAD_NETPATH, "a name DNS does not know: 53")
    st = lib.PerfEnumerateCounterSet(wstr("bad/name"), None, 0, ctypes.byref(n))
    check(st == ERROR_BAD_NETPATH, "a name that is no host name: 53")
    st = lib.PerfEnumerateCounterSet(wstr("\\\\"), None, 0, ctypes.byref(n))
    check(st == ERROR_BAD_NETPATH, "only backslashes: 53")
    # a server that accepts and never answers: the timeout (PERFLIB_REMOTE_TIMEOUT, in a
    # child so the setting is read fresh)
    silent = socket.socket()
    silent.bind(("127.0.0.5", 0))
    silent.listen(8)
    r = subprocess.run([sys.executable, "-c", """
import ctypes, sys, time
lib = ctypes.CDLL(sys.argv[1])
n = ctypes.c_uint32(0)
t0 = time.monotonic()
st = lib.PerfEnumerateCounterSet(ctypes.create_string_buffer(sys.argv[2].encode("utf-16-le") + b"\\0\\0"), None, 0, ctypes.byref(n))
print(st, "%.2f" % (time.monotonic() - t0))
""", libpath, "127.0.0.5:%d" % silent.getsockname()[1]],
        env=dict(os.environ, PERFLIB_REMOTE_TIMEOUT="1", PERFLIB_REMOTE_CONFIG=""),
        capture_output=True, text=True)
    silent.close()
    out = r.stdout.split()
    check(len(out) == 2 and out[0] == str(ERROR_BAD_NETPATH) and 0.9 < float(out[1]) < 3,
          "a silent server: 53 after the 1 s timeout (%s)" % r.stdout.strip())
    # something else answers HTTP there: no X-Perflib-Status
    other = subprocess.Popen([sys.executable, "-m", "http.server", "--bind", "127.0.0.6", "0"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             cwd=tmp)
    procs.append(other)
    line = other.stdout.readline()
    m = re.search(r"port (\d+)", line)
    if m:
        st = lib.PerfEnumerateCounterSet(wstr("127.0.0.6:" + m.group(1)), None, 0,
                                         ctypes.byref(n))
        check(st == ERROR_BAD_NETPATH, "another HTTP server (404, no status): 53")
    stop(other)

    hostile_checks(lib)

    # local names stay local: no request (the client's root is empty, servers are not)
    for name in (None, "", ".", "localhost", "\\\\localhost", socket.gethostname(),
                 "\\\\" + socket.gethostname().upper()):
        st = lib.PerfEnumerateCounterSet(wstr(name), None, 0, ctypes.byref(n))
        check(st == 0 and n.value == 0, "%r is this machine (empty root): 0 sets" % (name,))

    exp_a, exp_b = pdh_checks(output, tmp, root_a, root_b, root_c, exp_a, exp_b, name_a, name_b)

    stop(exp_a)
    stop(exp_b)
    for p in (prov_a, prov_b):
        p.stdin.close()
        p.wait(10)
    return failures


def hostile_checks(lib):
    """a server that answers 200 with nonsense: refused, never trusted, never a crash"""
    import http.server
    import threading

    class Hostile(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def answer(self, body, status="0", code=200):
            self.send_response(code)
            if status is not None:
                self.send_header("X-Perflib-Status", status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            p = self.path
            if p.endswith("/countersets"):
                self.answer(b"x" * 17)  # not a multiple of 16
            elif p.endswith("/instances"):
                self.answer(b"", status="not a number")
            elif "registration" in p:
                self.answer(b"", status="99999999999")
            elif p.endswith("/data"):
                self.answer(b"\xff" * 64)  # PDH walks it: malformed
            else:
                self.answer(b"?", status=None, code=404)

        def do_POST(self):
            if self.path.endswith("/queries"):
                # a token of the wrong form for the first query, a good one after
                self.server.opens += 1
                self.answer(b"not-a-token" if self.server.opens == 1 else b"0123456789abcdef")
            else:
                n = int(self.headers.get("Content-Length", 0))
                self.rfile.read(n)
                self.answer(b"short")  # not the blocks sent back

    srv = http.server.ThreadingHTTPServer(("127.0.0.7", 0), Hostile)
    srv.opens = 0
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    c = Client(lib, "127.0.0.7:%d" % srv.server_address[1])
    n = ctypes.c_uint32(0)
    check(c.sets()[0] == 13, "hostile server: 17 bytes of GUIDs: ERROR_INVALID_DATA")
    check(c.instances(SET1)[0] == ERROR_BAD_NETPATH, "hostile server: a status that is no number: 53")
    check(c.reg(SET1, 1)[0] == ERROR_BAD_NETPATH, "hostile server: a status past 32 bits: 53")
    st, h = c.open()
    check(st == ERROR_BAD_NETPATH, "hostile server: a token of the wrong form: 53")
    st, h = c.open()
    check(st == 0, "hostile server: a well-formed token: a handle")
    st, _ = c.add(h, QUERY)
    check(st == 13, "hostile server: add answered with other bytes: ERROR_INVALID_DATA")
    st, d = c.data(h)
    check(st == 0 and len(d) == 64, "hostile server: data bytes handed over as they came (the caller checks them)")
    lib.PerfCloseQueryHandle(h)
    srv.shutdown()
    srv.server_close()


PDH_NO_MACHINE = 0x800007D0
PDH_FMT_LARGE = 0x400


class FmtValue(ctypes.Structure):
    _fields_ = [("CStatus", ctypes.c_uint32), ("large", ctypes.c_int64)]


def multi_sz(raw):
    return [x for x in raw.decode().split("\0") if x]


def pdh_list(call):
    """a PDH MULTI_SZ in characters: (status, strings); the sizing call first"""
    n = ctypes.c_uint32(0)
    st = call(None, ctypes.byref(n))
    if st not in (0, 0x800007D2):
        return st, []
    buf = ctypes.create_string_buffer(n.value + 1)
    st = call(buf, ctypes.byref(n))
    return st, multi_sz(buf.raw[: n.value])


def pdh_checks(output, tmp, root_a, root_b, root_c, exp_a, exp_b, name_a, name_b):
    """PDH and typeperf on other machines; returns the servers (B is restarted)"""
    pdh = ctypes.CDLL(output + "/libpdh.so")
    for f in ("PdhOpenQueryA", "PdhAddCounterA", "PdhCollectQueryData",
              "PdhGetFormattedCounterValue", "PdhEnumObjectsA", "PdhEnumObjectItemsA",
              "PdhConnectMachineA", "PdhEnumMachinesA", "PdhExpandWildCardPathA",
              "PdhValidatePathA", "PdhCloseQuery"):
        getattr(pdh, f).restype = ctypes.c_uint32
    # this machine has the provider too now, with its own value
    prov_c = start_provider(output, root_c, tmp, "c")
    check(provider_cmd(prov_c, "set 0 0 3 77") == "ok", "this machine: a provider, alpha 77")
    ma, mb = b"\\\\" + name_a.encode(), b"\\\\" + name_b.encode()

    st, objs = pdh_list(lambda buf, n: pdh.PdhEnumObjectsA(None, ma, buf, n, 0xFFFFFFFF, 1))
    check(st == 0 and sorted(objs) == ["Exporter Single", "Exporter Test"],
          "PdhEnumObjects on %s: %s (%x)" % (name_a, objs, st))
    n1, n2 = ctypes.c_uint32(0), ctypes.c_uint32(0)
    st = pdh.PdhEnumObjectItemsA(None, mb, b"Exporter Test", None, ctypes.byref(n1), None,
                                 ctypes.byref(n2), 0xFFFFFFFF, 0)
    c1, c2 = ctypes.create_string_buffer(n1.value + 1), ctypes.create_string_buffer(n2.value + 1)
    st = pdh.PdhEnumObjectItemsA(None, mb, b"Exporter Test", c1, ctypes.byref(n1), c2,
                                 ctypes.byref(n2), 0xFFFFFFFF, 0)
    insts = multi_sz(c2.raw[: n2.value])
    check(st == 0 and "Queue Length" in multi_sz(c1.raw[: n1.value]) and "alpha" in insts,
          "PdhEnumObjectItems on %s: counters and instances %s" % (name_b, insts))
    check(pdh.PdhConnectMachineA(ma) == 0, "PdhConnectMachine(%s)" % name_a)
    check(pdh.PdhConnectMachineA(b"\\\\127.0.0.4:1") == PDH_NO_MACHINE,
          "PdhConnectMachine of a machine nobody serves: PDH_CSTATUS_NO_MACHINE")
    st, machines = pdh_list(lambda buf, n: pdh.PdhEnumMachinesA(None, buf, n))
    check(st == 0 and ("\\\\" + name_a) in machines and len(machines) == 2,
          "PdhEnumMachines: this one and the connected one (%s)" % machines)
    path_a = ma + b"\\Exporter Test(alpha)\\Queue Length"
    path_b = mb + b"\\Exporter Test(alpha)\\Queue Length"
    path_c = b"\\Exporter Test(alpha)\\Queue Length"
    check(pdh.PdhValidatePathA(path_a) == 0, "PdhValidatePath of a path on %s" % name_a)
    check(pdh.PdhValidatePathA(ma + b"\\No Such\\Thing") != 0, "a missing object there: refused")
    st, paths = pdh_list(lambda buf, n: pdh.PdhExpandWildCardPathA(
        None, ma + b"\\Exporter Test(*)\\Queue Length", buf, n, 0))
    check(st == 0 and len(paths) == 5 and all(p.startswith("\\\\" + name_a) for p in paths),
          "PdhExpandWildCardPath on %s: %d paths" % (name_a, len(paths)))

    q = ctypes.c_void_p()
    check(pdh.PdhOpenQueryA(None, 0, ctypes.byref(q)) == 0, "PdhOpenQuery")
    hs = []
    for path in (path_a, path_b, path_c):
        h = ctypes.c_void_p()
        st = pdh.PdhAddCounterA(q, path, 0, ctypes.byref(h))
        check(st == 0, "PdhAddCounter %s (%x)" % (path.decode(), st))
        hs.append(h)
    h = ctypes.c_void_p()
    st = pdh.PdhAddCounterA(q, b"\\\\127.0.0.4:1\\Exporter Test(alpha)\\Queue Length", 0,
                            ctypes.byref(h))
    check(st == PDH_NO_MACHINE, "PdhAddCounter on a machine nobody serves: %x" % st)

    def values():
        out = []
        for h in hs:
            v = FmtValue()
            st = pdh.PdhGetFormattedCounterValue(h, PDH_FMT_LARGE, None, ctypes.byref(v))
            out.append(v.large if st == 0 else ("st", hex(st), hex(v.CStatus)))
        return out
    check(pdh.PdhCollectQueryData(q) == 0, "PdhCollectQueryData: three machines")
    got = values()
    check(got == [5, 4242, 77], "one query, three machines' values: %s" % got)
    # server B killed: its counter says so, the others are read
    exp_b.kill()
    exp_b.wait()
    t0 = time.monotonic()
    st = pdh.PdhCollectQueryData(q)
    got = values()
    check(st == 0 and got[0] == 5 and got[2] == 77 and got[1][2] == hex(PDH_NO_MACHINE),
          "server B down: A and this machine read, B's counter PDH_CSTATUS_NO_MACHINE "
          "(%s, %.2f s)" % (got, time.monotonic() - t0))
    exp_b, _ = start_exporter(output, root_b, name_b, tmp, "b2")
    st = pdh.PdhCollectQueryData(q)
    check(st == 0 and values() == [5, 4242, 77], "server B back: read again at the next collection (%s)" % values())
    pdh.PdhCloseQuery(q)

    # typeperf: -s and \\computer paths, mixed with this machine
    env = dict(os.environ)
    r = subprocess.run([output + "/tools/typeperf", "-s", name_a, "\\Exporter Test(alpha)\\Queue Length",
                        "\\\\" + name_b + "\\Exporter Single\\Connections",
                        "\\\\localhost\\Exporter Test(alpha)\\Queue Length", "-sc", "2", "-si", "1"],
                       capture_output=True, text=True, env=env, timeout=60)
    lines = [l for l in r.stdout.splitlines() if l.startswith('"')]
    check(r.returncode == 0 and len(lines) == 3 and ("\\\\%s\\Exporter Test(alpha)" % name_a) in lines[0]
          and lines[2].endswith('"5.000000","12345678901234.000000","77.000000"'),
          "typeperf -s %s with a \\\\%s path and a local one: %s %s" % (name_a, name_b, lines, r.stderr.strip()))
    # a machine that goes away while typeperf runs, and comes back: " " in its column
    # meanwhile, this machine's and A's values all along (synchronised on typeperf's rows)
    tp = subprocess.Popen([output + "/tools/typeperf", "\\\\" + name_a + "\\Exporter Single\\Connections",
                           "\\\\" + name_b + "\\Exporter Single\\Connections", "-si", "1", "-sc", "10"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    procs.append(tp)
    rows, state = [], "up"
    for line in tp.stdout:
        if not line.startswith('"') or "PDH-CSV" in line:
            continue
        rows.append(line.strip())
        if state == "up":
            exp_b.kill()
            exp_b.wait()
            state = "down"
        elif state == "down" and line.strip().endswith('" "'):
            exp_b, _ = start_exporter(output, root_b, name_b, tmp, "b3")
            state = "back"
        elif state == "back" and line.strip().endswith('"12345678901234.000000"'):
            state = "done"
            break
    tp.kill()
    tp.wait()
    check(state == "done" and all('"12345678901234.000000"' in r.split(",")[1] for r in rows),
          "typeperf: B away then back: %s" % rows)
    if state in ("up", "down"):
        exp_b, _ = start_exporter(output, root_b, name_b, tmp, "b4")
    r = subprocess.run([output + "/tools/typeperf", "-q", "-s", name_b], capture_output=True,
                       text=True, timeout=60)
    check(r.returncode == 0 and "\\Exporter Test(*)\\Queue Length" in r.stdout.replace("\\\\" + name_b, ""),
          "typeperf -q -s %s lists its counters" % name_b)
    r = subprocess.run([output + "/tools/typeperf", "-s", "127.0.0.4:1", "\\Exporter Single\\Connections",
                        "-sc", "1"], capture_output=True, text=True, timeout=60)
    check(r.returncode == 1 and "cannot be reached" in r.stderr,
          "typeperf -s of a machine nobody serves: %s" % r.stderr.strip())
    prov_c.stdin.close()
    prov_c.wait(10)
    return exp_a, exp_b


def conns_to(port):
    """local ports of this process's TCP connections to @port (from /proc/self/net/tcp)"""
    out = set()
    for line in open("/proc/net/tcp").read().splitlines()[1:]:
        f = line.split()
        lport = int(f[1].split(":")[1], 16)
        rport = int(f[2].split(":")[1], 16)
        if rport == port and f[3] == "01":  # ESTABLISHED
            out.add(lport)
    return sorted(out)


def main(run):
    """run(*argv[2:7]), every process it started killed at the end; exit 1 on a failure"""
    try:
        rc = run(*sys.argv[2:7])
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    sys.exit(1 if rc else 0)


if __name__ == "__main__":
    if sys.argv[1] == "dump":
        dump(sys.argv[2], sys.argv[3])
        sys.exit(0)
    main(run)
