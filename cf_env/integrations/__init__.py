"""Adapters of the Chicken Foot env to RL frameworks' own env APIs.

Each module imports its framework at import time, so import only the one you use:

- :mod:`cf_env.integrations.rllib` — RLlib's ``MultiAgentEnv`` (new API stack), extra ``rllib``.
- :mod:`cf_env.integrations.tianshou` — Tianshou 2.x's PettingZoo env, extra ``tianshou``.
- :mod:`cf_env.integrations.torchrl` — TorchRL's ``PettingZooWrapper`` set up for turn-based masks,
  extra ``torchrl``.

Stable-Baselines3 needs no adapter: ``ChickenFootSingleEnv`` (``gymnasium.make("ChickenFoot-v0")``)
already has sb3-contrib's ``action_masks()``.
"""
