"""The throughput teacher's collection (training/labels.py) and distillation (training/distill.py)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from agents import load
from agents.torch_policy import ActorCritic, TorchAgent, observation_scale
from cf_env import ConfigError, ObservationEncoder, RulesConfig
from cf_env.engine import scoring
from training import distill, labels

TINY = RulesConfig(num_players=2, max_pip=4, hand_size=4, rounds=2)
TEACHER = "search:ms=0:sims=32:race=2"
PEEK = "search:ms=0:sims=8:infer=tests.agents.test_search:Peek:keep=0"  #: a sampler that reads the true hands


def student(config: RulesConfig, seed: int = 0) -> TorchAgent:
    import torch

    torch.manual_seed(seed)
    enc = ObservationEncoder(config)
    return TorchAgent(ActorCritic(enc.size, config.num_actions, (32, 32), obs_scale=observation_scale(config)),
                      config, name="student")


def test_soft_targets():
    q = np.array([[0.2, 0.5, 0.9, 0.0], [0.1, 0.1, 0.0, 0.0]], np.float32)
    mask = np.array([[1, 1, 0, 0], [1, 1, 0, 0]], bool)
    choice = np.array([1, 0])
    hard = labels.soft_targets(q, mask, choice, 0.0)
    assert hard.tolist() == [[0, 1, 0, 0], [1, 0, 0, 0]]
    soft = labels.soft_targets(q, mask, choice, 0.1)
    assert np.allclose(soft.sum(1), 1) and np.all(soft[~mask] == 0)  # the illegal action's 0.9 counts for nothing
    assert soft[0, 1] == pytest.approx(1 / (1 + np.exp(-3.0)))
    assert np.allclose(soft[1, :2], 0.5)
    with pytest.raises(ConfigError, match=">= 0"):
        labels.soft_targets(q, mask, choice, -1.0)


def test_stakes_weigh_a_label_by_what_a_random_legal_choice_loses():
    q = np.array([[0.2, 0.5, 0.9, 0.0], [0.1, 0.1, 0.0, 0.0], [0.3, -0.3, 0.0, 0.0]], np.float32)
    mask = np.array([[1, 1, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0]], bool)
    assert labels.label_weights(q, mask, "none").tolist() == [1, 1, 1]
    stakes = labels.label_weights(q, mask, "stakes")
    assert stakes == pytest.approx([0.15, 0.0, 0.3])  # the illegal 0.9 is not the best; a tie weighs 0
    with pytest.raises(ConfigError, match="weighting must be one of"):
        labels.label_weights(q, mask, "gaps")


@pytest.mark.parametrize("config", [TINY, RulesConfig(num_players=3, max_pip=5, hand_size=4, rounds=1)])
def test_lockstep_labels_are_the_students_choices_with_the_teachers_values(config):
    teacher = load(TEACHER, config)
    out = labels.collect_labels(student(config), teacher, [load("heuristic", config)], config, games=6, seed=4,
                                self_play_prob=0.5, gamma=1.0, slots=4)
    n = len(out["ret"])
    assert out["games"] == 6 and n > 0 and set(labels.LABEL_KEYS) <= set(out)
    rows = np.arange(n)
    assert np.all(out["mask"].sum(1) > 1) and np.all(out["mask"][rows, out["choice"]])
    assert np.all(out["q"][~out["mask"]] == 0) and np.all(out["worlds"][~out["mask"]] == 0)
    assert np.all(out["worlds"][out["mask"]] >= 1) and out["worlds"].max() <= 32
    # the observations are real ones: the hidden tiles (not held, not on the layout) are the others' and the boneyard's
    enc = ObservationEncoder(config)
    views = [enc.decode(o) for o in out["obs"]]
    assert all(v["hand"].sum() == v["hand_sizes"][0] for v in views)
    # the 'win' reward arrives once, at the game's end: with gamma 1 each label's return is its seat's
    # win reward, one of the values a seat can get
    shares = {round(scoring.win_reward(scoring.win_share(won, k), config.num_players), 6)
              for k in range(1, config.num_players + 1) for won in (True, False)}
    assert {round(float(r), 6) for r in out["ret"]} <= shares
    # the same seed gives the same labels
    again = labels.collect_labels(student(config), load(TEACHER, config), [load("heuristic", config)], config,
                                  games=6, seed=4, self_play_prob=0.5, gamma=1.0, slots=4)
    for key in labels.LABEL_KEYS:
        assert np.array_equal(out[key], again[key]), key


@pytest.mark.parametrize("loop", ["lockstep", "env"])
def test_a_teacher_that_needs_the_hands_is_shown_the_labelled_seats_opponents_hands_and_the_label_is_not(loop):
    """A teacher whose sampler reads the opponents' true hands (``needs_hands``: the lab's oracle) is
    given them as the observation's ``hands``; the label keeps the seat's own view."""
    config = RulesConfig(num_players=3, max_pip=6, hand_size=5, rounds=1)
    n, t = config.num_players, config.num_tiles
    enc = ObservationEncoder(config)
    search = load("search:ms=0:sims=8", config)
    shown: list[tuple[np.ndarray, np.ndarray]] = []

    class Watching:  # a search that reads the hands, recording each view it is given
        needs_hands = True

        def act(self, observation, rng):
            shown.append((observation["observation"], np.asarray(observation["hands"])))
            action = search.act({k: v for k, v in observation.items() if k != "hands"}, rng)
            self.last_search = search.last_search
            return action

    if loop == "lockstep":
        out = labels.collect_labels(student(config), Watching(), [load("heuristic", config)], config, games=3, seed=2,
                                    slots=2)
    else:  # the PettingZoo env's loop (expert iteration's one_by_one, a history-reading teacher's)
        out = labels.collect_labels_env(student(config), Watching(), [load("heuristic", config)], config, [2, 3, 4])
    assert len(shown) == len(out["obs"]) > 0
    for (obs, hands), kept in zip(shown, out["obs"]):
        np.testing.assert_array_equal(obs, kept)  # the label keeps the seat's own view
        view = enc.decode(obs)
        assert hands.shape == (n - 1, t)
        assert hands.sum(axis=1).tolist() == list(view["hand_sizes"][1:])  # the opponents', in seat order
        assert not (hands.any(axis=0) & ((view["hand"] > 0) | (view["layout"] > 0))).any()
    assert set(np.unique(out["choice"])) <= set(range(config.num_actions))


def test_imitation_labels_are_the_agents_own_choices_and_warm_start_a_fit():
    heuristic = load("heuristic", TINY)
    out = labels.imitation_labels(heuristic, TINY, games=5, seed=3, gamma=1.0, slots=3)
    n = len(out["ret"])
    assert n > 0 and set(labels.LABEL_KEYS) <= set(out)
    rows = np.arange(n)
    assert np.all(out["mask"].sum(1) > 1) and np.all(out["mask"][rows, out["choice"]])
    for o, m, c in zip(out["obs"], out["mask"], out["choice"]):  # the deterministic heuristic's own action
        assert heuristic.act({"observation": o, "action_mask": m.astype(np.int8)}, np.random.default_rng()) == c
    assert np.allclose(labels.soft_targets(out["q"], out["mask"], out["choice"], 0.03),  # the choice at any T
                       labels.soft_targets(out["q"], out["mask"], out["choice"], 0.0), atol=1e-6)
    shares = {round(scoring.win_reward(scoring.win_share(won, k), TINY.num_players), 6)
              for k in range(1, TINY.num_players + 1) for won in (True, False)}
    assert {round(float(r), 6) for r in out["ret"]} <= shares
    # the same seed gives the same labels; more games, more labels
    again = labels.imitation_labels(heuristic, TINY, games=5, seed=3, gamma=1.0, slots=3)
    assert all(np.array_equal(out[k], again[k]) for k in labels.LABEL_KEYS)
    more = labels.imitation_labels(heuristic, TINY, games=10, seed=3, gamma=1.0, slots=3)
    assert len(more["ret"]) > n
    with pytest.raises(ConfigError, match=">= 1"):
        labels.imitation_labels(heuristic, TINY, games=0, seed=0)
    model, stats = distill.imitate("heuristic", TINY, games=40, epochs=8, hidden=(32, 32), progress=False)
    assert stats["games"] == 40 and stats["labels"] > 0
    assert distill.agreement(model, more) > 0.8  # it plays like the heuristic on other games


def test_a_teacher_that_reads_the_history_labels_on_the_env():
    teacher = load("search:ms=0:sims=4:infer=policy", TINY)
    args = (student(TINY), teacher, [load("heuristic", TINY)], TINY)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a policy searcher warns when it gets no history
        out = labels.collect_labels(*args, games=3, seed=5, slots=2)
    n = len(out["ret"])
    assert n > 0 and out["games"] == 3 and out["teacher_seconds"] > 0 and out["rollout_decisions"] > 0
    assert out["obs"].shape == (n, ObservationEncoder(TINY).size) and out["q"].shape == (n, TINY.num_actions)
    assert out["mask"][np.arange(n), out["choice"]].all() and (out["mask"].sum(axis=1) > 1).all()
    assert ((out["worlds"] > 0) == out["mask"]).all()  # every legal action tried, none else
    assert not out["q"][~out["mask"]].any()
    again = labels.collect_labels(*args, games=3, seed=5, slots=2)
    assert all(np.array_equal(out[k], again[k]) for k in labels.LABEL_KEYS)  # one seed, the same labels


def test_shards_resume_refuse_other_settings_and_distil(tmp_path):
    folder = tmp_path / "labels"
    # the heuristic has act_batch, so it can stand in for the student network here
    settings = labels.collection_settings("heuristic", TEACHER, ["random"], TINY, seed=7, shard_games=2, slots=2)
    first = labels.collect_shards(folder, settings, 2, progress=False)
    assert first["shards"] == 2 and first["labels"] > 0
    stamps = {p.name: p.stat().st_mtime_ns for p in labels.shard_paths(folder)}
    more = labels.collect_shards(folder, settings, 3, progress=False)
    assert more["shards"] == 3 and more["games"] == 2  # only the missing shard was played
    assert {p.name: p.stat().st_mtime_ns for p in labels.shard_paths(folder)[:2]} == stamps
    with pytest.raises(ConfigError, match="teacher"):
        labels.collect_shards(folder, {**settings, "teacher": "search:ms=0:sims=8"}, 3, progress=False)
    kept = json.loads((folder / "collection.json").read_text())
    assert kept["teacher"] == TEACHER and kept["provenance"]["version"]  # where the labels came from
    # distillation: the held-out shard is never trained on; the fitted network plays
    train, test = distill.split_labels(folder, holdout=0.34)
    with np.load(labels.shard_paths(folder)[-1]) as last:
        assert np.array_equal(test["obs"], last["obs"])
    assert len(train["ret"]) + len(test["ret"]) == more["labels"] + first["labels"]
    model, stats = distill.fit(train, TINY, distill.FitSettings(temperature=0.05, epochs=30, hidden=(32, 32)), test=test,
                               progress=False)
    assert stats["history"][-1]["train_agreement"] > stats["history"][0]["train_agreement"] - 1e-9
    assert stats["history"][-1]["train_agreement"] > 0.6
    path = distill.save_model(model, TINY, tmp_path / "net.pt", stats)
    agent = load(str(path), TINY)
    assert distill.agreement(agent.model, train) == pytest.approx(stats["history"][-1]["train_agreement"], abs=0.02)
    with pytest.raises(FileNotFoundError, match="no label shards"):
        labels.load_labels(tmp_path / "nothing")


def test_fit_starts_from_a_checkpoint_of_the_same_rules(tmp_path):
    config = RulesConfig()
    enc = ObservationEncoder(config)
    rows = 64
    rng = np.random.default_rng(0)
    mask = np.zeros((rows, config.num_actions), bool)
    mask[:, :3] = True
    fake = {"obs": rng.random((rows, enc.size), dtype=np.float32), "mask": mask,
            "q": rng.random((rows, config.num_actions)).astype(np.float32) * mask, "choice": np.zeros(rows, np.int16),
            "ret": np.zeros(rows, np.float32)}
    model, stats = distill.fit(fake, config, distill.FitSettings(epochs=1, learning_rate=1e-12), init="zoo:strong-4p",
                               test=fake, progress=False)
    reference = load("zoo:strong-4p", config).model
    for (name, a), b in zip(model.state_dict().items(), reference.state_dict().values()):
        assert np.allclose(a.numpy(), b.numpy(), atol=1e-6), name
    # a fine-tune reports where it started: here nothing moved, so the figures stay
    assert stats["start"]["test_agreement"] == stats["history"][-1]["test_agreement"]
    assert stats["start"]["test_regret"] == pytest.approx(stats["history"][-1]["test_regret"])


def test_teacher_regret_is_the_value_the_networks_choices_lose():
    rows = 200
    rng = np.random.default_rng(3)
    model = student(TINY).model
    mask = rng.random((rows, TINY.num_actions)) < 0.5
    mask[:, 0] = mask[:, 1] = True
    q = (rng.random((rows, TINY.num_actions)) * mask).astype(np.float32)
    obs = rng.random((rows, ObservationEncoder(TINY).size), dtype=np.float32)
    picked = distill._network_choices(model, {"obs": obs, "mask": mask})
    assert mask[np.arange(rows), picked].all()  # only legal actions are picked
    best = np.where(mask, q, -1.0).max(axis=1)
    regret = distill.teacher_regret(model, {"obs": obs, "mask": mask, "q": q})
    assert regret == pytest.approx(float((best - q[np.arange(rows), picked]).mean()), rel=1e-6) and regret > 0
    q[np.arange(rows), picked] = 2.0  # every choice of the network now the best-valued one
    assert distill.teacher_regret(model, {"obs": obs, "mask": mask, "q": q}) == 0.0
    assert distill.agreement(model, {"obs": obs, "mask": mask, "choice": picked}) == 1.0


@pytest.mark.slow
def test_the_distill_command_collects_fits_evaluates_and_resumes(tmp_path):
    from click.testing import CliRunner

    from chickenfoot.cli import main

    smoke = str(distill.Path(__file__).resolve().parents[2] / "configs" / "distill-smoke.yaml")
    args = ["distill", "--config", smoke, "--runs-dir", str(tmp_path), "--no-progress"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output[result.output.index("{"):])
    run = tmp_path / "distill-smoke"
    assert len(labels.shard_paths(run / "labels")) == 3 and summary["labels"] > 0
    assert 0 <= summary["eval"]["win_rate_vs_greedy"]["win_rate"] <= 1
    assert summary["imitation"]["agent"] == "heuristic" and summary["imitation"]["labels"] > 0
    assert load(summary["final"], TINY).config == TINY
    again = CliRunner().invoke(main, args)  # a second run in the same folder is refused
    assert again.exit_code != 0 and "--resume" in again.output
    resumed = CliRunner().invoke(main, args + ["--resume"])  # keeps the shards: nothing more to collect
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.output[resumed.output.index("{"):])["collection"]["games"] == 0
    assert not (run / "round-1.pt").exists()
    more = CliRunner().invoke(main, args + ["--resume", "--dagger-rounds", "1"])  # one round more: round 1
    assert more.exit_code == 0, more.output
    extended = json.loads(more.output[more.output.index("{"):])
    assert extended["round"] == 2 and [r["round"] for r in extended["rounds"]] == [0, 1]
    assert len(labels.shard_paths(run / "labels-dagger-1")) == 3 and (run / "round-1.pt").exists()
    assert extended["rounds"][1]["behaviour"] == str((run / "round-0.pt").resolve())


def test_labels_from_several_folders_hold_out_the_last_ones_shards(tmp_path):
    heuristic = labels.collection_settings("heuristic", TEACHER, ["random"], TINY, seed=7, shard_games=2, slots=2)
    labels.collect_shards(tmp_path / "a", heuristic, 2, progress=False)
    labels.collect_shards(tmp_path / "b", {**heuristic, "seed": 8}, 2, progress=False)
    train, test = distill.split_labels([tmp_path / "a", tmp_path / "b"], holdout=0.5)
    shards = labels.shard_paths(tmp_path / "a") + labels.shard_paths(tmp_path / "b")
    rows = [np.load(p)["obs"] for p in shards]
    assert np.array_equal(train["obs"], np.concatenate(rows[:3])) and np.array_equal(test["obs"], rows[3])
    alone = distill.split_labels(tmp_path / "a", holdout=0.5)  # one folder: as before
    assert np.array_equal(alone[1]["obs"], rows[1])
    other = labels.collection_settings("heuristic", TEACHER, ["random"], RulesConfig(num_players=2, max_pip=4,
                                                                                      hand_size=4, rounds=1), seed=7)
    labels.collect_shards(tmp_path / "c", {**other, "shard_games": 1}, 1, progress=False)
    with pytest.raises(ConfigError, match="different rules"):
        distill.split_labels([tmp_path / "a", tmp_path / "c"])
    # a held-out folder of its own: every shard of the others trains, all of its shards score
    train, test = distill.split_labels([tmp_path / "a"], heldout=tmp_path / "b")
    assert np.array_equal(train["obs"], np.concatenate(rows[:2])) and np.array_equal(test["obs"], np.concatenate(rows[2:]))
    with pytest.raises(ConfigError, match="both a training folder and the held-out one"):
        distill.split_labels([tmp_path / "a", tmp_path / "b"], heldout=tmp_path / "b")
    with pytest.raises(ConfigError, match="different rules"):
        distill.split_labels([tmp_path / "a"], heldout=tmp_path / "c")
    with pytest.raises(ConfigError, match="not a label collection"):
        distill.split_labels([tmp_path / "a", tmp_path / "nothing"])


def test_labels_read_for_fitting_pack_exactly_and_fit_the_same_network(tmp_path):
    import shutil

    import torch

    settings = labels.collection_settings("heuristic", TEACHER, ["random"], TINY, seed=7, shard_games=2, slots=2)
    labels.collect_shards(tmp_path / "a", settings, 4, progress=False)
    sizes = [len(np.load(p)["ret"]) for p in labels.shard_paths(tmp_path / "a")]
    limit = sizes[0] + sizes[1] // 2  # ends inside the second shard
    plain, test = distill.split_labels(tmp_path / "a", holdout=0.25, limit=limit)
    packed, test2 = distill.split_labels(tmp_path / "a", holdout=0.25, limit=limit, temperature=0.05)
    assert isinstance(packed["obs"], distill.PackedObs) and packed["obs"].codes.dtype == np.int16
    assert len(packed["obs"]) == len(plain["ret"]) == limit and "q" not in packed and "worlds" not in packed
    assert np.array_equal(packed["obs"][:], plain["obs"])  # the scores block's fractions read back bit for bit
    assert np.any(plain["obs"] != np.round(plain["obs"]))
    assert np.array_equal(packed["target"], labels.soft_targets(plain["q"], plain["mask"], plain["choice"], 0.05))
    assert all(np.array_equal(test[k], test2[k]) for k in test)  # held-out labels as the shards hold them
    settings = distill.FitSettings(temperature=0.05, epochs=2, hidden=(32, 32), seed=1)
    nets = [distill.fit(t, TINY, settings, progress=False)[0] for t in (plain, packed)]
    assert all(torch.equal(a, b) for a, b in zip(nets[0].state_dict().values(), nets[1].state_dict().values()))
    with pytest.raises(ConfigError, match="temperature 0.05, not 0.1"):
        distill.fit(packed, TINY, distill.FitSettings(temperature=0.1, epochs=1), progress=False)
    # weighted by the stakes: the same network from either form, a different one from the unweighted fit
    staked, _ = distill.split_labels(tmp_path / "a", holdout=0.25, limit=limit, temperature=0.05, weighting="stakes")
    assert np.allclose(staked["weight"], labels.label_weights(plain["q"], plain["mask"], "stakes"))
    settings = distill.FitSettings(temperature=0.05, epochs=2, hidden=(32, 32), seed=1, weighting="stakes")
    weighed = [distill.fit(t, TINY, settings, progress=False) for t in (plain, staked)]
    assert all(torch.equal(a, b) for a, b in zip(weighed[0][0].state_dict().values(), weighed[1][0].state_dict().values()))
    assert weighed[0][1]["weighting"] == "stakes"
    assert not torch.equal(weighed[0][0].policy.weight, nets[0].policy.weight)
    with pytest.raises(ConfigError, match="weights are 'none', not 'stakes'"):
        distill.fit(packed, TINY, settings, progress=False)
    # a shard with a value no code holds: every row is kept as float32 (those before it unpacked)
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    odd = labels.shard_paths(tmp_path / "b")[1]
    with np.load(odd) as data:
        arrays = dict(data)
    arrays["obs"][0, 0] = 0.123456
    np.savez_compressed(odd, **arrays)
    mixed, _ = distill.split_labels(tmp_path / "b", holdout=0.25, temperature=0.05)
    whole, _ = distill.split_labels(tmp_path / "b", holdout=0.25)
    assert mixed["obs"].dtype == np.float32 and np.array_equal(mixed["obs"], whole["obs"])


@pytest.mark.slow
def test_dagger_rounds_label_the_latest_networks_games_and_refit_on_every_label(tmp_path):
    import torch

    cfg = distill.DistillConfig(run_name="dagger", runs_dir=str(tmp_path), rules=TINY.to_dict(),
                                teacher="search:ms=0:sims=16:race=2", workers=1, collect_minutes=0, max_shards=2,
                                shard_games=2, slots=2, hidden=[32, 32], epochs=2, imitate="heuristic",
                                imitation_games=6, imitation_epochs=1, holdout=0.5, torch_threads=1,
                                eval_deal_sets=1, eval_opponents=["greedy"], dagger_rounds=2)
    summary = distill.distill_run(cfg, progress=False)
    run = tmp_path / "dagger"
    assert [r["round"] for r in summary["rounds"]] == [0, 1, 2]
    for k in (1, 2):  # each round is played by the network fitted in the round before it
        played_by = json.loads((run / f"labels-dagger-{k}" / "collection.json").read_text())["student"]
        assert played_by == str((run / f"round-{k - 1}.pt").resolve())
        assert len(labels.shard_paths(run / f"labels-dagger-{k}")) == 2
    counts = [r["labels"] for r in summary["rounds"]]
    assert counts[0] < counts[1] < counts[2] == summary["labels"]  # every label so far, less the held-out shard
    held = labels.shard_paths(run / "labels")[-1]
    assert summary["test_labels"] == len(np.load(held)["ret"])  # the same held-out shard every round
    final, last = (torch.load(run / name, weights_only=False)["model"] for name in ("final.pt", "round-2.pt"))
    assert all(torch.equal(final[k], last[k]) for k in final)
    assert 0 <= summary["eval"]["win_rate_vs_greedy"]["win_rate"] <= 1
    # resume collects on in the last stage only: the earlier stages' labels and networks stay, and
    # the summary keeps their rounds (rounds.json)
    stamps = {p: p.stat().st_mtime_ns for p in [*run.glob("labels*/shard_*.npz"), run / "round-0.pt", run / "round-1.pt"]}
    again = distill.distill_run(cfg, resume=True, progress=False)
    assert again["rounds"][:2] == json.loads(json.dumps(summary["rounds"][:2]))
    assert [r["round"] for r in again["rounds"]] == [0, 1, 2] and again["collection"]["games"] == 0
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps
    assert again["labels"] == summary["labels"]


@pytest.mark.parametrize("key, value, message", [
    ("teacher", "heuristic", "must be a search spec"),
    ("teacher", "search:algo=ismcts:ms=0:sims=8", "algo=pimc"),
    ("behaviour", "nobody", "unknown agents"),
    ("temperature", -1, "greater than or equal to 0"),
    ("imitate", "nobody", "unknown agents"),
    ("opponents", [PEEK], "teacher's privilege"),  # the opponents play
    ("behaviour", PEEK, "teacher's privilege"),
])
def test_bad_distill_configs_name_the_key(key, value, message):
    from training.config import TrainConfigError

    with pytest.raises(TrainConfigError, match=message):
        distill.DistillConfig(**{key: value})


def test_a_teacher_named_by_its_class_is_checked_when_it_is_loaded():
    """``module:Class`` passes the config check (the class is not imported there) and must make a
    PIMC search agent when the collection loads it."""
    from training.config import check_teacher

    assert check_teacher("agents:HeuristicAgent") == "agents:HeuristicAgent"
    with pytest.raises(ConfigError, match="not a PIMC search agent"):
        labels.load_teacher("agents:HeuristicAgent", TINY)
    with pytest.raises(ConfigError, match="not a PIMC search agent"):
        labels.load_teacher("search:algo=ismcts:ms=0:sims=8", TINY)
    assert labels.load_teacher(TEACHER, TINY).algo == "pimc"


def test_a_distill_config_starts_from_one_network():
    from training.config import TrainConfigError

    assert distill.DistillConfig(imitate="heuristic").imitation_games > 0
    assert distill.DistillConfig(teacher=PEEK, imitate="heuristic")  # a teacher may read the hands
    with pytest.raises(TrainConfigError, match="set one of them"):
        distill.DistillConfig(imitate="heuristic", init_checkpoint="zoo:strong-4p")


def test_strength_in_processes_is_the_same_as_in_one(tmp_path):
    import torch

    torch.manual_seed(0)
    model = ActorCritic.for_rules(TINY, (32, 32))
    one = distill.strength(model, TINY, "heuristic", 2, seed=3)
    two = distill.strength(model, TINY, "heuristic", 2, seed=3, workers=2)
    assert one == two and one["games"] == 4


def test_the_labels_commands_collect_resume_and_fit(tmp_path):
    """``chickenfoot labels collect`` writes shards and a rerun resumes to a larger count;
    ``chickenfoot labels fit`` writes a checkpoint of the labels' rules and reports its held-out
    figures; bad flags are usage errors that write nothing."""
    from click.testing import CliRunner

    from chickenfoot.cli import main

    out = tmp_path / "labels"
    common = ["labels", "collect", "--out", str(out), "--players", "2", "--max-pip", "4", "--rounds", "1",
              "--student", "heuristic", "--teacher", TEACHER, "--opponents", "random", "--shard-games", "1",
              "--slots", "1", "--no-progress"]
    result = CliRunner().invoke(main, common + ["--shards", "2"])
    assert result.exit_code == 0, result.output
    assert len(labels.shard_paths(out)) == 2
    result = CliRunner().invoke(main, common + ["--shards", "3"])
    assert result.exit_code == 0 and len(labels.shard_paths(out)) == 3, result.output
    net = tmp_path / "net.pt"
    result = CliRunner().invoke(main, ["labels", "fit", str(out), "--out", str(net), "--hidden", "16,16", "--epochs", "2",
                                       "--holdout", "0.34", "--deal-sets", "1", "--opponent", "random",
                                       "--weighting", "stakes", "--trunk", "layernorm", "--precision", "float16",
                                       "--no-progress"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output[:result.output.rindex("}") + 1])
    assert 0.0 <= report["end"]["test_agreement"] <= 1.0 and report["vs_random"]["games"] == 2
    assert report["weighting"] == "stakes" and report["precision"] == "float16"
    import torch

    assert torch.load(net, weights_only=True)["precision"] == "float16"  # stored narrow, played widened
    from agents.checkpoint import PRECISIONS

    fit_options = {o.name: o for o in main.commands["labels"].commands["fit"].params}
    assert tuple(fit_options["precision"].type.choices) == PRECISIONS  # the CLI's copy of the storage kinds
    assert load(str(net)).config.max_pip == 4 and load(str(net)).model.trunk_kind == "layernorm"
    for bad in (["--hidden", "16,x"], ["--imitate", "heuristic", "--init", "zoo:strong-2p"], ["--weighting", "gaps"],
                ["--precision", "float8"]):
        result = CliRunner().invoke(main, ["labels", "fit", str(out), "--out", str(tmp_path / "bad.pt"), *bad])
        assert result.exit_code == 2 and not (tmp_path / "bad.pt").exists(), result.output
    result = CliRunner().invoke(main, ["labels", "fit", str(out), "--heldout", str(out), "--out", str(tmp_path / "bad.pt")])
    assert result.exit_code == 1 and "both a training folder" in result.output and not (tmp_path / "bad.pt").exists()


def test_a_teacher_class_that_cannot_be_imported_where_labels_are_read_is_not_an_error(tmp_path):
    """Reading labels needs nothing of the teacher: a ``module:Class`` teacher whose module is not
    importable where they are fitted is passed over by the overruled-values check, silently."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        distill._warn_overruled_values([tmp_path], [{"teacher": "no_such_module:Teacher"}], 0.02)
        distill._warn_overruled_values([tmp_path], [{"teacher": TEACHER}], 0.02)
