"""The web view in a real browser: headless Chromium driven by selenium against a stub daemon.

The daemon runs in a thread of its own on the wall clock (a browser cannot share the autojump
clock), so its stub calls take their real time, about twenty seconds each. Skipped without
chromium and chromedriver, unless CALLD_TEST_BROWSER_REQUIRED=1 (CI), where their absence fails.
Screenshots go to $CALLD_TEST_SCREENSHOTS (default: the test's temporary directory)."""

from __future__ import annotations

import io
import json
import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio

from calld.cli.client import ControlClient
from calld.cli.ctl import run_ask
from calld.daemon.service import Daemon
from daemons import daemon_settings
from test_ui import HOSTILE, hostile_call

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
DRIVER = shutil.which("chromedriver")
REQUIRED = os.environ.get("CALLD_TEST_BROWSER_REQUIRED") == "1"
ASK = {"to": "+15555550142", "ask": "hours", "name": "Nathan", "user": "alice"}


class Served:
    """A stub daemon with the web view on, in a thread running its own trio loop."""

    def __init__(self, tmp: Path) -> None:
        self.settings = daemon_settings(tmp, calld_ui_bind="127.0.0.1:0")
        self.daemon: Daemon
        self._ready = threading.Event()
        self._failed: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            trio.run(self._main)
        except BaseException as exc:  # seen by start() or close()
            self._failed = exc
            self._ready.set()

    async def _main(self) -> None:
        async with trio.open_nursery() as n:
            self.daemon = await n.start(Daemon(self.settings).serve)
            self.nursery = n
            self.token = trio.lowlevel.current_trio_token()
            self._ready.set()

    def start(self) -> Served:
        self._thread.start()
        if not self._ready.wait(120) or self._failed:
            raise RuntimeError(f"the daemon did not start: {self._failed!r}")
        return self

    def run(self, afn: Any, *args: Any) -> Any:
        return trio.from_thread.run(afn, *args, trio_token=self.token)

    def run_sync(self, fn: Any, *args: Any) -> Any:
        return trio.from_thread.run_sync(fn, *args, trio_token=self.token)

    def ask(self, **over: Any) -> dict[str, Any]:
        async def go() -> dict[str, Any]:
            out = io.StringIO()
            async with ControlClient(self.settings.calld_socket) as c:
                await run_ask(c, {**ASK, **over}, out=out, err=io.StringIO())
            return json.loads(out.getvalue())

        return self.run(go)

    def link(self) -> str:
        async def go() -> str:
            async with ControlClient(self.settings.calld_socket) as c:
                return await c.ui_link()

        return self.run(go)

    def close(self) -> None:
        self.run(self.daemon.shutdown, 0)
        self._thread.join(60)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, dict[str, Any]]]:
    if not (CHROMIUM and DRIVER):
        if REQUIRED:
            pytest.fail("CALLD_TEST_BROWSER_REQUIRED=1 but chromium or chromedriver is missing (apt-get install chromium chromium-driver)")
        pytest.skip("no chromium and chromedriver here (apt-get install chromium chromium-driver)")
    s = Served(tmp_path_factory.mktemp("ui-browser")).start()
    try:
        async def provision() -> None:
            async with ControlClient(s.settings.calld_socket) as c:
                await c.provision("alice")

        s.run(provision)
        done = s.ask(scenario="model_corrected")
        art = s.settings.artifacts_dir
        hostile_call(art, art / done["transcript_ref"].split("/")[0])
        yield s, done
    finally:
        s.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = os.environ.get("CALLD_TEST_SCREENSHOTS")
    return Path(where) if where else tmp_path_factory.mktemp("screens")


def browser() -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--mute-audio", "--window-size=1280,1400",
                "--autoplay-policy=no-user-gesture-required", "--disable-gpu"):
        opts.add_argument(arg)
    return webdriver.Chrome(service=Service(str(DRIVER)), options=opts)


@pytest.fixture
def driver(served: Any) -> Iterator[Any]:
    d = browser()
    try:
        yield d
    finally:
        d.quit()


def wait(driver: Any, condition: Any, seconds: float = 20) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, seconds, poll_frequency=0.1).until(condition)


def shot(driver: Any, shots: Path, name: str, height: int | None = None) -> None:
    if height is None:
        height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1280, min(max(int(height), 600), 4000))
    driver.save_screenshot(str(shots / f"h53-{name}.png"))


