# SPDX-License-Identifier: MIT
# remote_check.py BASE LIBPERFLIB - run by test_remote.sh: each consumer operation served
# by perflib-exporter under BASE/perflib/v1/ against the same call made here through
# libperflib.so (ctypes). Exits 1 on the first difference, with what differed.
import ctypes
import http.client
import struct
import sys
import urllib.parse
import uuid

from perfwire import identifier, statuses, without_times

base, libpath = sys.argv[1], sys.argv[2]
lib = ctypes.CDLL(libpath)
url = urllib.parse.urlsplit(base)
conn = http.client.HTTPConnection(url.hostname, url.port, timeout=20)
PREFIX = "/perflib/v1/"

ERROR_SUCCESS = 0
ERROR_INVALID_PARAMETER = 87
ERROR_NOT_ENOUGH_MEMORY = 8
ERROR_NOT_FOUND = 1168
ERROR_ALREADY_EXISTS = 183
ERROR_WMI_GUID_NOT_FOUND = 4200

failures = 0


def check(cond, what):
    global failures
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        failures += 1


def request(method, path, body=None):
    """(HTTP status, Win32 status or None, body) of one request on the kept connection"""
    conn.request(method, PREFIX + path, body=body)
    r = conn.getresponse()
    data = r.read()
    st = r.getheader("X-Perflib-Status")
    return r.status, (int(st) if st is not None else None), data


def sized(call):
    """the Windows buffer protocol, locally: (status, bytes)"""
    need = ctypes.c_uint32(0)
    st = call(None, 0, ctypes.byref(need))
    for _ in range(8):
        if st != ERROR_NOT_ENOUGH_MEMORY:
            break
        buf = ctypes.create_string_buffer(need.value + 4096)
        st = call(buf, len(buf), ctypes.byref(need))
        if st == ERROR_SUCCESS:
            return st, buf.raw[: need.value]
    return st, b""


def guid_bytes(g):
    return uuid.UUID(g).bytes_le


