"""Shared game records for the replay tests: real games of the baseline agents."""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

from agents import load
from cf_env import Game, GameEncoder, RulesConfig
from cf_env.replay import game_record


def play(config: RulesConfig, specs: list[str], seed: int) -> Game:
    game = Game(config, seed=seed)
    bots = [load(s, config) for s in specs]
    encoder = GameEncoder(config)
    rng = np.random.default_rng(seed)
    while not game.is_over:
        game.apply(bots[game.current_player].act(encoder.observe(game), rng))
    return game


@pytest.fixture(scope="session")
def short_record() -> dict:
    """Two rounds of 4-player double-nine between the heuristic and greedy bots."""
    config = RulesConfig(rounds=2)
    specs = ["heuristic", "greedy", "heuristic", "random"]
    return game_record(play(config, specs, seed=11), specs, source="test")


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


@pytest.fixture(scope="session")
def browser(tmp_path_factory):
    """Headless Debian Chromium through Selenium and Debian's chromedriver. Missing browser: a
    failure under CI (``.ci/run`` installs it), a skip saying how to get it elsewhere."""
    if not (CHROMIUM and CHROMEDRIVER):
        if os.environ.get("CI"):
            pytest.fail("CI must test the replay page in Chromium: install Debian's chromium and chromium-driver")
        pytest.skip("needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tmp_path_factory.mktemp("chromium-profile")
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", "--window-size=1400,900", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    yield driver
    driver.quit()


def table_tiles(driver) -> list[str]:
    from selenium.webdriver.common.by import By

    return [e.get_attribute("data-placed") for e in driver.find_elements(By.CSS_SELECTOR, "#board g.tile")]


def shown_step(driver) -> int:
    return int(driver.execute_script("return document.body.dataset.step"))
