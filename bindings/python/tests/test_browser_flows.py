"""Browser sign-in, device code and several accounts through the Python package, against the emulator."""
import html
import http.cookiejar
import os
import re
import socket
import subprocess
import sys
import textwrap
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, List, Optional, Tuple

import pytest

import nativeauth
from browser_support import NoRedirect, origin, redirect_from_another_device
from emulator_protocol import Emulator
from nativeauth import BrowserPending, Client, CodeRequired, DeviceCodeRequired, SignedIn


class PageBrowser:
    """Follows the emulator's authorize page like a person with a browser: opens the library's one-time start page
    (keeping its cookie), fills in the provider's form, follows the redirect to the library's loopback listener. Each
    URL is visited on its own thread (the callback must not wait)."""

    def __init__(self, email: str, password: str) -> None:
        self.email, self.password = email, password
        self.opened: List[str] = []
        self.authorization_urls: List[str] = []  # where each start page sent the browser
        self.results: List[int] = []
        self.opener = urllib.request.build_opener(NoRedirect, urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))

    def __call__(self, url: str) -> bool:
        self.opened.append(url)
        t = threading.Thread(target=self.visit, args=(url,), daemon=True)
        t.start()
        self.thread = t
        return True

    def _open(self, url: str, data: Optional[bytes] = None) -> Tuple[int, Dict[str, str], str]:
        try:
            r = self.opener.open(urllib.request.Request(url, data=data), timeout=20)
            return r.status, dict(r.headers), r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read().decode()

    def visit(self, url: str) -> None:
        status, headers, body = self._open(url)
        current = url
        if status in (302, 303) and origin(headers["Location"]) != origin(url):
            listener = origin(url)  # the listener's start page
            self.authorization_urls.append(headers["Location"])
        else:
            redirect = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query).get("redirect_uri", [""])[0]
            listener = origin(redirect)
            self.authorization_urls.append(url)
        for _ in range(10):
            if status in (302, 303):
                location = headers["Location"]
                status, headers, body = self._open(location)
                if origin(location) == listener:
                    self.results.append(status)
                    return
                current = location
                continue
            request = re.search(r'name="request" value="([^"]+)"', body)
            if not request:
                self.results.append(-status)
                return
            form = urllib.parse.urlencode({"request": html.unescape(request.group(1)), "username": self.email,
                                           "password": self.password}).encode()
            status, headers, body = self._open(current, form)
        self.results.append(-1)


def test_sign_in_interactive_then_tokens_for_two_apis(emulator: Emulator) -> None:
    ann = emulator.users["password"]
    browser = PageBrowser(ann["email"], ann["password"])
    with Client(emulator.authority, emulator.client_id, browser=browser) as client:
        state = client.sign_in_interactive([emulator.apis["ToDoList"]["scopes"][0]])
        assert isinstance(state, SignedIn) and state.flow_type == "interactive"
        assert state.account.username == ann["email"]
        assert browser.results == [200]
        # The opener got a one-time address on the listener; the provider's URL (state, nonce, …) came from it.
        assert browser.opened[0].startswith("http://localhost:") and "state=" not in browser.opened[0]
        assert "state=" in browser.authorization_urls[0] and "nonce=" in browser.authorization_urls[0]
        notes = client.get_access_token(emulator.apis["Notes"]["scopes"])
        assert notes.access_token and not notes.from_cache
        assert client.sign_out(browser="none")
        assert client.last_end_session_url and "id_token_hint=" in client.last_end_session_url


def test_browser_none_wait_and_cancel(emulator: Emulator) -> None:
    ann = emulator.users["password"]
    with Client(emulator.authority, emulator.client_id) as client:
        state = client.sign_in_interactive(browser="none")
        assert isinstance(state, BrowserPending)
        again = state.wait(timeout=0.1)
        assert isinstance(again, BrowserPending) and again.flow == state.flow
        browser = PageBrowser(ann["email"], ann["password"])
        browser(state.authorization_url)
        assert isinstance(state.wait(timeout=20), SignedIn)

        pending = client.sign_in_interactive(browser="none")
        assert isinstance(pending, BrowserPending)
        errors: List[nativeauth.CancelledError] = []

        def waiter() -> None:
            try:
                pending.wait(timeout=60)
            except nativeauth.CancelledError as e:
                errors.append(e)

        t = threading.Thread(target=waiter)
        t.start()
        threading.Event().wait(0.2)
        pending.cancel()
        t.join(5)
        assert not t.is_alive() and len(errors) == 1


