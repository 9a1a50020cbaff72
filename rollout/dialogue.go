package rollout

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// wireDialogue is one element of an estimation-dialogue JSON array, the
// file API-model evaluation writes.
type wireDialogue struct {
	Success         json.RawMessage `json:"success"`
	RolloutSuccess  json.RawMessage `json:"rollout_success"`
	RolloutResolved json.RawMessage `json:"rollout_resolved"`
	Turns           []wireTurn      `json:"turns"`
}

type wireTurn struct {
	UserPrompt     *string         `json:"user_prompt"`
	Prompt         *string         `json:"prompt"`
	Observation    *string         `json:"observation"`
	RawResponse    *string         `json:"raw_response"`
	RawGeneration  *string         `json:"raw_generation"`
	Response       *string         `json:"response"`
	Assistant      *string         `json:"assistant"`
	ParsedResponse json.RawMessage `json:"parsed_response"`
	Messages       []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Success         json.RawMessage `json:"success"`
	APIInputTokens  json.RawMessage `json:"api_input_tokens"`
	APIOutputTokens json.RawMessage `json:"api_output_tokens"`
	InputTokens     json.RawMessage `json:"input_tokens"`
	OutputTokens    json.RawMessage `json:"output_tokens"`
	ActualToken     json.RawMessage `json:"actual_token"`
	TurnIdx         json.RawMessage `json:"turn_idx"`
	Truncated       json.RawMessage `json:"context_token_truncated"`
	Info            json.RawMessage `json:"info"`
	APITotalTokens  json.RawMessage `json:"api_total_tokens"`
	TotalTokens     json.RawMessage `json:"total_tokens"`
	Actions         json.RawMessage `json:"actions"`
	ActionNames     json.RawMessage `json:"action_names"`
	Interactions    json.RawMessage `json:"api_interactions"`
}

// wireInteraction is one element of a turn's api_interactions: the calls
// the turn made, with the provider's raw usage.
type wireInteraction struct {
	Usage struct {
		Raw struct {
			Output     *wireReasoningDetails `json:"output_tokens_details"`
			Completion *wireReasoningDetails `json:"completion_tokens_details"`
		} `json:"raw"`
	} `json:"usage"`
}

type wireReasoningDetails struct {
	Reasoning json.RawMessage `json:"reasoning_tokens"`
}

// DialogueTurn is one turn of an estimation dialogue as logged.
type DialogueTurn struct {
	// TurnIdx is turn_idx; 0 when absent, null or not a whole number.
	TurnIdx int64
	// UserPrompt is user_prompt; nil when absent or null.
	UserPrompt *string
	// LastUser is the content of the turn's last user message in
	// messages; "" when there is none.
	LastUser string
	// RawResponse, RawGeneration and Parsed are raw_response,
	// raw_generation and parsed_response (a non-string value as its
	// compact JSON text); "" when absent or null.
	RawResponse, RawGeneration, Parsed string
	// Truncated is context_token_truncated, of the turn or of its info
	// object, by Python truthiness.
	Truncated bool
	// Success is the turn's success by Python truthiness.
	Success bool
	// Input and Output are api_input_tokens and api_output_tokens, or
	// Unrecorded.
	Input, Output int64
	// InputTokens, OutputTokens and ActualToken are input_tokens,
	// output_tokens and actual_token, the counts older evaluation files
	// record instead; Unrecorded when absent, null or not a whole
	// non-negative number.
	InputTokens, OutputTokens, ActualToken int64
	// APITotal and Total are api_total_tokens and total_tokens, read as
	// InputTokens is.
	APITotal, Total int64
	// Reasoning is the hidden reasoning the turn's calls record in
	// api_interactions[].usage.raw.output_tokens_details (else
	// completion_tokens_details).reasoning_tokens, summed over the calls
	// that record it; nil when none does.
	Reasoning *int64
	// System is the content of the turn's first message when its role is
	// system (the rollout's own system prompt); nil otherwise.
	System *string
	// NoActions: the turn executed no action — actions is an empty list,
	// or, absent, action_names is one. A turn that records neither is not
	// known to have executed none.
	NoActions bool
}

