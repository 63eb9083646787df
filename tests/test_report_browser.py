"""report.html in a real browser: headless Chromium driven through Selenium and the system's
chromedriver (never a downloaded one: the driver's path is given, so Selenium Manager does not
run). The page loads with no console error and no network request (the browser's performance
log lists every request), every plot is drawn (an SVG with a size and its axes), a screenshot at
1280x2000 is not blank, at a phone's width the page itself never scrolls sideways (wide tables
and plots scroll inside their own box), and it prints to PDF.

Needs Debian's `chromium` and `chromium-driver` (`apt-get install -y chromium chromium-driver`;
.ci/run installs them when they are missing); skipped, saying so, where they are not installed.
"""

from __future__ import annotations

import base64
import io
import json
import shutil
from pathlib import Path

import pytest
from helpers import audit_planted, one_item_session, planted_session, record, synthetic_result
from hostile import HTML, MARKUP

from engine.outputs.report.report_html import html_report
from engine.saved.decisions import open_store

pytestmark = pytest.mark.slow
CHROMEDRIVER = Path("/usr/bin/chromedriver")
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# A closed network floods a default Chromium with refused connections: no background services.
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--hide-scrollbars",
)  # fmt: skip


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if not CHROMEDRIVER.is_file() or not Path(CHROMIUM).is_file():
        pytest.skip(
            "Chromium is not installed: `apt-get install -y chromium chromium-driver` "
            "(.ci/run installs them) to run the browser test of report.html"
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    yield driver
    driver.quit()


def session_page(folder: Path) -> Path:
    """A session with items, raters, a second rater, hostile names and three decisions."""
    frame, vectors = planted_session(seed=5, items=2, per_item=250)
    frame["item"] = frame["item"].replace({"I0": HTML, "I1": "fractions"})
    frame["rater"] = frame["rater"].replace({"r6": MARKUP[:20]})
    frame["score2"] = frame["score"].where(frame.index % 3 == 0, "")
    frame["rater2"] = (
        frame["rater"]
        .where(frame.index % 3 == 0, "")
        .map(lambda r: "" if not r else ("r2" if r != "r2" else "r3"))
    )
    session = audit_planted(frame, vectors, second_score_column="score2",
                            second_rater_column="rater2", bootstrap_samples=50)  # fmt: skip
    review = session.review
    responses = review.responses
    order = [int(i) for i in review.review_order()]  # the queue's top, flagged or not
    with open_store(folder / "s.csv", responses, folder / "d.sqlite3", review.on_scale) as store:
        record(store, responses, order[0], "change", responses.labels[review.predicted[order[0]]])
        record(store, responses, order[1], "keep")
        record(store, responses, order[2], "unsure", note=HTML)
        decisions = store.all()
    path = folder / "session.html"
    path.write_text(html_report(session, decisions), encoding="utf-8")
    return path


def single_page(folder: Path) -> Path:
    path = folder / "single.html"
    result = synthetic_result(200, top_k=(5, 10, 20))
    path.write_text(html_report(one_item_session(result), None), encoding="utf-8")
    return path


PAGES = {"session": session_page, "single": single_page}


def viewport(driver, width: int, height: int) -> None:
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
    )


def requests(driver) -> list[str]:
    """Every URL the page asked for since the log was last read."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


PLOTS = """
return Array.from(document.querySelectorAll('svg.plot')).map(svg => {
  const box = svg.getBoundingClientRect();
  const axes = svg.querySelectorAll('g.axes');
  const marks = Array.from(svg.querySelectorAll('g.axes path, g.axes use'))
    .filter(p => { const b = p.getBBox(); return b.width > 0 || b.height > 0; }).length;
  const labels = Array.from(svg.querySelectorAll('text')).filter(t => t.textContent.trim()).length;
  return {width: box.width, height: box.height, axes: axes.length, marks: marks, labels: labels};
});
"""


@pytest.mark.parametrize("kind", sorted(PAGES))
def test_the_page_loads_cleanly_and_draws_every_plot(browser, tmp_path, kind):
    from PIL import Image

    page = PAGES[kind](tmp_path)
    browser.get_log("browser"), browser.get_log("performance")  # start both logs empty
    viewport(browser, 1280, 2000)
    browser.get(page.as_uri())
    assert browser.execute_script("return document.readyState") == "complete"
    errors = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
    assert errors == []
    assert requests(browser) == [page.as_uri()]  # the page itself, and nothing else
    plots = browser.execute_script(PLOTS)
    # each item's three (scores, confusion, tuning), and the raters' panels: the session's
    # named raters and their item bias, the single item's two reads as two raters
    expected = 3 * (2 if kind == "session" else 1) + (2 if kind == "session" else 1)
    assert len(plots) == expected
    for plot in plots:
        assert plot["width"] > 100 and plot["height"] > 50, plot
        assert plot["axes"] >= 1 and plot["marks"] >= 3 and plot["labels"] >= 3, plot
    assert browser.execute_script("return document.scripts.length") == 0
    shot = Image.open(io.BytesIO(browser.get_screenshot_as_png())).convert("RGB")
    assert shot.size == (1280, 2000)
    colours = shot.getcolors(maxcolors=1 << 16) or []
    white = sum(n for n, colour in colours if colour == (255, 255, 255))
    assert len(colours) > 50 and white < 0.95 * 1280 * 2000  # text, tables and plots drawn
    shot.save(tmp_path / f"{kind}-1280.png")


@pytest.mark.parametrize("kind", sorted(PAGES))
def test_on_a_phone_only_tables_and_plots_scroll_sideways(browser, tmp_path, kind):
    page = PAGES[kind](tmp_path)
    viewport(browser, 390, 2000)
    browser.get(page.as_uri())
    width = browser.execute_script("return document.documentElement.scrollWidth")
    assert width <= 390
    scrolling = browser.execute_script(
        "return Array.from(document.querySelectorAll('.wrap, figure'))"
        ".filter(e => e.scrollWidth > e.clientWidth).length"
    )
    assert scrolling > 0  # the wide ones scroll inside their own box


def test_the_page_prints(browser, tmp_path):
    page = single_page(tmp_path)
    viewport(browser, 1280, 2000)
    browser.get(page.as_uri())
    pages = 0
    # Once, on a fresh clone at load 7, Chromium printed the first page only; printing again
    # gives the whole page, so only a page that never prints whole fails.
    for _ in range(3):
        pdf = base64.b64decode(printed(browser))
        assert pdf.startswith(b"%PDF")
        pages = pdf.count(b"/Type /Page") - pdf.count(b"/Type /Pages")
        if pages >= 2:
            break
    assert pages >= 2


def printed(browser) -> str:
    """The page as PDF (base64). Headless Chromium's printToPDF now and then answers "Printing
    failed" on a busy machine (once in two fresh-clone CI runs; never when repeated): two more
    tries, a second apart, so only a page that never prints fails the test."""
    import time

    from selenium.common.exceptions import InvalidArgumentException

    for attempt in range(3):
        try:
            return browser.print_page()
        except InvalidArgumentException as exc:
            if "Printing failed" not in str(exc) or attempt == 2:
                raise
            time.sleep(1.0)
    raise AssertionError("unreachable")
