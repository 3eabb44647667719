"""An independent, deliberately plain implementation of docs/RULES.md used only by the tests.

It shares no code with ``cf_env``: hands are lists of ``(low, high)`` tuples, the layout is a
list of open end values plus a list of forced slots, and legality is a double loop over the
hand. It must be fed complete deals (every round scripted), so it replays a finished game's
record and checks the engine decision by decision.
"""

from __future__ import annotations


def _tile(pair):
    a, b = pair
    return (a, b) if a <= b else (b, a)


class ReferenceGame:
    def __init__(self, max_pip, num_players, hand_size, rounds, center_arms, draw_rule,
                 double_blank_points, deals):
        self.N = max_pip
        self.K = max_pip + 1
        self.n = num_players
        self.hand_size = hand_size
        self.rounds = rounds
        self.arms = center_arms
        self.draw_rule = draw_rule
        self.dbp = double_blank_points
        self.deals = deals
        self.DRAW = self.K * self.K
        self.PASS = self.K * self.K + 1
        self.round = -1
        self.round_scores = []
        self.over = False
        self.winners = []
        self._new_round()

    # -- setup -------------------------------------------------------------------------------

    def _new_round(self):
        self.round += 1
        deal = self.deals[self.round]
        self.hands = [[_tile(t) for t in h] for h in deal["hands"]]
        self.boneyard = [_tile(t) for t in deal["boneyard"]]  # top first
        s = self.N - self.round
        start = (s, s)
        holder = None
        for p in range(self.n):
            if start in self.hands[p]:
                holder = p
        if holder is None:
            dealer = self.round % self.n
            p = (dealer + 1) % self.n
            while holder is None:
                tile = self.boneyard.pop(0)
                self.hands[p].append(tile)
                if tile == start:
                    holder = p
                else:
                    p = (p + 1) % self.n
        self.hands[holder].remove(start)
        self.open_ends = []  # values of free open ends
        self.forced_value = s
        self.forced_left = self.arms  # centre arms still empty
        self.drawn = None  # tile drawn this turn that may be played or kept
        self.player = holder
        if not self.hands[holder]:
            self._end_round()
            return
        self._next_player()

    # -- legality ----------------------------------------------------------------------------

    def _matchable(self):
        if self.forced_left > 0:
            return {self.forced_value}
        return set(self.open_ends)

    def _plays(self, tiles):
        vals = self._matchable()
        out = set()
        for a, b in tiles:
            if a in vals:
                out.add(a * self.K + b)
            if b in vals:
                out.add(b * self.K + a)
        return out

    def legal(self):
        if self.over:
            return set()
        if self.drawn is not None:
            return self._plays([self.drawn]) | {self.PASS}
        plays = self._plays(self.hands[self.player])
        if plays:
            return plays
        return {self.DRAW} if self.boneyard else {self.PASS}

    # -- turn flow ---------------------------------------------------------------------------

    def _nobody_can_play(self):
        return not self.boneyard and all(not self._plays(h) for h in self.hands)

    def _next_player(self, first=None):
        self.drawn = None
        self.player = (self.player + 1) % self.n if first is None else first
        if self._nobody_can_play():
            self._end_round()

    def step(self, action):
        assert action in self.legal(), (action, sorted(self.legal()))
        p = self.player
        if action == self.DRAW:
            tile = self.boneyard.pop(0)
            self.hands[p].append(tile)
            if self._plays([tile]):
                self.drawn = tile
                return
            if self.draw_rule == "until_playable" and self.boneyard:
                return
            self._next_player()
            return
        if action == self.PASS:
            self._next_player()
            return
        m, x = divmod(action, self.K)
        self.hands[p].remove(_tile((m, x)))
        if self.forced_left > 0:
            assert m == self.forced_value
            self.forced_left -= 1
            self.open_ends.append(x)
        else:
            self.open_ends.remove(m)
            if m == x:
                self.forced_value = m
                self.forced_left = 3
            else:
                self.open_ends.append(x)
        if not self.hands[p]:
            self._end_round()
            return
        self._next_player()

    def _end_round(self):
        scores = []
        for hand in self.hands:
            total = 0
            for a, b in hand:
                total += self.dbp if (a, b) == (0, 0) else a + b
            scores.append(total)
        self.round_scores.append(scores)
        if self.round + 1 == self.rounds:
            self.over = True
            self.player = -1
            totals = [sum(r[p] for r in self.round_scores) for p in range(self.n)]
            best = min(totals)
            tied = [p for p in range(self.n) if totals[p] == best]
            zeros = {p: sum(1 for r in self.round_scores if r[p] == 0) for p in tied}
            most = max(zeros.values())
            tied = [p for p in tied if zeros[p] == most]
            lowest = {p: min([r[p] for r in self.round_scores if r[p] != 0], default=10**9) for p in tied}
            low = min(lowest.values())
            self.winners = [p for p in tied if lowest[p] == low]
            return
        self._new_round()
