# SPDX-License-Identifier: MIT
"""perfwire.py - the consumer API's buffers as the remote tests build and read them
(remote_check.py, remote_client_check.py): PERF_COUNTER_IDENTIFIER blocks, their statuses,
a PerfQueryCounterData answer without its time stamps."""
import struct
import uuid


def identifier(g, counter, instance_id=0xFFFFFFFF, name=None):
    """a PERF_COUNTER_IDENTIFIER block: 40 bytes, the UTF-16 name, padded to 8"""
    raw = b"" if name is None else (name + "\0").encode("utf-16-le")
    size = (40 + len(raw) + 7) // 8 * 8
    block = uuid.UUID(g).bytes_le + struct.pack("<IIIIII", 0, size, counter, instance_id, 0, 0) + raw
    return block + b"\0" * (size - len(block))


def statuses(blocks):
    """the Status of each PERF_COUNTER_IDENTIFIER block in @blocks"""
    out, off = [], 0
    while off + 40 <= len(blocks):
        st, size = struct.unpack_from("<II", blocks, off + 16)
        out.append(st)
        off += size
    return out


def without_times(data):
    """a PerfQueryCounterData answer with its header's time stamps (bytes 8-47) zeroed"""
    return data[:8] + b"\0" * 40 + data[48:]
