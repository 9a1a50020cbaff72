"""verl custom reward function backed by the bagen-data reward server.

Use with verl's batch reward manager, which calls compute_score once per
batch with lists:

    reward_model.reward_manager=batch \
    custom_reward_function.path=examples/verl/bagen_reward.py \
    custom_reward_function.name=compute_score

Start the server first: bagen-data reward serve --addr 127.0.0.1:8000
(set BAGEN_REWARD_URL to point elsewhere). The truth comes from each row's
extra_info (remaining_tokens, is_possible), which `bagen-data build` writes.
Standard library only.
"""

import json
import os
import urllib.error
import urllib.request

URL = os.environ.get("BAGEN_REWARD_URL", "http://127.0.0.1:8000")
TIMEOUT = float(os.environ.get("BAGEN_REWARD_TIMEOUT", "60"))


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


def compute_score(data_sources, solution_strs, ground_truths, extra_infos, **kwargs):
    """Return one reward per response (the 1.8/0.2 rule reward)."""
    items = [
        {
            "response": response,
            "remaining_tokens": int(info["remaining_tokens"]),
            "is_possible": bool(info["is_possible"]),
        }
        for response, info in zip(solution_strs, extra_infos)
    ]
    return [float(r) for r in _post("/v1/rewards", {"items": items})["rewards"]]
