"""The evaluation report as a browser shows it, at 800 and at 1,400 pixels: headless
Chromium renders the page, a screenshot has the window's size, and a probe run on load
lists every element that overflows — the page, or the chart it belongs to (a legend
clipped, a whisker off the plot). A table wider than the window scrolls in its wrapper
and is no overflow. Skipped, with the reason, only when no browser is installed."""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from tracemine.evaluate import EvaluationReport, evaluate
from tracemine.evaluate.report import to_html

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars"]  # fmt: skip
PROBE = """<script>
addEventListener("load", () => {
  const page = document.documentElement.clientWidth, found = [];
  const name = (el) => el.tagName.toLowerCase() + " " + (el.textContent || "").trim().slice(0, 40);
  if (document.documentElement.scrollWidth > page)
    found.push(`page scrolls sideways: ${document.documentElement.scrollWidth} > ${page}`);
  for (const el of document.body.querySelectorAll("*")) {
    const box = el.getBoundingClientRect();
    // what sits in a scrolling wrapper may be wider than the page: the wrapper scrolls
    const wrapper = el.parentElement && el.parentElement.closest(".wide");
    if (!wrapper && box.right > page + 0.5) found.push(`${name(el)}: right ${box.right} > ${page}`);
    if (el.classList.contains("wide") && el.scrollWidth > el.clientWidth
        && !["auto", "scroll"].includes(getComputedStyle(el).overflowX))
      found.push(`${name(el)}: wider than its wrapper, which does not scroll`);
  }
  for (const svg of document.querySelectorAll("svg")) {
    const chart = svg.getBoundingClientRect();
    for (const el of svg.querySelectorAll("text, line, rect, circle")) {
      const box = el.getBoundingClientRect();
      if (box.left < chart.left - 0.5 || box.right > chart.right + 0.5
          || box.top < chart.top - 0.5 || box.bottom > chart.bottom + 0.5)
        found.push(`${name(el)}: outside its chart`);
    }
  }
  const out = document.createElement("pre");
  out.id = "overflow";
  out.textContent = JSON.stringify(found);
  document.body.appendChild(out);
});
</script>"""


def _browser() -> str:
    found = next((shutil.which(name) for name in BROWSERS if shutil.which(name)), None)
    if found is None:
        pytest.skip(f"no browser to render the report in (looked for {', '.join(BROWSERS)}; "
                    "`make test` installs Debian's chromium)")  # fmt: skip
    return found


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of a small evaluation, every arm and fault class, with the probe."""
    _browser()
    out = tmp_path_factory.mktemp("report")
    report: EvaluationReport = evaluate(suite="commerce", tasks=16, trials=2, max_faults=3,
                                        seed=3, out=out)  # fmt: skip
    path = out / "probed.html"
    path.write_text(to_html(report).replace("</body>", PROBE + "</body>"), "utf-8")
    return path


def _run(page: Path, tmp_path: Path, width: int, *args: str) -> subprocess.CompletedProcess[str]:
    command = [_browser(), *FLAGS, f"--user-data-dir={tmp_path / 'profile'}",
               f"--window-size={width},1200", *args, page.as_uri()]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=True)


@pytest.mark.parametrize("width", [800, 1400])
def test_the_report_fits_the_window(page: Path, tmp_path: Path, width: int) -> None:
    shot = tmp_path / "shot.png"
    _run(page, tmp_path, width, f"--screenshot={shot}")
    header = shot.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", header[16:24]) == (width, 1200)
    dom = _run(page, tmp_path, width, "--virtual-time-budget=5000", "--dump-dom").stdout
    said = re.search(r'<pre id="overflow">(.*?)</pre>', dom, flags=re.S)
    assert said, "the probe did not run"
    overflowing = json.loads(said.group(1).replace("&gt;", ">").replace("&amp;", "&"))
    assert overflowing == [], "\n".join(overflowing)
