"""The perfect-information critic (critic: privileged): what it reads, that the policy never
reads it, its warm-up, and its resume."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from agents.checkpoint import CheckpointError
from cf_env import ObservationEncoder, RulesConfig
from cf_env.engine import Game
from cf_env.vector import VectorGame
from training.config import load_config
from training.ppo import Trainer

SMOKE = Path(__file__).resolve().parents[2] / "configs" / "smoke.yaml"


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
    encoder = ObservationEncoder(config)
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


def test_the_policy_never_reads_what_the_critic_sees(tmp_path):
    trainer = Trainer(load_config(SMOKE, runs_dir=str(tmp_path), critic="privileged", bc_games=0), progress=False)
    trainer.collector.start()
    obs, mask = trainer.collector.obs, trainer.collector.mask.astype(bool)
    picks = []
    for fill in (0.0, 1.0):
        trainer.torch_gen.manual_seed(7)
        hidden = np.full((len(obs), trainer.buffer.hidden_dim), fill, np.float32)
        picks.append(trainer._policy(obs, mask, hidden))
    np.testing.assert_array_equal(picks[0][0], picks[1][0])  # the same actions
    np.testing.assert_array_equal(picks[0][1], picks[1][1])  # with the same probabilities
    assert not np.array_equal(picks[0][2], picks[1][2])  # the critic's values do read them


class _Quiet:
    def add_scalar(self, *args, **kwargs) -> None:
        pass


def test_the_warm_up_trains_the_critic_alone(tmp_path):
    trainer = Trainer(load_config(SMOKE, runs_dir=str(tmp_path), critic="privileged", critic_warmup_updates=1,
                                  bc_games=0), progress=False)
    trainer.begin(_Quiet(), None)
    assert trainer.critic is not None
    policy = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    critic = {k: v.clone() for k, v in trainer.critic.state_dict().items()}
    trainer.step(None)
    trainer.iteration += 1  # the loop counts the update
    assert all(torch.equal(v, policy[k]) for k, v in trainer.model.state_dict().items())
    assert not all(torch.equal(v, critic[k]) for k, v in trainer.critic.state_dict().items())
    trainer.step(None)  # after the warm-up the policy learns too
    assert not all(torch.equal(v, policy[k]) for k, v in trainer.model.state_dict().items())


def test_a_privileged_run_resumes_with_its_critic_and_refuses_the_other(tmp_path):
    first = Trainer(load_config(SMOKE, runs_dir=str(tmp_path), critic="privileged", total_steps=256, bc_games=0),
                    progress=False)
    first.run()
    assert first.critic is not None
    saved = {k: v.clone() for k, v in first.critic.state_dict().items()}
    resumed = Trainer(load_config(SMOKE, runs_dir=str(tmp_path), critic="privileged", total_steps=512, bc_games=0),
                      resume=True, progress=False)
    assert resumed.critic is not None
    assert all(torch.equal(v, saved[k]) for k, v in resumed.critic.state_dict().items())
    assert resumed.run()["stop_reason"] == "total_steps"
    with pytest.raises(CheckpointError, match="critic: privileged"):
        Trainer(load_config(SMOKE, runs_dir=str(tmp_path), total_steps=1024, bc_games=0), resume=True, progress=False)


def test_the_critic_may_learn_at_its_own_rate(tmp_path):
    cfg = load_config(SMOKE, runs_dir=str(tmp_path), critic="privileged", critic_learning_rate=3e-3, bc_games=0)
    trainer = Trainer(cfg, progress=False)
    assert trainer.critic_optimizer is not None
    assert trainer.critic_optimizer.param_groups[0]["lr"] == 3e-3
    trainer.begin(_Quiet(), None)
    trainer.global_step = cfg.total_steps // 2
    trainer.step(None)  # annealed with the policy's, from its own start
    assert trainer.critic_optimizer.param_groups[0]["lr"] == pytest.approx(1.5e-3)
    assert trainer.optimizer.param_groups[0]["lr"] == pytest.approx(cfg.learning_rate / 2)


def test_the_critic_may_start_as_the_policy_networks_value(tmp_path):
    """critic_init: policy: after the warm start (behaviour cloning here) the critic gives the policy
    network's own values, whatever the hidden tiles, and learns on from there."""
    cfg = load_config(SMOKE, runs_dir=str(tmp_path), critic="privileged", critic_init="policy")
    trainer = Trainer(cfg, progress=False)
    trainer.begin(_Quiet(), None)
    assert trainer.critic is not None
    obs = torch.from_numpy(trainer.collector.obs)
    mask = torch.from_numpy(trainer.collector.mask.astype(bool))
    with torch.no_grad():
        want = trainer.model(obs, mask)[1]
        for hidden in (torch.zeros(len(obs), trainer.buffer.hidden_dim), torch.ones(len(obs), trainer.buffer.hidden_dim)):
            torch.testing.assert_close(trainer.critic(obs, hidden), want)
    trainer.step(None)  # the hidden tiles' weights learn from zero
    first = trainer.critic.body[0].weight[:, trainer.encoder.size:]
    assert first.abs().sum() > 0
    with pytest.raises(ValueError, match="critic: privileged"):
        load_config(SMOKE, critic_init="policy")
