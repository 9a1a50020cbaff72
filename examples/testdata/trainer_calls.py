"""Call each example reward function, and the reward server's trainer
routes, the way each trainer calls them, on rows `bagen-data build` wrote;
check every reward against the rule reward the test computed.

Usage: BAGEN_REWARD_URL=http://HOST:PORT python3 trainer_calls.py CASES.json

CASES.json: {"rows": [{RL row columns..., "responses": [str],
"rewards": [float]}]}. Each call shape follows the trainer code named in
the example it drives (its header says which commit and files).
Prints one line per trainer and exits 1 on the first mismatch.
"""

import importlib.util
import json
import os
import sys
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
URL = os.environ["BAGEN_REWARD_URL"].rstrip("/")


def load(path):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], os.path.join(HERE, "..", path))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def chatml(messages):
    """The prompt as Qwen's chat template renders it with the generation prompt."""
    return "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages) + "<|im_start|>assistant\n"


def post(path, payload):
    req = urllib.request.Request(URL + path, data=json.dumps(payload).encode(), headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.load(resp)
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read().decode())


def check(trainer, got, want, where):
    if got != want:
        print(f"{trainer}: {where}: got {got!r}, want {want!r}")
        sys.exit(1)


def samples(rows):
    for i, row in enumerate(rows):
        for j, (resp, want) in enumerate(zip(row["responses"], row["rewards"])):
            yield f"{row['extra_info']['custom_id']} response {j}", row, resp, want


def verl_reward_loop(rows):
    """verl 0.7.0 RewardLoopWorker -> NaiveRewardManager.run_single: one
    keyword call per response through get_custom_reward_fn's wrapper
    (custom_reward_function.reward_kwargs merged in), extra_info with
    num_turns and rollout_reward_scores added."""
    m = load("verl/bagen_reward.py")
    reward_kwargs = {}
    n = 0
    for where, row, resp, want in samples(rows):
        extra = dict(row["extra_info"])
        extra["num_turns"] = None
        extra["rollout_reward_scores"] = {}
        got = m.compute_score(
            **{"data_source": row["data_source"], "solution_str": resp,
               "ground_truth": row["reward_model"]["ground_truth"], "extra_info": extra, **reward_kwargs})
        check("verl compute_score", got, want, where)
        n += 1
    try:
        m.compute_score(data_sources=["budget_probe_sokoban"], solution_strs=["x"], ground_truths=["x"], extra_infos=[{}])
        check("verl compute_score", "no error", "TypeError", "called as a batch")
    except TypeError as e:
        check("verl compute_score", "compute_score_batch" in str(e), True, f"batch-call error {e}")
    try:
        m.compute_score(data_source="openai/gsm8k", solution_str="x", ground_truth="x", extra_info=rows[0]["extra_info"])
        check("verl compute_score", "no error", "ValueError", "another data_source")
    except ValueError as e:
        check("verl compute_score", str(e).startswith("data_source 'openai/gsm8k' is not a budget probe row"), True, f"routing error {e}")
    print(f"verl compute_score (reward loop, naive manager): {n} calls")


def verl_batch(rows):
    """verl BatchRewardManager.verify (0.6.1; 0.7.0 with the reward loop
    off): one keyword call with lists, extra_infos with
    rollout_reward_scores added, reward_kwargs appended."""
    m = load("verl/bagen_reward.py")
    data_sources, solutions, truths, extras, wants = [], [], [], [], []
    for _, row, resp, want in samples(rows):
        extra = dict(row["extra_info"])
        extra["rollout_reward_scores"] = {}
        data_sources.append(row["data_source"])
        solutions.append(resp)
        truths.append(row["reward_model"]["ground_truth"])
        extras.append(extra)
        wants.append(want)
    got = m.compute_score_batch(data_sources=data_sources, solution_strs=solutions, ground_truths=truths, extra_infos=extras)
    check("verl compute_score_batch", got, wants, "the batch")
    print(f"verl compute_score_batch (batch manager): 1 call, {len(got)} rewards")


def trl(rows):
    """TRL 1.9.0 GRPOTrainer._calculate_rewards: prompts, completions and
    completion_ids, every other column as a list, trainer_state, log_extra
    and log_metric; conversational completions."""
    m = load("trl/bagen_reward.py")
    prompts, completions, wants = [], [], []
    columns = {k: [] for k in ("data_source", "ability", "reward_model", "extra_info", "label")}
    for _, row, resp, want in samples(rows):
        prompts.append(row["prompt"])
        completions.append([{"role": "assistant", "content": resp}])
        for k in columns:
            columns[k].append(row[k])
        wants.append(want)
    got = m.bagen_reward(prompts=prompts, completions=completions, completion_ids=[[0]] * len(prompts),
                         trainer_state=None, log_extra=lambda *a, **k: None, log_metric=lambda *a, **k: None, **columns)
    check("TRL bagen_reward", got, wants, "the batch")
    print(f"TRL bagen_reward (GRPOTrainer): 1 call, {len(got)} rewards")


def openrlhf(rows):
    """OpenRLHF 0.11.0 SingleTurnAgentExecutor: one POST per response to
    --reward.remote_url with query = prompt + response decoded with special
    tokens, the chat-templated prompt and the --data.label_key column."""
    n = 0
    for where, row, resp, want in samples(rows):
        prompt = chatml(row["prompt"])
        code, body = post("/get_reward", {"query": [prompt + resp + "<|im_end|>"], "prompts": [prompt], "labels": [row["label"]]})
        check("OpenRLHF /get_reward", (code, body["rewards"]), (200, [want]), where)
        n += 1
    code, body = post("/get_reward", {"query": ["q"], "prompts": ["p"], "labels": [""]})
    check("OpenRLHF /get_reward", (code, "--data.label_key label" in body["error"]), (400, True), f"without --data.label_key: {body}")
    print(f"OpenRLHF /get_reward: {n} requests")


def slime(rows):
    """slime remote_rm: one POST per response to --rm-url with the
    chat-templated prompt, the response and the --label-key column; the
    answer is a bare number."""
    n = 0
    for where, row, resp, want in samples(rows):
        code, body = post("/slime", {"prompt": chatml(row["prompt"]), "response": resp, "label": row["label"]})
        check("slime /slime", (code, body), (200, want), where)
        n += 1
    code, body = post("/slime", {"prompt": "p", "response": "r", "label": None})
    check("slime /slime", (code, "--label-key label" in body["error"]), (400, True), f"without --label-key: {body}")
    code, body = post("/", {"prompt": "p", "response": "r", "label": rows[0]["label"]})
    check("slime base URL", (code, "--rm-url " + URL + "/slime" in body["error"]), (404, True), f"POST /: {body}")
    print(f"slime /slime: {n} requests")


def main(path):
    with open(path) as f:
        rows = json.load(f)["rows"]
    verl_reward_loop(rows)
    verl_batch(rows)
    trl(rows)
    openrlhf(rows)
    slime(rows)


if __name__ == "__main__":
    main(sys.argv[1])
