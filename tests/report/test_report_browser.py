"""The report opened in headless Chromium: every figure loads, the error table is there.

Chromium is driven over the DevTools protocol (websocket-client), so the report itself carries
no test hooks. A screenshot of the whole page goes to test-artifacts/report.png.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
import synthetic

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--window-size=1300,1000",
    "--remote-debugging-port=0",
    "--remote-allow-origins=*",
]
# Resolves once every <img> has loaded or failed; reports what the browser made of the page.
INSPECT = """
new Promise(resolve => {
  const report = () => resolve(JSON.stringify({
    images: Array.from(document.images).map(i => ({alt: i.alt, width: i.naturalWidth})),
    errorTable: document.querySelectorAll('#validation-table tbody tr').length,
    rankingTable: document.querySelectorAll('#ranking-table tbody tr').length,
    firstHeading: document.querySelector('h2').textContent,
    summaryFigures: document.querySelectorAll('figure[id^="fig-pytorch-summary_"]').length,
    warnings: Array.from(document.querySelectorAll('.warnings')).map(w => w.id),
    title: document.title,
  }));
  const pending = Array.from(document.images).filter(i => !i.complete)
    .map(i => new Promise(r => { i.addEventListener('load', r); i.addEventListener('error', r); }));
  const settle = () => Promise.all(pending).then(report);
  if (document.readyState === 'complete') settle(); else window.addEventListener('load', settle);
})
"""


def _install_chromium() -> str:
    def run(*argv):
        return subprocess.run(argv, capture_output=True, text=True, timeout=900)

    install = ["apt-get", "install", "-y", "--no-install-recommends", "chromium"]
    proc = run(*install)
    if proc.returncode != 0:
        update = run("apt-get", "update")
        assert update.returncode == 0, f"apt-get update failed:\n{update.stderr[-2000:]}"
        proc = run(*install)
    assert proc.returncode == 0, f"apt-get install chromium failed:\n{proc.stderr[-2000:]}"
    return "/usr/bin/chromium"


@pytest.fixture(scope="session")
def chromium() -> str:
    found = shutil.which("chromium") or (
        "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None
    )
    if found:
        return found
    if os.geteuid() != 0:
        pytest.skip("chromium is not installed and installing it (apt-get) needs root")
    if shutil.which("apt-get") is None:
        pytest.skip("chromium is not installed and there is no apt-get to install it with")
    return _install_chromium()


class DevTools:
    """A page of a headless Chromium, driven over the DevTools protocol."""

    def __init__(self, binary: str, profile: Path) -> None:
        import websocket  # websocket-client, a test dependency

        self.proc = subprocess.Popen(
            [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        port = self._port()
        targets = self._targets(port)
        page = next(t for t in targets if t.get("type") == "page")
        self.ws = websocket.create_connection(
            page["webSocketDebuggerUrl"], timeout=120, suppress_origin=True
        )
        self._id = 0
        self._events: list[dict] = []

    def open(self, url: str) -> None:
        """Navigate and wait for the load event (every image decoded or failed by then)."""
        self.call("Page.enable")
        self.call("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired")

    def _port(self) -> int:
        deadline = time.monotonic() + 60
        lines = []
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line and self.proc.poll() is not None:
                break
            lines.append(line)
            found = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
            if found:
                return int(found.group(1))
        self.close()
        raise AssertionError(
            "Chromium did not start its DevTools server:\n" + "".join(lines)[-3000:]
        )

    @staticmethod
    def _targets(port: int) -> list[dict]:
        for _ in range(50):
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as reply:
                targets = json.load(reply)
            if any(t.get("type") == "page" for t in targets):
                return targets
            time.sleep(0.2)
        raise AssertionError(f"Chromium opened no page: {targets}")

    def call(self, method: str, **params) -> dict:
        self._id += 1
        self.ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self._id:
                assert "error" not in message, f"{method}: {message['error']}"
                return message["result"]
            if "method" in message:
                self._events.append(message)

    def wait_for(self, event: str) -> dict:
        while True:
            for i, message in enumerate(self._events):
                if message["method"] == event:
                    return self._events.pop(i)
            message = json.loads(self.ws.recv())
            if "method" in message:
                self._events.append(message)

    def evaluate(self, expression: str, await_promise: bool = False):
        reply = self.call(
            "Runtime.evaluate",
            expression=expression,
            awaitPromise=await_promise,
            returnByValue=True,
        )
        assert "exceptionDetails" not in reply, reply["exceptionDetails"]
        return reply["result"]["value"]

    def close(self) -> None:
        if getattr(self, "ws", None) is not None:
            self.ws.close()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    data = synthetic.validated(n_boot=200)
    first = tmp_path_factory.mktemp("first") / "index.html"
    second = tmp_path_factory.mktemp("second") / "index.html"
    return (
        data,
        (first, synthetic.write_report(data, first)),
        (second, synthetic.write_report(data, second)),
    )


def test_report_is_byte_identical_when_rebuilt(built):
    _, (first, first_files), (second, second_files) = built
    assert first.read_bytes() == second.read_bytes()
    assert [p.relative_to(first.parent) for p in first_files] == [
        p.relative_to(second.parent) for p in second_files
    ]
    for a, b in zip(first_files, second_files, strict=True):
        assert a.read_bytes() == b.read_bytes(), a.name


def test_report_renders_in_chromium(built, chromium, tmp_path):
    data, (page, _), _ = built
    browser = DevTools(chromium, tmp_path / "profile")
    try:
        browser.open(page.as_uri())
        result = json.loads(browser.evaluate(INSPECT, await_promise=True))
        height = browser.evaluate("document.documentElement.scrollHeight")
        # The whole page in one image: a viewport as tall as the page (capped for huge reports).
        browser.call(
            "Emulation.setDeviceMetricsOverride",
            width=1300,
            height=min(int(height), 30000),
            deviceScaleFactor=1,
            mobile=False,
        )
        shot = browser.call("Page.captureScreenshot", format="png")
    finally:
        browser.close()
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "report.png").write_bytes(base64.b64decode(shot["data"]))
    assert result["title"] == "dlperf report"
    assert result["firstHeading"] == "Summary"
    assert result["summaryFigures"] == 2
    assert result["warnings"] == ["warnings-pytorch-lenet", "warnings-pytorch-mlp"]
    assert len(result["images"]) == 16, result["images"]
    broken = [image["alt"] for image in result["images"] if image["width"] <= 0]
    assert not broken, f"images that did not load: {broken}"
    assert result["errorTable"] == len(data["summary"])
    assert result["rankingTable"] > 0
    assert (ARTIFACTS / "report.png").stat().st_size > 10_000
