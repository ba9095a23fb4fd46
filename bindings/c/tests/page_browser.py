#!/usr/bin/env python3
"""A stand-in for a desktop browser, for $BROWSER in tests: like xdg-open it returns at once (exit 0) while a child
process "shows" the page — opens the library's one-time start page (keeping its cookie), follows it to the
emulator's authorize page, signs in with PAGE_BROWSER_EMAIL and PAGE_BROWSER_PASSWORD, and delivers the redirect to
the library's loopback listener. Usage: page_browser.py URL"""
import html
import os
import re
import sys
import urllib.error
import urllib.parse
import urllib.request


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def fetch(opener, url, data=None):
    try:
        r = opener.open(urllib.request.Request(url, data=data), timeout=30)
        return r.status, r.headers, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read().decode()


def origin(url):
    u = urllib.parse.urlsplit(url)
    return f"{u.scheme}://{u.netloc}"


def browse(url):
    opener = urllib.request.build_opener(NoRedirect, urllib.request.HTTPCookieProcessor())
    status, headers, body = fetch(opener, url)
    current = url
    if status in (302, 303) and origin(headers["Location"]) != origin(url):
        listener = origin(url)  # the library's one-time start page: it sends the browser on to the provider
    else:
        listener = origin(urllib.parse.parse_qs(urllib.parse.urlsplit(url).query).get("redirect_uri", [""])[0])
    for _ in range(10):
        if status in (302, 303):
            location = headers["Location"]
            status, headers, body = fetch(opener, location)
            if origin(location) == listener:
                return
            current = location
            continue
        request = re.search(r'name="request" value="([^"]+)"', body)
        if not request:
            return
        form = urllib.parse.urlencode({"request": html.unescape(request.group(1)),
                                       "username": os.environ["PAGE_BROWSER_EMAIL"],
                                       "password": os.environ["PAGE_BROWSER_PASSWORD"]}).encode()
        status, headers, body = fetch(opener, current, form)


if __name__ == "__main__":
    if os.fork() == 0:
        os.setsid()
        try:
            browse(sys.argv[1])
        finally:
            os._exit(0)
    sys.exit(0)
