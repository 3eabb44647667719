"""Checkpoints: weights plus the metadata that says which game they were trained for.

A checkpoint is one ``torch.save`` file holding plain Python values and tensors (it loads with
``weights_only=True``): ``model`` (state dict), ``model_kwargs``, ``rules`` (the RulesConfig),
``observation_version``, ``action_encoding``, ``num_actions``, ``train_step``, ``train_config``,
``package_version``, and optionally ``optimizer`` and ``trainer_state`` for ``--resume``, and
``precision`` (with ``weight_scales`` and ``weight_group`` for int8) for weights stored narrower
than float32 (:func:`store_weights`), which :func:`load_checkpoint` widens back.
Writes are atomic and durable: a temporary file in the same folder, fsynced, then ``os.replace``,
then an fsync of the folder so that the rename survives a crash too.
"""

from __future__ import annotations

import functools
import os
import pickle
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from cf_env import OBSERVATION_VERSION, ChickenFootError, RulesConfig, __version__
from cf_env.observation import VERSIONS

__all__ = ["ACTION_ENCODING", "CHECKPOINT_FORMAT", "INT8_GROUP", "PRECISIONS", "CheckpointError", "atomic_write",
           "check_compatible", "load_checkpoint", "model_payload", "save_checkpoint", "store_weights"]

CHECKPOINT_FORMAT = "chickenfoot-rl/checkpoint/v1"
ACTION_ENCODING = "m*K+x plays {m,x} on an open m exposing x; K*K draw; K*K+1 pass"


class CheckpointError(ChickenFootError, ValueError):
    """A checkpoint file is unreadable, corrupt, or does not match the env it is used with."""


def save_checkpoint(path: str | Path, payload: dict[str, Any]) -> Path:
    """Atomically write ``payload`` (completed with the format and version fields) to ``path``."""
    import torch

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "format": CHECKPOINT_FORMAT,
        "observation_version": OBSERVATION_VERSION,  # a payload's own (its network's) wins
        "action_encoding": ACTION_ENCODING,
        "package_version": __version__,
        **payload,
    }
    return atomic_write(path, lambda f: torch.save(data, f))


def atomic_write(path: str | Path, write: Any) -> Path:
    """Write a file all at once: ``write(binary file)`` fills a temporary file beside ``path``,
    which is synced and renamed over ``path``; a crash leaves the old file or the new one, never
    half of one (checkpoints, the expert trainer's samples)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)  # the rename itself reaches the disk, not only the file's bytes
    return path


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # a platform that cannot open folders (Windows): the rename is all it offers
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


PRECISIONS = ("float32", "float16", "int8")
INT8_GROUP = 64  # the columns of a weight matrix that share one int8 scale


def model_payload(model: Any, rules: RulesConfig, train_step: int, train_config: dict[str, Any],
                  precision: str = "float32") -> dict[str, Any]:
    """The weights-only payload of an :class:`agents.torch_policy.ActorCritic` (what
    ``TorchAgent.from_checkpoint`` and ``chickenfoot eval`` read); every trainer writes this.

    ``precision`` is how the weights are stored (:func:`store_weights`): ``float16`` halves the
    file and ``int8`` quarters it; :func:`load_checkpoint` widens them back to float32. For a
    network that is shipped, not for one that goes on training."""
    state, scales = store_weights(model.state_dict(), precision)
    stored: dict[str, Any] = {} if precision == "float32" else {"precision": precision}
    if scales:
        stored |= {"weight_scales": scales, "weight_group": INT8_GROUP}
    return {"model": state, "model_kwargs": model.kwargs(), "rules": rules.to_dict(),
            "observation_version": int(getattr(model, "observation_version", OBSERVATION_VERSION)),
            "num_actions": rules.num_actions, "train_step": int(train_step), "train_config": dict(train_config),
            **stored}


def store_weights(state: dict[str, Any], precision: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """``state`` (a state dict) as stored at ``precision``, and the int8 scales.

    ``float16`` stores every floating-point tensor in float16. ``int8`` stores each weight matrix
    as int8 with one float16 scale for every :data:`INT8_GROUP` columns of a row (the group's
    largest magnitude maps to 127), and the other tensors (biases, norms) in float16. On the
    2-player ensemble float16 changes at most 3 moves in 10,000 and int8 about 1 in 100, all near
    ties, and the ensemble's strength does not move (lab/results/distill-2p.md)."""
    import torch

    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    if precision == "float32":
        return dict(state), {}
    stored: dict[str, Any] = {}
    scales: dict[str, Any] = {}
    for key, value in state.items():
        if not value.is_floating_point():
            stored[key] = value
        elif precision == "int8" and value.dim() == 2:
            rows, cols = value.shape
            groups = torch.nn.functional.pad(value.float(), (0, -cols % INT8_GROUP)).reshape(rows, -1, INT8_GROUP)
            scale = (groups.abs().amax(-1) / 127).half()
            scale = torch.where(scale > 0, scale, torch.ones_like(scale))  # an all-zero group stays zero
            codes = torch.round(groups / scale.float().unsqueeze(-1)).clamp(-127, 127).to(torch.int8)
            stored[key], scales[key] = codes.reshape(rows, -1)[:, :cols].contiguous(), scale
        else:
            stored[key] = value.half()
    return stored, scales