def test_open_the_list_then_a_call_and_a_quote_seeks_the_player(served, driver, shots):
    from selenium.webdriver.common.by import By

    s, done = served
    driver.get(s.link())
    assert driver.current_url.rstrip("/") == s.daemon.ui_url  # the token left the address bar
    table = wait(driver, lambda d: d.find_element(By.ID, "calls"))
    assert "Weekdays 9 AM to 7 PM." in table.text and "answered" in table.text
    shot(driver, shots, "list")
    driver.find_element(By.CSS_SELECTOR, f'a[href="/call/{done["run_id"]}"]').click()
    wait(driver, lambda d: d.find_element(By.ID, "verdict"))
    wait(driver, lambda d: d.execute_script("return document.getElementById('player').readyState") >= 1)
    shot(driver, shots, "call")
    for n, e in reversed(list(enumerate(done["evidence"], 1))):
        offset = e["start_ms"] / 1000
        driver.find_element(By.CSS_SELECTOR, f'button.seek[data-quote="{n}"]').click()
        wait(driver, lambda d: abs(d.execute_script("return document.getElementById('player').currentTime") - offset) < 0.6)
        # The transcript follows: the quote's own turn is the one lit as playing.
        wait(driver, lambda d: e["quote"][:20] in d.find_element(By.CSS_SELECTOR, "#transcript .turn.now").text)
        assert len(driver.find_elements(By.CSS_SELECTOR, "#transcript .turn.now")) == 1
        driver.execute_script("document.getElementById('player').pause()")
    # A quote marked in the transcript seeks too.
    first = done["evidence"][0]["start_ms"] / 1000
    driver.find_element(By.CSS_SELECTOR, 'mark.quote[data-quote="1"]').click()
    wait(driver, lambda d: abs(d.execute_script("return document.getElementById('player').currentTime") - first) < 0.6)
    driver.execute_script("document.getElementById('player').pause()")
    # The timeline picture is on the page and drawn.
    # drawn on request by the painter process, which a loaded CI machine may take more than 20 s to start and run
    assert wait(driver, lambda d: d.execute_script("const i = document.getElementById('timeline'); return i.complete && i.naturalWidth"),
                seconds=60)
    shot(driver, shots, "call-playing")


def test_a_transcript_full_of_markup_runs_no_script(served, driver, shots):
    from selenium.webdriver.common.by import By

    s, _done = served
    driver.get(s.link())
    driver.get(f"{s.daemon.ui_url}/call/v3_hostile-call")
    wait(driver, lambda d: d.find_element(By.ID, "transcript"))
    time.sleep(0.5)  # wall-clock ok: an onerror handler, had it run, would have fired by now
    assert driver.title.startswith("calld:") and driver.title not in ("pwned", "1")
    assert driver.find_elements(By.CSS_SELECTOR, "#transcript script, #transcript img, #transcript b, #verdict script, #verdict img") == []
    assert HOSTILE.split("<img")[0] in driver.find_element(By.ID, "transcript").text
    shot(driver, shots, "hostile")


def test_a_live_call_page_changes_when_the_call_ends(served, driver, shots):
    from selenium.webdriver.common.by import By

    s, _done = served
    driver.get(s.link())
    s.run_sync(s.nursery.start_soon, _ask_in_daemon, s)
    deadline = time.monotonic() + 30
    runs: list[str] = []
    while not runs and time.monotonic() < deadline:
        runs = s.run_sync(lambda: [h.plan.run_id for h in s.daemon.callbook.handles()])
        time.sleep(0.1)  # wall-clock ok: waiting for the daemon's thread to start the call
    assert runs, "the call never started"
    driver.get(s.daemon.ui_url)
    assert "live" in driver.find_element(By.ID, "calls").text.split("\n")[1]
    driver.get(f"{s.daemon.ui_url}/call/{runs[0]}")
    assert driver.find_element(By.ID, "live-badge").text == "live"
    shot(driver, shots, "live")
    verdict = wait(driver, lambda d: d.find_element(By.ID, "verdict"), seconds=90)
    assert "answered" in verdict.text and not driver.find_elements(By.ID, "live-badge")
    shot(driver, shots, "live-ended")


async def _ask_in_daemon(s: Served) -> None:
    async with ControlClient(s.settings.calld_socket) as c:
        await run_ask(c, ASK, out=io.StringIO(), err=io.StringIO())


def test_without_a_session_expired_or_on_the_public_listener_the_browser_gets_no_page(served, driver, shots):
    from selenium.webdriver.common.by import By

    s, done = served
    driver.get(f"{s.daemon.ui_url}/call/{done['run_id']}")
    assert "No session" in driver.find_element(By.TAG_NAME, "body").text and "Weekdays" not in driver.page_source
    s.run_sync(setattr, s.daemon.ui_access, "link_s", 0)
    try:
        stale = s.link()
    finally:
        s.run_sync(setattr, s.daemon.ui_access, "link_s", 300.0)
    driver.get(stale)
    assert "expired" in driver.find_element(By.TAG_NAME, "body").text
    assert driver.get_cookies() == []
    driver.get(s.link())
    assert driver.find_element(By.ID, "calls")
    driver.get(f"{s.daemon.public_url}/call/{done['run_id']}")  # the session cookie is not the public side's key
    assert "Weekdays" not in driver.page_source and not driver.find_elements(By.ID, "verdict")
