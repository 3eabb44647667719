"""One gradient step, as every fit here takes it (behaviour cloning, distillation, expert iteration,
Deep Monte-Carlo)."""

from __future__ import annotations

import torch

__all__ = ["descend"]


def descend(optimizer: torch.optim.Optimizer, loss: torch.Tensor, module: torch.nn.Module, max_grad_norm: float) -> None:
    """One gradient step on ``loss``: clear the gradients, backpropagate, clip ``module``'s
    gradient norm to ``max_grad_norm``, step ``optimizer``."""
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(module.parameters(), max_grad_norm)
    optimizer.step()
