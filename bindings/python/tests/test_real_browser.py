"""The browser sign-in through a real browser: Debian's Chromium, headless and offline, driven by Selenium through
/usr/bin/chromedriver. The library opens its one-time start page in Chromium through its browser callback (it sends
Chromium on to the authorize URL with a cookie), Selenium fills in the emulator's page, Chromium follows the
redirect to the library's loopback listener, and the Python test gets a token. `.ci/deps.sh` installs chromium,
chromium-driver and selenium; without them this test fails (it is not skipped)."""
import os
import shutil
import threading
from typing import TYPE_CHECKING, Iterator, List

import pytest

from emulator_protocol import Emulator
from nativeauth import Client, SignedIn

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

CHROMIUM = os.environ.get("NATIVEAUTH_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("NATIVEAUTH_CHROMEDRIVER", "/usr/bin/chromedriver")


@pytest.fixture
def chromium() -> Iterator["WebDriver"]:
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.fail("selenium is not installed (run .ci/deps.sh)")
    if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
        pytest.fail("chromium and chromium-driver are not installed (run .ci/deps.sh)")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-default-apps", "--disable-extensions", "--user-data-dir=" + os.path.join(
                    os.environ.get("TMPDIR", "/tmp"), f"na-chromium-{os.getpid()}-{threading.get_ident()}")):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def test_sign_in_through_chromium(emulator: Emulator, chromium: "WebDriver") -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    ann = emulator.users["password"]
    todo = emulator.apis["ToDoList"]
    failures: List[str] = []
    pages: List[str] = []

    def drive(url: str) -> None:
        try:
            chromium.get(url)
            WebDriverWait(chromium, 20).until(EC.presence_of_element_located((By.ID, "password")))
            email = chromium.find_element(By.ID, "username")
            email.clear()
            email.send_keys(ann["email"])
            chromium.find_element(By.ID, "password").send_keys(ann["password"])
            chromium.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
            # Chromium follows the redirect to the library's listener, which answers with its own page.
            WebDriverWait(chromium, 20).until(lambda d: "close this window" in d.page_source)
            pages.append(chromium.current_url)
        except Exception as e:  # reported by the test below, never lost in a thread
            failures.append(repr(e))

    given: List[str] = []

    def open_in_chromium(url: str) -> bool:
        given.append(url)
        threading.Thread(target=drive, args=(url,), daemon=True).start()
        return True

    with Client(emulator.authority, emulator.client_id, browser=open_in_chromium) as client:
        state = client.sign_in_interactive([todo["scopes"][0]], timeout=60)
        assert isinstance(state, SignedIn), failures
        assert state.account.username == ann["email"]
        answer = client.call_api(todo["url"], todo["scopes"])
        assert answer.ok
    deadline = threading.Event()
    for _ in range(100):
        if pages or failures:
            break
        deadline.wait(0.1)
    assert not failures, failures
    assert pages and pages[0].startswith("http://localhost:")
    # Chromium was given the listener's one-time start page (it fetched it once, kept its cookie, and brought it back
    # with the redirect): no state, nonce or PKCE challenge on its command line.
    assert len(given) == 1 and given[0].startswith("http://localhost:") and "state=" not in given[0]
