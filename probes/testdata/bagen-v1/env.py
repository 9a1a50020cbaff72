"""Writes env/*.json and env/*.jsonl: the fixtures of the authors' tests of
their estimation envs (tests/env/test_token_estimation_env.py and
test_money_estimation_env.py, mll-lab-nu/BAGEN 58bef4c), rebuilt from what
their fixture builders write. Token fixtures are estimation dialogues as
written; the Warehouse fixtures are rewritten as canonical JSONL with the
same financials in metadata.steps, the shape bagen-data reads. Run from
this directory: python3 env.py
"""
import json


def history(sys, pairs, last_user):
    msgs = [{"role": "system", "content": sys}]
    for u, a in pairs:
        msgs += [{"role": "user", "content": u}, {"role": "assistant", "content": a}]
    msgs.append({"role": "user", "content": last_user})
    return msgs


def turns(sys, users, parsed, usage, extra=None):
    """One turn per user message; usage[i] = (input, output) or a dict of
    fields; extra[i] are more fields of turn i."""
    out = []
    for i, u in enumerate(users):
        t = {"turn_idx": i + 1, "messages": history(sys, list(zip(users[:i], parsed[:i])), u),
             "parsed_response": parsed[i]}
        inp, outp = usage[i]
        t.update({"api_input_tokens": inp, "api_output_tokens": outp, "api_total_tokens": inp + outp})
        t.update((extra or [{}] * len(users))[i])
        out.append(t)
    return out


def rollout(ts, **top):
    r = {"env_id": 0, "absolute_env_id": 0}
    r.update(top)
    r["turns"] = ts
    return [r]


def write(name, payload):
    with open("env/" + name, "w", encoding="utf-8") as f:
        json.dump(payload, f, ensure_ascii=False, indent=1)
        f.write("\n")


OSP = "original system prompt"
U3 = ["user turn 1", "user turn 2", "user turn 3"]

write("flattens.json", rollout(turns(OSP, U3,
    ["<think>first</think><answer>search[q]</answer>", "<think>second</think><answer>finish[a]</answer>",
     "<think>third</think><answer>done</answer>"],
    [(30, 50), (40, 70), (55, 85)],
    [{"actual_token": 50, "actual_remaining_turn": 2, "success": False},
     {"actual_token": 70, "actual_remaining_turn": 1, "success": True},
     {"actual_token": 85, "actual_remaining_turn": 0, "success": True}])))

blank = turns(OSP, U3,
    ["<think>first</think><answer>search[q]</answer>", "", "<think>third</think><answer>done</answer>"],
    [(30, 50), (40, 0), (55, 85)],
    [{"success": False}, {"raw_response": "", "success": False}, {"success": True}])
blank[2]["messages"][4]["content"] = ""
write("blank.json", rollout(blank))

write("cumulative.json", rollout(turns(OSP, U3,
    ["<think>first</think><answer>Left</answer>", "<think>second</think><answer>Up</answer>",
     "<think>third</think><answer>Done</answer>"],
    [(426, 63), (647, 46), (853, 50)],
    [{"success": False}, {"success": False}, {"success": True}])))

SEARCH = ["question turn 1", "search result turn 2", "search result turn 3", "large search result turn 4"]
SPARSED = ["<think>first</think><answer>search[q1]</answer>", "<think>second</think><answer>search[q2]</answer>",
           "<think>third</think><answer>search[q3]</answer>", "<think>fourth</think><answer>finish[a]</answer>"]
SUSAGE = [(195, 56), (372, 42), (529, 45), (1512, 41)]
write("api_usage.json", rollout(turns("search system", SEARCH, SPARSED, SUSAGE,
    [{"api_interactions": [{"input_tokens": i, "output_tokens": o, "total_tokens": i + o}], "success": k == 3}
     for k, (i, o) in enumerate(SUSAGE)]), api_total_tokens=2792))


def raw_usage(i, o, r):
    return {"input_tokens": i, "output_tokens": o, "total_tokens": i + o,
            "usage": {"raw": {"input_tokens": i, "output_tokens": o, "total_tokens": i + o,
                              "output_tokens_details": {"reasoning_tokens": r}}}}


RUSAGE = [(100, 50, 40), (130, 40, 30), (165, 30, 20)]
RRAW = ["hidden alpha hidden beta final-answer-1", "hidden gamma hidden delta final-answer-2",
        "hidden epsilon final-answer-3"]
write("reasoning.json", rollout(turns("reasoning system", ["question turn 1", "question turn 2", "question turn 3"],
    ["final-answer-1", "final-answer-2", "final-answer-3"], [(i, o) for i, o, _ in RUSAGE],
    [{"raw_response": RRAW[k], "api_interactions": [raw_usage(*RUSAGE[k])], "success": k == 2} for k in range(3)])))

