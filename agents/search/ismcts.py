"""Single-observer ISMCTS (Cowling, Powley & Whitehouse, IEEE TCIAIG 2012), compiled.

One tree over the action sequences from the searcher's decision; each iteration samples a world,
descends with UCB restricted to the actions legal in that world (availability counts), adds one
node, plays the rest of the round out and backs up each seat's value at the nodes where that seat
moved. The searcher plays the most visited root action. The spec's ``tree=own`` keeps nodes for the
searcher's moves alone (the opponents' are played by the rollout's model of them), ``depth`` caps a
path's nodes, and ``root=every`` plays every root move in each sampled world, PIMC's paired
comparison, and then the best mean (:func:`ismcts`).

The tree lives in flat arrays (a :class:`Tree`, node 0 the root): a node's children are a linked
list through ``child`` (its first) and ``sibling`` (the next).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from agents.search.rollout import rollout, rollout_move, rollout_net
from agents.search.values import round_values
from agents.search.worlds import deal_hidden, randint
from cf_env.vector import GAME0, GAME1, apply_action, copy_game, njit_unrefcounted

__all__ = ["MAX_DEPTH", "TREE_NODES", "Tree", "ismcts", "new_tree", "reset_tree", "root_visits"]

MAX_DEPTH = 4096  #: tree path length kept per iteration (a round has far fewer decisions)
TREE_NODES = 1 << 18  #: node capacity; a decision stops adding nodes when it is full


class Tree(NamedTuple):
    """An ISMCTS tree and its working arrays."""

    parent: np.ndarray  #: (N,) int64 parent node (-1 for the root)
    action: np.ndarray  #: (N,) int64 the action that leads to the node
    player: np.ndarray  #: (N,) int64 the seat that took it
    child: np.ndarray  #: (N,) int64 first child (-1: none)
    sibling: np.ndarray  #: (N,) int64 next sibling (-1: none)
    visits: np.ndarray  #: (N,) float64
    avail: np.ndarray  #: (N,) float64 iterations in which the node's action was legal at its parent
    value: np.ndarray  #: (N,) float64 summed values of ``player``
    meta: np.ndarray  #: (2,) int64 nodes in use, decisions taken in the tree and the rollouts
    child_of: np.ndarray  #: (A,) int64 scratch: the current node's child for each action (-1: none)
    untried: np.ndarray  #: (A,) int64 scratch: legal actions without a child
    path: np.ndarray  #: (MAX_DEPTH,) int64 the nodes of the current iteration


def new_tree(num_actions: int, nodes: int = TREE_NODES) -> Tree:
    i, f = (lambda: np.zeros(nodes, np.int64)), (lambda: np.zeros(nodes, np.float64))
    return Tree(i(), i(), i(), i(), i(), f(), f(), f(), np.zeros(2, np.int64), np.full(num_actions, -1, np.int64),
                np.zeros(num_actions, np.int64), np.zeros(MAX_DEPTH, np.int64))


def reset_tree(tree: Tree) -> None:
    """Only the root, no decisions counted."""
    tree.meta[0], tree.meta[1] = 1, 0
    tree.parent[0] = tree.action[0] = tree.player[0] = tree.child[0] = tree.sibling[0] = -1
    tree.visits[0] = tree.avail[0] = tree.value[0] = 0.0


def root_visits(tree: Tree, legal: np.ndarray, by_value: bool = False) -> tuple[int, np.ndarray]:
    """The most visited root action (``legal[0]`` when the root has no child) and each legal
    action's root visits; ``by_value``: the root action of the best mean value and each legal
    action's mean (a search that plays every root move in every world visits them equally)."""
    used = int(tree.meta[0])
    root_children = np.flatnonzero(tree.parent[1:used] == 0) + 1
    scores = np.zeros(legal.size)
    if not root_children.size:
        return int(legal[0]), scores
    visits = tree.visits[root_children]
    score = tree.value[root_children] / np.maximum(visits, 1.0) if by_value else visits
    scores[np.searchsorted(legal, tree.action[root_children])] = score
    return int(tree.action[root_children[np.argmax(score)]]), scores


@njit(cache=True)
def _expand(tree, node, a, p):
    """A new child of ``node`` for action ``a`` taken by seat ``p``."""
    new = tree.meta[0]
    tree.meta[0] += 1
    tree.parent[new] = node
    tree.action[new] = a
    tree.player[new] = p
    tree.child[new] = -1
    tree.sibling[new] = tree.child[node]
    tree.child[node] = new
    tree.visits[new] = 0.0
    tree.avail[new] = 1.0
    tree.value[new] = 0.0
    return new


@njit(cache=True)
def _child(tree, node, a):
    """``node``'s child for action ``a`` (-1: none)."""
    ch = tree.child[node]
    while ch >= 0:
        if tree.action[ch] == a:
            return ch
        ch = tree.sibling[ch]
    return -1


