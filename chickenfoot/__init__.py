"""The commands people use: ``chickenfoot`` on the command line (:mod:`chickenfoot.cli`), terminal
play (:mod:`chickenfoot.play`), play in the browser (:mod:`chickenfoot.web`) and terminal replays
(:mod:`chickenfoot.replay`).

This package sits above the others (``cf_env`` <- ``agents`` <- ``training`` <- ``chickenfoot``):
nothing below imports it. It is named after the command it serves, a name a user's own folder is
unlikely to shadow.
"""

from cf_env.packages import require_own

for _name in ("agents", "training"):  # a user's own folder of that name must not stand in for ours
    require_own(_name)
