"""A policy network inside the compiled search: ISMCTS's rollouts with a checkpoint's choices.

PIMC plays a checkpoint's rollouts outside the compiled code, one batched forward pass per step
over many worlds (:mod:`agents.search.pimc`). ISMCTS walks one world at a time, so its rollouts
need the network in the compiled loop: :func:`compile_network` copies a checkpoint's weights
into a :class:`Net` (the observation's scale folded into the first layer, which is stored by
input so that the observation's zeros cost nothing), and :func:`net_choice` is its greedy move
from an observation that :func:`cf_env.vector.write_observation` wrote. Networks with a
``tanh`` trunk of two hidden layers and the linear policy head compile (``zoo:strong-4p``,
``zoo:strong-2p``); others raise :class:`~agents.spec.SearchSpecError`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from agents.spec import SearchSpecError

__all__ = ["NO_NET", "Net", "compile_network", "net_choice"]


class Net(NamedTuple):
    """A two-hidden-layer tanh policy network's weights and working rows, float32."""

    w1t: np.ndarray  #: (D, H1) the first layer by input, divided by the observation's scale
    b1: np.ndarray  #: (H1,)
    w2: np.ndarray  #: (H2, H1)
    b2: np.ndarray  #: (H2,)
    wp: np.ndarray  #: (A, H2) the policy head
    bp: np.ndarray  #: (A,)
    obs: np.ndarray  #: (1, D) the observation row the caller writes
    h1: np.ndarray  #: (H1,) working rows
    h2: np.ndarray  #: (H2,)
    every_seat: bool  #: the rollouts' network plays every seat (else the searcher's, seat 0, alone)


def _empty(*shape: int) -> np.ndarray:
    return np.zeros(shape, np.float32)


#: no network: the kernels' argument when the rollouts are compiled baselines only
NO_NET = Net(_empty(0, 0), _empty(0), _empty(0, 0), _empty(0), _empty(0, 0), _empty(0), _empty(1, 0), _empty(0),
             _empty(0), False)


def compile_network(agent: object, obs_size: int, every_seat: bool = True) -> Net:
    """The :class:`Net` of a loaded checkpoint agent (:class:`agents.torch_policy.TorchAgent`)
    whose observation rows have ``obs_size`` entries; ``every_seat``: it plays every seat of a
    rollout (else the searcher's alone)."""
    import torch

    model = getattr(agent, "model", None)
    if model is None or not hasattr(model, "trunk"):
        raise SearchSpecError(f"{getattr(agent, 'name', agent)!r} is not a checkpoint network: ismcts's rollouts "
                              f"compile a checkpoint's policy")
    linears = [layer for layer in model.trunk if isinstance(layer, torch.nn.Linear)]
    if (model.trunk_kind != "tanh" or len(linears) != 2 or model.scorer is not None
            or not all(isinstance(layer, (torch.nn.Linear, torch.nn.Tanh)) for layer in model.trunk)):
        raise SearchSpecError(f"{getattr(agent, 'name', 'the network')}: ismcts compiles networks of two tanh hidden "
                              f"layers and the linear policy head (hidden {list(model.hidden)}, trunk "
                              f"{model.trunk_kind}, action head {model.action_head}); use algo=pimc for it")
    with torch.no_grad():
        w1 = (linears[0].weight / model.obs_scale[None, :]).double().numpy()
        rows = np.arange(model.obs_dim) if model.obs_index is None else np.asarray(model.obs_index)
        w1t = np.zeros((obs_size, w1.shape[0]))
        w1t[rows] = w1.T
        b1, w2, b2 = (t.double().numpy() for t in (linears[0].bias, linears[1].weight, linears[1].bias))
        wp, bp = model.policy.weight.double().numpy(), model.policy.bias.double().numpy()

    def f32(a: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(a, dtype=np.float32)

    return Net(f32(w1t), f32(b1), f32(w2), f32(b2), f32(wp), f32(bp), _empty(1, obs_size), _empty(b1.size),
               _empty(b2.size), bool(every_seat))


@njit(cache=True, fastmath=True)
def net_choice(net, legal):
    """The legal action (``legal`` a row of 0/1) of the largest logit for the observation in
    ``net.obs[0]``."""
    x, h1, h2 = net.obs[0], net.h1, net.h2
    for i in range(h1.shape[0]):
        h1[i] = net.b1[i]
    for j in range(x.shape[0]):  # by input: most of an observation is zeros
        v = x[j]
        if v != 0.0:
            for i in range(h1.shape[0]):
                h1[i] += v * net.w1t[j, i]
    for i in range(h1.shape[0]):
        h1[i] = np.tanh(h1[i])
    for i in range(h2.shape[0]):
        acc = net.b2[i]
        for j in range(h1.shape[0]):
            acc += net.w2[i, j] * h1[j]
        h2[i] = np.tanh(acc)
    best = -np.inf
    choice = -1
    for a in range(net.wp.shape[0]):
        if legal[a]:
            acc = net.bp[a]
            for j in range(h2.shape[0]):
                acc += net.wp[a, j] * h2[j]
            if acc > best:
                best = acc
                choice = a
    return choice
