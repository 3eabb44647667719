"""Luck-corrected evaluation (AIVAT) for Chicken Foot: a research study that did not narrow the
intervals at an affordable cost (``lab/results/luck-correction.md``).

- :mod:`lab.luck.value`: the control variates (:class:`LuckCorrector`), the value function
  (:class:`LuckValue`) and its fit;
- :mod:`lab.luck.rollouts`: draw terms valued by compiled rollouts;
- :mod:`lab.luck.evaluation`: the correction plugged into :func:`training.evaluate.evaluate`
  through its ``on_deal_set`` hook (:func:`luck_evaluate`).

``python -m lab.luck eval zoo:strong-4p heuristic --deal-sets 500 --workers 2`` and
``python -m lab.luck fit --players 4 --games 12000``.
"""

from lab.luck.evaluation import LuckHook, LuckReport, luck_evaluate, replay_decisions
from lab.luck.value import (
    DEAL_SAMPLES,
    DRAW_SAMPLES,
    DUPLICATE_EVENTS,
    EVENTS,
    LuckCorrector,
    LuckFeatures,
    LuckValue,
    corrected_outcomes,
    fit_luck_value,
    load_luck_value,
    outcome,
    rules_key,
    shipped_path,
    win_shares,
)

__all__ = ["DEAL_SAMPLES", "DRAW_SAMPLES", "DUPLICATE_EVENTS", "EVENTS", "LuckCorrector", "LuckFeatures", "LuckHook",
           "LuckReport", "LuckValue", "corrected_outcomes", "fit_luck_value", "load_luck_value", "luck_evaluate",
           "outcome", "replay_decisions", "rules_key", "shipped_path", "win_shares"]
