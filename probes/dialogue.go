package probes

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode"

	"bagen-data/rollout"
)

// bagenV1Dialogue is an estimation dialogue as the authors'
// TokenEstimationEnv reads it (ragen/env/token_estimation/env.py,
// _flatten_rollouts, mll-lab-nu/BAGEN 58bef4c) with max_context_window_tokens
// = limit (0: no limit known yet): the turns in turn_idx order (stable), up
// to the first one flagged context_token_truncated or implicitly truncated
// (overLimit; it and every later turn dropped); of those, the turns with
// assistant text. The first kept turn's own system message, when it has
// one, is the system message (their include_source_system). A turn replays
// user_prompt (else its last user message) and the first non-empty of
// parsed_response, raw_response, raw_generation, stripped. Token counts fall
// back as the env's do (firstCount). The rollout succeeded if
// rollout_success is true (t.Success under rollout.BagenV1Success) or a kept
// turn succeeded. Each turn's hidden reasoning is what its api_interactions
// record, else the output less the env's visible estimate (visibleByWords).
// The logged turns stay in Dialogue, so that the cut can be made again once
// the budget is known (Compat.CutOverLimit). Other trajectories are
// returned as they are.
func bagenV1Dialogue(t rollout.Trajectory, limit int64) rollout.Trajectory {
	if t.Extra.Dialogue == nil {
		return t
	}
	turns := slices.Clone(t.Extra.Dialogue)
	slices.SortStableFunc(turns, func(a, b rollout.DialogueTurn) int { return cmp.Compare(a.TurnIdx, b.TurnIdx) })
	v := t
	v.Messages, v.API = nil, nil
	for _, d := range turns {
		if d.Truncated || overLimit(d, limit) {
			break
		}
		asst := envAssistant(d)
		if asst == "" {
			continue
		}
		if len(v.Messages) == 0 && d.System != nil {
			v.Messages = append(v.Messages, rollout.Message{Role: "system", Content: *d.System, Tokens: rollout.Unrecorded})
		}
		user := d.LastUser
		if d.UserPrompt != nil {
			user = *d.UserPrompt
		}
		v.Success = v.Success || d.Success
		api := rollout.APITokens{Input: firstCount(d.Input, d.InputTokens), Output: firstCount(d.Output, d.OutputTokens, d.ActualToken), Reasoning: d.Reasoning}
		switch {
		case api.Output == rollout.Unrecorded:
		case api.Reasoning == nil:
			api.Reasoning = rollout.Tokens(api.Output - visibleByWords(api.Output, d))
		case *api.Reasoning > api.Output: // an output from output_tokens or actual_token
			api.Reasoning = rollout.Tokens(api.Output) // their max(0, output − reasoning)
		}
		v.Messages = append(v.Messages,
			rollout.Message{Role: "user", Content: user, Tokens: rollout.Unrecorded},
			rollout.Message{Role: "assistant", Content: asst, Tokens: rollout.Unrecorded})
		v.API = append(v.API, api)
	}
	return v
}

// overLimit is _is_implicit_context_token_truncated_turn: a turn whose
// total tokens (turnTotal) pass limit, that did not succeed, has assistant
// text and executed no action. Never with limit 0.
func overLimit(d rollout.DialogueTurn, limit int64) bool {
	total := turnTotal(d)
	return limit > 0 && total != rollout.Unrecorded && total > limit && !d.Success && envAssistant(d) != "" && d.NoActions
}

// turnTotal is _resolve_turn_total_tokens: api_total_tokens, else
// total_tokens, else the input plus the output when either is recorded
// (api_ counts first), else actual_token.
func turnTotal(d rollout.DialogueTurn) int64 {
	if n := firstCount(d.APITotal, d.Total); n != rollout.Unrecorded {
		return n
	}
	in, out := firstCount(d.Input, d.InputTokens), firstCount(d.Output, d.OutputTokens)
	if in != rollout.Unrecorded || out != rollout.Unrecorded {
		return max(in, 0) + max(out, 0)
	}
	return d.ActualToken
}

// firstCount is the first recorded of ns (the env's fallbacks from
// api_input_tokens to input_tokens, and from api_output_tokens to
// output_tokens and actual_token), else Unrecorded.
func firstCount(ns ...int64) int64 {
	for _, n := range ns {
		if n != rollout.Unrecorded {
			return n
		}
	}
	return rollout.Unrecorded
}

// envAssistant is _resolve_turn_assistant_content: the first non-empty of
// parsed_response, raw_response, raw_generation, stripped.
func envAssistant(d rollout.DialogueTurn) string {
	for _, s := range []string{d.Parsed, d.RawResponse, d.RawGeneration} {
		if s = strings.TrimFunc(s, pySpace); s != "" {
			return s
		}
	}
	return ""
}

// visibleByWords is _estimate_turn_visible_output_tokens without a
// recorded reasoning count (estimation dialogues record none): the output
// scaled by the ratio of rough word counts (roughWords) of parsed_response
// to raw_response (else raw_generation), both stripped, at most 1,
// rounded half to even as Python's round; the whole output when either
// text is empty, they are equal, or a count is 0.
func visibleByWords(output int64, d rollout.DialogueTurn) int64 {
	raw := d.RawResponse
	if raw == "" {
		raw = d.RawGeneration
	}
	raw, parsed := strings.TrimFunc(raw, pySpace), strings.TrimFunc(d.Parsed, pySpace)
	if raw == "" || parsed == "" || raw == parsed {
		return output
	}
	nr, np := roughWords(raw), roughWords(parsed)
	if nr == 0 || np == 0 {
		return output
	}
	ratio := min(1, float64(np)/float64(nr))
	return max(0, int64(math.RoundToEven(float64(output)*ratio)))
}

// roughWords is _rough_text_token_count: the matches of Python's
// re.findall(r"\w+|[^\w\s]", s), a run of word characters (letters,
// numbers, underscore) or one character that is neither a word character
// nor white space.
func roughWords(s string) int {
	n, inWord := 0, false
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsNumber(r) || r == '_':
			if !inWord {
				n++
			}
			inWord = true
		case pySpace(r):
			inWord = false
		default:
			n++
			inWord = false
		}
	}
	return n
}
