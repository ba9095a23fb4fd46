"""A fake D-Bus session bus with a fake Secret Service on it, in one small process: what another local user could
run at a bus address the victim still has in DBUS_SESSION_BUS_ADDRESS (an abstract socket name, or a socket path
re-created after the real bus ended). It speaks just enough D-Bus (SASL EXTERNAL, Hello, and the Secret Service calls
the library makes) to be handed a cache key by a client that trusts it, and reports everything it sees as JSON lines
on stdout:

    {"event": "listening"}                        once, after listen(2): the readiness signal
    {"event": "connected"}                        a client connected
    {"event": "bytes", "count": N}                a client sent N bytes
    {"event": "call", "member": "…", "body": "<hex>"}   a method call (its body, hex: CreateItem's holds the key)

    python fake_secret_bus.py abstract NAME | path PATH  [SERVICE_UID]

SERVICE_UID: the uid the bus says owns org.freedesktop.secrets (GetConnectionUnixUser; default: its own). Standard
library only; run it as another user (setpriv --reuid=65534 …) to play the other user.
"""
from __future__ import annotations

import json
import os
import socket
import struct
import sys
import threading
from typing import Any, Dict, List, Optional, Tuple

COLLECTION = "/org/freedesktop/secrets/collection/login"


def emit(event: Dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


class Writer:
    """D-Bus marshalling (little-endian) of the few types the replies need; offsets are the message's own."""

    def __init__(self) -> None:
        self.out = bytearray()

    def align(self, n: int) -> None:
        self.out += b"\0" * (-len(self.out) % n)

    def value(self, sig: str, v: Any) -> str:
        """Writes one complete type from the front of `sig`; answers the rest of `sig`."""
        t = sig[0]
        if t == "y":
            self.out.append(v)
            return sig[1:]
        if t == "u":
            self.align(4)
            self.out += struct.pack("<I", v)
            return sig[1:]
        if t in "so":
            data = v.encode()
            self.align(4)
            self.out += struct.pack("<I", len(data)) + data + b"\0"
            return sig[1:]
        if t == "g":
            data = v.encode()
            self.out += bytes([len(data)]) + data + b"\0"
            return sig[1:]
        if t == "v":
            inner, value = v
            self.value("g", inner)
            self.value(inner, value)
            return sig[1:]
        if t == "a":
            element = complete(sig[1:])
            self.align(4)
            at = len(self.out)
            self.out += b"\0\0\0\0"
            self.align(8 if element[0] in "({" else alignment(element[0]))
            start = len(self.out)
            for item in v:
                self.value(element, item)
            struct.pack_into("<I", self.out, at, len(self.out) - start)
            return sig[1 + len(element):]
        if t in "({":
            self.align(8)
            inner = complete(sig)[1:-1]
            for item in v:
                inner = self.value(inner, item)
            return sig[len(complete(sig)):]
        raise ValueError(f"type {t}")


def alignment(t: str) -> int:
    return {"y": 1, "g": 1, "v": 1, "u": 4, "s": 4, "o": 4, "a": 4}.get(t, 8)


def complete(sig: str) -> str:
    """The first complete type of `sig`."""
    if sig[0] == "a":
        return "a" + complete(sig[1:])
    if sig[0] in "({":
        depth = 0
        for i, c in enumerate(sig):
            depth += c in "({"
            depth -= c in ")}"
            if depth == 0:
                return sig[:i + 1]
    return sig[0]


def build(kind: int, serial: int, fields: List[Tuple[int, str, Any]], sig: str, body: List[Any]) -> bytes:
    payload = Writer()
    rest = sig
    for v in body:
        rest = payload.value(rest, v)
    if sig:
        fields = fields + [(8, "g", sig)]
    h = Writer()
    h.out += b"l" + bytes([kind, 1, 1]) + struct.pack("<II", len(payload.out), serial)
    h.value("a(yv)", [(code, (t, v)) for code, t, v in fields])
    h.align(8)
    return bytes(h.out) + bytes(payload.out)


def parse_header(data: bytes) -> Optional[Tuple[int, int, Dict[int, Any], bytes]]:
    """(total length, serial, header fields, body) of the first whole message in `data`, or None when more is
    needed."""
    if len(data) < 16:
        return None
    body_len, serial, fields_len = struct.unpack_from("<III", data, 4)
    header_end = 16 + fields_len
    total = header_end + (-header_end % 8) + body_len
    if len(data) < total:
        return None
    fields: Dict[int, Any] = {}
    i = 16
    while i < header_end:
        i += -i % 8
        code = data[i]
        slen = data[i + 1]
        t = data[i + 2:i + 2 + slen].decode()
        i += 3 + slen
        if t in "so":
            i += -i % 4
            (n,) = struct.unpack_from("<I", data, i)
            fields[code] = data[i + 4:i + 4 + n].decode()
            i += 5 + n
        elif t == "u":
            i += -i % 4
            (fields[code],) = struct.unpack_from("<I", data, i)
            i += 4
        elif t == "g":
            n = data[i]
            fields[code] = data[i + 1:i + 1 + n].decode()
            i += 2 + n
        else:
            break
    body_start = header_end + (-header_end % 8)
    return total, serial, fields, data[body_start:total]


REPLIES: Dict[str, Tuple[str, List[Any]]] = {
    "Hello": ("s", [":1.7"]),
    "OpenSession": ("vo", [("s", ""), "/org/freedesktop/secrets/session/s1"]),
    "GetConnectionUnixUser": ("u", [int(sys.argv[3]) if len(sys.argv) > 3 else os.geteuid()]),
    "SearchItems": ("aoao", [[], []]),
    "ReadAlias": ("o", [COLLECTION]),
    "CreateItem": ("oo", [COLLECTION + "/i1", "/"]),
    "GetSecrets": ("a{o(oayays)}", [[]]),
}


def serve(conn: socket.socket) -> None:
    emit({"event": "connected"})
    data = b""
    authenticated = False
    serial = 0
    try:
        while True:
            chunk = conn.recv(65536)
            if not chunk:
                return
            emit({"event": "bytes", "count": len(chunk)})
            data += chunk
            while not authenticated and b"\n" in data:
                line, data = data.split(b"\n", 1)
                line = line.lstrip(b"\0").rstrip(b"\r")
                if line.startswith(b"AUTH"):
                    conn.sendall(b"OK 0123456789abcdef0123456789abcdef\r\n")
                elif line == b"BEGIN":
                    authenticated = True
                elif line:
                    conn.sendall(b"ERROR\r\n")  # (NEGOTIATE_UNIX_FD: no descriptors here)
            while authenticated:
                parsed = parse_header(data)
                if parsed is None:
                    break
                total, their_serial, fields, body = parsed
                data = data[total:]
                member = fields.get(3, "")
                emit({"event": "call", "member": member, "body": body.hex()})
                serial += 1
                sig, values = REPLIES.get(member, ("", []))
                reply_to: List[Tuple[int, str, Any]] = [(5, "u", their_serial), (6, "s", ":1.7")]
                if member in REPLIES:
                    conn.sendall(build(2, serial, reply_to, sig, values))
                else:
                    conn.sendall(build(3, serial, reply_to + [(4, "s", "org.freedesktop.DBus.Error.UnknownMethod")],
                                       "", []))
    except OSError:
        return
    finally:
        conn.close()


def main() -> int:
    kind, name = sys.argv[1], sys.argv[2]
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind("\0" + name if kind == "abstract" else name)
    listener.listen(16)
    emit({"event": "listening", "uid": os.geteuid()})
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())
