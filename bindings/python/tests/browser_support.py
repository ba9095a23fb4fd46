"""What the browser tests share: a scripted browser on "another device" that signs in on the emulator's pages and
hands back the address it ended on without loading it (what a user pastes back), and its small helpers."""
from __future__ import annotations

import html
import http.cookiejar
import re
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, Optional, Tuple


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def origin(url: str) -> str:
    u = urllib.parse.urlsplit(url)
    return f"{u.scheme}://{u.netloc}"


def redirect_from_another_device(url: str, email: str, password: str) -> str:
    """Follows the provider's URL as a browser on another device would (its own cookies, none of this machine's),
    signs in, and returns the redirect to the loopback redirect URI without loading it (it would reach that
    device's own localhost): what a user pastes back."""
    opener = urllib.request.build_opener(NoRedirect, urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    redirect_uri = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)["redirect_uri"][0]
    target = origin(redirect_uri)

    def fetch(u: str, data: Optional[bytes] = None) -> Tuple[int, Dict[str, str], str]:
        try:
            r = opener.open(urllib.request.Request(u, data=data), timeout=20)
            return r.status, dict(r.headers), r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read().decode()

    current = url
    status, headers, body = fetch(current)
    for _ in range(10):
        if status in (302, 303):
            location = urllib.parse.urljoin(current, headers["Location"])
            if origin(location) == target and location.startswith(redirect_uri.rstrip("/")):
                return location
            current = location
            status, headers, body = fetch(current)
            continue
        request = re.search(r'name="request" value="([^"]+)"', body)
        assert request, f"{status}: {body[:200]}"
        form = urllib.parse.urlencode({"request": html.unescape(request.group(1)), "username": email,
                                       "password": password}).encode()
        status, headers, body = fetch(current, form)
    raise AssertionError("no redirect")
