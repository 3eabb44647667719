"""The PyTorch policy: a masked actor-critic MLP shared by every seat.

The observation is seat-relative, so one network plays any seat. Illegal logits are set to the
dtype's minimum before the softmax (never renormalised by hand), so they get zero probability
and zero gradient.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import nn

from agents.base import legal_actions
from agents.checkpoint import CheckpointError, check_compatible, load_checkpoint
from agents.spec import DeviceError, check_device
from cf_env import ObservationEncoder, RulesConfig

__all__ = ["ActorCritic", "DeviceError", "TorchAgent", "observation_scale", "resolve_device"]


def resolve_device(device: str) -> str:
    """``"auto"`` becomes ``"cuda"`` when torch sees a GPU, else ``"cpu"``; ``"cpu"`` and
    ``"cuda"`` (or ``"cuda:N"``) are checked: asking for a GPU that is not there raises
    :class:`DeviceError` saying so."""
    device = check_device(device)
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cpu":
        return device
    if not torch.cuda.is_available():  # cuda or cuda:N
        raise DeviceError(f"device {device!r} asked for, but torch {torch.__version__} sees no CUDA GPU on this "
                          f"machine; use device cpu (or auto: a GPU when there is one)")
    index = device.partition(":")[2]
    if index and int(index) >= torch.cuda.device_count():
        raise DeviceError(f"device {device!r}: this machine has {torch.cuda.device_count()} CUDA device(s), "
                          f"numbered from 0")
    return device


def observation_scale(config: RulesConfig) -> np.ndarray:
    """Per-feature divisors that bring every observation block to roughly [0, 1]."""
    enc = ObservationEncoder(config)
    scale = np.ones(enc.size, dtype=np.float32)
    per_block = {"open_ends": 4.0, "pending_count": 3.0, "hand_sizes": 10.0, "boneyard": float(config.num_tiles),
                 "round": float(config.rounds), "scores": 3.0}
    for name, value in per_block.items():
        scale[enc.slices[name]] = value
    return scale


class ActorCritic(nn.Module):
    """MLP trunk, a policy head over every action id and a value head."""

    def __init__(self, obs_dim: int, num_actions: int, hidden: tuple[int, ...] = (256, 256),
                 obs_scale: np.ndarray | None = None) -> None:
        super().__init__()
        self.obs_dim, self.num_actions, self.hidden = obs_dim, num_actions, tuple(hidden)
        scale = torch.ones(obs_dim) if obs_scale is None else torch.as_tensor(obs_scale, dtype=torch.float32)
        self.register_buffer("obs_scale", scale)
        layers: list[nn.Module] = []
        width = obs_dim
        for h in hidden:
            layers += [nn.Linear(width, h), nn.Tanh()]
            width = h
        self.trunk = nn.Sequential(*layers)
        self.policy = nn.Linear(width, num_actions)
        self.value = nn.Linear(width, 1)
        for layer in self.trunk:
            if isinstance(layer, nn.Linear):
                nn.init.orthogonal_(layer.weight, np.sqrt(2))
                nn.init.zeros_(layer.bias)
        nn.init.orthogonal_(self.policy.weight, 0.01)
        nn.init.zeros_(self.policy.bias)
        nn.init.orthogonal_(self.value.weight, 1.0)
        nn.init.zeros_(self.value.bias)

    def features(self, obs: torch.Tensor) -> torch.Tensor:
        """The trunk's output for raw observations (scaled here); both heads read it."""
        return self.trunk(obs / self.obs_scale)

    def heads(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Unmasked logits ``(B, A)`` and values ``(B, 1)``: for frameworks that mask on their own
        (TorchRL's masked distributions, Tianshou's Q-values) or use one head alone."""
        h = self.features(obs)
        return self.policy(h), self.value(h)

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Masked logits ``(B, A)`` and values ``(B,)``; ``mask`` is bool or 0/1."""
        h = self.features(obs)
        logits = self.policy(h)
        logits = logits.masked_fill(~mask.bool(), torch.finfo(logits.dtype).min)
        return logits, self.value(h).squeeze(-1)

    def kwargs(self) -> dict:
        return {"obs_dim": self.obs_dim, "num_actions": self.num_actions, "hidden": list(self.hidden)}


class TorchAgent:
    """Plays a trained :class:`ActorCritic`: the most likely legal action (``deterministic``,
    default) or a sample drawn with the generator given to :meth:`act`."""

    def __init__(self, model: ActorCritic, config: RulesConfig, name: str = "torch",
                 deterministic: bool = True, device: str = "cpu") -> None:
        self.model = model.to(device).eval()
        self.config = config
        self.name = name
        self.deterministic = deterministic
        self.device = device
        enc = ObservationEncoder(config)
        if model.obs_dim != enc.size or model.num_actions != config.num_actions:
            raise CheckpointError(
                f"the network reads {model.obs_dim} features and scores {model.num_actions} actions, but "
                f"this game has {enc.size} and {config.num_actions}"
            )

    @classmethod
    def from_checkpoint(cls, path: str | Path, config: RulesConfig | None = None, device: str = "cpu",
                        name: str | None = None, deterministic: bool = True) -> TorchAgent:
        data = load_checkpoint(path)
        trained = RulesConfig.from_dict(data["rules"])
        if config is not None:
            check_compatible(data, config, path)
        kwargs = dict(data["model_kwargs"])
        kwargs["hidden"] = tuple(kwargs["hidden"])
        model = ActorCritic(**kwargs)
        try:
            model.load_state_dict(data["model"])
        except (RuntimeError, KeyError) as exc:
            raise CheckpointError(f"{path}: weights do not fit the recorded network: {exc}") from None
        return cls(model, config if config is not None else trained, name=name or str(path),
                   deterministic=deterministic, device=device)

    @torch.no_grad()
    def probabilities(self, observation: dict) -> np.ndarray:
        obs = torch.as_tensor(np.asarray(observation["observation"], dtype=np.float32), device=self.device)[None]
        mask = torch.as_tensor(np.asarray(observation["action_mask"]).astype(bool), device=self.device)[None]
        logits, _ = self.model(obs, mask)
        return torch.softmax(logits, dim=-1)[0].cpu().numpy()

    @torch.no_grad()
    def act_batch(self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        obs = torch.as_tensor(np.asarray(observations, dtype=np.float32), device=self.device)
        mask = torch.as_tensor(np.asarray(masks).astype(bool), device=self.device)
        logits, _ = self.model(obs, mask)
        if self.deterministic:
            return logits.argmax(dim=-1).cpu().numpy()
        probs = torch.softmax(logits, dim=-1).cpu().numpy()
        u = rng.random(len(probs))[:, None]
        choice = (probs.cumsum(axis=1) > u * probs.sum(axis=1, keepdims=True)).argmax(axis=1)
        return choice

    def act(self, observation: dict, rng: np.random.Generator) -> int:
        legal = legal_actions(observation)
        if legal.size == 1:
            return int(legal[0])
        probs = self.probabilities(observation)[legal]
        if self.deterministic:
            return int(legal[np.argmax(probs)])
        return int(rng.choice(legal, p=probs / probs.sum()))
