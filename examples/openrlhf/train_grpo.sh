#!/bin/sh
# GRPO with OpenRLHF v0.10.2 and later, rewards from `bagen-data reward
# serve` through OpenRLHF's remote reward protocol: for each response it
# posts {"query": [prompt + response], "prompts": [prompt], "labels":
# [label]} to --reward.remote_url, the label being the dataset column named
# by --data.label_key (without it OpenRLHF sends "" and the server answers
# 400 naming the flag). The RL parquet's prompt column is a chat message
# list, hence --data.apply_chat_template. v0.10.2 renamed every flag and
# rejects unknown ones: for v0.9.0-v0.9.5 use train_grpo_v0.9.sh.
#
# Read in OpenRLHF/OpenRLHF at v0.11.0
# (3c3be6234e0cb353e76bb8019947db9dfe99fca7): openrlhf/cli/train_ppo_ray.py
# (the flags below; parser.parse_args), openrlhf/utils/agent.py
# (SingleTurnAgentExecutor: the payload and one request per response),
# openrlhf/datasets/prompts_dataset.py (label "" without --data.label_key),
# openrlhf/datasets/utils.py (parquet prompt data); the same flags at
# v0.10.2 (64c1cc4f30d4c0dab772c8aa1dc11288c425e0da).
# --data.max_len is prompt + response (8192 + 1024).
set -eu
bagen-data reward serve --addr 127.0.0.1:8000 &
server=$!
trap 'kill "$server"' EXIT
until curl -sf http://127.0.0.1:8000/healthz >/dev/null; do sleep 0.2; done
python3 examples/openrlhf/check_remote_rm.py http://127.0.0.1:8000/get_reward
ray job submit --address="http://127.0.0.1:8265" -- python3 -m openrlhf.cli.train_ppo_ray \
    --actor.model_name_or_path Qwen/Qwen2.5-7B-Instruct \
    --reward.remote_url http://127.0.0.1:8000/get_reward \
    --data.prompt_dataset out/rl/train.parquet \
    --data.input_key prompt \
    --data.label_key label \
    --data.apply_chat_template \
    --algo.advantage.estimator group_norm \
    --rollout.n_samples_per_prompt 16 \
    --train.batch_size 64 \
    --rollout.batch_size 64 \
    --data.max_len 9216 \
    --rollout.max_new_tokens 1024 \
    --actor.adam.lr 5e-7 \
    --algo.kl.init_coef 0.05 \
    --algo.kl.use_loss \
    --train.max_epochs 1 \
    --train.num_episodes 5
