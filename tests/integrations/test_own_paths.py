"""Each framework's own PettingZoo or Gymnasium path, written from its documented API with only the
line that builds the env changed, beside the project's adapters (tests/integrations/test_*.py).
Warnings are errors here, except the few each test names: a framework's own notices, and the
warnings PettingZoo's checks give every env with Dict observations (tic-tac-toe's too)."""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pettingzoo
import pytest

import cf_env

pytestmark = [pytest.mark.framework]

# PettingZoo's api_test advises Box observations and plain-array observations: advice for envs
# without a mask, which every env with an action mask in a Dict observation gets
DICT_ADVICE = ("ignore:Observation space for each agent probably", "ignore:Observation is not a NumPy array")
# an unmasked random action (the checks that sample the action space) ends the game under env()
ILLEGAL = "ignore:.*illegal action.*game over"
# pettingzoo.test imports connect_four the old way for its own checks
OLD_API = "ignore:The old environment creation API"


def strict(*ignored: str) -> pytest.MarkDecorator:
    """Warnings are errors in the test, but ``ignored`` (one mark: a module-level "error" would be
    applied after a test's own marks and win over them)."""
    return pytest.mark.filterwarnings("error", *ignored)


def small(num_players: int) -> dict:
    """Whole games at the smallest sizes that keep the rules' shape (double-six for 2 players)."""
    return {"num_players": num_players, "max_pip": 6 if num_players == 2 else 9, "rounds": 1 if num_players > 2 else 2}


# ------------------------------------------------------------------------------------- PettingZoo

@strict(*DICT_ADVICE, OLD_API)
@pytest.mark.parametrize("num_players", [2, 4])
def test_pettingzoo_tests_through_the_registry(num_players):
    from pettingzoo.test import api_test, parallel_api_test, performance_benchmark, seed_test
    from pettingzoo.utils.conversions import turn_based_aec_to_parallel

    def make():
        return pettingzoo.make("aec", "chickenfoot/chicken_foot_v1", **small(num_players))

    api_test(make(), num_cycles=1000)
    seed_test(make, num_cycles=500)
    parallel_api_test(turn_based_aec_to_parallel(make()), num_cycles=1000)
    parallel_api_test(pettingzoo.make("parallel", "chickenfoot/chicken_foot_v1", **small(num_players)),
                      num_cycles=200)
    if num_players == 4:
        performance_benchmark(make())  # about 5 s: it plays for that long


@strict(*DICT_ADVICE, OLD_API, ILLEGAL)
def test_pettingzoo_wrapper_chain_on_raw_env():
    from pettingzoo.test import api_test
    from pettingzoo.utils import wrappers

    e = cf_env.raw_env(**small(2))
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    e = wrappers.OrderEnforcingWrapper(e)
    api_test(e, num_cycles=1000)
    e.reset(seed=0)
    illegal = int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"] == 0)[0])
    agent = e.agent_selection
    e.step(illegal)  # TerminateIllegalWrapper's own -1 and end (it logs through PettingZoo's logger)
    assert e.rewards[agent] == -1 and all(e.terminations.values())


# -------------------------------------------------------------------------------------- Gymnasium

@strict()
@pytest.mark.parametrize("obs_type", ["dict", "box"])
def test_gymnasium_check_env_and_make_vec(obs_type):
    from gymnasium.utils.env_checker import check_env

    for history in (False, True):
        check_env(gymnasium.make("ChickenFoot-v1", obs_type=obs_type, history=history, **small(3)).unwrapped,
                  skip_render_check=True)
    for mode in ("sync", "async"):
        vec = gymnasium.make_vec("ChickenFoot-v1", num_envs=2, vectorization_mode=mode, obs_type=obs_type,
                                 **small(2))
        _, info = vec.reset(seed=0)
        episodes = 0
        for _ in range(300):  # next-step autoreset: a finished env's next step is its reset
            actions = [(np.flatnonzero(m).tolist() or [0])[0] for m in info["action_mask"]]
            _, _, terminated, _, info = vec.step(np.array(actions))
            episodes += int(terminated.sum())
        vec.close()
        assert episodes >= 2


