#!/bin/sh
# GRPO with OpenRLHF v0.9.0-v0.9.5, rewards from `bagen-data reward serve`
# through OpenRLHF's remote reward model protocol. OpenRLHF sends
# {"query": [prompt + response], "prompts": [prompt], "labels": [label]}; the
# label column written by `bagen-data build` holds the truth as JSON
# (--label_key label). The RL parquet's prompt column is a chat message
# list, hence --apply_chat_template. v0.9.8 replaced --prompt_max_len and
# --generate_max_len with --max_len and --max_new_tokens; v0.10.2 renamed
# every flag: use train_grpo.sh there.
#
# Read in OpenRLHF/OpenRLHF at v0.9.0 (06ab51e75c0e8c5b4d6b66912996b2a611e3dc2f)
# and v0.9.5 (c0e2ee2473cd115863630599cc3d51917d4b7c3e):
# openrlhf/cli/train_ppo_ray.py (every flag below); at v0.9.8 and v0.9.10
# (6f58d4183dfa2ff2de396f856350ed4aca395645) the same file without
# --prompt_max_len and --generate_max_len.
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
