"""Adapters of the Chicken Foot env to RL frameworks' own env APIs.

Each module imports its framework at import time, so import only the one you use:

- :mod:`cf_env.integrations.rllib` — RLlib's ``MultiAgentEnv`` (new API stack), extra ``rllib``.
- :mod:`cf_env.integrations.tianshou` — Tianshou 2.x's PettingZoo env, extra ``tianshou``.
- :mod:`cf_env.integrations.openspiel` — the OpenSpiel game ``python_chicken_foot``, extra
  ``openspiel`` (project agents as OpenSpiel bots and back, and ISMCTS's resampler: :mod:`agents.spiel`).

TorchRL needs no adapter either: ``training/torchrl_ppo.py`` wraps ``raw_env`` in TorchRL's own
``PettingZooWrapper`` (one group, acting-seat mask), extra ``torchrl``. Each framework's pieces:
RLlib — env here, masking RLModule in :mod:`agents.rllib_module` (it reads this adapter's
``OBS_KEY``/``MASK_KEY``), script ``training/rllib_ppo.py``; Tianshou — adapter here, script
``training/tianshou_dqn.py``; TorchRL and SB3 — scripts ``training/torchrl_ppo.py`` and
``training/sb3_maskable_ppo.py``.

Stable-Baselines3: ``ChickenFootSingleEnv`` (``gymnasium.make("ChickenFoot-v1")``) already has
sb3-contrib's ``action_masks()``; :mod:`cf_env.integrations.sb3` is SB3's ``VecEnv`` over the
vector env (:mod:`cf_env.gym_vector`), thousands of games stepped by the batched engine, extra ``sb3``.
"""
