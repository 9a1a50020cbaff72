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
// A group whose rewards are all equal has no advantage and is left out of
// the objective entirely; such groups are counted in the log
// (zero_var_groups). The kept samples are split into mini-batches, each
// one Adam step on
//
//	L(θ) = −(1/N) Σ_i min(ρ_i A_i, clip(ρ_i, 1−ε_c, 1+ε_c) A_i) + β (1/N) Σ_i k3_i,
//	ρ_i = π_θ(a_i|x_i) / π_old(a_i|x_i),
//	k3_i = π_ref(a_i|x_i)/π_θ(a_i|x_i) − log(π_ref(a_i|x_i)/π_θ(a_i|x_i)) − 1,
//
// with ε_c = 0.2, β = --kl (0.05) and π_ref the head as it was when GRPO
// started (after SFT, or the random head). k3 is the low-variance,
// non-negative estimator of KL(π_θ‖π_ref); as in the paper's runs the KL is
// a loss term, not part of the reward. Gradients come from gorgonia's
// automatic differentiation; Adam clips them to global norm 1.
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
// stopped.
package grpo
