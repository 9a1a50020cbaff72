#!/bin/sh
# GRPO with OpenRLHF, rewards from `bagen-data reward serve` through
# OpenRLHF's remote reward model protocol. OpenRLHF sends
# {"query": [prompt + response], "prompts": [prompt], "labels": [label]}; the
# label column written by `bagen-data build` holds the truth as JSON.
# (Recent OpenRLHF releases spell --remote_rm_url as --reward.remote_url.)
# The RL parquet's prompt column is a chat message list, hence
# --apply_chat_template.
set -eu
bagen-data reward serve --addr 127.0.0.1:8000 &
server=$!
trap 'kill "$server"' EXIT
until curl -sf http://127.0.0.1:8000/healthz >/dev/null; do sleep 0.2; done
python3 examples/openrlhf/check_remote_rm.py http://127.0.0.1:8000/get_reward
ray job submit --address="http://127.0.0.1:8265" -- python3 -m openrlhf.cli.train_ppo_ray \
    --pretrain Qwen/Qwen2.5-7B-Instruct \
    --remote_rm_url http://127.0.0.1:8000/get_reward \
    --prompt_data out/rl/train.parquet \
    --input_key prompt \
    --label_key label \
    --apply_chat_template \
    --advantage_estimator group_norm \
    --n_samples_per_prompt 16 \
    --train_batch_size 64 \
    --rollout_batch_size 64 \
    --prompt_max_len 8192 \
    --generate_max_len 1024 \
    --actor_learning_rate 5e-7 \
    --init_kl_coef 0.05 \
    --use_kl_loss \
    --max_epochs 1 \
    --num_episodes 5