def local_sets():
    def call(buf, size, need):
        st = lib.PerfEnumerateCounterSet(None, buf, size // 16, need)
        need._obj.value *= 16
        return st
    return sized(call)


def local_reg(g, code, lang=0):
    gb = ctypes.create_string_buffer(guid_bytes(g), 16)
    return sized(lambda buf, size, need: lib.PerfQueryCounterSetRegistrationInfo(
        None, gb, code, lang, buf, size, need))


def local_instances(g):
    gb = ctypes.create_string_buffer(guid_bytes(g), 16)
    return sized(lambda buf, size, need: lib.PerfEnumerateCounterSetInstances(
        None, gb, buf, size, need))


# ---- counter sets, registrations, instances ------------------------------------------
hs, st, body = request("GET", "countersets")
lst, lbody = local_sets()
check(hs == 200 and st == 0 and lst == 0 and body == lbody,
      "countersets: the bytes of PerfEnumerateCounterSet (%d sets)" % (len(body) // 16))
sets = [str(uuid.UUID(bytes_le=body[i:i + 16])) for i in range(0, len(body), 16)]
check("e4b0e7a0-0001-4e5f-8a6b-000000000001" in sets, "the test provider's set is listed")
for g in sets:
    for code in list(range(1, 11)):
        lang = 1 if code == 2 else 0  # PERF_REG_COUNTER_STRUCT names the counter in lang
        hs, st, body = request("GET", "countersets/%s/registration?code=%d&lang=%d" % (g, code, lang))
        lst, lbody = local_reg(g, code, lang)
        check(hs == 200 and st == lst and (st != 0 or body == lbody),
              "registration %s code %d: status %s (local %d), %d bytes" % (g, code, st, lst, len(body)))
    hs, st, body = request("GET", "countersets/%s/instances" % g)
    lst, lbody = local_instances(g)
    check(hs == 200 and st == lst == 0 and body == lbody,
          "instances of %s: %d bytes as locally" % (g, len(body)))

unknown = "00000000-0000-0000-0000-0000000000aa"
hs, st, body = request("GET", "countersets/%s/instances" % unknown)
lst, _ = local_instances(unknown)
check(hs == 200 and st == lst and st != 0, "an unknown set: the local status %d" % lst)
hs, st, body = request("GET", "countersets/%s/registration?code=99" % sets[0])
lst, _ = local_reg(sets[0], 99)
check(hs == 200 and st == lst == ERROR_INVALID_PARAMETER, "an unknown request code: 87")
for path, code in [("countersets/not-a-guid/instances", 404),
                   ("countersets/{%s}/instances" % sets[0], 404),
                   ("countersets/%s/registration" % sets[0], 400),
                   ("countersets/%s/registration?code=x" % sets[0], 400),
                   ("countersets/%s/registration?code=99999999999" % sets[0], 400),
                   ("countersets/%s/nothing" % sets[0], 404),
                   ("nothing", 404), ("queries/0123456789abcdef/data", 404),
                   ("queries/xyz/data", 404)]:
    hs, st, body = request("GET", path)
    check(hs == code, "GET %s: HTTP %d (want %d)" % (path, hs, code))
hs, _, _ = request("POST", "countersets")
check(hs == 405, "POST countersets: 405")

# ---- a query, step by step ------------------------------------------------------------
g = "e4b0e7a0-0001-4e5f-8a6b-000000000001"
hs, st, token = request("POST", "queries")
check(hs == 200 and st == 0 and len(token) == 16, "POST queries: a token (%r)" % token)
token = token.decode()
lq = ctypes.c_void_p()
check(lib.PerfOpenQueryHandle(None, ctypes.byref(lq)) == 0, "local PerfOpenQueryHandle")
first = identifier(g, 3, name="*")
ids = first + identifier(g, 99, name="*") + identifier(unknown, 1)
hs, st, body = request("POST", "queries/%s/add" % token, ids)
lids = ctypes.create_string_buffer(ids, len(ids))
lst = lib.PerfAddCounters(lq, lids, len(ids))
check(hs == 200 and st == lst == 0 and body == lids.raw,
      "add: the identifiers with the local Status %s" % statuses(lids.raw))
check(statuses(body) == [0, ERROR_NOT_FOUND, ERROR_WMI_GUID_NOT_FOUND],
      "add: added, no such counter, no such set")
hs, st, body = request("POST", "queries/%s/add" % token, first)
check(hs == 200 and st == 0 and statuses(body) == [ERROR_ALREADY_EXISTS], "add again: 183")
hs, st, body = request("POST", "queries/%s/add" % token, first[:-1])
check(hs == 200 and st == ERROR_INVALID_PARAMETER and body == b"", "a truncated block: 87")
hs, st, body = request("POST", "queries/%s/add" % token, b"")
check(hs == 200 and st == ERROR_INVALID_PARAMETER, "no identifiers: 87")
hs, st, body = request("GET", "queries/%s/info" % token)
check(hs == 200 and st == 0 and statuses(body) == [0], "info: the one specification")
hs, st, body = request("GET", "queries/%s/data" % token)
ldst, ldata = sized(lambda buf, size, need: lib.PerfQueryCounterData(lq, buf, size, need))
check(hs == 200 and st == ldst == 0 and len(body) > 48 and
      without_times(body) == without_times(ldata),
      "data: PerfQueryCounterData's bytes (%d), time stamps apart" % len(body))
hs, st, body = request("POST", "queries/%s/delete" % token, first)
check(hs == 200 and st == 0 and statuses(body) == [0], "delete: removed")
hs, st, body = request("POST", "queries/%s/delete" % token, first)
check(hs == 200 and st == 0 and statuses(body) == [ERROR_NOT_FOUND], "delete again: 1168")
hs, _, _ = request("PUT", "queries/%s/data" % token)
check(hs == 405, "PUT on a query: 405")
hs, st, body = request("POST", "queries/%s/add" % token, b"\0" * ((1 << 20) + 8))
check(hs == 413, "a body over 1 MiB: 413")
hs, st, _ = request("DELETE", "queries/%s" % token)
check(hs == 200 and st == 0, "DELETE: closed")
hs, st, _ = request("GET", "queries/%s/data" % token)
check(hs == 404, "a closed query: 404")
lib.PerfCloseQueryHandle(lq)

# ---- the table is bounded -------------------------------------------------------------
tokens = []
while True:
    hs, st, token = request("POST", "queries")
    if hs != 200:
        break
    tokens.append(token.decode())
    if len(tokens) > 1000:
        break
check(hs == 503 and len(tokens) == 64, "at most 64 queries: %d, then HTTP %d" % (len(tokens), hs))
for t in tokens:
    request("DELETE", "queries/%s" % t)
hs, st, token = request("POST", "queries")
check(hs == 200, "a query again once they are closed")
request("DELETE", "queries/%s" % token.decode())

sys.exit(1 if failures else 0)
