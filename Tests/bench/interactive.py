"""`make bench` rows for the browser sign-in: the time from the redirect reaching the app's loopback listener to the
sign-in call returning, for NativeAuth's Python package and for MSAL for Python's acquire_token_interactive, both
driven by an instant fake browser (a thread that fills in the emulator's page and delivers the redirect). Medians of
a few runs; nothing is asserted."""
from __future__ import annotations

import html
import re
import statistics
import threading
import time
import urllib.parse

import requests

RUNS = 5


class InstantBrowser:
    """Fills in the emulator's sign-in page and delivers the redirect, recording when the redirect went out."""

    def __init__(self, email: str, password: str, verify: object = True):
        self.email, self.password, self.verify = email, password, verify
        self.redirect_sent_at = 0.0
        self.thread: threading.Thread | None = None

    def __call__(self, url: str) -> bool:
        self.thread = threading.Thread(target=self._visit, args=(url,), daemon=True)
        self.thread.start()
        return True

    def _visit(self, url: str) -> None:
        s = requests.Session()
        s.verify = self.verify
        # Our library hands the browser a one-time start page on its listener that redirects to the authorization
        # URL and sets a cookie the redirect must bring back: follow it, in one session (MSAL gives the URL itself).
        page = s.get(url, timeout=30)
        request_id = html.unescape(re.search(r'name="request" value="([^"]+)"', page.text).group(1))
        done = s.post(page.url, data={"request": request_id, "username": self.email, "password": self.password},
                      allow_redirects=False)
        if "Location" in done.headers:
            location = done.headers["Location"]
            self.redirect_sent_at = time.perf_counter()
            s.get(location, timeout=30)
            return
        # response_mode=form_post (MSAL Python asks for it): the page posts hidden inputs to the redirect URI.
        action = html.unescape(re.search(r'action="([^"]+)"', done.text).group(1))
        fields = {html.unescape(n): html.unescape(v)
                  for n, v in re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', done.text)}
        self.redirect_sent_at = time.perf_counter()
        requests.post(action, data=fields, timeout=30)


def ours(ready: dict) -> float:
    import nativeauth

    user = next(u for u in ready["users"] if u["kind"] == "password")
    times = []
    for _ in range(RUNS):
        browser = InstantBrowser(user["email"], user["password"])
        with nativeauth.Client(ready["authority"], ready["client_id"], browser=browser) as client:
            client.sign_in_interactive()
            times.append(time.perf_counter() - browser.redirect_sent_at)
    return statistics.median(times) * 1000


def msal_python(tls_ready: dict) -> float:
    import msal  # type: ignore

    user = next(u for u in tls_ready["users"] if u["kind"] == "password")
    times = []
    for _ in range(RUNS):
        browser = InstantBrowser(user["email"], user["password"], verify=tls_ready["ca_file"])
        app = msal.PublicClientApplication(tls_ready["client_id"], oidc_authority=tls_ready["oidc_authority"],
                                           verify=tls_ready["ca_file"])
        scope = tls_ready["apis"][0]["scopes"][0]
        result = app.acquire_token_interactive([scope], auth_uri_callback=browser, timeout=30)
        if "access_token" not in result:
            raise SystemExit(f"bench: MSAL's interactive sign-in failed: {result.get('error')}")
        times.append(time.perf_counter() - browser.redirect_sent_at)
    return statistics.median(times) * 1000


_ = urllib.parse  # (kept for readers extending the fake browser)
