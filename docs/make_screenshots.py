"""Make the docs' screenshots from the real app and the real report, never by hand.

    python docs/make_screenshots.py

Runs `parm audit` on the sample files (sample_data/plant_growth.csv and sample_data/sessions.csv)
with the bundled model, opens each in the app at 120x40 (Textual's `App.run_test`), presses the
keys a reader presses in the tutorial and saves each screen as SVG (`App.save_screenshot`);
then `parm export` writes report.html with the review's decisions and headless Chromium (the
system's chromedriver, as tests/test_report_browser.py drives it) saves it as PNG. Everything
lands in docs/images/. Decisions, saved runs and outputs go to a temporary folder; the embedding
cache is the user's (PARM_CACHE_DIR), so a second run embeds nothing. About a minute with a
warm cache.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
IMAGES = DOCS / "images"
SIZE = (120, 40)
PLANTS = Path("sample_data") / "plant_growth.csv"
SESSIONS = Path("sample_data") / "sessions.csv"
CHROMEDRIVER = Path("/usr/bin/chromedriver")


def parm(*args: str) -> None:
    """Run one `parm` command in this process; stop on any exit code but 0."""
    from parm_tui.cli import main

    try:
        main(list(args))
    except SystemExit as leaving:
        if leaving.code not in (0, None):
            raise RuntimeError(f"parm {' '.join(args)} exited with {leaving.code}") from None


async def settle(pilot) -> None:
    """Wait for the app's workers and a redraw; stop cursors blinking."""
    from textual.widgets import Input

    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    for text_input in pilot.app.screen.query(Input):
        text_input.cursor_blink = False
    await pilot.pause(0.3)


def save(app, name: str) -> None:
    app.save_screenshot(filename=f"{name}.svg", path=str(IMAGES))
    print(f"wrote docs/images/{name}.svg")


async def plant_growth_screens() -> None:
    """The Load screen, the resume question, Results and the Review with two decisions."""
    from parm_tui.app import ParmApp

    app = ParmApp(PLANTS)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        save(app, "load")

    parm("audit", str(PLANTS), "--out", "parm-out", "--force", "--quiet")

    app = ParmApp(PLANTS)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        save(app, "resume")
        await pilot.press("r")
        await settle(pilot)
        await pilot.app.action_show("results")
        await settle(pilot)
        save(app, "results")
        await pilot.press("f6")
        await settle(pilot)
        await pilot.press("o")  # keep the most severe
        await settle(pilot)
        await pilot.press("question_mark")  # unsure about the next
        await settle(pilot)
        save(app, "review")


async def session_screens() -> None:
    """A session's Results: the Items and Raters tabs."""
    from parm_tui.app import ParmApp

    parm("audit", str(SESSIONS), "--out", "session-out", "--force", "--quiet")
    app = ParmApp(SESSIONS)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        await pilot.app.action_show("results")
        await settle(pilot)
        await pilot.press("5")
        await settle(pilot)
        save(app, "session-items")
        await pilot.press("6")
        await settle(pilot)
        save(app, "session-raters")


def report_png() -> None:
    """report.html of the sample with the review's decisions, as Chromium draws it."""
    parm("export", str(PLANTS), "--out", "parm-out", "--force")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                 "--disable-background-networking", "--no-first-run"):  # fmt: skip
        options.add_argument(flag)
    options.add_argument("--window-size=1024,1400")
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    try:
        driver.get((Path.cwd() / "parm-out" / "report.html").as_uri())
        driver.save_screenshot(str(IMAGES / "report-html.png"))
    finally:
        driver.quit()
    print("wrote docs/images/report-html.png")


def main() -> int:
    IMAGES.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="parm-screenshots-") as work:
        work = Path(work)
        # The sample files by their usual relative paths, so the screens show those.
        (work / "sample_data").mkdir()
        for sample in (PLANTS, SESSIONS):
            shutil.copy(ROOT / sample, work / sample)
        os.environ["PARM_DATA_DIR"] = str(work / "data")
        os.chdir(work)
        sys.path.insert(0, str(ROOT))
        asyncio.run(plant_growth_screens())
        report_png()
        asyncio.run(session_screens())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
