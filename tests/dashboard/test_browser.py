"""End to end in headless Chromium: a real ``cairn serve`` on a free loopback port, the
dashboard driven by Playwright through Debian's ``chromium`` (never a downloaded one):
log in, search, correct a memory and see its new version, forget and restore it, run a
recall diagnosis. Every page visited is saved as a screenshot under
``tests/artifacts/dashboard/`` (git-ignored), laptop and phone sizes.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server.serving import Server

CHROMIUM = next(
    (p for p in (shutil.which("chromium"), "/usr/bin/chromium") if p and Path(p).exists()), None
)
if CHROMIUM is None:
    pytest.skip(
        "chromium is not installed (apt-get install -y chromium; .ci/run does it)",
        allow_module_level=True,
    )
playwright = pytest.importorskip("playwright.sync_api", reason="pip install playwright")

SHOTS = Path(__file__).resolve().parents[1] / "artifacts" / "dashboard"
LAPTOP = {"width": 1366, "height": 850}
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    served = Server.start(tmp_path_factory.mktemp("dashboard-e2e"))
    yield served
    assert served.stop() == 0, served.text()[-2000:]


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        yield browser
        browser.close()


class Person:
    """A tenant of its own, some memories in it, and a browser page signed in to it."""

    def __init__(self, server: Server, chromium: Any, name: str) -> None:
        self.server = server
        self.tenant = f"e2e-{uuid.uuid4().hex[:8]}"
        self.name = name
        self.context = chromium.new_context(viewport=LAPTOP)
        self.page = self.context.new_page()
        self.shots: list[Path] = []
        SHOTS.mkdir(parents=True, exist_ok=True)

    def seed(self, *bodies: str) -> list[str]:
        with self.server.memory(self.tenant) as mem:
            return [mem.remember(b, kind="policy").id for b in bodies]

    def shot(self, label: str) -> None:
        path = SHOTS / f"{self.name}-{label}.png"
        self.page.screenshot(path=str(path), full_page=True)
        assert path.stat().st_size > 1000
        self.shots.append(path)

    def phone(self, label: str) -> None:
        """The same page on a phone: one column, nothing wider than the screen."""
        self.page.set_viewport_size(PHONE)
        assert self.page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        self.shot(label)

    def login(self) -> None:
        self.page.goto(f"{self.server.url}/dashboard/")
        assert self.page.url.endswith("/dashboard/login")
        self.shot("login")
        self.page.get_by_label("Token").fill(self.server.token(self.tenant))
        self.page.get_by_role("button", name="Sign in").click()
        self.page.wait_for_url("**/dashboard/memories")
        assert self.page.get_by_test_id("tenant").inner_text() == self.tenant


@pytest.fixture
def person(server: Server, chromium: Any, request: pytest.FixtureRequest) -> Iterator[Person]:
    made = Person(server, chromium, request.node.name.removeprefix("test_"))
    yield made
    made.context.close()


def test_login_and_search(person: Person) -> None:
    person.seed("Always use pnpm here", "Never push to main", "<script>alert(1)</script> hostile")
    person.login()
    page = person.page
    assert page.locator("table.list tbody tr").count() == 3
    assert "<script>alert(1)</script> hostile" in page.locator("table.list").inner_text()
    person.shot("memories")
    page.get_by_label("Search text").fill("pnpm")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url("**q=pnpm**")
    rows = page.locator("table.list tbody tr")
    assert rows.count() == 1 and "Always use pnpm here" in rows.inner_text()
    person.shot("search")
    person.phone("memories-phone")


def test_correct_a_memory_and_see_the_new_version(person: Person) -> None:
    (rid,) = person.seed("Use npm for installs")
    person.login()
    page = person.page
    page.get_by_role("link", name="Use npm for installs").click()
    page.wait_for_url(f"**/memories/{rid}**")
    assert page.get_by_test_id("version").inner_text() == "1"
    person.shot("detail")
    page.get_by_label("Corrected text").fill("Use pnpm 10 for installs")
    page.get_by_role("button", name="Correct (new version)").click()
    page.wait_for_url("**done=**")
    assert "now version 2" in page.get_by_test_id("done").inner_text()
    assert page.get_by_test_id("version").inner_text() == "2"
    assert page.get_by_test_id("body").inner_text() == "Use pnpm 10 for installs"
    versions = page.get_by_test_id("versions").locator("tbody tr")
    assert versions.count() == 2 and "Use npm for installs" in versions.nth(1).inner_text()
    person.shot("corrected")
    person.phone("corrected-phone")


def test_forget_and_restore(person: Person) -> None:
    (rid,) = person.seed("Deploy on Fridays")
    person.login()
    page = person.page
    page.goto(f"{person.server.url}/dashboard/memories/{rid}")
    page.get_by_role("link", name="Forget…").click()
    page.wait_for_url("**/confirm/forget**")
    assert "You can restore it" in page.inner_text("main")
    person.shot("confirm-forget")
    page.get_by_role("button", name="Forget", exact=True).click()
    page.wait_for_url("**done=forgotten**")
    assert page.get_by_test_id("forgotten").inner_text().startswith("yes")
    assert "user-remove" in page.get_by_test_id("tombstone").inner_text()
    person.shot("forgotten")
    page.goto(f"{person.server.url}/dashboard/memories")
    assert "No memories match" in page.inner_text("main")  # gone from the live list
    page.get_by_label("include forgotten and evicted").check()
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url("**forgotten=1**")
    assert "forgotten" in page.locator("table.list").inner_text()
    page.get_by_role("link", name="Deploy on Fridays").click()
    page.get_by_role("button", name="Restore").click()
    page.wait_for_url("**done=restored**")
    assert page.get_by_test_id("forgotten").inner_text() == "no"
    person.shot("restored")
    page.goto(f"{person.server.url}/dashboard/journal")
    assert page.get_by_test_id("timeline").locator("li").count() == 3  # remember, forget, restore
    person.shot("journal")


def test_recall_diagnosis(person: Person) -> None:
    person.seed("Always use pnpm to install packages", "Tea is better than coffee")
    person.login()
    page = person.page
    page.get_by_role("link", name="Diagnose").click()
    page.get_by_label("Query or task").fill("install packages with pnpm")
    page.get_by_label("Operation").fill("install")
    page.get_by_role("button", name="Diagnose").click()
    page.wait_for_url("**query=install**")
    trace = page.get_by_test_id("trace")
    assert "keyword rank" in trace.inner_text() and "fused" in trace.inner_text()
    assert "delivered" in trace.locator("tbody tr").first.inner_text()
    director = page.get_by_test_id("director").inner_text()
    assert "Always use pnpm to install packages" in director
    assert "set explicitly by the user" in director
    person.shot("diagnose")
    page.get_by_label("Project").fill("no-such-repo")  # unknown: refused, never global
    page.get_by_role("button", name="Diagnose").click()
    assert "unknown project" in page.inner_text("body")
    page.go_back()
    page.get_by_role("link", name="Learning").click()
    page.wait_for_url("**/learning**")
    assert page.locator("svg.chart").count() >= 1
    person.shot("learning")
    person.phone("learning-phone")


def test_diagnose_is_readable_at_1280_with_every_dropped_rows_text_and_fate(
    person: Person,
) -> None:
    person.seed(*[f"pnpm rule number {i}: install packages with pnpm" for i in range(9)])
    with person.server.memory(person.tenant) as mem:
        mem.remember("pnpm advice copied from a web page", trust="external")
    person.login()
    page = person.page
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{person.server.url}/dashboard/diagnose?query=install+packages+with+pnpm")
    trace = page.get_by_test_id("trace")
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280  # no sideways scroll
    box = trace.bounding_box()
    assert box is not None and box["x"] + box["width"] <= 1280
    fates = trace.locator("td.fate")
    assert fates.count() >= 10
    for i in range(fates.count()):
        cell = fates.nth(i).bounding_box()
        assert cell is not None and cell["x"] + cell["width"] <= 1280  # the fate is on screen
    dropped = trace.locator("tr.dropped")
    assert dropped.count() >= 1
    for i in range(dropped.count()):
        row = dropped.nth(i)
        assert "pnpm" in row.locator("td.memory .text").inner_text()
        assert row.locator("td.fate").inner_text().startswith("dropped:")
    person.shot("diagnose-1280")


def test_keyboard_alone_reaches_search_and_signs_out(person: Person) -> None:
    person.seed("Keyboard users matter")
    person.login()
    page = person.page
    page.keyboard.press("/")  # the one shortcut: focus the search field
    assert page.evaluate("document.activeElement.id") == "q"
    page.keyboard.type("keyboard")
    page.keyboard.press("Enter")
    page.wait_for_url("**q=keyboard**")
    assert page.locator("table.list tbody tr").count() == 1
    page.get_by_role("button", name="Sign out").focus()
    page.keyboard.press("Enter")
    page.wait_for_url("**/dashboard/login")
    page.goto(f"{person.server.url}/dashboard/memories")
    assert page.url.endswith("/dashboard/login")  # the session is over