def test_browser_none_shows_the_providers_url_and_a_pasted_redirect_signs_in(emulator: Emulator) -> None:
    """Issue 28, defect 8: browser="none" answers the provider's authorize URL (shown to the user, or loaded in the
    app's web view), not a start page only the library's listener serves; the redirect the user pastes completes the
    sign-in without the listener ever being served."""
    ann = emulator.users["password"]
    todo = emulator.apis["ToDoList"]["scopes"][0]
    with Client(emulator.authority, emulator.client_id) as client:
        pending = client.sign_in_interactive([todo], browser="none", login_hint=ann["email"])
        assert isinstance(pending, BrowserPending)
        url = pending.authorization_url
        assert url.startswith(emulator.authority + "/oauth2/v2.0/authorize?"), url
        q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))
        assert q["redirect_uri"] == pending.redirect_uri and q["client_id"] == emulator.client_id
        assert q["response_type"] == "code" and q["code_challenge_method"] == "S256" and len(q["code_challenge"]) == 43
        assert len(q["state"]) >= 32 and len(q["nonce"]) >= 32 and q["login_hint"] == ann["email"]
        assert todo in q["scope"].split()
        redirect = redirect_from_another_device(url, ann["email"], ann["password"])
        assert redirect.startswith(pending.redirect_uri)
        state = pending.submit_redirect(redirect)
        assert isinstance(state, SignedIn) and state.account.username == ann["email"]

        # A redirect whose state was tampered with is refused, and the sign-in is over.
        pending = client.sign_in_interactive(browser="none")
        assert isinstance(pending, BrowserPending)
        redirect = redirect_from_another_device(pending.authorization_url, ann["email"], ann["password"])
        real = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(redirect).query))["state"]
        with pytest.raises(nativeauth.ServerError) as e:
            pending.submit_redirect(redirect.replace("state=" + real, "state=" + real[:-1] + "A"))
        assert "state" in str(e.value) and real not in str(e.value)
        with pytest.raises(nativeauth.FlowInvalidError):
            pending.submit_redirect(redirect)


def lingering_ports() -> List[int]:
    """Local ports of connections this end closed that are not gone yet (FIN-WAIT, TIME-WAIT, CLOSING)."""
    with open("/proc/net/tcp") as f:
        rows = [line.split() for line in f.read().splitlines()[1:]]
    return [int(r[1].rsplit(":", 1)[1], 16) for r in rows if len(r) > 3 and r[3] in ("04", "05", "06", "0B")]