@njit_unrefcounted(cache=True)
def _iterate(s, c, o, tree, node, depth, limit, descend, cexp, scratch, policy, valuation, net, own):
    """One iteration from ``node`` at ``depth`` (game 0 of ``s`` is its world, at that node; the
    path above it is in ``tree.path``): the tree walked down (with ``descend``) and grown by a
    node, the round rolled out, and each path node's seat's value backed up."""
    child_of, untried, path = tree.child_of, tree.untried, tree.path
    num_actions = child_of.shape[0]
    capacity = tree.parent.shape[0]
    vals = scratch.vals
    while descend and s.round_index[0] == 0 and depth < limit:
        p = s.current_player[0]
        if own and p != 0:  # an opponent's turn, played by the model: no node
            apply_action(GAME0, rollout_move(s, c, o, GAME0, policy, scratch.rs, net), s, c)
            tree.meta[1] += 1
            continue
        ch = tree.child[node]
        while ch >= 0:
            child_of[tree.action[ch]] = ch
            ch = tree.sibling[ch]
        n_untried = 0
        for a in range(num_actions):
            if s.legal[0, a] and child_of[a] < 0:
                untried[n_untried] = a
                n_untried += 1
        if n_untried > 0 and tree.meta[0] < capacity:
            for a in range(num_actions):  # the tried ones were available too
                if s.legal[0, a] and child_of[a] >= 0:
                    tree.avail[child_of[a]] += 1.0
            chosen = _expand(tree, node, untried[randint(scratch.rs, n_untried)], p)
        else:
            chosen = -1
            best = -1e300
            for a in range(num_actions):
                if s.legal[0, a]:
                    ch = child_of[a]
                    if ch < 0:  # the tree is full: no node for it
                        continue
                    tree.avail[ch] += 1.0
                    v = (tree.value[ch] / tree.visits[ch]
                         + cexp * math.sqrt(math.log(tree.avail[ch]) / tree.visits[ch]))
                    if v > best:
                        best = v
                        chosen = ch
        ch = tree.child[node]
        while ch >= 0:
            child_of[tree.action[ch]] = -1
            ch = tree.sibling[ch]
        if chosen < 0:
            break
        apply_action(GAME0, tree.action[chosen], s, c)
        tree.meta[1] += 1
        path[depth] = chosen
        depth += 1
        node = chosen
        if n_untried > 0:
            break
    if s.round_index[0] == 0:
        if net.w1t.shape[0] > 0:
            tree.meta[1] += rollout_net(s, c, o, GAME0, policy, scratch.rs, net)
        else:
            tree.meta[1] += rollout(s, c, GAME0, policy, scratch.rs)
    round_values(s, GAME0, c.n, valuation, vals)
    for d in range(depth):
        nd = path[d]
        tree.visits[nd] += 1.0
        tree.value[nd] += vals[tree.player[nd]]


@njit_unrefcounted(cache=True)
def ismcts(tmpl, s, c, o, iterations, tree, cexp, world, scratch, policy, valuation, net, own, max_depth, every_root):
    """``iterations`` SO-ISMCTS iterations on ``tree`` over worlds sampled from ``world`` (the
    public state is game 0 of ``tmpl``, the searcher seat 0). Its rollouts are ``policy``'s, or
    with a network (``net``, not :data:`~agents.search.network.NO_NET`) the network's at the
    searcher's seat (``o``: the observation's offsets). With ``own`` the tree's nodes are the
    searcher's decisions alone: the opponents' moves between them are the rollout's model of them
    (:func:`~agents.search.rollout.rollout_move`), as in PIMC, not UCB choices of their own. ``max_depth`` > 0: the
    most nodes on a path below the root (with ``own``, the searcher's next ``max_depth - 1``
    turns after this one), the rest of the round rolled out. With ``every_root`` each sampled
    world plays every legal root move (PIMC's paired comparison at the root, one iteration of the
    subtree below each; game 1 of ``s`` keeps the world), and an iteration is a world. Returns
    how many ran (fewer when the tree is full)."""
    path = tree.path
    num_actions = tree.child_of.shape[0]
    capacity = tree.parent.shape[0]
    limit = path.shape[0] if max_depth <= 0 else min(max_depth, path.shape[0])
    done = 0
    need = num_actions if every_root else 1  # the nodes an iteration may add at the root
    for _ in range(iterations):
        if tree.meta[0] + need > capacity:
            break
        copy_game(tmpl, GAME0, s, GAME0)
        deal_hidden(s, GAME0, world, scratch)
        if every_root:
            copy_game(s, GAME0, s, GAME1)
            for a in range(num_actions):
                if not s.legal[GAME1, a]:
                    continue
                node = _child(tree, 0, a)
                fresh = node < 0
                if fresh:
                    node = _expand(tree, 0, a, 0)
                else:
                    tree.avail[node] += 1.0
                copy_game(s, GAME1, s, GAME0)
                apply_action(GAME0, a, s, c)
                tree.meta[1] += 1
                path[0] = node
                _iterate(s, c, o, tree, node, 1, limit, not fresh, cexp, scratch, policy, valuation, net, own)
        else:
            _iterate(s, c, o, tree, 0, 0, limit, True, cexp, scratch, policy, valuation, net, own)
        tree.visits[0] += 1.0
        done += 1
    return done