write("hidden.json", rollout(turns("fallback system", ["question turn 1", "question turn 2", "question turn 3"],
    ["answer_one", "answer_two", "answer_three"], [(90, 60), (140, 30), (190, 30)],
    [{"raw_response": "hidden_one hidden_two answer_one", "success": False},
     {"raw_response": "hidden_three hidden_four answer_two", "success": False},
     {"raw_response": "hidden_five hidden_six answer_three", "success": True}])))

trunc = turns(OSP, ["user turn 1", "user turn 2", "user turn 3", "user turn 4"],
    ["<think>first</think><answer>a1</answer>", "<think>second</think><answer>a2</answer>",
     "<think>third</think><answer>a3</answer>", "<think>fourth</think><answer>a4</answer>"],
    [(30, 50), (35, 55), (40, 60), (45, 65)], [{"success": False}] * 4)
trunc.append({"turn_idx": 5, "messages": [{"role": "system", "content": OSP}, {"role": "user", "content": "truncated user turn"}],
              "parsed_response": "<think>too long</think><answer>a5</answer>", "api_input_tokens": 5000,
              "api_output_tokens": 10, "api_total_tokens": 5010, "context_token_truncated": True, "success": False})
write("truncated.json", rollout(trunc))

IUSAGE = SUSAGE[:3] + [(4200, 118)]
ISEARCH = SEARCH[:3] + ["oversized search result turn 4"]
write("implicit.json", rollout(turns("search system", ISEARCH, SPARSED, IUSAGE,
    [{"api_interactions": [{"input_tokens": i, "output_tokens": o, "total_tokens": i + o}],
      "actions": ["search[q%d]" % (k + 1)] if k < 3 else [], "success": False}
     for k, (i, o) in enumerate(IUSAGE)])))


# Warehouse: test_money_estimation_env's fixtures as canonical JSONL. A step
# holds the financials after the turn; time_weeks is two weeks a turn, as the
# env counts Day/7 from the states.
def warehouse(cid, users, answers, fin, final_cash, success=True):
    msgs = [{"role": "system", "content": "warehouse manager instructions"}]
    for u, a in zip(users, answers):
        msgs += [{"role": "user", "content": u}, {"role": "assistant", "content": a}]
    steps = [{"time_weeks": 2 * (k + 1), "warehouse_item_weeks": w, "cumulative_cost_usd": c, "cash_usd": cash}
             for k, (cash, c, w) in enumerate(fin)]
    return {"custom_id": cid, "messages": msgs,
            "metadata": {"success": success, "steps": steps, "final_cash_usd": final_cash}}


money = warehouse("warehouse-7",
    ["Turn 1:\nState:\n=== Step 0 (Day 0) ===\nCash: $100 | AR Outstanding: $0",
     "Reward:\n1.0\n\nTurn 2:\nState:\n=== Step 1 (Day 14) ===\nCash: $120 | AR Outstanding: $0",
     "Reward:\n2.0\n\nTurn 3:\nState:\n=== Step 2 (Day 28) ===\nCash: $180 | AR Outstanding: $0"],
    ["<think>first</think><answer>pass</answer>", "<think>second</think><answer>replenish MegaMart JCD543 1</answer>",
     "<think>third</think><answer>produce JCD612 1 ocean</answer>"],
    [(120.0, 50.4, 200.0), (180.0, 80.2, 300.0), (250.0, 120.9, 420.0)], 250.0)
with open("env/money.jsonl", "w", encoding="utf-8") as f:
    f.write(json.dumps(money, ensure_ascii=False) + "\n")


def built(env_id, initial, cashes):
    fin, cost, weeks = [], 0.0, 0.0
    for idx, cash in enumerate(cashes, start=1):
        cost += 20.0 + idx
        weeks += 100.0 + 10 * idx
        fin.append((float(cash), cost, weeks))
    users = ["Turn %d:\nState:\n=== Step %d (Day %d) ===\nCash: $%s | AR Outstanding: $0"
             % (idx, idx - 1, (idx - 1) * 14, initial if idx == 1 else cashes[idx - 2]) for idx in range(1, len(cashes) + 1)]
    answers = ["<think>turn %d</think><answer>pass</answer>" % idx for idx in range(1, len(cashes) + 1)]
    return warehouse("warehouse-%d" % env_id, users, answers, fin, float(cashes[-1]))


with open("env/half_reachable.jsonl", "w", encoding="utf-8") as f:
    for env_id, cashes in [(1, [120, 170, 220]), (2, [130, 180, 240]), (3, [110, 160, 210]), (4, [140, 190, 260])]:
        f.write(json.dumps(built(env_id, 100, cashes), ensure_ascii=False) + "\n")
