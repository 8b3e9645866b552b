"""Real headless Chromium (Debian's `chromium`) driven by Playwright, for the console's tests.

Set AGENTJOBS_SCREENSHOTS to a directory to have the tests save the pages the README shows.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

SCREENSHOTS = os.environ.get("AGENTJOBS_SCREENSHOTS")


# Per module: Playwright's sync API holds an event loop as the running one while it is
# open, and every asyncio.run of a later test in the same worker would fail.
@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    chromium = shutil.which("chromium")
    assert chromium is not None, "Debian's chromium is not installed (apt-get install chromium)"
    with sync_playwright() as playwright:
        # As root, Chromium's own sandbox cannot start; the test's pages are our own.
        launched = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh page on a laptop-sized screen; a dialog (an alert a script opened) fails it."""
    context = browser.new_context(viewport={"width": 1366, "height": 768}, accept_downloads=True)
    opened = context.new_page()
    dialogs: list[str] = []
    opened.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    yield opened
    context.close()
    assert not dialogs, f"a script opened dialogs: {dialogs}"


def screenshot(page: Page, name: str) -> None:
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SCREENSHOTS) / f"{name}.png"), full_page=False)
