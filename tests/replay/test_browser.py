"""The replay page in a real browser: Debian's headless Chromium, driven by Selenium through
Debian's chromedriver. ``.ci/run`` installs both when they are missing; here the tests skip with a
message saying how to get them."""

from __future__ import annotations

import re
import time

import pytest

from cf_env import Game, RulesConfig
from cf_env.replay import replay_steps, write_html
from tests.replay.conftest import shown_step, table_tiles

pytestmark = pytest.mark.browser

@pytest.fixture(scope="module")
def page(short_record, tmp_path_factory):
    return write_html(short_record, tmp_path_factory.mktemp("replay") / "game.html")


def engine_tiles(record: dict, step: int) -> list[str]:
    game = Game(RulesConfig.from_dict(record["game"]["config"]), deals=record["game"]["deals"])
    game.apply_all(record["game"]["actions"][:step])
    return [f"{p.match}-{p.expose}" for p in game.layout()]


def test_page_opens_at_the_step_in_its_address_and_shows_the_engines_table(browser, page, short_record, tmp_path):
    actions = short_record["game"]["actions"]
    round_end = next(s for s, _, g in replay_steps(short_record) if g.rounds_finished == 1)
    for step in (0, 1, 7, 23, round_end - 1, round_end, len(actions)):
        browser.get("about:blank")  # a fresh load, not a hash change
        browser.get(page.as_uri() + f"#step={step}")
        assert shown_step(browser) == step
        assert table_tiles(browser) == engine_tiles(short_record, step), step
    assert browser.execute_script("return location.hash") == f"#step={len(actions)}"
    assert "Winner" in browser.find_element("id", "winners").text
    shot = tmp_path / "replay.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000


def test_keys_buttons_and_the_address_stay_in_step(browser, page, short_record):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    browser.get("about:blank")
    browser.get(page.as_uri() + "#step=5")
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.ARROW_RIGHT)
    assert shown_step(browser) == 6 and browser.execute_script("return location.hash") == "#step=6"
    assert table_tiles(browser) == engine_tiles(short_record, 6)
    body.send_keys(Keys.ARROW_LEFT, Keys.ARROW_LEFT)
    assert shown_step(browser) == 4
    browser.find_element(By.ID, "next").click()
    assert shown_step(browser) == 5
    browser.find_element(By.ID, "prev").click()
    assert shown_step(browser) == 4
    # next round: the first step whose table is round 2's, with only its centre double on it
    body.send_keys(Keys.ARROW_DOWN)
    step = shown_step(browser)
    steps = {s: g.round_index for s, _, g in replay_steps(short_record)}
    assert steps[step] == 1 and steps[step - 1] == 0
    assert table_tiles(browser) == engine_tiles(short_record, step)
    assert browser.execute_script("return location.hash") == f"#step={step}"
    body.send_keys(Keys.ARROW_UP)  # back to the start of round 1
    assert shown_step(browser) == 0
    browser.find_element(By.ID, "nextRound").click()
    assert shown_step(browser) == step
    # editing the address moves the page
    browser.execute_script("location.hash = '#step=12'")
    assert shown_step(browser) == 12 and table_tiles(browser) == engine_tiles(short_record, 12)
    # play / pause advances on its own
    browser.find_element(By.ID, "play").click()
    time.sleep(1.6)
    browser.find_element(By.ID, "play").click()
    assert shown_step(browser) >= 13


def test_seat_view_hides_the_other_hands(browser, page, short_record):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    browser.get("about:blank")
    browser.get(page.as_uri() + "#step=3")
    assert not browser.find_elements(By.CSS_SELECTOR, "#hands .back")
    Select(browser.find_element(By.ID, "view")).select_by_value("2")
    rows = browser.find_elements(By.CSS_SELECTOR, "#hands .hand")
    assert len(rows) == 4
    for seat, row in enumerate(rows):
        hidden = row.find_elements(By.CSS_SELECTOR, ".back")
        faces = row.find_elements(By.CSS_SELECTOR, ".tile")
        assert (len(hidden) > 0) == (seat != 2) and (len(faces) > 0) == (seat == 2)


def test_page_is_self_contained(browser, page):
    text = page.read_text(encoding="utf-8")
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=", text)
    assert "@import" not in text and "XMLHttpRequest" not in text
    browser.get("about:blank")
    browser.get(page.as_uri() + "#step=9")
    assert shown_step(browser) == 9
    # the page loaded nothing besides itself (its fetch calls belong to play --web's live mode)
    assert browser.execute_script("return performance.getEntriesByType('resource').length") == 0
    assert re.findall(r"https?://[^\s\"'<]+", text) == ["http://www.w3.org/2000/svg"] * len(
        re.findall(r"https?://[^\s\"'<]+", text))


def test_the_board_fits_the_tiles_on_the_table(browser, page, short_record):
    """Early steps are not lost in the whole round's table: the layout fills the view."""
    fill = []
    for step in (1, 4, 10):
        browser.get("about:blank")
        browser.get(page.as_uri() + f"#step={step}")
        fill.append(browser.execute_script("""
            const board = document.getElementById("board"), box = board.getBBox(), view = board.viewBox.baseVal;
            return Math.max(box.width / view.width, box.height / view.height);"""))
    assert min(fill) > 0.5, fill
