"""Proxies with an OpenID Connect authority (`"authority_type": "oidc"`, whose flows cannot go on without discovery):
a proxy's refusal and TLS inspection give the same clear errors as with Entra — naming the proxy, saying how to trust
an inspecting proxy's CA — and a discovery that failed on the way (a proxy down for a moment) is tried again by the
next call. (Was: every transport failure of discovery became `server` "The provider's OpenID Connect discovery
document is unavailable", remembered for 300 s: the proxy's error was lost, and the client failed for five minutes
after the network came back, or after a cancelled sign-in.)"""
from __future__ import annotations

import socket
import threading
from typing import Any, List

import pytest

import nativeauth as na
from proxy_support import (AUTHORITY_HOST, PROXY_PASSWORD, PROXY_USER, CorporateCA, NamedEmulator, Squid,
                           corporate_ca, inspecting_squid, named_emulator, squid, workdir)

__all__ = ["corporate_ca", "inspecting_squid", "named_emulator", "squid", "workdir"]  # the fixtures


def oidc_client(emu: NamedEmulator, lines: List[str], **config: Any) -> na.Client:
    config.setdefault("ca_bundle", emu.ca_file)
    config.setdefault("request_timeout_ms", 10000)
    authority = emu.ready["oidc"]["authority"].replace(emu.local_base, emu.base)
    return na.Client(authority, emu.ready["oidc"]["client_id"], authority_type="oidc", log_level="verbose",
                     log_handler=lambda _lvl, msg, _cid: lines.append(msg), **config)


def test_refused_proxy_credentials_name_the_proxy(named_emulator: NamedEmulator, squid: Squid) -> None:
    lines: List[str] = []
    with oidc_client(named_emulator, lines, proxy=squid.url_with(PROXY_USER, "Wrong-" + PROXY_PASSWORD)) as c:
        with pytest.raises(na.NativeAuthError) as e:
            c.sign_in_device_code(["openid"])
    message = e.value.message
    assert e.value.code == "network", message
    assert f"the proxy {squid.url} (configured) refused the proxy credentials (407" in message, message
    assert PROXY_PASSWORD not in message + str(e.value) + "".join(lines)


def test_tls_inspection_says_how_to_trust_the_proxys_ca(named_emulator: NamedEmulator, inspecting_squid: Squid,
                                                       corporate_ca: CorporateCA) -> None:
    with oidc_client(named_emulator, [], proxy=inspecting_squid.url) as c:
        with pytest.raises(na.NativeAuthError) as e:
            c.sign_in_device_code(["openid"])
    assert e.value.code == "tls", e.value.message
    assert "inspects TLS" in e.value.message and '"ca_bundle"' in e.value.message, e.value.message
    with oidc_client(named_emulator, [], proxy=inspecting_squid.url, ca_bundle=str(corporate_ca.cert)) as c:
        assert isinstance(c.sign_in_device_code(["openid"]), na.DeviceCodeRequired)


class SwitchableProxy:
    """A CONNECT proxy on 127.0.0.1 that answers 502 while `down`, else tunnels to 127.0.0.1 (the port asked for:
    every name is this machine)."""

    def __init__(self) -> None:
        self.down = True
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._tunnel, args=(conn,), daemon=True).start()

    def _tunnel(self, conn: socket.socket) -> None:
        with conn:
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                head += chunk
            target = head.split(b" ")[1].decode()
            if self.down:
                conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
                return
            with socket.create_connection(("127.0.0.1", int(target.rsplit(":", 1)[1]))) as upstream:
                conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                threading.Thread(target=self._pipe, args=(upstream, conn), daemon=True).start()
                self._pipe(conn, upstream)

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def close(self) -> None:
        self.sock.close()


def test_a_discovery_that_failed_on_the_way_is_tried_again(named_emulator: NamedEmulator) -> None:
    proxy = SwitchableProxy()
    try:
        with oidc_client(named_emulator, [], proxy=proxy.url) as c:
            with pytest.raises(na.NativeAuthError) as e:
                c.sign_in_device_code(["openid"])
            assert e.value.code == "network", e.value.message
            assert f"the proxy {proxy.url} (configured) could not reach {AUTHORITY_HOST}" in e.value.message
            proxy.down = False
            assert isinstance(c.sign_in_device_code(["openid"]), na.DeviceCodeRequired)
    finally:
        proxy.close()
