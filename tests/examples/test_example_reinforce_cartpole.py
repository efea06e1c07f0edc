"""The policy-gradient example, shortened: CartPole episodes get longer."""

import numpy as np
import pytest

pytest.importorskip("gymnasium")


def test_reinforce_learns(load_example, backend):
    ex = load_example("reinforce_cartpole")
    strict = backend[0] == "array_api_strict"
    r = ex.train(episodes=25 if strict else 40, hidden=32, lr=1e-2, eval_episodes=0,
                 backend_name=backend[0], device=backend[1], log_every=0)
    returns = np.array(r["returns"])
    # A random policy lasts about 22 steps on average.
    assert returns[:10].mean() < 40
    # Measured: from 28 to 75 (25 episodes) and to 145 (40 episodes).
    assert returns[-10:].mean() > 2 * returns[:10].mean()


def test_discounted_returns_and_greedy_evaluation(load_example):
    ex = load_example("reinforce_cartpole")
    np.testing.assert_allclose(ex.discounted_returns([1.0, 1.0, 1.0], 0.5), [1.75, 1.5, 1.0])
    xp, dev = ex.backend("numpy")
    env = ex.make_env(0)
    model = ex.ActorCritic(4, 2, 8).to_device(dev, xp)
    logps, values, rewards = ex.play(env, model, xp, dev, np.random.default_rng(0))
    assert len(logps) == len(values) == len(rewards) > 0
    # Each step kept a differentiable log-probability of the action that was taken.
    assert all(lp.creator is not None and float(lp.array) <= 0.0 for lp in logps)
    assert 8 <= ex.evaluate(env, model, xp, dev, 2) <= 500
