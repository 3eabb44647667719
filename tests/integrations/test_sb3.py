"""Stable-Baselines3: sb3-contrib's MaskablePPO on the single-agent env against chosen opponents."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from click.testing import CliRunner

import agents
from cf_env import RulesConfig
from chickenfoot.cli import main as cli
from training.sb3_maskable_ppo import make_env

pytestmark = pytest.mark.framework
RULES = RulesConfig(num_players=3, rounds=2)


def test_wrapped_env_passes_sb3_checks_and_keeps_the_mask():
    from stable_baselines3.common.env_checker import check_env

    env = make_env(RULES, ["greedy", "random"], illegal_action="terminate")  # check_env steps unmasked
    obs, info = env.reset(seed=0)
    assert obs.shape == env.observation_space.shape
    np.testing.assert_array_equal(env.action_masks(), info["action_mask"])
    assert env.action_masks().dtype == np.int8 == info["action_mask"].dtype
    check_env(env, warn=True, skip_render_check=True)


def test_maskable_ppo_trains_saves_loads_and_plays(tmp_path):
    out = tmp_path / "sb3"
    # the env raises IllegalActionError on an illegal action: finishing proves there was none
    result = CliRunner().invoke(cli, ["sb3", "--steps", "2048", "--n-steps", "512", "--players", "3", "--rounds", "2",
                                      "--opponents", "greedy,random", "--out", str(out), "--no-progress"])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["steps"] >= 2048
    agent = agents.load(f"sb3:{out / 'model.zip'}", RULES)
    env = make_env(RULES, ["random"])
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=1)
    done = False
    while not done:
        action = agent.act({"observation": obs, "action_mask": info["action_mask"]}, rng)
        assert info["action_mask"][action] == 1
        obs, _, done, _, info = env.step(action)
    result = CliRunner().invoke(cli, ["eval", f"sb3:{out / 'model.zip'}", "random", "--players", "3",
                                      "--rounds", "2", "--deal-sets", "3", "--no-progress"])
    assert result.exit_code == 0, result.output
    _crafted_files_run_no_code(out / "model.zip", tmp_path)


class _Touch:
    """A pickle that creates a file when unpickled: what a crafted model could do."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def _crafted_files_run_no_code(model, tmp_path):
    import base64
    import pickle
    import zipfile

    from agents.sb3_agent import UntrustedFileError

    def craft(name, key):
        marker = tmp_path / f"{name}.ran"
        path = tmp_path / f"{name}.zip"
        with zipfile.ZipFile(model) as src, zipfile.ZipFile(path, "w") as dst:
            for item in src.namelist():
                data = src.read(item)
                if item == "data":
                    entries = json.loads(data)
                    entries[key] = {":type:": "<class 'builtins.function'>",
                                    ":serialized:": base64.b64encode(pickle.dumps(_Touch(marker))).decode()}
                    data = json.dumps(entries).encode()
                dst.writestr(item, data)
        return path, marker

    # an entry sb3: does not rebuild: refused, naming the way to vouch for the file
    path, marker = craft("extra", "custom_callback")
    with pytest.raises(UntrustedFileError, match=r"\['custom_callback'\].*sb3\+trust:"):
        agents.load(f"sb3:{path}", RULES)
    assert not marker.exists()
    # a crafted entry that sb3: rebuilds from its own code: loads, and runs nothing
    path, marker = craft("schedule", "lr_schedule")
    agents.load(f"sb3:{path}", RULES)
    assert not marker.exists()
    # with sb3+trust: the file is loaded as SB3 does, pickles included (here: the marker appears)
    agents.load(f"sb3+trust:{path}", RULES)
    assert marker.exists()


def test_bad_sb3_specs_are_clear_errors(tmp_path):
    with pytest.raises(agents.AgentSpecError, match="no such file"):
        agents.load(f"sb3:{tmp_path / 'missing.zip'}", RULES)
    result = CliRunner().invoke(cli, ["sb3", "--opponents", "a,b,c", "--players", "3", "--steps", "10",
                                      "--out", str(tmp_path)])
    assert result.exit_code == 1 and "Error:" in result.output and "Traceback" not in result.output


def test_the_sb3_extra_brings_what_the_readme_command_needs():
    from importlib.metadata import requires

    extra = [r for r in requires("chickenfoot-rl") if 'extra == "sb3"' in r]
    assert any(r.startswith("rich") for r in extra) and any(r.startswith("tqdm") for r in extra), extra
    from stable_baselines3.common.callbacks import ProgressBarCallback

    ProgressBarCallback()  # raises ImportError without rich and tqdm


def test_maskable_ppo_on_the_vector_env_vecenv(tmp_path):
    """sb3-contrib's MaskablePPO trains on the SB3 VecEnv over the batched engine; SB3 reads its
    masks, terminal observations and episode statistics as its own VecEnvs give them."""
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

    from cf_env.integrations.sb3 import ChickenFootVecEnv

    venv = ChickenFootVecEnv(32, opponents=["greedy", "random"], learner_seat="random", reward="relative",
                             obs_type="box", config=RULES, illegal_action="raise")
    assert is_masking_supported(venv)
    model = MaskablePPO("MlpPolicy", venv, n_steps=64, batch_size=512, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=4096)
    assert model.num_timesteps >= 4096 and len(model.ep_info_buffer) > 0  # SB3 saw the episodes end
    assert all(set(ep) == {"r", "l", "t"} for ep in model.ep_info_buffer)
    obs = venv.reset()
    ended = 0
    for _ in range(200):
        masks = get_action_masks(venv)
        assert masks.shape == (32, RULES.num_actions)
        actions, _ = model.predict(obs, action_masks=masks, deterministic=True)
        obs, rewards, dones, infos = venv.step(actions)
        assert rewards.dtype == np.float32 and obs.shape == (32, venv.observation_space.shape[0])
        for b in np.flatnonzero(dones):
            assert infos[b]["terminal_observation"].shape == obs.shape[1:] and infos[b]["episode"]["l"] > 0
            ended += 1
    assert ended > 0
    result = CliRunner().invoke(cli, ["sb3", "--steps", "1024", "--num-envs", "32", "--players", "3", "--rounds", "2",
                                      "--opponents", "greedy,random", "--out", str(tmp_path / "vec"), "--no-progress"])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "vec" / "summary.json").read_text())
    assert summary["num_envs"] == 32 and summary["steps"] >= 1024
    assert agents.load(f"sb3:{tmp_path / 'vec' / 'model.zip'}", RULES) is not None
    result = CliRunner().invoke(cli, ["sb3", "--steps", "100000000", "--num-envs", "32", "--players", "3", "--rounds",
                                      "2", "--time-limit-minutes", "0.02", "--out", str(tmp_path / "t"), "--no-progress"])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "t" / "summary.json").read_text())
    assert summary["steps"] < 100_000_000 and summary["time_limit_minutes"] == 0.02
