"""PPO's critic as a strategy (training.critic): the shared critic by default, a plug-in named by
its entry point that reads the seat's hidden tiles, which the policy never reads, its warm-up, its
resume, and the errors of a bad name; and the hidden tiles themselves."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from agents.checkpoint import CheckpointError
from cf_env import Game, GameEncoder, ObservationEncoder, RulesConfig
from cf_env.vector import VectorGame
from training.config import TrainConfigError, load_config
from training.critic import Critic, NetworkCritic, make_critic
from training.ppo import Trainer

SMOKE = Path(__file__).resolve().parents[2] / "configs" / "smoke.yaml"


class _HiddenCount(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.weight = nn.Linear(width, 1)

    def forward(self, obs: torch.Tensor, hidden: torch.Tensor) -> torch.Tensor:
        return self.weight(hidden).squeeze(-1)


class HiddenCritic(NetworkCritic):
    """A plug-in for the tests: a linear value of the hidden tiles alone."""

    reads_hidden = True

    def __init__(self, rules, obs_dim, hidden, learning_rate, device, scale: float = 1.0) -> None:
        super().__init__(_HiddenCount(rules.num_players * rules.num_tiles).to(device), learning_rate * scale)


PLUG_IN = f"{__name__}:HiddenCritic"


class _Quiet:
    def add_scalar(self, *args, **kwargs) -> None:
        pass


def _accounts_for_every_tile(obs: np.ndarray, hidden: np.ndarray, encoder: ObservationEncoder) -> None:
    """Own hand + layout + the hidden tiles hold every tile once; the hidden rows match the public counts."""
    n, t = encoder.config.num_players, encoder.config.num_tiles
    rows = hidden.reshape(n, t)
    seen = obs[encoder.slices["hand"]] + obs[encoder.slices["layout"]]
    np.testing.assert_array_equal(seen + rows.sum(0), np.ones(t))
    np.testing.assert_array_equal(rows[: n - 1].sum(1), obs[encoder.slices["hand_sizes"]][1:])
    assert rows[n - 1].sum() == obs[encoder.slices["boneyard"]][0]


def test_the_hidden_tiles_are_what_the_seat_cannot_see():
    config = RulesConfig(rounds=2)
    encoder = GameEncoder(config)
    game, rng = Game(config, seed=4), np.random.default_rng(4)
    while not game.is_over:
        seat = game.current_player
        _accounts_for_every_tile(encoder.encode(game, seat), game.hidden_tiles(seat), encoder)
        game.apply(int(rng.choice(game.legal_actions())))
    vg = VectorGame(config, num_games=6, seed=5)
    obs, mask, seat = vg.reset()
    for _ in range(150):
        hidden = vg.hidden_tiles(np.arange(6), seat)
        for b in range(6):
            _accounts_for_every_tile(obs[b], hidden[b], encoder)
        obs, mask, seat, _, _ = vg.step(np.array([rng.choice(np.flatnonzero(m)) for m in mask]))


def test_the_shared_critic_is_the_default_and_bad_names_are_refused(tmp_path):
    trainer = Trainer(load_config(SMOKE, runs_dir=str(tmp_path), bc_games=0), progress=False)
    assert type(trainer.critic) is Critic and not trainer.critic.reads_hidden and trainer.buffer.hidden_dim == 0
    with pytest.raises(TrainConfigError, match="entry point"):
        load_config(SMOKE, critic="privileged")
    rules, kwargs = RulesConfig(), {"obs_dim": 10, "hidden": (8,), "learning_rate": 1e-3, "device": "cpu"}
    for name, message in (("no_such_module:Critic", "could not be imported"), (f"{__name__}:_Quiet", "not a"),
                          (f"{__name__}:Nothing", "could not be imported")):
        with pytest.raises(TrainConfigError, match=message):
            make_critic(name, {}, rules, **kwargs)
    with pytest.raises(TrainConfigError, match="does not take"):
        make_critic(PLUG_IN, {"bogus": 1}, rules, **kwargs)
    with pytest.raises(TrainConfigError, match="takes none"):
        make_critic("shared", {"scale": 2.0}, rules, **kwargs)


def test_a_critic_module_in_the_current_folder_is_found_as_agent_specs_are(tmp_path, monkeypatch):
    """``critic: mycritics:Critic`` from the folder holding ``mycritics.py`` works even when that
    folder is not on ``sys.path``, as for the ``chickenfoot`` console script (agents.spec)."""
    import sys

    (tmp_path / "local_critics_here.py").write_text(f"from {__name__} import HiddenCritic as Mine\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".", str(tmp_path))])
    critic = make_critic("local_critics_here:Mine", {}, RulesConfig(), obs_dim=10, hidden=(8,), learning_rate=1e-3,
                         device="cpu")
    assert isinstance(critic, HiddenCritic)


def test_the_policy_never_reads_what_the_critic_sees(tmp_path):
    trainer = Trainer(load_config(SMOKE, runs_dir=str(tmp_path), critic=PLUG_IN, bc_games=0), progress=False)
    trainer.collector.start()
    obs, mask = trainer.collector.obs, trainer.collector.mask.astype(bool)
    picks = []
    for fill in (0.0, 1.0):
        trainer.torch_gen.manual_seed(7)
        hidden = np.full((len(obs), trainer.buffer.hidden_dim), fill, np.float32)
        picks.append(trainer.act(obs, mask, hidden))
    np.testing.assert_array_equal(picks[0][0], picks[1][0])  # the same actions
    np.testing.assert_array_equal(picks[0][1], picks[1][1])  # with the same probabilities
    assert not np.array_equal(picks[0][2], picks[1][2])  # the critic's values do read them


def test_the_warm_up_trains_a_separate_critic_alone_at_its_own_rate(tmp_path):
    cfg = load_config(SMOKE, runs_dir=str(tmp_path), critic=PLUG_IN, critic_options={"scale": 2.0},
                      critic_warmup_updates=1, critic_learning_rate=3e-3, bc_games=0)
    trainer = Trainer(cfg, progress=False)
    critic = trainer.critic
    assert isinstance(critic, HiddenCritic) and critic.optimizer.param_groups[0]["lr"] == 6e-3
    trainer.begin(_Quiet(), None)
    policy = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    weights = {k: v.clone() for k, v in critic.module.state_dict().items()}
    trainer.step(None)
    trainer.iteration += 1  # the loop counts the update
    assert all(torch.equal(v, policy[k]) for k, v in trainer.model.state_dict().items())
    assert not all(torch.equal(v, weights[k]) for k, v in critic.module.state_dict().items())
    trainer.global_step = cfg.total_steps // 2
    trainer.step(None)  # after the warm-up the policy learns too; the critic's rate anneals with the policy's
    assert not all(torch.equal(v, policy[k]) for k, v in trainer.model.state_dict().items())
    assert critic.optimizer.param_groups[0]["lr"] == pytest.approx(3e-3)
    assert trainer.optimizer.param_groups[0]["lr"] == pytest.approx(cfg.learning_rate / 2)


def test_a_run_resumes_with_its_critic_and_refuses_another(tmp_path):
    first = Trainer(load_config(SMOKE, runs_dir=str(tmp_path), critic=PLUG_IN, total_steps=256, bc_games=0),
                    progress=False)
    first.run()
    saved = {k: v.clone() for k, v in first.critic.module.state_dict().items()}
    resumed = Trainer(load_config(SMOKE, runs_dir=str(tmp_path), critic=PLUG_IN, total_steps=512, bc_games=0),
                      resume=True, progress=False)
    assert all(torch.equal(v, saved[k]) for k, v in resumed.critic.module.state_dict().items())
    assert resumed.run()["stop_reason"] == "total_steps"
    with pytest.raises(CheckpointError, match=f"critic: {PLUG_IN}"):
        Trainer(load_config(SMOKE, runs_dir=str(tmp_path), total_steps=1024, bc_games=0), resume=True, progress=False)
