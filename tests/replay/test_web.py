"""chickenfoot play --web: the live page in headless Chromium against its local server, and the
server's answers to bad requests."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request

import pytest

from cf_env import RulesConfig
from cf_env.replay import load_record, save_record
from chickenfoot.web import LiveGame, make_server
from tests.replay.conftest import shown_step, table_tiles

pytestmark = pytest.mark.browser


@pytest.fixture()
def served():
    live = LiveGame(RulesConfig(num_players=2, max_pip=4, hand_size=4, rounds=2), ["greedy"], seat=0, seed=5)
    server = make_server(live, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield live, f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def post(url: str, body: bytes) -> tuple[int, dict]:
    request = urllib.request.Request(url + "move", data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_bad_moves_are_refused_and_change_nothing(served):
    live, url = served
    before = live.game.actions()
    for body in (b'{"action": 999}', b'{"action": "3>4"}', b"not json", b'{"action": true}'):
        status, state = post(url, body)
        assert status == 400 and state["error"] and live.game.actions() == before
    legal = live.legal()[0]["action"]
    status, state = post(url, json.dumps({"action": legal}).encode())
    assert status == 200 and "error" not in state and live.game.actions()[len(before)] == legal
    with urllib.request.urlopen(url + "state", timeout=10) as answer:
        assert json.loads(answer.read())["seat"] == 0


def test_a_whole_game_in_the_browser(browser, served, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    live, url = served
    browser.get(url)
    wait = WebDriverWait(browser, 10)
    clicks = 0
    while not live.game.is_over:
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#moves button.move"))
        # the table is the engine's, and the opponent's hand is hidden
        assert table_tiles(browser) == [f"{p.match}-{p.expose}" for p in live.game.layout()]
        rows = browser.find_elements(By.CSS_SELECTOR, "#hands .hand")
        assert rows[1].find_elements(By.CSS_SELECTOR, ".back") and not rows[1].find_elements(By.CSS_SELECTOR, ".tile")
        assert len(rows[0].find_elements(By.CSS_SELECTOR, ".tile")) == len(live.game.hand(0))
        if not clicks:  # live play: no seat-view selector (the server shows your hand only), your tiles large
            assert not browser.find_element(By.ID, "view").is_displayed()
            mine, theirs = (row.find_element(By.CSS_SELECTOR, "svg").size["height"] for row in rows[:2])
            assert mine >= 40 > 30 > theirs
        done = len(live.game.actions())
        browser.find_elements(By.CSS_SELECTOR, "#moves button.move")[0].click()
        wait.until(lambda d, done=done: len(live.game.actions()) > done and shown_step(d) == len(live.frames.frames) - 1)
        clicks += 1
        assert clicks < 200
    wait.until(lambda d: "Game over" in d.find_element(By.ID, "moves").text)
    assert "Winner" in browser.find_element(By.ID, "winners").text
    assert "you play" in " ".join(f["text"] for f in live.frames.frames)
    browser.save_screenshot(str(tmp_path / "live.png"))
    with urllib.request.urlopen(url + "record", timeout=10) as answer:
        record = json.loads(answer.read())
    path = save_record(record, tmp_path / "live.json")
    assert load_record(path)["players"] == ["you", "greedy"]


def test_play_web_says_when_the_port_is_taken():
    import socket

    from click.testing import CliRunner

    from chickenfoot.cli import main

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(main, ["play", "--web", "--no-browser", "--port", str(port), "--players", "2",
                                           "--opponents", "greedy", "--max-pip", "4", "--hand-size", "4"])
    assert result.exit_code != 0 and "choose another --port" in result.output


def test_arms_are_labelled_and_a_move_shows_its_slot(browser, served):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    live, url = served
    browser.get(url)
    wait = WebDriverWait(browser, 10)
    checked = 0
    while not live.game.is_over and checked < 4:
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#moves button.move"))
        # read in one script call: the board may be redrawn between two element reads
        labels = browser.execute_script(
            "return [...document.querySelectorAll('#board text.armlabel')].map(e => e.textContent)")
        assert labels == [str(k + 1) for k in range(live.config.center_arms)]
        buttons = browser.find_elements(By.CSS_SELECTOR, "#moves button.move")
        plays = [b for b in buttons if "arm" in b.text]  # a play says where it goes; draw and pass do not
        if not plays:
            steps = len(live.game.actions())
            buttons[0].click()
            wait.until(lambda d, before=steps: len(live.game.actions()) > before
                       and shown_step(d) == len(live.frames.frames) - 1)
            continue
        button = plays[0]
        ActionChains(browser).move_to_element(button).perform()  # pointing at it
        target = wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#board g.target"))[0]
        where = target.get_attribute("transform")
        ActionChains(browser).move_by_offset(0, 300).perform()  # pointing away clears it
        wait.until(lambda d: not d.find_elements(By.CSS_SELECTOR, "#board g.target"))
        browser.execute_script("arguments[0].focus()", button)  # the keyboard's way: focus shows it too
        assert browser.find_element(By.CSS_SELECTOR, "#board g.target").get_attribute("transform") == where
        rounds = live.game.rounds_finished
        nodes = len(live.game.layout())
        steps = len(live.game.actions())
        button.click()
        # the page showed the last frame before the click too: wait for the move to be made and drawn
        wait.until(lambda d, before=steps: len(live.game.actions()) > before
                   and shown_step(d) == len(live.frames.frames) - 1)
        if live.game.rounds_finished == rounds:  # the tile lies where the button pointed
            placed = browser.find_element(By.CSS_SELECTOR, f'#board g.tile[data-node="{nodes}"]')
            assert placed.get_attribute("transform") == where
            checked += 1
    assert checked >= 1
