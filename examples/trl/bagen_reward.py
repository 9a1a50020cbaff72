"""TRL GRPOTrainer reward function backed by the bagen-data reward server.

    from trl import GRPOTrainer
    from bagen_reward import bagen_reward
    trainer = GRPOTrainer(model=..., reward_funcs=bagen_reward, train_dataset=ds)

The dataset needs a "label" column (as `bagen-data build` writes it); TRL
passes every dataset column to reward functions as a keyword list. Read in
huggingface/trl at v1.9.0 (35def3ee000a87f6839e66f4b7749b06274ed1b3):
trl/trainer/grpo_trainer.py, _calculate_rewards calls
reward_func(prompts=..., completions=..., completion_ids=..., **columns)
with every column but prompt (data_source, ability, reward_model,
extra_info, label) as lists and trainer_state, log_extra and log_metric;
conversational completions are lists of messages. Start
the server first: bagen-data reward serve --addr 127.0.0.1:8000 (set
BAGEN_REWARD_URL to point elsewhere). Standard library only.
"""

import json
import os
import urllib.error
import urllib.request

URL = os.environ.get("BAGEN_REWARD_URL", "http://127.0.0.1:8000")


def _text(completion):
    # Conversational datasets give a list of messages per completion.
    if isinstance(completion, list):
        return "".join(m["content"] for m in completion if m.get("role") == "assistant")
    return completion


def bagen_reward(completions, label, **kwargs):
    """Return one reward per completion (the 1.8/0.2 rule reward)."""
    items = [{"response": _text(c), "label": l} for c, l in zip(completions, label)]
    req = urllib.request.Request(
        URL.rstrip("/") + "/v1/rewards",
        data=json.dumps({"items": items}).encode("utf-8"),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return [float(r) for r in json.load(resp)["rewards"]]
    except urllib.error.HTTPError as e:
        raise RuntimeError(f"bagen reward server: {e.code}: {e.read().decode()}") from None