# ------------------------------------------------------------------------------------------- SB3

class SB3ActionMaskWrapper(pettingzoo.utils.BaseWrapper, gymnasium.Env):
    """PettingZoo's SB3 action-masking tutorial's wrapper, as the tutorial writes it."""

    def reset(self, seed=None, options=None):
        super().reset(seed, options)
        self.observation_space = super().observation_space(self.possible_agents[0])["observation"]
        self.action_space = super().action_space(self.possible_agents[0])
        return self.observe(self.agent_selection), {}

    def step(self, action):
        current_agent = self.agent_selection
        super().step(action)
        next_agent = self.agent_selection
        return (self.observe(next_agent), self._cumulative_rewards[current_agent],
                self.terminations[current_agent], self.truncations[current_agent], self.infos[current_agent])

    def observe(self, agent):
        return super().observe(agent)["observation"]

    def action_mask(self):
        return super().observe(self.agent_selection)["action_mask"]


@strict()
@pytest.mark.parametrize("num_players", [2, 4])
def test_sb3_maskable_ppo_through_pettingzoos_tutorial_wrapper(num_players):
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from sb3_contrib.common.wrappers import ActionMasker

    env = SB3ActionMaskWrapper(cf_env.env(**small(num_players)))
    env.reset(seed=0)
    env = ActionMasker(env, lambda e: e.action_mask())
    model = MaskablePPO(MaskableActorCriticPolicy, env, n_steps=128, batch_size=64, verbose=0)
    model.set_random_seed(0)
    model.learn(total_timesteps=256)
    # the tutorial's evaluation loop: the model against a masked random player, whole games
    e = cf_env.env(**small(num_players))
    for game in range(2):
        e.reset(seed=game)
        e.action_space(e.possible_agents[0]).seed(game)
        for agent in e.agent_iter():
            obs, _, termination, truncation, _ = e.last()
            observation, action_mask = obs.values()
            if termination or truncation:
                break
            if agent == e.possible_agents[0]:
                act = e.action_space(agent).sample(action_mask)
            else:
                act = int(model.predict(observation, action_masks=action_mask, deterministic=True)[0])
            e.step(act)
        assert e.game_over


@strict()
def test_sb3_contribs_maskable_ppo_example_on_the_box_view(tmp_path):
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.evaluation import evaluate_policy
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.env_checker import check_env

    check_env(gymnasium.make("ChickenFoot-v1", obs_type="box", **small(2)).unwrapped)  # SB3's own checker
    # sb3-contrib's documented example, the env line changed (and its sizes made small)
    env = gymnasium.make("ChickenFoot-v1", obs_type="box", **small(2))
    model = MaskablePPO("MlpPolicy", env, gamma=0.4, seed=32, verbose=0, n_steps=128, batch_size=64)
    model.learn(256)
    mean, _ = evaluate_policy(model, env, n_eval_episodes=2, warn=False)
    assert -1.0 <= mean <= 1.0
    model.save(tmp_path / "ppo_mask")
    del model
    model = MaskablePPO.load(tmp_path / "ppo_mask")
    obs, _ = env.reset()
    while True:
        action_masks = get_action_masks(env)
        action, _states = model.predict(obs, action_masks=action_masks)
        assert action_masks[int(action)]
        obs, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    assert not info["illegal_action"]


# -------------------------------------------------------------------------------------- Tianshou

