"""Real headless Chromium for the report tests, driven over the DevTools protocol on a pipe (no websocket, no
driver package), and the pinned npm packages the tests load into it (tests/support/js/package-lock.json).

Chromium comes from the distribution's packages: `chromium()` installs it with apt-get when it is missing and
the tests run as root, and otherwise says why it cannot, for a loud skip. npm packages are installed once per
lock file into a cache directory outside the work tree ($GITMEM_TEST_CACHE, default ~/.cache/gitmem-tests), so a
session, and the next one on the same machine, pays for `npm ci` once.
"""
from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.npm_cache import Unavailable, cache_dir, npm_ci, one_installer_at_a_time, skip_loudly

JS_DIR = Path(__file__).resolve().parent / "js"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
         "--remote-debugging-pipe")


def chromium() -> str:
    """The path of Debian's Chromium, installed with apt-get when missing (root only)."""
    with one_installer_at_a_time(cache_dir() / ".apt-chromium.lock"):     # one apt-get at a time, across workers
        found = shutil.which("chromium") or shutil.which("chromium-browser")
        if found:
            return found
        if not shutil.which("apt-get"):
            raise Unavailable("Chromium is not installed and there is no apt-get to install it with "
                              "(install Debian's `chromium` package)")
        if os.geteuid() != 0:
            raise Unavailable("Chromium is not installed and the tests do not run as root, so they cannot "
                              "`apt-get install -y chromium`; install it to run these tests")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        steps = (["apt-get", "install", "-y", "-q", "chromium"],)
        first = subprocess.run(*steps, env=env, capture_output=True, text=True, timeout=900)
        if first.returncode != 0:    # an empty or stale package list: update it once and try again
            subprocess.run(["apt-get", "update", "-q"], env=env, capture_output=True, text=True, timeout=600)
            again = subprocess.run(*steps, env=env, capture_output=True, text=True, timeout=900)
            if again.returncode != 0:
                raise Unavailable(f"`apt-get install -y chromium` failed: {again.stderr.strip()[-500:]}")
        found = shutil.which("chromium")
        if not found:
            raise Unavailable("`apt-get install -y chromium` ran but no `chromium` is on PATH")
        return found


def npm_packages() -> Path:
    """node_modules of tests/support/js, installed with `npm ci` from the committed lock, cached by its hash."""
    return npm_ci(JS_DIR, "npm", "tests/support/js (Mermaid)", scripts=False, timeout=600) / "node_modules"


def _made(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


@dataclass
class Page:
    """What a loaded page did: console errors, uncaught exceptions, and every URL it requested."""

    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)


class Browser:
    """One headless Chromium with one tab, spoken to over the DevTools protocol on fds 3 and 4."""

    def __init__(self, executable: str, profile: Path, width: int = 1400, height: int = 1000) -> None:
        # Chromium talks a lot on stderr: a file never fills up and blocks it as an unread pipe would.
        self._log = (_made(profile) / "chromium.log").open("wb")
        self._send_r, self._send_w = os.pipe()
        self._recv_r, self._recv_w = os.pipe()
        # The protocol pipe must be fds 3 (commands in) and 4 (answers out) in Chromium: bash puts them there.
        script = f'exec "$0" "$@" 3<&{self._send_r} 4>&{self._recv_w}'
        self.process = subprocess.Popen(
            ["bash", "-c", script, executable, *FLAGS, f"--user-data-dir={profile}",
             f"--window-size={width},{height}", "about:blank"],
            pass_fds=(self._send_r, self._recv_w), stdout=subprocess.DEVNULL, stderr=self._log)
        os.close(self._send_r)
        os.close(self._recv_w)
        self._reader = os.fdopen(self._recv_r, "rb")
        self._writer = os.fdopen(self._send_w, "wb")
        self._next = 0
        self._buffer = b""
        self._events: list[dict[str, Any]] = []
        self.width, self.height = width, height
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=True)
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=width, height=height,
                  deviceScaleFactor=1, mobile=False)

    # -- the protocol ---------------------------------------------------------------------------------------
    def _message(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self._reader.fileno(), 1 << 20)
            if not chunk:
                said = Path(self._log.name).read_text(errors="replace")[-1000:]
                raise RuntimeError(f"Chromium closed the DevTools pipe: {said}")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method: str, *, session: bool = False, timeout: float = 60, **params: Any) -> dict[str, Any]:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        self._writer.write(json.dumps(message).encode() + b"\0")
        self._writer.flush()
        while True:
            answer = self._message(timeout)
            if answer.get("id") == self._next:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            self._events.append(answer)

    def wait_for(self, method: str, timeout: float = 60) -> dict[str, Any]:
        for index, event in enumerate(self._events):
            if event.get("method") == method:
                return self._events.pop(index)
        while True:
            event = self._message(timeout)
            if event.get("method") == method:
                return event
            self._events.append(event)

    # -- what the tests use ---------------------------------------------------------------------------------
    def open(self, url: str) -> Page:
        """Load `url` and wait for its load event; the page's console errors and requests are collected."""
        self._events.clear()
        self.call("Page.navigate", session=True, url=url)
        self.wait_for("Page.loadEventFired")
        self.evaluate("new Promise(done => requestAnimationFrame(() => setTimeout(done, 50)))", await_promise=True)
        return self.page()

    def page(self) -> Page:
        found = Page()
        for event in self._events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                found.errors.append(" ".join(str(a.get("value", a.get("description", ""))) for a in params["args"]))
            elif method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                found.errors.append(details.get("exception", {}).get("description") or details.get("text", ""))
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                found.errors.append(params["entry"].get("text", ""))
            elif method == "Network.requestWillBeSent":
                found.requests.append(params["request"]["url"])
        return found

    def evaluate(self, expression: str, *, await_promise: bool = False) -> Any:
        result = self.call("Runtime.evaluate", session=True, expression=expression, returnByValue=True,
                           awaitPromise=await_promise)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise RuntimeError(details.get("exception", {}).get("description") or details.get("text"))
        return result["result"].get("value")

    def resize(self, width: int, height: int) -> None:
        """The viewport from now on, as a window of that size would have it (a phone's width, say)."""
        self.width, self.height = width, height
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=width, height=height,
                  deviceScaleFactor=1, mobile=False)

    def screenshot(self, path: Path) -> Path:
        """A PNG of the whole page, as tall as its content."""
        height = int(self.evaluate("Math.ceil(document.documentElement.scrollHeight)"))
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=self.width, height=height,
                  deviceScaleFactor=1, mobile=False)
        shot = self.call("Page.captureScreenshot", session=True, format="png", captureBeyondViewport=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(shot["data"]))
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=self.width, height=self.height,
                  deviceScaleFactor=1, mobile=False)
        return path

    def close(self) -> None:
        try:
            self.call("Browser.close", timeout=10)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for handle in (self._reader, self._writer):
            try:
                handle.close()
            except OSError:
                pass
        self._log.close()


@contextmanager
def headless(profile: Path, what: str) -> Iterator[Browser]:
    """One headless Chromium for a module's tests, closed after them; `what` names them in the loud skip where
    this machine has no Chromium."""
    try:
        executable = chromium()
    except Unavailable as why:
        skip_loudly(what, f"no headless Chromium: {why}")
    opened = Browser(executable, profile)
    try:
        yield opened
    finally:
        opened.close()
