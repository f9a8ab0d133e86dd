"""The report opened in headless Chromium: every figure loads, the error table is there, and
the frameworks stand side by side right after the Summary (lenet in three frameworks).

Playwright (pytest-playwright's ``page``) drives the system Chromium, /usr/bin/chromium (installed
here with apt-get when missing and run as root); no browser is downloaded. The report itself
carries no test hooks. A screenshot of the whole page goes to test-artifacts/report.png; one of
the "Which hardware" section of a study measured on three GPU types to
test-artifacts/which-hardware.png.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import synthetic

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]
# Resolves once every <img> has loaded or failed; reports what the browser made of the page.
INSPECT = """
new Promise(resolve => {
  const report = () => resolve({
    images: Array.from(document.images).map(i => ({alt: i.alt, width: i.naturalWidth})),
    errorTable: document.querySelectorAll('#validation-table tbody tr').length,
    rankingTable: document.querySelectorAll('#ranking-table tbody tr').length,
    firstHeading: document.querySelector('h2').textContent,
    summaryFigures: document.querySelectorAll('figure[id^="fig-pytorch-summary_"]').length,
    warnings: Array.from(document.querySelectorAll('.warnings')).map(w => w.id),
    title: document.title,
    secondHeading: document.querySelectorAll('h2')[1].textContent,
    sideBySide: Array.from(document.querySelectorAll('figure[id^="fig-frameworks-"]'))
      .map(f => ({id: f.id, width: f.querySelector('img').naturalWidth})),
    ratioRows: Array.from(document.querySelectorAll('#framework-ratios-lenet tbody tr'))
      .map(r => Array.from(r.cells).map(c => c.textContent)),
    fastestRows: document.querySelectorAll('#framework-ratios-lenet tr.best').length,
    splitRows: document.querySelectorAll('#framework-split-lenet tbody tr').length,
    losses: (document.querySelector('#framework-losses-lenet') || {}).textContent,
  });
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


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args, chromium) -> dict:
    """pytest-playwright launches the system Chromium: Playwright downloads no browser."""
    return {**browser_type_launch_args, "executable_path": chromium, "args": CHROMIUM_ARGS}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args) -> dict:
    return {**browser_context_args, "viewport": {"width": 1300, "height": 1000}}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    # lenet in three frameworks (one slower by its overhead, one by its communication), mlp in
    # pytorch only.
    data = synthetic.validated(n_boot=200, frameworks=("pytorch", "tensorflow", "mxnet"))
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


def test_report_renders_in_chromium(built, page):
    data, (report, _), _ = built
    # Waits for the load event: every image decoded or failed by then.
    page.goto(report.as_uri())
    result = page.evaluate(INSPECT)
    height = page.evaluate("document.documentElement.scrollHeight")
    # The whole page in one image: a viewport as tall as the page (capped for huge reports).
    page.set_viewport_size({"width": 1300, "height": min(int(height), 30000)})
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / "report.png")
    assert result["title"] == "dlperf report"
    assert result["firstHeading"] == "Summary"
    assert result["summaryFigures"] == 2
    assert result["warnings"] == [
        "warnings-mxnet-lenet",
        "warnings-pytorch-lenet",
        "warnings-pytorch-mlp",
        "warnings-tensorflow-lenet",
    ]
    # Per framework and network 2 summary figures and 6 details; 2 side by side.
    assert len(result["images"]) == 4 * 8 + 2, result["images"]
    broken = [image["alt"] for image in result["images"] if image["width"] <= 0]
    assert not broken, f"images that did not load: {broken}"
    assert result["errorTable"] == len(data["summary"])
    assert result["rankingTable"] > 0
    assert (ARTIFACTS / "report.png").stat().st_size > 10_000
    _assert_side_by_side(result)


def _assert_side_by_side(result: dict) -> None:
    """Right after the Summary: lenet's three frameworks on one figure, their ratios to the
    fastest at each worker count with intervals, the split and the sentence."""
    assert result["secondHeading"] == "Frameworks side by side"
    assert [(f["id"], f["width"] > 0) for f in result["sideBySide"]] == [
        ("fig-frameworks-throughput_lenet", True),
        ("fig-frameworks-iteration_split_lenet", True),
    ]
    rows = result["ratioRows"]
    assert [r[1:3] for r in rows] == [
        [p, f] for p in ("1", "2", "4") for f in ("mxnet", "pytorch", "tensorflow")
    ]
    assert result["fastestRows"] == 3  # pytorch at every worker count
    assert all(r[4] == "1.000" or " .. " in r[5] for r in rows)
    assert result["splitRows"] == 9
    assert "tensorflow takes" in result["losses"] and "mxnet takes" in result["losses"]


# The "Which hardware" section: its place on the page, what its tables hold, and the box from
# its heading to the next section's, for the screenshot.
HARDWARE = """
(() => {
  const heading = document.getElementById('which-hardware');
  const headings = Array.from(document.querySelectorAll('h2'));
  const next = headings[headings.indexOf(heading) + 1];
  const top = heading.getBoundingClientRect().top + window.scrollY;
  const bottom = next.getBoundingClientRect().top + window.scrollY;
  const cells = id => Array.from(document.querySelectorAll(`#${id} tbody tr`))
    .map(r => Array.from(r.cells).map(c => c.textContent));
  const box = heading.getBoundingClientRect();
  return {
    visible: box.width > 0 && box.height > 0 && getComputedStyle(heading).display !== 'none',
    nav: Array.from(document.querySelectorAll('nav a')).map(a => a.textContent),
    answers: cells('hardware-table'),
    plan: cells('hardware-plan'),
    datasheets: cells('hardware-datasheets'),
    clip: {x: 0, y: top - 8, width: document.documentElement.clientWidth,
           height: bottom - top},
  };
})()
"""


def test_which_hardware_renders_in_chromium(page, tmp_path):
    data = synthetic.across_hardware()
    report = tmp_path / "index.html"
    synthetic.write_report(data, report)
    page.goto(report.as_uri())
    found = page.evaluate(HARDWARE)
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "which-hardware.png"
    page.screenshot(path=shot, clip=found["clip"], full_page=True)
    assert found["visible"] and "Which hardware" in found["nav"]
    measured = ", ".join(sorted(synthetic.MEASURED_GPUS))
    ((framework, network, precision, gpus, *_),) = found["answers"]
    assert (framework, network, precision, gpus) == ("pytorch", "mlp", "amp_fp16", measured)
    # The target planned on the GPU types report.target.gpus names, the H100 not measured.
    assert [row[3:5] for row in found["plan"]] == [
        ["H100-SXM5-80GB", "no"], ["A100-SXM4-80GB", "yes"], ["A10", "yes"],
    ]  # fmt: skip
    assert [row[0] for row in found["datasheets"]] == [
        "H100-SXM5-80GB", "A100-SXM4-80GB", "A10", "V100-SXM2-16GB",
    ]  # fmt: skip
    assert found["clip"]["height"] > 200 and shot.stat().st_size > 10_000
