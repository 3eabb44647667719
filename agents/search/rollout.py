"""The rollout policies, compiled: each plays every seat of a world to the end of its round.

PIMC rolls out every (world, action) pair with :func:`rollout`; ISMCTS plays its tree's actions
and then :func:`rollout`. The policies are the baselines' compiled choice
(:func:`agents.baselines.choose`; a policy's code is its index in ``ROLLOUTS``): ``random``
picks a legal action uniformly, ``greedy`` the heaviest play, ``heuristic`` the play
:func:`agents.baselines.score_plays` scores best (scored from the world's state by
:func:`agents.baselines.score_plays_state`, the same scores as from its observation without
writing one). A checkpoint rollout plays outside compiled code in PIMC (:mod:`agents.search.pimc`'s
batched kernels) and inside it in ISMCTS (:func:`rollout_net`, :mod:`agents.search.network`).
"""

from __future__ import annotations

from agents.baselines import GREEDY, HEURISTIC, RANDOM, RolloutPolicy, choose, new_policy
from agents.search.network import net_choice
from cf_env.vector import apply_action_inline, njit_unrefcounted, write_observation

__all__ = ["GREEDY", "HEURISTIC", "RANDOM", "RolloutPolicy", "choose", "new_policy", "rollout", "rollout_move",
           "rollout_net"]


@njit_unrefcounted(cache=True)
def rollout(s, c, b, policy, rs):
    """Play game ``b`` to the end of its round (``rnd`` leaves 0) with the rollout policy; returns
    the decisions taken. Compiled without numba's reference counting
    (:func:`cf_env.vector.njit_unrefcounted`): about 2.5 times the decisions a second."""
    steps = 0
    for _ in range(1 << 20):  # bounded: every round ends (each draw empties the boneyard, each pass leads to a play)
        if s.round_index[b] != 0:
            break
        a = choose(s, c, b, policy, rs)
        apply_action_inline(b, a, s, c)
        steps += 1
    return steps


@njit_unrefcounted(cache=True)
def rollout_move(s, c, o, b, policy, rs, net):
    """The rollout's move in game ``b`` (0 with a network, the row of ``net.obs``): the network's
    greedy choice at every seat, or with ``net.every_seat`` False at seat 0 (the searcher's)
    alone; the compiled ``policy``'s elsewhere and without a network
    (:data:`~agents.search.network.NO_NET`)."""
    if net.w1t.shape[0] > 0 and (net.every_seat or s.current_player[b] == 0):
        write_observation(b, s, c, o, net.obs)
        return net_choice(net, s.legal[b])
    return choose(s, c, b, policy, rs)


@njit_unrefcounted(cache=True)
def rollout_net(s, c, o, b, policy, rs, net):
    """:func:`rollout` with the network's greedy choices (:func:`agents.search.network.net_choice`
    on the observation written for the seat to move; ``b`` must be 0, the row of ``net.obs``) at
    every seat, or with ``net.every_seat`` False at seat 0 (the searcher's) alone and the compiled
    ``policy`` at the others."""
    steps = 0
    for _ in range(1 << 20):  # bounded: every round ends
        if s.round_index[b] != 0:
            break
        apply_action_inline(b, rollout_move(s, c, o, b, policy, rs, net), s, c)
        steps += 1
    return steps
