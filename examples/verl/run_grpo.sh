#!/bin/sh
# GRPO on the RL split with verl 0.7.0 and later, rewards from
# `bagen-data reward serve`. verl 0.7.0 computes rewards in its reward loop
# (reward_model.use_reward_loop=True by default), which calls
# compute_score once per response through the "naive" reward manager; see
# bagen_reward.py for the files read. verl 0.6.1's naive manager (its
# default, without a reward loop) calls compute_score with the same
# keywords, so this runs there too; run_grpo_batch.sh scores whole batches
# with the batch manager instead.
# Settings follow the paper's appendix (16 rollouts per prompt, lr 5e-7,
# no KL term in the reward); adjust paths, GPUs and the model to your setup.
set -eu
bagen-data reward serve --addr 127.0.0.1:8000 &
server=$!
trap 'kill "$server"' EXIT
until curl -sf http://127.0.0.1:8000/healthz >/dev/null; do sleep 0.2; done
python3 -m verl.trainer.main_ppo \
    algorithm.adv_estimator=grpo \
    data.train_files=out/rl/train.parquet \
    data.val_files=out/eval/test.parquet \
    data.train_batch_size=64 \
    data.max_prompt_length=8192 \
    data.max_response_length=1024 \
    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct \
    actor_rollout_ref.actor.optim.lr=5e-7 \
    actor_rollout_ref.actor.use_kl_loss=True \
    actor_rollout_ref.actor.kl_loss_coef=0.05 \
    actor_rollout_ref.actor.entropy_coeff=0 \
    actor_rollout_ref.rollout.n=16 \
    algorithm.use_kl_in_reward=False \
    reward_model.reward_manager=naive \
    custom_reward_function.path=examples/verl/bagen_reward.py \
    custom_reward_function.name=compute_score \
    trainer.n_gpus_per_node=8 \
    trainer.total_epochs=5