def _widen_weights(data: dict[str, Any], path: Path) -> None:
    """Replace a float16 or int8 checkpoint's ``model`` by its float32 state dict, in place."""
    import torch

    scales = data.pop("weight_scales", None) or {}
    group = int(data.pop("weight_group", INT8_GROUP))
    state = data["model"]
    if not isinstance(state, dict) or not set(scales) <= set(state):
        raise CheckpointError(f"{path}: its int8 scales name weights the checkpoint does not hold")
    for key, value in list(state.items()):
        if key in scales:
            rows, cols = value.shape
            scale = scales[key].float().repeat_interleave(group, dim=1)[:, :cols]
            if scale.shape != value.shape:
                raise CheckpointError(f"{path}: the int8 scales of {key} do not fit its {rows}x{cols} weights")
            state[key] = value.float() * scale
        elif isinstance(value, torch.Tensor) and value.is_floating_point():
            state[key] = value.float()


def load_checkpoint(path: str | Path) -> dict[str, Any]:
    """Read and validate a checkpoint; :class:`CheckpointError` says what is wrong. A file is read
    once per process while it is unchanged (same size and modification time): reading a
    checkpoint's rules and then loading its agent costs one read. The dict is the caller's own
    (its tensors are shared: load them into a model, do not change them in place)."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"no checkpoint file at {path}")
    stat = path.stat()
    return dict(_read_checkpoint(str(path.resolve()), stat.st_size, stat.st_mtime_ns))


@functools.lru_cache(maxsize=16)
def _read_checkpoint(path_text: str, size: int, mtime_ns: int) -> dict[str, Any]:
    """:func:`load_checkpoint`'s read of one version of a file (size and time are the cache's key)."""
    import torch

    path = Path(path_text)
    if not zipfile.is_zipfile(path):  # torch.save writes a zip archive; anything else is not ours
        with path.open("rb") as f:
            if f.read(4) == b"PK\x03\x04":  # a zip archive's start without its end
                raise CheckpointError(f"{path} is not a readable checkpoint (corrupt or truncated?): the archive "
                                      f"ends early")
        if path.suffix == ".py":
            raise CheckpointError(f"{path} is a Python file, not a checkpoint: to play an agent class of your own, "
                                  f"name the class too, as {path}:ClassName")
        raise CheckpointError(f"{path} is not a checkpoint: not a PyTorch file (torch.save writes a zip archive); "
                              f"give a .pt file written by chickenfoot-rl")
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:  # torch's weights-only loader met an object it will not build
        raise CheckpointError(
            f"{path} is not a chickenfoot-rl checkpoint: it holds Python objects other than tensors and plain "
            f"values, and checkpoints are only ever loaded without running code from the file") from None
    except Exception as exc:  # torch raises several types for truncated or foreign files
        reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        raise CheckpointError(f"{path} is not a readable checkpoint (corrupt or truncated?): {reason}") from None
    if not isinstance(data, dict) or data.get("format") != CHECKPOINT_FORMAT:
        if isinstance(data, dict) and "format" not in data:
            keys = ", ".join(map(str, list(data)[:6])) + (", ..." if len(data) > 6 else "")
            raise CheckpointError(
                f"{path} is a PyTorch file of your own (a dict of {keys}), not a chickenfoot-rl checkpoint, which "
                f"also records the network's shape, the rules and the observation version: write one with "
                f"agents.checkpoint.save_checkpoint(path, agents.checkpoint.model_payload(model, rules, steps, {{}})), "
                f"or play your network through an agent class of your own (FILE.py:ClassName)")
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise CheckpointError(f"{path} is not a chickenfoot-rl checkpoint (format {found!r}, expected "
                              f"{CHECKPOINT_FORMAT!r})")
    missing = [k for k in ("model", "model_kwargs", "rules", "observation_version", "num_actions") if k not in data]
    if missing:
        raise CheckpointError(f"{path} lacks the fields {missing}")
    if data["observation_version"] not in VERSIONS:
        raise CheckpointError(
            f"{path} was trained on observation layout v{data['observation_version']}, this package reads "
            f"{', '.join(f'v{v}' for v in VERSIONS)}; retrain or use the package version {data.get('package_version')}"
        )
    if data.get("action_encoding", ACTION_ENCODING) != ACTION_ENCODING:
        raise CheckpointError(f"{path} uses another action encoding: {data.get('action_encoding')!r}")
    if data.get("precision", "float32") not in PRECISIONS:
        raise CheckpointError(f"{path} stores its weights as {data['precision']!r}; this package reads "
                              f"{', '.join(PRECISIONS)}")
    if data.get("precision", "float32") != "float32":
        _widen_weights(data, path)
    return data


def check_compatible(data: dict[str, Any], config: RulesConfig, path: str | Path = "checkpoint") -> RulesConfig:
    """The checkpoint's rules; an error when they differ from ``config`` where it matters.

    The network's input and output sizes depend on ``num_players`` and ``max_pip``; the other
    rule options (rounds, centre arms, draw rule, scoring) change play but not shapes, so a
    checkpoint may be evaluated under them."""
    trained = RulesConfig.from_dict(data["rules"])
    for name in ("num_players", "max_pip"):
        if getattr(trained, name) != getattr(config, name):
            raise CheckpointError(
                f"{path} was trained for {name}={getattr(trained, name)} but the env has "
                f"{name}={getattr(config, name)}; its network cannot read this game's observations"
            )
    return trained