@strict()
def test_tianshou_pettingzoo_env_with_its_multi_agent_dqn():
    pytest.importorskip("tianshou")
    import torch
    from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Collector, CollectStats, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.env.pettingzoo_env import PettingZooEnv
    from tianshou.trainer import OffPolicyTrainerParams
    from tianshou.utils.net.common import Net

    # Tianshou's tic-tac-toe example (2 players, DQN against a masked random player)
    def get_env():
        return PettingZooEnv(cf_env.env(**small(2)))

    torch.manual_seed(1)
    env = get_env()
    net = Net(state_shape=env.observation_space["observation"].shape, action_shape=env.action_space.n,
              hidden_sizes=[64, 64])
    policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.1, eps_inference=0.05)
    learner = DQN(policy=policy, optim=AdamOptimizerFactory(lr=1e-4), n_step_return_horizon=3, gamma=0.9,
                  target_update_freq=320)
    opponent = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[opponent, learner], env=env)
    train_envs, test_envs = DummyVectorEnv([get_env] * 2), DummyVectorEnv([get_env] * 2)
    train_envs.seed(1)
    test_envs.seed(2)
    buffer = VectorReplayBuffer(2000, len(train_envs))
    train_collector = Collector[CollectStats](algorithm, train_envs, buffer, exploration_noise=True)
    test_collector = Collector[CollectStats](algorithm, test_envs, exploration_noise=True)
    train_collector.reset()
    train_collector.collect(n_step=64 * 2)
    result = algorithm.run_training(OffPolicyTrainerParams(
        training_collector=train_collector, test_collector=test_collector, max_epochs=2, epoch_num_steps=200,
        collection_step_num_env_steps=10, test_step_num_episodes=2, batch_size=32,
        update_step_num_gradient_steps_per_sample=0.1, test_in_training=False, show_progress=False,
        multi_agent_return_reduction=lambda rews: rews[:, 1]))
    assert result.update_step > 0 and result.train_episode >= 1
    # the buffer stacked every step's info: fixed shapes, numbers, no NaN
    info = buffer.info
    assert info.round_scores.shape[1:] == (2, 2) and info.winners.shape[1:] == (2,)
    assert not np.isnan(info.totals.astype(float)).any()


# --------------------------------------------------------------------------------------- TorchRL

@strict("ignore:PettingZoo in TorchRL is tested")  # TorchRL's own version notice
@pytest.mark.parametrize("num_players", [2, 4])
def test_torchrl_pettingzoo_wrapper_plays_whole_games_in_both_group_maps(num_players):
    pytest.importorskip("torchrl")
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper
    from torchrl.envs.utils import MarlGroupMapType, check_env_specs

    for group_map in (MarlGroupMapType.ALL_IN_ONE_GROUP, MarlGroupMapType.ONE_GROUP_PER_AGENT):
        env = PettingZooWrapper(cf_env.env(**small(num_players)), use_mask=True, group_map=group_map, seed=0)
        check_env_specs(env)
        rollout = env.rollout(10_000, break_when_any_done=True)  # random actions from the masked spec
        assert bool(rollout["next", "done"][-1])
        for group in env.group_map:
            acting = rollout[group, "mask"]
            chosen = rollout[group, "action"]
            legal = rollout[group, "action_mask"].gather(-1, chosen.long().unsqueeze(-1)).squeeze(-1)
            assert bool(legal[acting].all())  # every acting seat chose a legal action
            assert rollout[group, "info", "totals"].shape[-1] == num_players


# ----------------------------------------------------------------------------------------- RLlib

@strict(ILLEGAL)  # RLlib's check steps sampled (unmasked) actions
@pytest.mark.parametrize("num_players", [2, 4])
def test_rllib_pettingzoo_env_passes_its_checks_and_plays(num_players):
    pytest.importorskip("ray.rllib")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # Ray's own import-time notices
        from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
        from ray.rllib.utils.pre_checks.env import check_multiagent_environments

    env = PettingZooEnv(cf_env.env(**small(num_players)))
    check_multiagent_environments(env)
    obs, _ = env.reset(seed=3)
    done = False
    while not done:
        ((agent, o),) = obs.items()
        obs, _, terminated, _, infos = env.step({agent: int(np.flatnonzero(o["action_mask"])[0])})
        done = terminated["__all__"]
    assert set(next(iter(infos.values()))) >= {"totals", "winners"}
