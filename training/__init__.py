"""Training and evaluation: PPO, expert iteration, evaluation with duplicate deals, framework scripts."""

from cf_env.packages import require_own

require_own("agents")  # a user's own agents/ folder must not stand in for ours
