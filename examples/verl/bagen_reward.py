"""verl reward functions backed by the bagen-data reward server.

verl calls a custom reward function in one of two shapes, depending on the
reward manager; this file has one function for each.

compute_score -- one response per call. verl 0.7.0 and later compute
rewards in the reward loop by default (reward_model.use_reward_loop=True),
whose RewardLoopWorker runs the "naive" manager: it calls
compute_score(data_source=..., solution_str=..., ground_truth=...,
extra_info=...) once per response (run_grpo.sh). verl 0.6.1's naive
manager, its default, calls it with the same keywords:

    custom_reward_function.path=examples/verl/bagen_reward.py
    custom_reward_function.name=compute_score

compute_score_batch -- one batch per call, for verl's "batch" reward
manager: verl 0.6.1 and earlier, or 0.7.0 and later with the reward loop
switched off (the reward loop's registry has no batch manager: "Unknown
reward manager: batch") (run_grpo_batch.sh):

    reward_model.reward_manager=batch
    reward_model.use_reward_loop=False      # 0.7.0 and later only
    custom_reward_function.path=examples/verl/bagen_reward.py
    custom_reward_function.name=compute_score_batch

Both score rows whose data_source is budget_probe_<task> (what
`bagen-data build` writes) and raise on any other: verl passes each row's
data_source, and mixed datasets must route other sources elsewhere. The
truth comes from extra_info (remaining_tokens, is_possible).

Read in volcengine/verl at v0.7.0 (f9c855f7cf04d603c9546bc01776c74806a879c1):
verl/trainer/config/reward_model/dp_reward_loop.yaml (use_reward_loop: True,
reward_manager: naive), verl/experimental/reward_loop/reward_loop.py
(RewardLoopWorker.compute_score), verl/experimental/reward_loop/
reward_manager/__init__.py and naive.py (run_single's keyword call; it adds
num_turns and rollout_reward_scores to extra_info), verl/trainer/ppo/
reward.py (get_custom_reward_fn merges custom_reward_function.reward_kwargs),
verl/workers/reward_manager/batch.py (verify's keyword call with lists);
at v0.6.1 (d62da4950573d7a4b7ef2362337952e7ab59e78d) verl/workers/
reward_manager/batch.py and naive.py and verl/trainer/config/
reward_model/reward_model.yaml (reward_manager: naive, no reward loop); the same calls at b178a3cd56f58b2d502255daba591e92833930a7 (main,
2026-01-29).

Start the server first: bagen-data reward serve --addr 127.0.0.1:8000 (set
BAGEN_REWARD_URL to point elsewhere). Standard library only.
"""

import json
import os
import urllib.error
import urllib.request

URL = os.environ.get("BAGEN_REWARD_URL", "http://127.0.0.1:8000")
TIMEOUT = float(os.environ.get("BAGEN_REWARD_TIMEOUT", "60"))
DATA_SOURCE_PREFIX = "budget_probe_"


def _post(path, payload):
    req = urllib.request.Request(
        URL.rstrip("/") + path,
        data=json.dumps(payload).encode("utf-8"),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT) as resp:
            return json.load(resp)
    except urllib.error.HTTPError as e:
        raise RuntimeError(f"bagen reward server: {e.code}: {e.read().decode()}") from None


def _item(data_source, response, info):
    if not str(data_source).startswith(DATA_SOURCE_PREFIX):
        raise ValueError(
            f"data_source {data_source!r} is not a budget probe row ({DATA_SOURCE_PREFIX}<task>): "
            "route other data sources to their own reward function"
        )
    return {
        "response": response,
        "remaining_tokens": int(info["remaining_tokens"]),
        "is_possible": bool(info["is_possible"]),
    }


def _rewards(items):
    return [float(r) for r in _post("/v1/rewards", {"items": items})["rewards"]]


def compute_score(data_source=None, solution_str=None, ground_truth=None, extra_info=None, **kwargs):
    """Return the rule reward (1.8/0.2) of one response: verl >= 0.7.0's reward loop."""
    if "solution_strs" in kwargs:
        raise TypeError(
            "compute_score scores one response (verl's naive manager and reward loop); "
            "for reward_model.reward_manager=batch set custom_reward_function.name=compute_score_batch"
        )
    return _rewards([_item(data_source, solution_str, extra_info)])[0]


def compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos, **kwargs):
    """Return one rule reward per response: verl's batch reward manager."""
    items = [_item(d, r, info) for d, r, info in zip(data_sources, solution_strs, extra_infos)]
    return _rewards(items)
