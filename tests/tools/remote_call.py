# SPDX-License-Identifier: MIT
# remote_call.py LIBPERFLIB LIBPDH MACHINE - run by test_remote_client_tls.sh: prints one line,
# "sets STATUS COUNT data STATUS pdh STATUS VALUE": PerfEnumerateCounterSet on MACHINE (its
# Win32 status and count), a remote query's PerfQueryCounterData status, and the PDH value of
# \\MACHINE\Exporter Single\Connections (PdhConnectMachine's status when it fails).
import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1])
pdh = ctypes.CDLL(sys.argv[2])
machine = sys.argv[3]
m = ctypes.create_string_buffer((machine + "\0").encode("utf-16-le"))
n = ctypes.c_uint32(0)
sets = lib.PerfEnumerateCounterSet(m, None, 0, ctypes.byref(n))
h = ctypes.c_void_p()
data = lib.PerfOpenQueryHandle(m, ctypes.byref(h))
if data == 0:
    data = lib.PerfQueryCounterData(h, None, 0, ctypes.byref(ctypes.c_uint32(0)))
    lib.PerfCloseQueryHandle(h)


class FmtValue(ctypes.Structure):
    _fields_ = [("CStatus", ctypes.c_uint32), ("large", ctypes.c_int64)]


pdh.PdhConnectMachineA.restype = ctypes.c_uint32
st = pdh.PdhConnectMachineA(b"\\\\" + machine.encode())
value = -1
if st == 0:
    q, c = ctypes.c_void_p(), ctypes.c_void_p()
    pdh.PdhOpenQueryA(None, 0, ctypes.byref(q))
    st = pdh.PdhAddCounterA(q, ("\\\\%s\\Exporter Single\\Connections" % machine).encode(), 0,
                            ctypes.byref(c)) & 0xFFFFFFFF
    if st == 0:
        st = pdh.PdhCollectQueryData(q) & 0xFFFFFFFF
        v = FmtValue()
        if st == 0 and pdh.PdhGetFormattedCounterValue(c, 0x400, None, ctypes.byref(v)) == 0:
            value = v.large
    pdh.PdhCloseQuery(q)
print("sets %d %d data %d pdh %x %d" % (sets, n.value, data, st, value))
