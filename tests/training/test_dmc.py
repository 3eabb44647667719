"""Deep Monte-Carlo (training.dmc): Monte-Carlo returns along each seat's own decisions, kept
across rollouts until the game ends; epsilon-greedy actors on the argmax; a run that trains,
resumes and saves a network that plays as any checkpoint."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import agents
from agents.checkpoint import CheckpointError, load_checkpoint
from training.config import DMCConfig, TrainConfigError, load_config
from training.dmc import DMCTrainer, anchor_distance, q_values
from training.evaluate import evaluate
from training.trajectories import Trajectories

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "configs" / "dmc-smoke.yaml"


def _open(buf, env, seat, value=0.0):
    buf.open(np.array([env]), np.array([seat]), np.zeros((1, 3), np.float32), np.ones((1, 2), bool), np.array([1]),
             np.zeros(1, np.float32), np.array([value], np.float32))


def test_returns_reach_the_end_of_the_game_across_rollouts():
    """Seat 0 of game 0 decides three times, one per rollout; rewards arrive between; the game
    ends in the third rollout. Only then do the three decisions get their returns, each the
    discounted sum of the rewards after it, and none is bootstrapped from a value."""
    buf = Trajectories(num_envs=2, num_players=2, obs_dim=3, num_actions=2)
    _open(buf, 0, 0, value=9.0)
    _open(buf, 1, 1)  # another game, which never ends here
    buf.credit(np.array([0]), np.array([0]), np.array([1.0], np.float32))
    idx, _ = buf.monte_carlo(0.5)
    assert idx.size == 0  # nothing has reached its game's end
    buf = buf.carry_over_unfinished()
    _open(buf, 0, 0, value=9.0)
    buf.credit(np.array([0]), np.array([0]), np.array([2.0], np.float32))
    idx, _ = buf.monte_carlo(0.5)
    assert idx.size == 0
    buf = buf.carry_over_unfinished()
    assert buf.size == 3  # the two chains, whole
    _open(buf, 0, 0, value=9.0)
    buf.credit(np.array([0]), np.array([0]), np.array([4.0], np.float32))
    buf.terminate(np.array([0]), np.array([0]))
    idx, returns = buf.monte_carlo(0.5)
    assert len(idx) == 3
    assert returns.tolist() == pytest.approx([1 + 0.5 * (2 + 0.5 * 4), 2 + 0.5 * 4, 4.0])
    rest = buf.carry_over_unfinished()
    assert rest.size == 1 and rest.pending[1, 1] == 0 and rest.pending[0, 0] == -1  # game 1's open decision


def test_a_round_horizon_stops_each_return_at_its_rounds_end():
    """Seat 0 decides twice in round 0 (its round's points arrive after the second) and once in
    round 1: with ``horizon="round"`` the first two get their returns at round 0's end, the game's
    later rewards left out, and the third waits for its own round's end."""
    buf = Trajectories(num_envs=1, num_players=2, obs_dim=3, num_actions=2)
    _open(buf, 0, 0)
    _open(buf, 0, 0)
    buf.credit(np.array([0]), np.array([0]), np.array([3.0], np.float32))
    buf.end_round(np.array([0]), np.array([0]))
    _open(buf, 0, 0)
    buf.credit(np.array([0]), np.array([0]), np.array([5.0], np.float32))
    assert buf.monte_carlo(1.0)[0].size == 0  # the game goes on
    idx, returns = buf.monte_carlo(1.0, horizon="round")
    assert idx.tolist() == [0, 1] and returns.tolist() == [3.0, 3.0]
    rest = buf.carry_over_unfinished(horizon="round")
    assert rest.size == 1 and rest.pending[0, 0] == 0 and rest.reward[0] == 5.0
    rest.end_round(np.array([0]), np.array([0]))
    rest.terminate(np.array([0]), np.array([0]))
    assert rest.monte_carlo(1.0, horizon="round")[1].tolist() == [5.0]
    with pytest.raises(ValueError, match="horizon"):
        buf.monte_carlo(1.0, horizon="turn")


def test_a_round_horizon_needs_rewards_paid_each_round(tmp_path):
    with pytest.raises(TrainConfigError, match="return_horizon"):
        load_config(SMOKE, DMCConfig, runs_dir=str(tmp_path), reward="win", return_horizon="round")
    cfg = load_config(SMOKE, DMCConfig, runs_dir=str(tmp_path), reward="relative", return_horizon="round",
                      total_steps=3000)
    trainer = DMCTrainer(cfg, progress=False)
    trainer.collector.start()
    trainer.collector.collect(trainer.act, trainer.buffer, 200)  # 200 steps: rounds end in some games
    buf = trainer.buffer
    ended = np.flatnonzero(buf.round_end[:buf.size])
    assert ended.size and not buf.done[ended].all()  # rounds ended before their games did
    idx, returns = buf.monte_carlo(1.0, horizon="round")
    assert set(ended) <= set(idx) and np.isfinite(returns).all()
    assert buf.reward[ended].any()  # a round's points reach its last decisions


def test_the_actors_play_the_argmax_or_explore_among_legal_actions(tmp_path):
    trainer = DMCTrainer(load_config(SMOKE, DMCConfig, runs_dir=str(tmp_path), epsilon=0.0, epsilon_final=None),
                         progress=False)
    trainer.collector.start()
    obs, mask = trainer.collector.obs, trainer.collector.mask.astype(bool)
    actions, _, values = trainer.act(obs, mask)
    with torch.no_grad():
        logits, value = trainer.model(torch.from_numpy(obs), torch.from_numpy(mask))
        q = q_values(logits, value, torch.from_numpy(mask)).numpy()
    assert actions.tolist() == logits.argmax(1).tolist()  # the network's own move
    assert values.tolist() == pytest.approx(q[np.arange(len(q)), actions].tolist(), rel=1e-5, abs=1e-6)
    trainer.cfg.epsilon = 1.0
    for _ in range(20):
        assert mask[np.arange(len(mask)), trainer.act(obs, mask)[0]].all()
    cfg = load_config(SMOKE, DMCConfig)
    assert cfg.epsilon_at(0) == 0.2 and cfg.epsilon_at(cfg.total_steps) == pytest.approx(0.05)
    assert cfg.epsilon_at(cfg.total_steps // 2) == pytest.approx(0.125)
    with pytest.raises(TrainConfigError, match="epsilon"):
        load_config(SMOKE, DMCConfig, epsilon=1.5)


@pytest.mark.parametrize("weight", [0.0, 5.0])
def test_the_conservative_term_keeps_unplayed_actions_below_the_played_one(tmp_path, weight):
    """Every decision played action 0 of four legal ones and returned 0: the fit alone moves the
    other actions' values only through the shared parts, CQL's term pushes them below action 0's."""
    trainer = DMCTrainer(load_config(SMOKE, DMCConfig, runs_dir=str(tmp_path), conservative=weight,
                                     learning_rate=0.01), progress=False)
    dim, num = trainer.model.obs_dim, trainer.model.num_actions
    rng = np.random.default_rng(0)
    obs = rng.random((64, dim), dtype=np.float32)
    mask = np.zeros((64, num), bool)
    mask[:, :4] = True

    def gap() -> float:
        with torch.no_grad():
            logits, value = trainer.model(torch.from_numpy(obs), torch.from_numpy(mask))
            q = q_values(logits, value, torch.from_numpy(mask))[:, :4]
        return float((torch.logsumexp(q, 1) - q[:, 0]).mean())

    before = gap()
    for _ in range(5):
        buf = Trajectories(num_envs=64, num_players=2, obs_dim=dim, num_actions=num)
        buf.open(np.arange(64), np.zeros(64, np.int64), obs, mask, np.zeros(64, np.int64), np.zeros(64, np.float32),
                 np.zeros(64, np.float32))
        buf.terminate(np.arange(64), np.zeros(64, np.int64))
        trainer.buffer = buf
        assert np.isfinite(trainer.learn()["q_loss"])
    if weight:
        assert gap() < before - 0.5
    else:
        assert abs(gap() - before) < 0.5


def test_a_run_fits_q_to_the_returns_resumes_and_saves_a_network_that_plays(tmp_path):
    out = subprocess.run([sys.executable, "-m", "chickenfoot.cli", "dmc", "--config", str(SMOKE), "--runs-dir",
                          str(tmp_path), "--total-steps", "512", "--no-progress"],
                         capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["learner_steps"] >= 512
    run = tmp_path / "dmc-smoke"
    saved = load_checkpoint(run / "checkpoint.pt")
    assert saved["trainer_state"]["trainer"] == "dmc"
    resumed = DMCTrainer(load_config(SMOKE, DMCConfig, runs_dir=str(tmp_path), total_steps=1024), resume=True,
                         progress=False)
    assert resumed.global_step == saved["train_step"]
    before = {k: v.clone() for k, v in resumed.model.state_dict().items()}
    after = resumed.run()
    assert after["learner_steps"] >= 1024
    assert not all(torch.equal(v, before[k]) for k, v in resumed.model.state_dict().items())
    config = agents.spec_rules(str(run / "final.pt"))
    report = evaluate([str(run / "final.pt"), "random"], config, deal_sets=2, progress=False)
    assert report.games == 4
    from training.config import PPOConfig
    from training.ppo import Trainer

    with pytest.raises(CheckpointError, match="dmc"):  # a PPO resume of a DMC run is refused
        Trainer(load_config(ROOT / "configs" / "smoke.yaml", PPOConfig, runs_dir=str(tmp_path), run_name="dmc-smoke"),
                resume=True, progress=False)


def test_q_is_a_dueling_head_whose_argmax_is_the_networks_move_and_whose_fit_moves_every_legal_logit():
    """Q = V + A - mean A over the legal actions: its argmax over the legal actions is the logits'
    (what the saved network plays), and fitting the taken action's Q moves the other legal logits
    (through the mean) and V, but no illegal logit."""
    torch.manual_seed(0)
    logits = torch.randn(6, 5, requires_grad=True)
    value = torch.randn(6, requires_grad=True)
    mask = torch.tensor([[1, 1, 0, 1, 0]] * 6, dtype=torch.bool)
    q = q_values(logits.masked_fill(~mask, torch.finfo(torch.float32).min), value, mask)
    legal_q = q.masked_fill(~mask, -1e9)
    assert legal_q.argmax(1).tolist() == logits.masked_fill(~mask, -1e9).argmax(1).tolist()
    torch.testing.assert_close((q * mask).sum(1) / mask.sum(1), value)  # the legal actions' mean is V
    q[:, 0].sum().backward()
    assert (logits.grad[:, [1, 3]] != 0).all() and (logits.grad[:, [2, 4]] == 0).all() and (value.grad != 0).all()


def test_a_value_warmup_moves_the_value_head_alone_until_its_steps_are_played(tmp_path):
    """``value_warmup_steps``: the first updates fit ``V(s)`` alone (the trunk and the action
    scores keep their weights, so the greedy play does not move); after them every part learns."""
    trainer = DMCTrainer(load_config(SMOKE, DMCConfig, runs_dir=str(tmp_path), value_warmup_steps=10**9,
                                     total_steps=2048), progress=False)
    before = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    trainer.run()
    changed = {k for k, v in trainer.model.state_dict().items() if not torch.equal(v, before[k])}
    assert changed and all(k.startswith("value.") for k in changed), changed
    trainer = DMCTrainer(load_config(SMOKE, DMCConfig, runs_dir=str(tmp_path), run_name="after", value_warmup_steps=1,
                                     total_steps=2048), progress=False)
    before = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    trainer.run()
    assert any(not torch.equal(v, before[k]) for k, v in trainer.model.state_dict().items() if k.startswith("trunk"))


def test_a_frozen_trunk_keeps_its_weights_while_the_heads_fit_the_returns(tmp_path):
    """``freeze_trunk``: for the whole run the trunk's weights stay as they started and the policy
    and value heads learn."""
    trainer = DMCTrainer(load_config(SMOKE, DMCConfig, runs_dir=str(tmp_path), freeze_trunk=True, total_steps=2048),
                         progress=False)
    before = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    trainer.run()
    changed = {k for k, v in trainer.model.state_dict().items() if not torch.equal(v, before[k])}
    assert not any(k.startswith("trunk") for k in changed), changed
    assert any(k.startswith("policy.") for k in changed) and any(k.startswith("value.") for k in changed), changed


def test_the_anchor_distance_ignores_a_shift_and_the_illegal_actions():
    mask = torch.tensor([[1, 1, 1, 0]], dtype=torch.bool)
    prior = torch.tensor([[0.5, -1.0, 2.0, 7.0]])
    assert anchor_distance(prior + 3.0, prior, mask).item() == pytest.approx(0.0, abs=1e-6)
    assert anchor_distance(prior + torch.tensor([[0.0, 0.0, 0.0, 9.0]]), prior, mask).item() == pytest.approx(0.0)
    moved = prior + torch.tensor([[1.0, 0.0, -1.0, 0.0]])  # centred: +1, 0, -1 over three legal actions
    assert anchor_distance(moved, prior, mask).item() == pytest.approx(2.0 / 3.0)


@pytest.mark.parametrize("weight", [0.0, 50.0])
def test_an_anchor_keeps_the_starting_choice_unless_the_returns_outweigh_it(tmp_path, weight):
    """Every state has four legal actions, each played in turn; action 3 alone returns 1. Fitted
    freely, the greedy choice moves to action 3 everywhere; with a heavy anchor the starting
    network's choice stands and its logits hardly move. The anchor is the starting network, and a
    resumed run reloads it from ``init_checkpoint``."""
    start = DMCTrainer(load_config(SMOKE, DMCConfig, runs_dir=str(tmp_path), run_name="start", total_steps=64),
                       progress=False).run()["final"]
    with pytest.raises(TrainConfigError, match="init_checkpoint"):
        load_config(SMOKE, DMCConfig, anchor=1.0)
    cfg = load_config(SMOKE, DMCConfig, runs_dir=str(tmp_path), init_checkpoint=start, anchor=weight,
                      learning_rate=0.01)
    trainer = DMCTrainer(cfg, progress=False)
    trainer.warm_start()
    dim, num = trainer.model.obs_dim, trainer.model.num_actions
    rng = np.random.default_rng(0)
    obs = np.repeat(rng.random((16, dim), dtype=np.float32), 4, axis=0)
    mask = np.zeros((64, num), bool)
    mask[:, :4] = True
    action = np.tile(np.arange(4), 16)
    obs_t, mask_t = torch.from_numpy(obs), torch.from_numpy(mask)

    def choice() -> list[int]:
        with torch.no_grad():
            return trainer.model(obs_t, mask_t)[0].argmax(1).tolist()

    before = choice()
    assert (trainer.anchor is not None) == bool(weight)
    for _ in range(30):
        buf = Trajectories(num_envs=64, num_players=2, obs_dim=dim, num_actions=num)
        buf.open(np.arange(64), np.zeros(64, np.int64), obs, mask, action, np.zeros(64, np.float32),
                 np.zeros(64, np.float32))
        buf.credit(np.arange(64), np.zeros(64, np.int64), (action == 3).astype(np.float32))
        buf.terminate(np.arange(64), np.zeros(64, np.int64))
        trainer.buffer = buf
        stats = trainer.learn()
        assert np.isfinite(stats["q_loss"]) and (stats["anchor"] > 0) == bool(weight)
    if weight:
        assert choice() == before and 3 not in set(before[::4])  # the starting choice, which was not action 3
        with torch.no_grad():
            prior = trainer.anchor(obs_t, mask_t)[0]
            assert anchor_distance(trainer.model(obs_t, mask_t)[0], prior, mask_t).max() < 0.01
        trainer.save()
        resumed = DMCTrainer(cfg, resume=True, progress=False)
        first = load_checkpoint(start)["model"]
        assert all(torch.equal(resumed.anchor.state_dict()[k], v) for k, v in first.items())
    else:
        assert choice() == [3] * 64


def test_max_dueling_gives_the_greedy_action_v_and_leaves_its_advantage_untouched_by_its_return():
    """``dueling: max``: Q = V + A - max A over the legal actions, so the greedy action's Q is V,
    fitting it moves V alone, and an explored action's fit moves its advantage and the greedy one's."""
    torch.manual_seed(0)
    logits = torch.randn(6, 5, requires_grad=True)
    value = torch.randn(6, requires_grad=True)
    mask = torch.tensor([[1, 1, 0, 1, 0]] * 6, dtype=torch.bool)
    masked = logits.masked_fill(~mask, torch.finfo(torch.float32).min)
    q = q_values(masked, value, mask, "max")
    greedy = masked.argmax(1)
    torch.testing.assert_close(q.gather(1, greedy[:, None]).squeeze(1), value)
    assert (q.masked_fill(~mask, -1e9).argmax(1) == greedy).all()
    q.gather(1, greedy[:, None]).sum().backward()
    assert (logits.grad == 0).all() and (value.grad == 1).all()
    legal_ids = torch.tensor([0, 1, 3])
    other = torch.stack([legal_ids[legal_ids != g][0] for g in greedy])  # a legal action, not the greedy one
    logits.grad = None
    q_values(logits.masked_fill(~mask, torch.finfo(torch.float32).min), value, mask, "max").gather(
        1, other[:, None]).sum().backward()
    rows = torch.arange(6)
    assert (logits.grad[rows, other] == 1).all() and (logits.grad[rows, greedy] == -1).all()
    with pytest.raises(ValueError, match="dueling"):
        q_values(masked, value, mask, "min")
