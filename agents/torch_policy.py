"""The PyTorch policy: a masked actor-critic MLP shared by every seat.

The observation is seat-relative, so one network plays any seat. Illegal logits are set to the
dtype's minimum before the softmax (never renormalised by hand), so they get zero probability
and zero gradient.
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

import numpy as np
import torch
from torch import nn

from agents.base import legal_actions
from agents.checkpoint import CheckpointError, check_compatible, load_checkpoint
from agents.spec import DeviceError, check_device
from cf_env import OBSERVATION_VERSION, ObservationEncoder, RulesConfig
from cf_env.engine import action_table, tile_index

__all__ = ["TRUNKS", "ActionScorer", "ActorCritic", "DeviceError", "PolicyEnsemble", "TorchAgent",
           "model_from_checkpoint", "observation_scale", "grow_hidden", "resolve_device", "widen_weights"]

TRUNKS = ("tanh", "layernorm")  #: :class:`ActorCritic`'s kinds of hidden layer


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


def observation_scale(config: RulesConfig, version: int = OBSERVATION_VERSION) -> np.ndarray:
    """Per-feature divisors that bring every observation block to roughly [0, 1]."""
    enc = ObservationEncoder(config, version)
    scale = np.ones(enc.size, dtype=np.float32)
    per_block = {"open_ends": 4.0, "pending_count": 3.0, "hand_sizes": 10.0, "boneyard": float(config.num_tiles),
                 "round": float(config.rounds), "scores": 3.0, "draws": 5.0, "void_draws": 3.0}
    for name, value in per_block.items():
        if name in enc.slices:
            scale[enc.slices[name]] = value
    return scale


class ActionScorer(nn.Module):
    """A policy head that scores each play from what it does, with weights shared by all plays.

    The linear head gives every action id its own row of weights, so what it learns of playing
    {3, 7} to expose a 7 tells it nothing of playing {2, 7}. This head scores the play of tile
    {m, x} on an end showing ``m``, exposing ``x``, as ``match[m] + expose[x] + tile``:

    * each pip value ``v`` is described by what the observation says of it (how many tiles with
      ``v`` the player holds and the layout shows, the ends showing it, whether it is the forced
      slots' value, its double in hand or on the layout, and for each opponent whether it failed
      to match ``v`` and how many tiles it drew since), mixed with the trunk's state in one tanh
      layer; two outputs of that layer are ``match[v]`` (covering an end of ``v``) and
      ``expose[v]`` (opening one);
    * ``tile``: the play's own facts (a double, its pips, the drawn tile, DRAW or PASS) weighed by
      a linear function of the trunk's state.

    The scores are added to the linear head's logits. The output layers start at zero, so a
    network given this head plays exactly as before until training gives it weight (``fit --init
    zoo:strong-4p --action-head 64``). The per-value layer runs ``K + 1`` rows a state, not one a
    play; still, a fit takes about 1.5 times the linear network's time (``lab/benchmarks/policy_head.py``).
    Reads the newest observation (version 2) of ``max_pip`` / ``num_players`` games, unscaled.
    """

    # buffers (register_buffer): tensors, which nn.Module's __getattr__ does not tell the type checker
    has: torch.Tensor
    doubles: torch.Tensor
    match_index: torch.Tensor
    expose_index: torch.Tensor
    tile_of: torch.Tensor
    static_features: torch.Tensor

    def __init__(self, width: int, trunk_width: int, max_pip: int, num_players: int) -> None:
        super().__init__()
        enc = ObservationEncoder(RulesConfig(max_pip=max_pip, num_players=num_players, hand_size=1))
        table = action_table(max_pip)
        k, t, n = max_pip + 1, enc.config.num_tiles, num_players
        self.width, self.k, self.n = width, k, n
        self.slices = {name: (enc.slices[name].start, enc.slices[name].stop)
                       for name in ("hand", "layout", "drawn", "pending_value", "unmatched", "void", "open_ends",
                                    "void_draws")}
        has = torch.zeros(t, k)
        for tile, (lo, hi) in enumerate(zip(table.tile_low, table.tile_high)):
            has[tile, lo] = has[tile, hi] = 1.0
        plays = k * k
        match = [a // k for a in range(plays)] + [k, k]  # DRAW and PASS read the value row k (no value)
        expose = [a % k for a in range(plays)] + [k, k]
        tile_of = [int(table.action_tile[a]) for a in range(plays)] + [t, t]
        static = torch.zeros(plays + 2, 5)
        for a in range(plays):
            m, x = divmod(a, k)
            static[a, 0] = float(m == x)
            static[a, 1] = (m + x) / (2 * max_pip)
            static[a, 2] = 1.0
        static[plays, 3] = static[plays + 1, 4] = 1.0
        self.register_buffer("has", has, persistent=False)
        self.register_buffer("doubles", torch.tensor([tile_index(v, v) for v in range(k)]), persistent=False)
        self.register_buffer("match_index", torch.tensor(match), persistent=False)
        self.register_buffer("expose_index", torch.tensor(expose), persistent=False)
        self.register_buffer("tile_of", torch.tensor(tile_of), persistent=False)
        self.register_buffer("static_features", static, persistent=False)
        self.value_features = 7 + 3 * (n - 1)
        self.values = nn.Linear(self.value_features, width)
        self.state = nn.Linear(trunk_width, width, bias=False)
        self.value_out = nn.Linear(width, 2, bias=False)  # [match, expose]
        self.tile = nn.Linear(trunk_width, static.shape[1] + 1)  # the weights of the play's own facts
        for layer in (self.value_out, self.tile):
            nn.init.zeros_(layer.weight)
        nn.init.zeros_(self.tile.bias)

    def _block(self, obs: torch.Tensor, name: str) -> torch.Tensor:
        start, stop = self.slices[name]
        return obs[..., start:stop]

    def value_table(self, obs: torch.Tensor) -> torch.Tensor:
        """``(B, K + 1, F)``: what the observation says of each pip value; row K (read by DRAW
        and PASS) has only its "no value" column (6) set."""
        hand, layout = self._block(obs, "hand"), self._block(obs, "layout")
        per_value = [hand @ self.has / 3.0, layout @ self.has / 3.0, self._block(obs, "open_ends") / 4.0,
                     self._block(obs, "pending_value"), hand[:, self.doubles], layout[:, self.doubles],
                     torch.zeros_like(hand[:, :self.k])]
        columns = torch.stack(per_value, dim=-1)
        opponents = [self._block(obs, name).reshape(-1, self.n - 1, self.k).transpose(1, 2) * scale
                     for name, scale in (("void", 1.0), ("unmatched", 1.0), ("void_draws", 1 / 3))]
        table = torch.cat([columns, *opponents], dim=-1)
        none = table.new_zeros(table.shape[0], 1, table.shape[2])
        none[..., 6] = 1.0
        return torch.cat([table, none], dim=1)

    def forward(self, obs: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        """Scores ``(B, A)`` for raw observations ``obs`` ``(B, D)`` and trunk outputs ``h``."""
        per_value = self.value_out(torch.tanh(self.values(self.value_table(obs)) + self.state(h)[:, None, :]))
        drawn = self._block(obs, "drawn")
        drawn = torch.cat([drawn, drawn.new_zeros(drawn.shape[0], 1)], dim=1)[:, self.tile_of]
        weights = self.tile(h)  # (B, 6): the play's facts are the static ones and the drawn flag
        tile = weights[:, :-1] @ self.static_features.T + drawn * weights[:, -1:]
        return per_value[:, self.match_index, 0] + per_value[:, self.expose_index, 1] + tile


class ActorCritic(nn.Module):
    """MLP trunk, a policy head over every action id and a value head; with ``action_head`` > 0
    also an :class:`ActionScorer` of that width (which needs the game's ``max_pip`` and
    ``num_players``) whose scores are added to the policy head's logits.

    ``trunk`` is the hidden layers' kind (:data:`TRUNKS`): ``tanh`` (linear then tanh, every
    network before it) or ``layernorm`` (linear, layer normalisation, then ReLU), which fits the
    search's labels more closely (lab/results/distill-2p.md)."""

    obs_scale: torch.Tensor  # a buffer (register_buffer)

    def __init__(self, obs_dim: int, num_actions: int, hidden: tuple[int, ...] = (256, 256),
                 obs_scale: np.ndarray | None = None, observation_version: int = OBSERVATION_VERSION,
                 obs_index: np.ndarray | None = None, action_head: int = 0, max_pip: int | None = None,
                 num_players: int | None = None, trunk: str = "tanh") -> None:
        super().__init__()
        if trunk not in TRUNKS:
            raise ValueError(f"trunk must be one of {TRUNKS}, got {trunk!r}")
        self.obs_dim, self.num_actions, self.hidden, self.trunk_kind = obs_dim, num_actions, tuple(hidden), trunk
        self.observation_version = int(observation_version)
        self.action_head, self.max_pip, self.num_players = int(action_head), max_pip, num_players
        if self.action_head < 0:
            raise ValueError(f"action_head is the action scorer's width (0 for none), got {action_head}")
        scale = torch.ones(obs_dim) if obs_scale is None else torch.as_tensor(obs_scale, dtype=torch.float32)
        self.register_buffer("obs_scale", scale)
        # A network trained on an older observation layout reads its features out of the newest
        # one (ObservationEncoder.index); not saved: the checkpoint's version rebuilds it.
        self.obs_index: torch.Tensor | None
        if obs_index is None:
            self.obs_index = None
        else:
            self.register_buffer("obs_index", torch.as_tensor(np.asarray(obs_index), dtype=torch.long),
                                 persistent=False)
        layers: list[nn.Module] = []
        width = obs_dim
        for h in hidden:
            shape = [nn.Tanh()] if trunk == "tanh" else [nn.LayerNorm(h), nn.ReLU()]
            layers += [nn.Linear(width, h), *shape]
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
        self.scorer: ActionScorer | None = None
        if self.action_head:
            if max_pip is None or num_players is None:
                raise ValueError("an action head needs the game's max_pip and num_players")
            if self.observation_version != OBSERVATION_VERSION:
                raise CheckpointError(f"an action head reads observation v{OBSERVATION_VERSION}, this network "
                                      f"v{self.observation_version}")
            self.scorer = ActionScorer(self.action_head, width, max_pip, num_players)
            if self.scorer.k * self.scorer.k + 2 != num_actions:
                raise ValueError(f"max_pip {max_pip} has {self.scorer.k ** 2 + 2} actions, the network "
                                 f"{num_actions}")

    @classmethod
    def for_rules(cls, config: RulesConfig, hidden: tuple[int, ...] | list[int] = (256, 256),
                  action_head: int = 0, trunk: str = "tanh") -> ActorCritic:
        """A new network for ``config``'s games: the newest observation, scaled, and an action head
        of width ``action_head`` (0: none). What the trainers build."""
        return cls(ObservationEncoder(config).size, config.num_actions, tuple(hidden),
                   obs_scale=observation_scale(config), action_head=action_head, max_pip=config.max_pip,
                   num_players=config.num_players, trunk=trunk)

    @torch.no_grad()
    def sharpen(self, scale: float) -> None:
        """Multiply the policy's logits by ``scale`` (softmax temperature ``1 / scale``): the linear
        policy head's weights and bias scaled; the argmax, and so deterministic play, is unchanged.
        A network with an action head is refused (its scores add to the logits)."""
        if self.scorer is not None:
            raise ValueError("sharpen scales the linear policy head; this network's action head adds scores of "
                             "its own to the logits")
        self.policy.weight.mul_(scale)
        self.policy.bias.mul_(scale)

    def features(self, obs: torch.Tensor) -> torch.Tensor:
        """The trunk's output for raw observations (scaled here); both heads read it. An older
        version's network is given the newest observation and picks its own features out of it."""
        if self.obs_index is not None and obs.shape[-1] != self.obs_dim:
            obs = obs[..., self.obs_index]
        return self.trunk(obs / self.obs_scale)

    def heads(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Unmasked logits ``(B, A)`` and values ``(B, 1)``: for frameworks that mask on their own
        (TorchRL's masked distributions, Tianshou's Q-values) or use one head alone."""
        h = self.features(obs)
        return self._logits(obs, h), self.value(h)

    def _logits(self, obs: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        logits = self.policy(h)
        return logits if self.scorer is None else logits + self.scorer(obs, h)

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Masked logits ``(B, A)`` and values ``(B,)``; ``mask`` is bool or 0/1."""
        return self.masked_heads(obs, self.features(obs), mask)

    def masked_heads(self, obs: torch.Tensor, h: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """:meth:`forward` from the trunk's output ``h`` (:meth:`features`) already computed: a
        trainer that keeps the trunk fixed computes it without gradient."""
        logits = self._logits(obs, h)
        logits = logits.masked_fill(~mask.bool(), torch.finfo(logits.dtype).min)
        return logits, self.value(h).squeeze(-1)

    def kwargs(self) -> dict:
        head = ({"action_head": self.action_head, "max_pip": self.max_pip, "num_players": self.num_players}
                if self.action_head else {})
        kind = {"trunk": self.trunk_kind} if self.trunk_kind != "tanh" else {}  # older checkpoints' kwargs unchanged
        return {"obs_dim": self.obs_dim, "num_actions": self.num_actions, "hidden": list(self.hidden),
                "observation_version": self.observation_version} | head | kind


class PolicyEnsemble(nn.Module):
    """Several trained networks that play as one: the policy is the normalised geometric mean of
    the members' policies (the mean of their log-probabilities, which :class:`TorchAgent` treats as
    logits: its argmax is the move the members agree on most), the value the mean of their values.

    Networks distilled from the same search make partly independent errors, so averaging them
    plays better than any member (lab/results/distill-2p.md). An ensemble plays wherever a network
    plays (``chickenfoot eval``, a search's ``rollout=``, a label collection's ``--student``) but is
    not trained: a trainer starting from it refuses it (:func:`training.run.load_weights`); fit one
    of its members instead. ``chickenfoot ensemble`` writes one from checkpoints."""

    def __init__(self, members: list[ActorCritic], obs_dim: int) -> None:
        super().__init__()
        if len(members) < 2:
            raise ValueError(f"an ensemble needs at least two networks, got {len(members)}")
        if len({m.num_actions for m in members}) != 1:
            raise CheckpointError(f"the networks score different numbers of actions: {[m.num_actions for m in members]}")
        for i, m in enumerate(members):
            if m.obs_dim != obs_dim and m.obs_index is None:
                raise CheckpointError(f"network {i} reads {m.obs_dim} features and cannot pick them out of "
                                      f"observation v{OBSERVATION_VERSION}'s {obs_dim}")
        self.members = nn.ModuleList(members)
        self.obs_dim, self.num_actions = obs_dim, members[0].num_actions
        self.observation_version, self.obs_index = OBSERVATION_VERSION, None  # each member reads its own

    @classmethod
    def from_checkpoints(cls, specs: list[str], config: RulesConfig | None = None) -> tuple[PolicyEnsemble, RulesConfig]:
        """The ensemble of the networks in checkpoint files or ``zoo:NAME`` ``specs``, and the
        rules it plays (the first checkpoint's, or ``config``); every network must read the same
        game (players and set). :class:`CheckpointError` names the one that does not."""
        from agents import checkpoint_file

        members: list[ActorCritic] = []
        for spec in specs:
            path = checkpoint_file(spec)
            data = load_checkpoint(path)
            if config is None:
                config = RulesConfig.from_dict(data["rules"])
            check_compatible(data, config, path)
            model = model_from_checkpoint(data, config, path)
            if isinstance(model, PolicyEnsemble):
                raise CheckpointError(f"{spec} is itself an ensemble of {len(model.members)} networks; list its "
                                      f"members' checkpoints instead")
            members.append(model)
        if config is None:
            raise ValueError("an ensemble needs at least two networks, got none")
        return cls(members, ObservationEncoder(config).size), config

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Masked scores ``(B, A)`` (the mean log-probability) and values ``(B,)``, as
        :meth:`ActorCritic.forward`."""
        mask = mask.bool()
        outputs = [member(obs, mask) for member in self.members]
        logp = torch.stack([torch.log_softmax(logits, dim=-1).masked_fill(~mask, 0.0) for logits, _ in outputs]).mean(0)
        values = torch.stack([value for _, value in outputs]).mean(0)
        return logp.masked_fill(~mask, torch.finfo(logp.dtype).min), values

    def kwargs(self) -> dict:
        return {"ensemble": [cast(ActorCritic, m).kwargs() for m in self.members], "obs_dim": self.obs_dim,
                "num_actions": self.num_actions, "observation_version": self.observation_version}


def _network(kwargs: dict, config: RulesConfig, version: int, path: str | Path) -> ActorCritic:
    """An untrained :class:`ActorCritic` built from a checkpoint's recorded ``kwargs``."""
    kwargs = dict(kwargs)
    kwargs["hidden"] = tuple(kwargs["hidden"])
    version = int(kwargs.pop("observation_version", version))
    enc = ObservationEncoder(config, version)
    if kwargs.get("obs_dim") != enc.size:
        raise CheckpointError(f"{path}: the network reads {kwargs.get('obs_dim')} features, but observation v{version} "
                              f"of this game has {enc.size}")
    return ActorCritic(**kwargs, observation_version=version,
                       obs_index=enc.index if version != OBSERVATION_VERSION else None)


def model_from_checkpoint(data: dict, config: RulesConfig,
                          path: str | Path = "checkpoint") -> ActorCritic | PolicyEnsemble:
    """The network of loaded checkpoint ``data`` for games of ``config`` (a
    :class:`PolicyEnsemble` when the checkpoint holds several), reading the newest observation
    whatever version it was trained on (a v1 network picks its 229 features out of v2's vector,
    see :meth:`ObservationEncoder.select`)."""
    kwargs = data["model_kwargs"]
    model: ActorCritic | PolicyEnsemble
    if "ensemble" in kwargs:
        members = [_network(k, config, data["observation_version"], path) for k in kwargs["ensemble"]]
        model = PolicyEnsemble(members, ObservationEncoder(config).size)
    else:
        model = _network(kwargs, config, data["observation_version"], path)
    try:
        model.load_state_dict(data["model"])
    except (RuntimeError, KeyError) as exc:
        raise CheckpointError(f"{path}: weights do not fit the recorded network: {exc}") from None
    return model


def widen_weights(old: ActorCritic, new: ActorCritic, config: RulesConfig) -> None:
    """Copy an older observation version's network ``old`` into ``new`` (the newest version, same
    hidden sizes) so that ``new`` plays exactly as ``old``: the first layer's columns of the old
    features are copied to where those features sit now, the new features' columns are zero (they
    start unused and training gives them weight). The warm start of the v2 networks."""
    if old.hidden != new.hidden or old.num_actions != new.num_actions or old.trunk_kind != new.trunk_kind:
        raise CheckpointError(f"cannot widen network {old.kwargs()} into {new.kwargs()}: hidden sizes, trunk and "
                              f"actions must match")
    index = ObservationEncoder(config, old.observation_version).index
    state = {k: v.clone() for k, v in old.state_dict().items()}
    first = next(k for k in state if k.endswith(".weight") and k.startswith("trunk."))
    weight = torch.zeros(state[first].shape[0], new.obs_dim, dtype=state[first].dtype)
    weight[:, torch.as_tensor(index)] = state[first]
    state[first] = weight
    scale = new.obs_scale.detach().clone()
    scale[torch.as_tensor(index)] = state["obs_scale"]
    state["obs_scale"] = scale
    new.load_state_dict(state)


def grow_hidden(old: ActorCritic, new: ActorCritic) -> None:
    """Copy ``old`` into ``new``, a network of the same depth, observation and actions whose layers
    are at least as wide, so that ``new`` computes exactly what ``old`` does: the old units keep
    their weights and read nothing from the new ones, the new units keep ``new``'s own random
    input weights, and the heads and the old units of the next layer read them with weight zero
    until training gives them weight. A distilled network given more capacity without
    losing what it knows (``fit --init zoo:strong-4p --hidden 512 512``). ``new`` may also add an
    :class:`ActionScorer` that ``old`` lacks: it keeps its own init, whose output layer is zero
    (``fit --init zoo:strong-4p --action-head 64``)."""
    if (len(old.hidden) != len(new.hidden) or any(o > n for o, n in zip(old.hidden, new.hidden))
            or old.obs_dim != new.obs_dim or old.num_actions != new.num_actions
            or old.observation_version != new.observation_version
            or old.action_head not in (0, new.action_head)
            or old.trunk_kind != "tanh" or new.trunk_kind != "tanh"):
        raise CheckpointError(f"cannot grow network {old.kwargs()} into {new.kwargs()}: the new one needs as many "
                              f"layers, each at least as wide, the same observation and actions, the same "
                              f"action head or one where the old network has none, and tanh layers (a "
                              f"layernorm trunk's statistics change with its width)")
    src, dst = old.state_dict(), new.state_dict()
    state = {k: v.clone() for k, v in dst.items()}
    linears = [k[:-len(".weight")] for k in src if k.endswith(".weight")]  # trunk layers, then the heads
    for name in linears:
        w_old, w_new = src[name + ".weight"], state[name + ".weight"]
        rows, cols = w_old.shape
        w_new[:rows, :cols] = w_old  # the old units are as they were and read no new unit
        w_new[:rows, cols:] = 0.0  # (the new units keep their init: only the old ones feed the output)
        if name + ".bias" in src:
            state[name + ".bias"][:rows] = src[name + ".bias"]
            state[name + ".bias"][rows:] = 0.0
    state["obs_scale"] = src["obs_scale"].clone()
    new.load_state_dict(state)


class TorchAgent:
    """Plays a trained :class:`ActorCritic`: the most likely legal action (``deterministic``,
    default) or a sample from ``softmax(logits / temperature)`` drawn with the generator given to
    :meth:`act` (the spec ``PATH:temperature=T``)."""

    def __init__(self, model: ActorCritic | PolicyEnsemble, config: RulesConfig, name: str = "torch",
                 deterministic: bool = True, device: str = "cpu", temperature: float = 1.0) -> None:
        if not temperature > 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        self.model = model.to(device).eval()
        self.config = config
        self.name = name
        self.deterministic = deterministic
        self.temperature = float(temperature)
        self.device = device
        enc = ObservationEncoder(config, model.observation_version)
        if model.obs_dim != enc.size or model.num_actions != config.num_actions:
            raise CheckpointError(
                f"the network reads {model.obs_dim} features and scores {model.num_actions} actions, but "
                f"this game has {enc.size} (observation v{enc.version}) and {config.num_actions}"
            )
        if model.observation_version != OBSERVATION_VERSION and model.obs_index is None:
            raise CheckpointError(f"a v{model.observation_version} network needs its obs_index to read v"
                                  f"{OBSERVATION_VERSION} observations: build it with model_from_checkpoint")

    @classmethod
    def from_checkpoint(cls, path: str | Path, config: RulesConfig | None = None, device: str = "cpu",
                        name: str | None = None, deterministic: bool = True, temperature: float = 1.0) -> TorchAgent:
        data = load_checkpoint(path)
        trained = RulesConfig.from_dict(data["rules"])
        if config is not None:
            check_compatible(data, config, path)
        model = model_from_checkpoint(data, config if config is not None else trained, path)
        return cls(model, config if config is not None else trained, name=name or str(path),
                   deterministic=deterministic, device=device, temperature=temperature)

    @torch.no_grad()
    def probabilities(self, observation: dict) -> np.ndarray:
        obs = torch.as_tensor(np.asarray(observation["observation"], dtype=np.float32), device=self.device)[None]
        mask = torch.as_tensor(np.asarray(observation["action_mask"]).astype(bool), device=self.device)[None]
        logits, _ = self.model(obs, mask)
        return torch.softmax(logits / self.temperature, dim=-1)[0].cpu().numpy()

    def action_probabilities(self, observation: dict) -> np.ndarray:
        """The policy :meth:`act` follows: the network's probabilities when it samples, all on the
        most likely legal action when ``deterministic`` (what a luck-corrected evaluation reads,
        such as the lab's ``lab.luck``)."""
        probs = self.probabilities(observation).astype(np.float64)
        if self.deterministic:
            legal = legal_actions(observation)
            one = np.zeros_like(probs)
            one[legal[np.argmax(probs[legal])]] = 1.0
            return one
        return probs / probs.sum()

    @torch.no_grad()
    def act_batch(self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        obs = torch.as_tensor(np.asarray(observations, dtype=np.float32), device=self.device)
        mask = torch.as_tensor(np.asarray(masks).astype(bool), device=self.device)
        logits, _ = self.model(obs, mask)
        if self.deterministic:
            return logits.argmax(dim=-1).cpu().numpy()
        probs = torch.softmax(logits / self.temperature, dim=-1).cpu().numpy()
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
