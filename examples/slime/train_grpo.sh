#!/bin/bash
# GRPO with slime, rewards from `bagen-data reward serve` (POST /slime).
# slime's remote reward model posts {"prompt": ..., "response": ...,
# "label": ...} for every response and reads a bare number back. It needs
# all three flags:
#   --rm-type remote_rm   without it slime has no reward (NotImplementedError)
#   --rm-url .../slime    the route's full URL: slime's help shows a base URL
#                         (http://localhost:8000), which the server answers
#                         with 404 and the list of its endpoints
#   --label-key label     without it the label is null: the server answers
#                         400 naming this flag and slime retries, then raises
# The RL parquet's prompt column is a chat message list, hence
# --input-key prompt --apply-chat-template.
#
# Read in THUDM/slime at 624b824a898ab0ec1fcb4d373004c7f3852bf515 (main,
# 2026-08-21; latest tag v0.3.1): slime/utils/arguments.py (--rm-type,
# --rm-url, --label-key, --input-key, --apply-chat-template, --prompt-data
# and the rollout and GRPO flags below), slime/rollout/rm_hub/__init__.py
# (async_rm dispatches on --rm-type; remote_rm posts the payload with
# retries), slime/utils/data.py (parquet prompt data; label is None
# without --label-key), scripts/run-qwen2.5-0.5B-reproducibility.sh (the
# launch layout this follows).
#
# Model, checkpoint, parallelism and optimizer arguments are your setup's:
# MODEL_ARGS comes from slime's scripts/models/<model>.sh, as in its own
# run scripts; adjust paths and GPUs.
set -euo pipefail
SLIME_DIR=${SLIME_DIR:-/root/slime}
DATA=${DATA:-$PWD/out/rl/train.parquet}
source "$SLIME_DIR/scripts/models/qwen2.5-7B.sh"

bagen-data reward serve --addr 127.0.0.1:8000 &
server=$!
trap 'kill "$server"' EXIT
until curl -sf http://127.0.0.1:8000/healthz >/dev/null; do sleep 0.2; done

CKPT_ARGS=(
   --hf-checkpoint /root/Qwen2.5-7B-Instruct/
   --ref-load /root/Qwen2.5-7B-Instruct_torch_dist/
)
ROLLOUT_ARGS=(
   --prompt-data "$DATA"
   --input-key prompt
   --label-key label
   --apply-chat-template
   --rollout-shuffle
   --rm-type remote_rm
   --rm-url http://127.0.0.1:8000/slime
   --num-rollout 100
   --rollout-batch-size 64
   --n-samples-per-prompt 16
   --rollout-max-prompt-len 8192
   --rollout-max-response-len 1024
   --global-batch-size 1024
)
GRPO_ARGS=(
   --advantage-estimator grpo
   --use-kl-loss
   --kl-loss-coef 0.05
   --kl-loss-type low_var_kl
   --entropy-coef 0.00
)
OPTIMIZER_ARGS=(
   --optimizer adam
   --lr 5e-7
   --lr-decay-style constant
)

cd "$SLIME_DIR"
python3 train.py \
   --actor-num-nodes 1 \
   --actor-num-gpus-per-node 8 \
   --colocate \
   "${MODEL_ARGS[@]}" \
   "${CKPT_ARGS[@]}" \
   "${ROLLOUT_ARGS[@]}" \
   "${GRPO_ARGS[@]}" \
   "${OPTIMIZER_ARGS[@]}"