// decodeDialogue converts one estimation dialogue to a Trajectory the way
// the reference converter does: per turn, the user text is the first
// non-empty of user_prompt, prompt, observation (else the turn's last user
// message), the assistant text the first non-empty of raw_response,
// raw_generation, response, assistant (else parsed_response); turns with an
// empty side are skipped; the id is traj_<array index>.
func decodeDialogue(rec Record) (Trajectory, error) {
	var w wireDialogue
	if err := json.Unmarshal(rec.Data, &w); err != nil {
		return Trajectory{}, rec.Errorf(locate(rec.Data, err), "%w", JSONCause(err))
	}
	t := Trajectory{ID: "traj_" + strconv.Itoa(rec.Pos.Index), Pos: rec.Pos}
	if len(w.Turns) == 0 {
		return t, rec.Errorf("turns", "missing or empty")
	}
	turnSuccess := false
	t.Extra.Dialogue = make([]DialogueTurn, len(w.Turns))
	for i, turn := range w.Turns {
		d, err := dialogueTurn(rec, i, turn)
		if err != nil {
			return t, err
		}
		t.Extra.Dialogue[i] = d
		turnSuccess = turnSuccess || d.Success
		user, asst := firstNonEmpty(turn.UserPrompt, turn.Prompt, turn.Observation), firstNonEmpty(turn.RawResponse, turn.RawGeneration, turn.Response, turn.Assistant)
		if user == "" {
			user = lastUserMessage(turn)
		}
		if asst == "" {
			asst = jsonText(turn.ParsedResponse)
		}
		if user == "" || asst == "" {
			continue
		}
		if err := checkSize(rec, fmt.Sprintf("turns[%d]", i), user+asst); err != nil {
			return t, err
		}
		t.Messages = append(t.Messages,
			Message{Role: "user", Content: user, Tokens: Unrecorded},
			Message{Role: "assistant", Content: asst, Tokens: Unrecorded})
		t.API = append(t.API, APITokens{Input: d.Input, Output: d.Output, Reasoning: d.Reasoning})
	}
	if len(t.Messages) == 0 {
		return t, rec.Errorf("turns", "no turn has both a user and an assistant text")
	}
	t.Success = turnSuccess
	for _, v := range []json.RawMessage{w.Success, w.RolloutSuccess, w.RolloutResolved} {
		if v, ok := present(v); ok {
			t.Success = truthy(v)
			t.Outcome = OutcomeScore
			break
		}
	}
	if t.Outcome == "" && turnSuccess {
		t.Outcome = OutcomeScore
	}
	// The authors' env starts from bool(rollout_success) and adds the
	// success of the turns it keeps (package probes).
	v, ok := present(w.RolloutSuccess)
	t.Extra.BySuccessRule = &SuccessByRule{FirstPresentSuccess: t.Success, BagenV1Success: ok && truthy(v)}
	return t, nil
}

