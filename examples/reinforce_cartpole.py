"""Policy gradient on CartPole-v1: REINFORCE with a learned value baseline.

Every episode has its own length, so every update differentiates a graph of a different
size, recorded as the episode is played: each step calls the policy on one observation,
samples an action and keeps the log-probability Variable of the action taken. At the end of
``--episodes-per-update`` episodes the discounted returns are computed in Python and

    loss = -sum_t log pi(a_t | s_t) * (G_t - V(s_t)) + (V(s_t) - G_t)^2

is backpropagated through all those steps at once. Training stops when the mean return of
the last 100 episodes reaches 475 (CartPole-v1 counts as solved there) or after
``--episodes``; the final policy is then evaluated greedily on fresh episodes.

Needs gymnasium (``pip install 'portagrad[examples]'``).

    python examples/reinforce_cartpole.py                 # 1-3 minutes on 2 CPU cores
    python examples/reinforce_cartpole.py --episodes 100 --backend array_api_strict
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
from _shared import Timer, add_backend_arguments, asarray, backend, host

import portagrad as pg
from portagrad import ops

SOLVED = 475.0


def make_env(seed: int) -> Any:
    try:
        import gymnasium as gym
    except ImportError:
        raise SystemExit("this example needs gymnasium: pip install 'portagrad[examples]'"
                         ) from None
    env = gym.make("CartPole-v1")
    env.reset(seed=seed)
    env.action_space.seed(seed)
    return env


def lecun(model: pg.nn.Module, state: dict) -> pg.nn.Module:
    """LeCun-normal weights and zero biases in every Linear, drawn from the random
    ``state`` taken before the model was built (the initialization, and the draws, this
    example was tuned with)."""
    pg.random.set_state(state)
    for m in model.modules():
        if isinstance(m, pg.nn.Linear):
            pg.nn.init.kaiming_normal_(m.weight, nonlinearity="linear")
            pg.nn.init.zeros_(m.bias)
    return model


class ActorCritic(pg.nn.Module):
    """Two small MLPs: action logits and a state-value estimate."""

    def __init__(self, obs_size: int, n_actions: int, hidden: int = 128) -> None:
        state = pg.random.get_state()
        self.policy = pg.nn.Sequential(pg.nn.Linear(obs_size, hidden), pg.nn.ReLU(),
                                       pg.nn.Linear(hidden, n_actions))
        self.value = pg.nn.Sequential(pg.nn.Linear(obs_size, hidden), pg.nn.ReLU(),
                                      pg.nn.Linear(hidden, 1))
        lecun(self, state)

    def forward(self, obs: Any) -> tuple[pg.Variable, pg.Variable]:
        return ops.log_softmax(self.policy(obs), axis=-1), self.value(obs)[..., 0]


def discounted_returns(rewards: list[float], gamma: float) -> np.ndarray:
    g, out = 0.0, np.empty(len(rewards))
    for t in range(len(rewards) - 1, -1, -1):
        g = rewards[t] + gamma * g
        out[t] = g
    return out


def play(env: Any, model: ActorCritic, xp: Any, device: Any, rng: np.random.Generator,
         greedy: bool = False, record: bool = True) -> tuple[list, list, list]:
    """One episode: the log-probabilities of the actions taken, the values and rewards."""
    obs, _ = env.reset()
    logps, values, rewards = [], [], []
    done = False
    while not done:
        with pg.set_grad_enabled(record):
            logp, value = model(asarray(obs, xp, device, np.float32))
        p = np.exp(host(logp).astype(np.float64))
        action = int(np.argmax(p)) if greedy else int(rng.choice(len(p), p=p / p.sum()))
        obs, reward, terminated, truncated, _ = env.step(action)
        done = terminated or truncated
        if record:
            logps.append(logp[action])  # a differentiable pick, kept for the update
            values.append(value)
        rewards.append(float(reward))
    return logps, values, rewards


def update(opt: pg.optim.Optimizer, episodes: list, gamma: float, xp: Any,
           device: Any) -> float:
    logps = ops.stack([lp for e in episodes for lp in e[0]])
    values = ops.stack([v for e in episodes for v in e[1]])
    returns = np.concatenate([discounted_returns(e[2], gamma) for e in episodes])
    # Returns are standardized so one learning rate suits episodes of length 10 and 500;
    # the value network learns the standardized return, and its estimate is the baseline.
    returns = (returns - returns.mean()) / (returns.std() + 1e-8)
    g = asarray(returns, xp, device, np.float32)
    advantage = g - values.detach().array
    n = float(len(episodes))
    loss = (-ops.sum(logps * advantage) + ops.sum((values - g) ** 2) * 0.5) / n
    opt.zero_grad()
    loss.backward()
    opt.step()
    return float(loss.array)


def evaluate(env: Any, model: ActorCritic, xp: Any, device: Any, episodes: int) -> float:
    rng = np.random.default_rng(0)
    with pg.no_grad():
        return float(np.mean([sum(play(env, model, xp, device, rng, greedy=True,
                                       record=False)[2]) for _ in range(episodes)]))


def train(episodes: int = 1000, episodes_per_update: int = 1, hidden: int = 128,
          lr: float = 3e-3, gamma: float = 0.99, eval_episodes: int = 20,
          backend_name: str = "numpy", device: str = "cpu", seed: int = 0,
          log_every: int = 50) -> dict:
    xp, dev = backend(backend_name, device)
    pg.random.seed(seed)
    rng = np.random.default_rng(seed)
    env = make_env(seed)
    model = ActorCritic(env.observation_space.shape[0], env.action_space.n, hidden)
    model.to_device(dev, xp)
    opt = pg.optim.Adam(model, lr=lr)
    timer, returns, batch = Timer(), [], []
    solved_at = None
    for ep in range(1, episodes + 1):
        batch.append(play(env, model, xp, dev, rng))
        returns.append(sum(batch[-1][2]))
        if len(batch) == episodes_per_update:
            update(opt, batch, gamma, xp, dev)
            batch = []
        avg = float(np.mean(returns[-100:]))
        if log_every and ep % log_every == 0:
            print(f"episode {ep:5d}  return {returns[-1]:5.0f}  mean of last 100 "
                  f"{avg:6.1f}  {float(timer):5.0f} s")
        if len(returns) >= 100 and avg >= SOLVED:
            solved_at = ep
            break
    seconds = float(timer)
    score = evaluate(env, model, xp, dev, eval_episodes) if eval_episodes else None
    return {"returns": returns, "solved_at": solved_at, "seconds": seconds,
            "eval_return": score}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=1000, help="at most this many")
    ap.add_argument("--episodes-per-update", type=int, default=1)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--gamma", type=float, default=0.99)
    ap.add_argument("--eval-episodes", type=int, default=20,
                    help="greedy episodes played by the final policy")
    ap.add_argument("--seed", type=int, default=0)
    add_backend_arguments(ap)
    args = ap.parse_args(argv)
    r = train(args.episodes, args.episodes_per_update, args.hidden, args.lr, args.gamma,
              args.eval_episodes, args.backend, args.device, args.seed)
    last = float(np.mean(r["returns"][-100:]))
    status = (f"solved at episode {r['solved_at']}" if r["solved_at"]
              else f"not solved in {len(r['returns'])} episodes")
    print(f"{status}: mean return of the last 100 episodes {last:.1f} (solved: {SOLVED:.0f})"
          f", {r['seconds']:.0f} s")
    if r["eval_return"] is not None:
        print(f"greedy policy: mean return {r['eval_return']:.1f} over {args.eval_episodes} "
              f"episodes")
    return r


if __name__ == "__main__":
    main()
