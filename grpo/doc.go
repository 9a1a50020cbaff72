// Package grpo reproduces the paper's estimation training at laptop scale:
// the same data files, the same rule reward and the same GRPO algorithm,
// but the trainable policy is a small head on top of a frozen LLM served
// by Ollama, so a run takes minutes on a CPU (paper §6.2, appendix
// "Detailed Settings for Estimation RL and SFT").
//
// # Model
//
// An Encoder embeds each probe's rendered chat prompt with the Ollama
// model (POST /api/embed). The head's input x is that embedding,
// L2-normalised, followed by the numeric features of Probe.Numeric. The
// Head is a tanh MLP with a factored categorical action
//
//	π(a|x) = p_kind(k|x) · [k = interval] · p_centre(c|x) · p_width(w|x),
//
// where k ∈ {interval, impossible}, c indexes K log-spaced centres
// m_c = B^(c/(K−1)) over [1, B] (B the probe's budget) and w a relative
// half-width from {5, 10, 20, 30, 50}%. An action decodes to the exact
// answer text an LLM would write, "<answer>[L, H]</answer>" with
// L = max(1, ⌊m(1−w)⌋), H = ⌊m(1+w)⌋, or "<answer>impossible</answer>",
// and the reward package scores that text: the policy is judged exactly
// like a language model.
//
// # SFT
//
// Each SFT row's target answer maps to its nearest action (Space.Nearest);
// the head minimises the cross-entropy −log π(a*|x) with Adam.
//
// # GRPO
//
// For each prompt x in a batch the current policy π_old samples a group of
// G actions a_1…a_G, scored r_i = R(answer(a_i)) by the 1.8/0.2 rule
// reward. The group-relative advantage is
//
//	A_i = (r_i − mean(r)) / (std(r) + ε),   ε = 1e-6, std unbiased.
//
// A group whose rewards are all equal has advantage 0 for every sample
// and stays in the batch: it adds nothing to the surrogate but dilutes its
// mean and keeps its KL pull towards π_ref — on a collapsed prompt (a
// possible probe answered "impossible" by every sample) that pull is the
// only force at work, though it can slow a collapse more than undo one: k3
// is estimated on the sampled actions, and the gradient of an action the
// policy already takes with probability near 1 vanishes. Such groups are counted in the log
// (zero_var_groups); Config.DropUniformGroups (--drop-uniform-groups)
// leaves them out instead, KL term included, like DAPO's dynamic sampling
// filter but without resampling replacements. The samples are split into
// mini-batches, each one Adam step on
//
//	L(θ) = −(1/N) Σ_i S_i + β (1/N) Σ_i k3_i,
//	S_i = min(ρ_i A_i, clip(ρ_i, 1−ε_c, 1+ε_c) A_i), and S_i ≥ 3A_i when A_i < 0,
//	ρ_i = π_θ(a_i|x_i) / π_old(a_i|x_i),
//	k3_i = min(π_ref(a_i|x_i)/π_θ(a_i|x_i) − log(π_ref(a_i|x_i)/π_θ(a_i|x_i)) − 1, 10),
//
// with ε_c = --clip (0.2; 0 turns clipping off, S_i = ρ_i A_i), β = --kl
// (0.05; 0 drops the term) and π_ref the head as it was when GRPO started
// (after SFT, or the random head). As in the paper's runs the KL is a loss
// term, not part of the reward. Gradients come from gorgonia's automatic
// differentiation; Adam clips them to global norm 1.
//
// # What matches verl
//
// The defaults follow verl's GRPO (verl/trainer/ppo/core_algos.py and the
// actor config) setting by setting:
//
//   - advantages: compute_grpo_outcome_advantage with
//     norm_adv_by_std_in_grpo (torch.std, unbiased; ε = 1e-6). A uniform
//     group's advantages are exactly 0 here; verl's are (r − mean)/ε,
//     which is 0 or float32 rounding noise. verl gives a group of one
//     mean 0 and std 1; here a group has at least two samples.
//     Config.CenterOnly (--center-only) is norm_adv_by_std_in_grpo=false
//     (Dr. GRPO): A_i = r_i − mean(r), so a group keeps its rewards'
//     scale. With the std division an impossible probe's {0, 0.2} group
//     pushes as hard as a possible probe's {0, 1.8} one, which undoes the
//     rule reward's 1.8/0.2 weighting for a policy that cannot tell the
//     two kinds of probe apart.
//   - no filtering: every group of the batch enters the loss (DAPO's
//     filter is a separate option there, as here).
//   - policy loss: loss_mode "vanilla" (compute_policy_loss_vanilla):
//     clip_ratio 0.2 both sides, dual clip clip_ratio_c = 3, log-ratio
//     clamped to ±20 before exp.
//   - loss aggregation: loss_agg_mode "token-mean" — the mean over every
//     token of the mini-batch, zero-advantage ones included. One sampled
//     action here stands for one token: the ratio, the clip and the k3 are
//     per action (the product of the kind, centre and width factors),
//     where verl takes them per token of the answer text, so a multi-token
//     answer can be clipped token by token there and only as a whole here.
//   - KL: use_kl_loss with kl_loss_type "low_var_kl" (k3): log-ratio
//     clamped to ±20, k3 clamped to [−10, 10] — a sample whose k3 exceeds
//     10 passes no KL gradient, there as here — averaged with the same
//     token-mean; no KL in the reward; entropy_coeff 0.
//   - updates: ppo_epochs 1 over ppo_mini_batch-sized splits (Updates),
//     gradient norm clipped to 1 (grad_clip).
//
// It differs where the policy is a head, not an LLM: Adam without weight
// decay (verl's AdamW decays by 0.01), learning rates for a head, and the
// batch and epoch counts of Config.
//
// Zero-RL (--init random) skips SFT: from a near-uniform head the cheapest
// reward is the 0.2 for "impossible", and GRPO collapses onto it, the
// paper's "RL without SFT" row.
//
// # Runs
//
// Everything random (weights, shuffles, sampling) draws from one PCG
// stream seeded by Config.Seed, so the same data, seed and embeddings give
// byte-identical weights, logs and metrics. After every epoch Train
// evaluates the greedy head on the eval probes with the eval package,
// appends to train.jsonl, rewrites plot.html and eval.json, and saves a
// checkpoint (weights, reference head, Adam moments, the PCG state and the
// log length); resuming from it ends byte-identical to a run that never
// stopped. Epochs 0 stops after SFT; resuming such a run with more epochs
// continues into GRPO as if it had never stopped.
package grpo
