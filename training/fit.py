"""How a network is fitted to search labels: one settings value, one set of defaults, for
``chickenfoot labels fit``, distillation (:class:`training.config.DistillConfig` takes its
defaults from here) and the lab's fits. The defaults are the shipped distillation config's
(``configs/distill.yaml``: ``make train``). No torch here: the CLI and the config read it cheaply."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FitSettings"]


@dataclass(frozen=True)
class FitSettings:
    """How :func:`training.distill.fit` trains a network.

    temperature: the targets' (0: the teacher's choice; else a softmax over its values);
    epochs, learning_rate (Adam's, annealed linearly to 0), minibatch, vf_coef (the value loss's
    weight), max_grad_norm; hidden (a new network's layer widths), trunk (its kind of hidden
    layer, :data:`agents.torch_policy.TRUNKS`) and action_head (the width of an
    :class:`~agents.torch_policy.ActionScorer` for a new network, 0: none); seed (torch's: the
    initial weights and the minibatch order); weighting (each label's weight in the
    cross-entropy, :func:`training.labels.label_weights`: ``none`` or ``stakes``, scaled to mean 1
    over the training labels)."""

    temperature: float = 0.03
    epochs: int = 8
    learning_rate: float = 1e-3
    minibatch: int = 256
    hidden: tuple[int, ...] = (256, 256)
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    seed: int = 0
    action_head: int = 0
    weighting: str = "none"
    trunk: str = "tanh"
