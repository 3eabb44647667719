"""A learned belief over the hidden tiles: for each tile a seat cannot see, how likely it is to lie
in each opponent's hand or in the boneyard, read from the observation alone.

:class:`BeliefNet` is trained on self-play positions with their true hands (``python -m
lab.belief``; the figures, against the constraint and policy samplers, are in
lab/results/belief.md). With ``infer=lab.samplers:Belief:belief=PATH`` the search deals
``proposals`` constraint-respecting candidates per world and keeps one with probability
proportional to the product of the network's probabilities for where that candidate puts each
hidden tile (sampling-importance-resampling, as ``infer=policy`` does with the opponent model's
likelihood).
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import torch
from torch import nn

from agents.torch_policy import observation_scale
from cf_env import ConfigError, ObservationEncoder, RulesConfig

__all__ = ["BeliefNet", "load_belief", "location_open"]


def location_open(obs: torch.Tensor, sizes: slice, bone: slice) -> torch.Tensor:
    """``(B, n)``: which locations hold any hidden tile (each opponent's hand, the boneyard)."""
    return torch.cat([obs[:, sizes][:, 1:], obs[:, bone]], 1) > 0.5


class BeliefNet(nn.Module):
    """Observation -> for each tile, log-probabilities over its locations ``(B, T, n)``: location
    ``i < n - 1`` the opponent ``i + 1`` seats clockwise from the observer, ``n - 1`` the boneyard.
    A location that holds no tile (an empty hand, an empty boneyard) gets none."""

    def __init__(self, config: RulesConfig, hidden: tuple[int, ...] = (256, 256)) -> None:
        super().__init__()
        enc = ObservationEncoder(config)
        self.config = config
        self.n, self.t = config.num_players, config.num_tiles
        self.scale: torch.Tensor
        self.register_buffer("scale", torch.as_tensor(observation_scale(config)))
        self.sizes, self.bone = enc.slices["hand_sizes"], enc.slices["boneyard"]
        layers: list[nn.Module] = []
        width = enc.size
        for h in hidden:
            layers += [nn.Linear(width, h), nn.ReLU()]
            width = h
        layers.append(nn.Linear(width, self.t * self.n))
        self.body = nn.Sequential(*layers)
        self.hidden = list(hidden)
        self._numpy: list[tuple[np.ndarray, np.ndarray]] | None = None

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        logits = self.body(obs / self.scale).view(-1, self.t, self.n)
        closed = ~location_open(obs, self.sizes, self.bone)[:, None, :]
        return torch.log_softmax(logits.masked_fill(closed, -1e9), -1)

    def seat_rows(self, obs: np.ndarray) -> np.ndarray:
        """One observation's log-probabilities as the sampler reads them: ``(n + 1, T)`` float64,
        row ``p`` (1 .. n-1) the opponent ``p`` seats on, row ``n`` the boneyard, row 0 zeros.

        Computed in numpy from the weights as :meth:`forward` computes them (a search asks one
        observation at a time: torch's thread pool costs a hundred times the arithmetic when
        another process keeps a core busy; taken again after the weights change in training)."""
        if self._numpy is None:
            self._numpy = [(m.weight.detach().numpy().T.copy(), m.bias.detach().numpy().copy())
                           for m in self.body if isinstance(m, nn.Linear)]
        x = np.asarray(obs, dtype=np.float32) / self.scale.numpy()
        *hidden, (w, b) = self._numpy
        for hw, hb in hidden:
            x = np.maximum(x @ hw + hb, 0.0)
        logits = (x @ w + b).reshape(self.t, self.n).astype(np.float64)
        sizes = np.concatenate([np.asarray(obs)[self.sizes][1:], np.asarray(obs)[self.bone]])
        logits[:, sizes <= 0.5] = -1e9
        top = logits.max(1, keepdims=True)
        logp = logits - top - np.log(np.exp(logits - top).sum(1, keepdims=True))
        out = np.zeros((self.n + 1, self.t))
        out[1:] = logp.T
        return out

    def train(self, mode: bool = True) -> BeliefNet:
        self._numpy = None  # the weights may change: seat_rows takes them again
        return super().train(mode)

    def payload(self, **extra: object) -> dict:
        return {"state_dict": self.state_dict(), "hidden": self.hidden, "rules": self.config.to_dict(), **extra}


def load_belief(path: str | Path, config: RulesConfig) -> BeliefNet:
    """The :class:`BeliefNet` saved at ``path`` (``torch.save`` of :meth:`BeliefNet.payload`), for
    ``config``'s rules (refused when it was trained for others)."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"no belief network at {path} (train one with python -m lab.belief fit)")
    try:  # weights only: a file named in a spec never runs code from its pickle
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:
        raise ConfigError(f"{path} is not a belief network: it holds Python objects other than tensors and plain "
                          f"values, and a belief network is only ever loaded without running code from the "
                          f"file") from None
    except Exception as exc:  # torch raises several types for truncated or foreign files
        raise ConfigError(f"{path} is not a readable belief network: {type(exc).__name__}: "
                          f"{str(exc).splitlines()[0][:200] if str(exc) else ''}") from None
    if not isinstance(payload, dict) or not {"rules", "hidden", "state_dict"} <= set(payload):
        raise ConfigError(f"{path} is not a belief network (made by python -m lab.belief fit)")
    saved = RulesConfig(**payload["rules"])
    if saved != config:
        raise ConfigError(f"the belief network {path} was trained for {saved}, not {config}")
    net = BeliefNet(config, tuple(payload["hidden"]))
    net.load_state_dict(payload["state_dict"])
    return net.eval()
