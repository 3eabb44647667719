"""RLlib (new API stack): the multi-agent wrapper, the masking module and its export, a local
self-play run, and a run on a real Ray cluster (a head node started on this machine)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ray.rllib")
torch = pytest.importorskip("torch")

from click.testing import CliRunner  # noqa: E402

import agents  # noqa: E402
from agents.rllib_module import MaskedPPOTorchRLModule  # noqa: E402
from cf_env import RulesConfig, raw_env  # noqa: E402
from cf_env.integrations.rllib import ChickenFootMultiAgentEnv  # noqa: E402
from chickenfoot.cli import main as cli  # noqa: E402
from tests.integrations.ray_head import free_port, ray_head  # noqa: E402
from training.config import load_config  # noqa: E402
from training.rllib_ppo import RLlibConfig, export_module  # noqa: E402

pytestmark = pytest.mark.framework
ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "configs" / "rllib-smoke.yaml"
RULES = {"num_players": 3, "rounds": 2}


@pytest.mark.parametrize("history", [False, True])
def test_wrapper_matches_the_aec_env_and_rewards_every_agent(history):
    """Same seeded game through both: same deciders, masks, observations (the history entry
    too, when asked for) and summed rewards."""
    ma = ChickenFootMultiAgentEnv({**RULES, "reward": "relative", "history": history})
    aec = raw_env(**RULES, reward="relative", history=history)
    obs, _ = ma.reset(seed=5)
    aec.reset(seed=5)
    rng = np.random.default_rng(0)
    totals = dict.fromkeys(ma.possible_agents, 0.0)
    while True:
        (agent, o), = obs.items()
        assert agent == aec.agent_selection
        ref = aec.observe(agent)
        np.testing.assert_array_equal(o["observations"], ref["observation"])
        np.testing.assert_array_equal(o["action_mask"], ref["action_mask"].astype(np.float32))
        assert ("history" in o) == history
        if history:
            np.testing.assert_array_equal(o["history"], ref["history"])
        assert o["action_mask"].dtype == np.float32 and ma.observation_spaces[agent].contains(o)
        action = int(rng.choice(np.flatnonzero(o["action_mask"])))
        obs, rew, term, trunc, infos = ma.step({agent: action})
        aec.step(action)
        assert set(rew) == set(ma.possible_agents)  # every agent, every step
        for a, r in rew.items():
            totals[a] += r
        if term["__all__"]:
            break
        assert not trunc["__all__"]
    assert set(obs) == set(ma.possible_agents)  # a last observation for everyone
    assert infos["player_0"]["totals"].tolist() == aec.game.totals == aec.totals
    pts = aec.game.totals
    for p, a in enumerate(ma.possible_agents):
        expected = sum((sum(pts) - pts[p]) / 2 - pts[p] for _ in [0]) / 100
        assert totals[a] == pytest.approx(expected)


def _module(hidden=(32, 32)):
    env = ChickenFootMultiAgentEnv(RULES)
    return MaskedPPOTorchRLModule(
        observation_space=env.observation_spaces["player_0"], action_space=env.action_spaces["player_0"],
        model_config={"fcnet_hiddens": list(hidden), "fcnet_activation": "tanh", "head_fcnet_hiddens": [],
                      "vf_share_layers": True}), env


def test_masked_module_never_puts_mass_on_illegal_actions_and_exports_exactly(tmp_path):
    from ray.rllib.core.columns import Columns

    module, env = _module()
    obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(1)
    batch_obs, batch_mask = [], []
    while len(batch_obs) < 64:
        (agent, o), = obs.items()
        batch_obs.append(o["observations"])
        batch_mask.append(o["action_mask"])
        obs, *_ = env.step({agent: int(rng.choice(np.flatnonzero(o["action_mask"])))})
    x = torch.as_tensor(np.stack(batch_obs))
    m = torch.as_tensor(np.stack(batch_mask))
    batch = {Columns.OBS: {"observations": x, "action_mask": m}}
    with torch.no_grad():
        logits = module.forward_exploration(batch)[Columns.ACTION_DIST_INPUTS]
        probs = torch.softmax(logits, -1)
        values = module.compute_values({Columns.OBS: {"observations": x, "action_mask": m}})
    assert float(probs[m == 0].max()) == 0.0
    assert isinstance(batch[Columns.OBS], dict) and "action_mask" in batch[Columns.OBS]  # batch not mutated
    cfg = RLlibConfig(rules=RULES, hidden=[32, 32])
    path = export_module(module, cfg, tmp_path / "shared.pt", step=7)
    agent = agents.load(str(path), RulesConfig(**RULES))
    ours_logits, ours_values = agent.model(x, m.to(torch.int8))
    legal = m > 0
    torch.testing.assert_close(ours_logits[legal], logits[legal], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(ours_values, values, rtol=1e-5, atol=1e-5)


def test_module_rejects_an_observation_space_without_a_mask():
    import gymnasium

    with pytest.raises(ValueError, match="action_mask"):
        MaskedPPOTorchRLModule(observation_space=gymnasium.spaces.Box(0, 1, (4,)),
                               action_space=gymnasium.spaces.Discrete(3), model_config={})


def _run(args, env=None, timeout=240):
    cmd = [sys.executable, "-m", "chickenfoot.cli", "rllib", "--config", str(SMOKE), "--no-progress", *args]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=timeout, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout[:out.stdout.rindex("}") + 1])


def test_local_per_seat_run_then_the_project_eval_reads_its_export(tmp_path):
    # the env raises IllegalActionError on any illegal action, so a finished run took none
    summary = _run(["--runs-dir", str(tmp_path), "--iterations", "2", "--policies", "per_seat"])
    assert summary["iterations"] == 2 and summary["env_steps"] >= 800
    assert (tmp_path / "rllib-smoke" / "checkpoint" / "rllib_checkpoint.json").exists()
    assert [Path(p).name for p in summary["exported"]] == ["player_0.pt", "player_1.pt", "player_2.pt"]
    exported = summary["exported"][1]
    result = CliRunner().invoke(cli, ["eval", exported, "random", "--players", "3", "--rounds", "2",
                                      "--deal-sets", "4", "--no-progress", "--json", str(tmp_path / "e.json")])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "e.json").read_text())
    assert report["games"] == 12
    resumed = _run(["--runs-dir", str(tmp_path), "--iterations", "1", "--policies", "per_seat", "--resume"])
    assert resumed["iterations"] == 3  # RLlib's counter continues from the checkpoint


def test_bad_rllib_config_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("policies: every_other\n")
    from training.config import TrainConfigError

    with pytest.raises(TrainConfigError, match="policies"):
        load_config(bad, cls=RLlibConfig)
    bad.write_text("num_env_runner: 2\n")
    with pytest.raises(TrainConfigError, match="unknown key .num_env_runner.; valid keys are"):
        load_config(bad, cls=RLlibConfig)


@pytest.mark.slow
def test_cluster_run_joins_a_ray_head_by_address(tmp_path):
    """``ray start --head`` (2 CPUs, token auth) on this machine, then the trainer joins it by
    address with one remote env runner and trains an iteration."""
    with ray_head(tmp_path) as (address, env):
        summary = _run(["--runs-dir", str(tmp_path), "--iterations", "1", "--address", address], env=env)
        assert summary["iterations"] == 1 and summary["env_steps"] >= 400
        assert summary["env_runner_nodes"], "no live node reported by the cluster"
        assert Path(summary["exported"][0]).exists()


def test_joining_a_missing_cluster_is_a_clear_error(tmp_path):
    cmd = [sys.executable, "-m", "chickenfoot.cli", "rllib", "--config", str(SMOKE), "--no-progress",
           "--runs-dir", str(tmp_path), "--address", f"127.0.0.1:{free_port()}"]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=180)
    assert out.returncode == 1 and "could not join the Ray cluster" in out.stderr, out.stderr[-2000:]


def test_the_adapter_continues_the_seeded_generator():
    def three_games() -> list[list[int]]:
        ma = ChickenFootMultiAgentEnv(RULES)
        games = []
        for seed in (7, None, None):
            obs, _ = ma.reset(seed=seed)
            actions, done = [], False
            while not done:
                ((agent, o),) = obs.items()
                action = int(np.flatnonzero(o["action_mask"])[-1])
                actions.append(action)
                obs, _, terminated, _, _ = ma.step({agent: action})
                done = terminated["__all__"]
            games.append(actions)
        return games

    first, second = three_games(), three_games()
    assert first == second and first[0] != first[1] != first[2]
