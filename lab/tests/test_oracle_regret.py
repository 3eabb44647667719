import pytest

from cf_env import RulesConfig
from lab import oracle_regret


def test_the_judge_charges_nothing_to_itself_and_something_to_a_blind_search():
    config = RulesConfig(rounds=1)
    found = oracle_regret.collect_positions(config, "heuristic", "heuristic", games=2, seed=0)
    assert found and all(p["hands"].shape == (config.num_players - 1, config.num_tiles) for p in found)
    assert all(p["action_mask"].sum() > 1 and "history" in p for p in found)
    oracle, blind = "search:ms=0:sims=8:infer=lab.samplers:Oracle:seed=5", "search:ms=0:sims=8:infer=none:seed=5"
    report = oracle_regret.oracle_regret(config, [oracle, blind], oracle, found[:12], seed=0)
    # the judge's own spec on the same worlds (its own seed) chooses what the judge values best
    assert report["specs"][oracle]["regret"] == 0 and report["specs"][oracle]["agreement"] == 1
    assert report["specs"][blind]["regret"] > 0 and report["specs"][blind]["agreement"] < 1
    assert report["specs"][blind]["minus_first"][0] == report["specs"][blind]["regret"]
    with pytest.raises(ValueError, match="Oracle"):
        oracle_regret.oracle_regret(config, ["heuristic"], "search:ms=0:sims=8", found[:1], seed=0)