// dialogueTurn keeps turn i as logged.
func dialogueTurn(rec Record, i int, turn wireTurn) (DialogueTurn, error) {
	d := DialogueTurn{UserPrompt: turn.UserPrompt, LastUser: lastUserMessage(turn), Parsed: jsonText(turn.ParsedResponse)}
	if turn.RawResponse != nil {
		d.RawResponse = *turn.RawResponse
	}
	if turn.RawGeneration != nil {
		d.RawGeneration = *turn.RawGeneration
	}
	v, ok := present(turn.Success)
	d.Success = ok && truthy(v)
	v, ok = present(turn.Truncated)
	d.Truncated = ok && truthy(v)
	if info, ok := present(turn.Info); ok && info[0] == '{' {
		var w struct {
			Truncated json.RawMessage `json:"context_token_truncated"`
		}
		json.Unmarshal(info, &w) // decoded once already: valid JSON
		v, ok = present(w.Truncated)
		d.Truncated = d.Truncated || ok && truthy(v)
	}
	d.InputTokens, d.OutputTokens, d.ActualToken = lenientCount(turn.InputTokens), lenientCount(turn.OutputTokens), lenientCount(turn.ActualToken)
	d.APITotal, d.Total = lenientCount(turn.APITotalTokens), lenientCount(turn.TotalTokens)
	d.NoActions = emptyList(turn.Actions) || !nonEmptyValue(turn.Actions) && emptyList(turn.ActionNames)
	if len(turn.Messages) > 0 && turn.Messages[0].Role == "system" {
		s := jsonText(turn.Messages[0].Content)
		d.System = &s
	}
	if v, ok := present(turn.TurnIdx); ok {
		d.TurnIdx, _ = parseWhole(v) // only an order: a bad one sorts as 0
	}
	var err error
	if d.Input, err = whole(rec, fmt.Sprintf("turns[%d].api_input_tokens", i), turn.APIInputTokens); err != nil {
		return d, err
	}
	if d.Output, err = whole(rec, fmt.Sprintf("turns[%d].api_output_tokens", i), turn.APIOutputTokens); err != nil {
		return d, err
	}
	d.Reasoning, err = interactionReasoning(rec, i, turn.Interactions)
	if err == nil && d.Reasoning != nil && d.Output != Unrecorded && *d.Reasoning > d.Output {
		err = rec.Errorf(fmt.Sprintf("turns[%d].api_interactions", i), "%d reasoning tokens exceed the output's %d", *d.Reasoning, d.Output)
	}
	return d, err
}

// interactionReasoning sums the reasoning_tokens that the turn's
// api_interactions record in their raw usage (output_tokens_details, else
// completion_tokens_details): the same fact as per_turn_api_tokens'
// reasoning. nil when no call records one; an entry that is not an object
// is skipped, as the authors' env skips it.
func interactionReasoning(rec Record, i int, raw json.RawMessage) (*int64, error) {
	v, ok := present(raw)
	if !ok || v[0] != '[' {
		return nil, nil
	}
	var calls []json.RawMessage
	json.Unmarshal(v, &calls) // decoded once already: valid JSON
	var sum *int64
	for j, c := range calls {
		var w wireInteraction
		if c[0] != '{' || json.Unmarshal(c, &w) != nil {
			continue
		}
		for _, det := range []*wireReasoningDetails{w.Usage.Raw.Output, w.Usage.Raw.Completion} {
			if det == nil {
				continue
			}
			n, err := optionalWhole(rec, fmt.Sprintf("turns[%d].api_interactions[%d].usage.raw.reasoning_tokens", i, j), det.Reasoning)
			if err != nil {
				return nil, err
			}
			if n != nil {
				if sum == nil {
					sum = new(int64)
				}
				*sum += *n
				break
			}
		}
	}
	return sum, nil
}

// emptyList reports whether v is the JSON list [].
func emptyList(v json.RawMessage) bool {
	var l []json.RawMessage
	v, ok := present(v)
	return ok && v[0] == '[' && json.Unmarshal(v, &l) == nil && len(l) == 0
}

// nonEmptyValue is Python's `value not in (None, "")` for a JSON value.
func nonEmptyValue(v json.RawMessage) bool {
	v, ok := present(v)
	return ok && string(v) != `""`
}

// lenientCount reads a count the readers do not otherwise use: anything
// but a whole non-negative number is Unrecorded.
func lenientCount(raw json.RawMessage) int64 {
	v, ok := present(raw)
	if !ok {
		return Unrecorded
	}
	n, err := parseWhole(v)
	if err != nil || n < 0 {
		return Unrecorded
	}
	return n
}

func firstNonEmpty(vs ...*string) string {
	for _, v := range vs {
		if v != nil && *v != "" {
			return *v
		}
	}
	return ""
}

func lastUserMessage(turn wireTurn) string {
	for i := len(turn.Messages) - 1; i >= 0; i-- {
		if turn.Messages[i].Role == "user" {
			return jsonText(turn.Messages[i].Content)
		}
	}
	return ""
}

// jsonText is a JSON string's value, or the compact JSON text of any other
// non-null value (a parsed_response may be an object).
func jsonText(v json.RawMessage) string {
	v, ok := present(v)
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}
