"""Send the request OpenRLHF's remote reward model client sends, and check
the answer. Usage: python3 check_remote_rm.py http://127.0.0.1:8000/get_reward

OpenRLHF decodes prompt + response with the chat template's special tokens
into query[i]; the probe prompt itself shows <answer>[est_low, est_high]</answer>,
so the server scores only the part after the prompt. Standard library only.
"""

import json
import sys
import urllib.request

PROMPT = (
    "<|im_start|>system\nYou're a helpful assistant. You are solving the Sokoban puzzle.<|im_end|>\n"
    "<|im_start|>user\nBased on the provided rollout context, you are provided below information:\n"
    "1. You have completed 1 turns.\n2. Each turn, your token consumption is Turn 1: input 187 tokens, output 31 tokens.\n"
    "3. You need to finish the task within 2500 tokens.\n\n"
    "Output exactly one of the following:\n<answer>[est_low, est_high]</answer>\nor\n<answer>impossible</answer><|im_end|>\n"
    "<|im_start|>assistant\n"
)
CASES = [
    ("<answer>[140, 160]</answer><|im_end|>", '{"remaining_tokens":150,"is_possible":true,"ground_truth":"[135, 165]"}'),
    ("<answer>impossible</answer><|im_end|>", '{"remaining_tokens":0,"is_possible":false,"ground_truth":"impossible"}'),
    ("<answer>150</answer><|im_end|>", "150"),
]


def main(url):
    payload = {
        "query": [PROMPT + response for response, _ in CASES],
        "prompts": [PROMPT for _ in CASES],
        "labels": [label for _, label in CASES],
    }
    req = urllib.request.Request(
        url, data=json.dumps(payload).encode("utf-8"),
        headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=30) as resp:
        body = json.load(resp)
    assert set(body) >= {"rewards", "scores", "extra_logs"}, body
    print(json.dumps({"rewards": body["rewards"], "extra_logs": body["extra_logs"]}, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1])
