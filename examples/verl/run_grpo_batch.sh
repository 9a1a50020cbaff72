#!/bin/sh
# GRPO on the RL split with verl's batch reward manager, rewards from
# `bagen-data reward serve`: verl 0.6.1 and earlier, where it works as is,
# and verl 0.7.0 and later, where the reward loop (the default) has no
# batch manager and is switched off with reward_model.use_reward_loop=False
# (a key verl 0.6.1 does not have, so it is added only from 0.7.0 on).
# compute_score_batch is called once per batch with lists; see
# bagen_reward.py for the files read. Same settings as run_grpo.sh.
set -eu
version=$(python3 -c 'import verl; print(verl.__version__)')
case "$version" in
0.[0-6] | 0.[0-6].*) loop="" ;;
*) loop="reward_model.use_reward_loop=False" ;;
esac
bagen-data reward serve --addr 127.0.0.1:8000 &
server=$!
trap 'kill "$server"' EXIT
until curl -sf http://127.0.0.1:8000/healthz >/dev/null; do sleep 0.2; done
# $loop is empty or one word: left unquoted on purpose.
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
    $loop \
    reward_model.reward_manager=batch \
    custom_reward_function.path=examples/verl/bagen_reward.py \
    custom_reward_function.name=compute_score_batch \
    trainer.n_gpus_per_node=8 \
    trainer.total_epochs=5