class StrayFirstBrowser(PageBrowser):
    """Asks the listener for /favicon.ico first, reading the answer to its end before closing: the listener closes
    first, so its side of that connection stays in TIME-WAIT on the port (a browser's own connections may end with a
    reset instead, which leaves nothing behind)."""

    def visit(self, url: str) -> None:
        with socket.create_connection(("127.0.0.1", urllib.parse.urlsplit(url).port or 80), timeout=20) as s:
            s.sendall(b"GET /favicon.ico HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            while s.recv(4096):
                pass
        super().visit(url)


def test_a_fixed_redirect_port_serves_two_sign_ins_in_a_row(emulator: Emulator) -> None:
    """Issue 28, defect 9: with a fixed port in the redirect URI (providers that match it exactly), the second
    sign-in must not fail because the first one's connections linger in TIME-WAIT on the port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ann = emulator.users["password"]
    uri = f"http://127.0.0.1:{port}/"
    for i in range(2):
        # What made the second sign-in fail: the first one's connections, closed by the listener, linger on the port.
        assert i == 0 or port in lingering_ports()
        browser = StrayFirstBrowser(ann["email"], ann["password"])
        with Client(emulator.authority, emulator.client_id, browser=browser, redirect_uri=uri) as client:
            state = client.sign_in_interactive(timeout=30)
            assert isinstance(state, SignedIn), state
            browser.thread.join(20)
            assert browser.results == [200]
            q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(browser.authorization_urls[0]).query))
            assert q["redirect_uri"] == uri


def test_an_opener_replaced_during_discovery_is_never_called(emulator: Emulator) -> None:
    """The opener current when the browser is opened is used: one replaced while the sign-in waits for OIDC discovery
    is never called (its ctypes thunk is gone once set_browser returned)."""
    ann = emulator.users["password"]
    old: List[str] = []

    def old_opener(url: str) -> bool:
        old.append(url)
        return False

    emulator.control("POST", "faults", {"path": "openid-configuration", "delay_ms": 1000})
    with Client(emulator.authority, emulator.client_id, browser=old_opener) as client:
        results: List[Any] = []

        def sign_in() -> None:
            try:
                results.append(client.sign_in_interactive(timeout=20))
            except Exception as e:  # reported below
                results.append(e)

        t = threading.Thread(target=sign_in)
        t.start()
        deadline = time.monotonic() + 10
        while emulator.control("GET", "faults")["faults"] and time.monotonic() < deadline:
            time.sleep(0.005)  # the emulator holds the discovery request: the sign-in is in discovery
        assert t.is_alive()
        new = PageBrowser(ann["email"], ann["password"])
        client.set_browser(new)
        t.join(30)
        assert len(results) == 1 and isinstance(results[0], SignedIn), results
        assert old == [] and len(new.opened) == 1


def test_an_opener_cannot_replace_itself(emulator: Emulator) -> None:
    errors_seen: List[BaseException] = []
    client = Client(emulator.authority, emulator.client_id)

    def opener(url: str) -> bool:
        try:
            client.set_browser(None)
        except nativeauth.FlowInvalidError as e:
            errors_seen.append(e)
        return False

    with client:
        client.set_browser(opener)
        with pytest.raises(nativeauth.BrowserUnavailableError):
            client.sign_in_interactive()
        assert len(errors_seen) == 1
        client.set_browser(None)  # from outside it works


def test_the_browser_is_started_without_handling_sigchld(emulator: Emulator, tmp_path: Any) -> None:
    """A host that ignores SIGCHLD (the kernel reaps children at once): a browser command that ran is not mistaken
    for one that failed. The library watches its child through a pidfd; here `true` opens nothing, so the sign-in
    waits for the start page and times out instead of answering browser_unavailable."""
    script = tmp_path / "sigign.py"
    script.write_text(textwrap.dedent("""
        import signal, sys
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)
        import nativeauth
        with nativeauth.Client(sys.argv[1], sys.argv[2], browser_command="true") as client:
            try:
                client.sign_in_interactive(timeout=1.5)
            except nativeauth.NativeAuthError as e:
                print(e.code)
    """))
    env = {k: v for k, v in os.environ.items() if k != "BROWSER"}
    r = subprocess.run([sys.executable, str(script), emulator.authority, emulator.client_id], capture_output=True,
                       text=True, env=env, timeout=60)
    assert r.stdout.strip() == "timeout", r.stdout + r.stderr


def test_browser_required_falls_back_with_the_login_hint(emulator: Emulator) -> None:
    emulator.control("POST", "users", {"email": "bea@contoso.com", "password": "Bea-Passw0rd!", "requires_browser": True})
    browser = PageBrowser("bea@contoso.com", "Bea-Passw0rd!")
    with Client(emulator.authority, emulator.client_id, browser=browser) as client:
        with pytest.raises(nativeauth.BrowserRequiredError) as e:
            client.sign_in("bea@contoso.com", "Bea-Passw0rd!")
        assert e.value.login_hint == "bea@contoso.com"
        state = client.sign_in_interactive(login_hint=e.value.login_hint)
        assert isinstance(state, SignedIn) and state.account.username == "bea@contoso.com"


def test_browser_unavailable_carries_the_url(emulator: Emulator) -> None:
    with Client(emulator.authority, emulator.client_id, browser=lambda url: False) as client:
        with pytest.raises(nativeauth.BrowserUnavailableError) as e:
            client.sign_in_interactive()
        url = e.value.authorization_url
        # The start page the opener was given (the sign-in has ended: its listener is closed).
        assert url is not None and url.startswith("http://localhost:") and "state=" not in url


def test_browser_unavailable_says_why(emulator: Emulator, tmp_path: Any) -> None:
    """A browser command that fails (here `false`, after one that does not exist) ends the sign-in at once with
    browser_unavailable saying what was tried and how it failed — never the address it was given. On a machine
    where no default opener can show anything (no display, an SSH session) that is said too, and xdg-open is never
    run (a fake one on PATH would record it)."""
    fake = tmp_path / "xdg-open"
    fake.write_text(f"#!/bin/sh\necho \"$@\" > {tmp_path}/xdg-open.ran\n")
    fake.chmod(0o755)
    script = tmp_path / "why.py"
    script.write_text(textwrap.dedent("""
        import sys
        import nativeauth
        with nativeauth.Client(sys.argv[1], sys.argv[2], browser_command="false") as client:
            try:
                client.sign_in_interactive(timeout=60)
            except nativeauth.BrowserUnavailableError as e:
                print(e.message)
    """))
    env = {k: v for k, v in os.environ.items() if k not in ("BROWSER", "DISPLAY", "WAYLAND_DISPLAY", "SSH_TTY")}
    env.update(BROWSER="/nonexistent/browser", SSH_CONNECTION="10.0.0.1 50000 10.0.0.2 22",
               PATH=f"{tmp_path}:{os.environ.get('PATH', '/usr/bin:/bin')}")
    r = subprocess.run([sys.executable, str(script), emulator.authority, emulator.client_id], capture_output=True,
                       text=True, env=env, timeout=60)
    message = r.stdout.strip()
    assert "browser_command (false) exited with status 1" in message, r.stdout + r.stderr
    assert "$BROWSER (/nonexistent/browser) was not found" in message
    assert "this is an SSH session (SSH_CONNECTION is set)" in message
    assert "http://" not in message and not (tmp_path / "xdg-open.ran").exists()


def test_device_code_and_two_accounts(emulator: Emulator) -> None:
    ann = emulator.users["password"]
    todo = emulator.apis["ToDoList"]["scopes"]
    with Client(emulator.authority, emulator.client_id) as client:
        state = client.sign_in_device_code(todo)
        assert isinstance(state, DeviceCodeRequired) and state.user_code in state.message
        emulator.control("POST", "device/approve", {"user_code": state.user_code, "email": ann["email"]})
        signed = state.wait(timeout=20)
        assert isinstance(signed, SignedIn) and signed.flow_type == "device_code"

        otp = emulator.users["otp"]
        code_state = client.sign_in(otp["email"])
        assert isinstance(code_state, CodeRequired)
        code = emulator.control("GET", "outbox?to=" + urllib.parse.quote(otp["email"]))["messages"][-1]["code"]
        assert isinstance(code_state.submit_code(code), SignedIn)

        assert [a.username for a in client.accounts] == sorted([ann["email"], otp["email"]])
        with pytest.raises(nativeauth.AccountRequiredError) as e:
            client.get_access_token(todo)
        assert len(e.value.accounts) == 2
        assert client.get_access_token(todo, account=ann["email"]).access_token
        assert client.call_api(emulator.apis["ToDoList"]["url"], todo, account=otp["email"]).ok
        assert client.sign_out(ann["email"])
        assert [a.username for a in client.accounts] == [otp["email"]]


def test_device_code_denied(emulator: Emulator) -> None:
    with Client(emulator.authority, emulator.client_id) as client:
        state = client.sign_in_device_code()
        assert isinstance(state, DeviceCodeRequired)
        emulator.control("POST", "device/approve", {"user_code": state.user_code, "deny": True})
        with pytest.raises(nativeauth.AccessDeniedError):
            state.wait(timeout=20)


def test_device_code_example(emulator: Emulator) -> None:
    """bindings/python/examples/device_code.py end to end: the test approves the code it prints."""
    import os
    import pathlib
    import subprocess
    import sys
    import time
    example = pathlib.Path(__file__).resolve().parents[1] / "examples" / "device_code.py"
    todo = emulator.apis["ToDoList"]
    env = dict(os.environ, NATIVEAUTH_AUTHORITY=emulator.authority, NATIVEAUTH_CLIENT_ID=emulator.client_id,
               API_URL=todo["url"], API_SCOPE=todo["scopes"][0])
    proc = subprocess.Popen([sys.executable, str(example)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    code = re.search(r"enter the code (\S+?)[ .]", first)
    assert code, first + proc.stderr.read()
    emulator.control("POST", "device/approve", {"user_code": code.group(1), "email": emulator.users["password"]["email"]})
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "signed in: ann@contoso.com" in out and "HTTP 200" in out


def test_paste_back_example(emulator: Emulator) -> None:
    """bindings/python/examples/paste_back.py end to end: the test signs in on the address it prints, as a browser on
    another device would, and pastes back (on its stdin) the address that browser ended on — after one that is not
    this sign-in's redirect, which the example lets the user paste again."""
    import pathlib
    example = pathlib.Path(__file__).resolve().parents[1] / "examples" / "paste_back.py"
    ann = emulator.users["password"]
    todo = emulator.apis["ToDoList"]
    env = dict(os.environ, NATIVEAUTH_AUTHORITY=emulator.authority, NATIVEAUTH_CLIENT_ID=emulator.client_id,
               API_URL=todo["url"], API_SCOPE=todo["scopes"][0])
    proc = subprocess.Popen([sys.executable, str(example)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        assert "Open this address" in proc.stdout.readline()
        url = proc.stdout.readline().strip()
        assert url.startswith(emulator.authority + "/oauth2/v2.0/authorize?"), url + proc.stderr.read()
        address = redirect_from_another_device(url, ann["email"], ann["password"])
        out, err = proc.communicate("http://localhost:1/?code=x&state=y\n" + address + "\n", timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "paste the address again" in out
    assert "signed in: ann@contoso.com" in out and "HTTP 200" in out
