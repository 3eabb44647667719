"""The lab's perfect-information critic (lab.critic) as PPO's critic plug-in: it reads the hidden
tiles, it may start as the warm-started policy network's own value, and its options are checked."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from training.config import TrainConfigError, load_config
from training.ppo import Trainer

SMOKE = Path(__file__).resolve().parents[2] / "configs" / "smoke.yaml"
PRIVILEGED = "lab.critic:PrivilegedCritic"


class _Quiet:
    def add_scalar(self, *args, **kwargs) -> None:
        pass


def test_the_critic_may_start_as_the_policy_networks_value(tmp_path):
    """init: policy: after the warm start (behaviour cloning here) the critic gives the policy
    network's own values, whatever the hidden tiles, and learns on from there."""
    cfg = load_config(SMOKE, runs_dir=str(tmp_path), critic=PRIVILEGED, critic_options={"init": "policy"})
    trainer = Trainer(cfg, progress=False)
    trainer.begin(_Quiet(), None)
    critic = trainer.critic.network
    obs = torch.from_numpy(trainer.collector.obs)
    mask = torch.from_numpy(trainer.collector.mask.astype(bool))
    with torch.no_grad():
        want = trainer.model(obs, mask)[1]
        for hidden in (torch.zeros(len(obs), trainer.buffer.hidden_dim), torch.ones(len(obs), trainer.buffer.hidden_dim)):
            torch.testing.assert_close(critic(obs, hidden), want)
    trainer.step(None)  # the hidden tiles' weights learn from zero
    first = critic.body[0].weight[:, trainer.encoder.size:]
    assert first.abs().sum() > 0


def test_a_fresh_critic_reads_the_hidden_tiles_and_bad_options_are_refused(tmp_path):
    trainer = Trainer(load_config(SMOKE, runs_dir=str(tmp_path), critic=PRIVILEGED, bc_games=0), progress=False)
    assert trainer.critic.reads_hidden and trainer.buffer.hidden_dim == trainer.rules.num_players * trainer.rules.num_tiles
    with pytest.raises(TrainConfigError, match="init must be"):
        Trainer(load_config(SMOKE, runs_dir=str(tmp_path / "b"), critic=PRIVILEGED, critic_options={"init": "warm"},
                            bc_games=0), progress=False)
