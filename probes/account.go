package probes

import (
	"fmt"
	"slices"

	"bagen-data/rollout"
)

// MaxTokens bounds every token count and sum of one trajectory, system
// prompt and trailing message included: 2^53, the largest integer a
// float64 holds exactly and far beyond any context window. Sums are
// checked against it (Accounting.Check), so nothing derived from them —
// prefixes, remaining tokens, interval ends — overflows an int64.
const MaxTokens = 1 << 53

// Counter counts the tokens of a text without special tokens.
// *tokenizer.Tokenizer implements it.
type Counter interface {
	Count(s string) int
}

// TurnTokens is the usage of one turn: in_k what the turn added to the
// context, out_k what the model generated (the API's recorded count when
// present, since it includes hidden reasoning, plus the outputs of retried
// calls).
type TurnTokens struct {
	In, Out int64
}

// Accounting is a trajectory's token usage, turn by turn.
type Accounting struct {
	Turns []TurnTokens
	// Pairs holds the message indices (user, assistant) of each turn.
	Pairs [][2]int
	// Trailing is the token count of a final unpaired user message, and
	// TrailingAt its message index (-1 when there is none).
	Trailing   int64
	TrailingAt int
	// Basis says where each turn's input comes from (replay accounting,
	// NewReplay); nil from Account, whose inputs are always the messages'.
	Basis []Basis
	// Provisional are the inputs of the turns of a gap as they are known
	// before the request that closes it (bridgeGaps): their fallback
	// counts. Seen shows them to a probe placed inside the gap.
	Provisional []Provisional
}

// Provisional is the input of turn Turn (0-based) before turn Until's
// request closed its gap: In, the fallback count.
type Provisional struct {
	Turn, Until int
	In          int64
}

// Seen is the per-turn usage of the first k turns as known after turn k,
// what a live guard sees then and a probe after turn k shows: Turns[:k],
// with the inputs of a gap the first k requests do not close yet at their
// fallback counts. It shares Turns' array when no gap is open.
func (a Accounting) Seen(k int) []TurnTokens {
	seen := a.Turns[:k:k]
	cloned := false
	for _, p := range a.Provisional {
		if p.Turn < k && p.Until >= k {
			if !cloned {
				seen, cloned = slices.Clone(seen), true
			}
			seen[p.Turn].In = p.In
		}
	}
	return seen
}

// Pair splits messages into turns greedily: a user message followed by an
// assistant message is a turn; a final unpaired user message is the
// trailing message; any other unpaired message (and a leading system
// message) is skipped.
func Pair(msgs []rollout.Message) (pairs [][2]int, trailing int) {
	trailing = -1
	for i := 0; i < len(msgs); i++ {
		if msgs[i].Role != "user" {
			continue
		}
		if i+1 < len(msgs) && msgs[i+1].Role == "assistant" {
			pairs = append(pairs, [2]int{i, i + 1})
			i++
			continue
		}
		if i == len(msgs)-1 {
			trailing = i
		}
	}
	return pairs, trailing
}

// Account counts the tokens of every turn of t. Recorded counts are used
// as they are; c counts the rest and may be nil when everything is
// recorded (else the error wraps ErrNoTokenizer).
func Account(t rollout.Trajectory, c Counter) (Accounting, error) {
	pairs, trailing := Pair(t.Messages)
	a := Accounting{Pairs: pairs, TrailingAt: trailing, Turns: make([]TurnTokens, len(pairs))}
	for k, p := range pairs {
		in, err := userTokens(t, p[0], c)
		if err != nil {
			return a, err
		}
		out := int64(rollout.Unrecorded)
		if k < len(t.API) {
			out = t.API[k].Output
		}
		if out == rollout.Unrecorded {
			if out, err = messageTokens(t, p[1], t.Messages[p[1]].Content, c); err != nil {
				return a, err
			}
		}
		if k < len(t.API) {
			out += t.API[k].Retried.Output
		}
		a.Turns[k] = TurnTokens{In: in, Out: out}
	}
	if trailing >= 0 {
		n, err := userTokens(t, trailing, c)
		if err != nil {
			return a, err
		}
		a.Trailing = n
	}
	return a, a.Check(t, 0)
}

func userTokens(t rollout.Trajectory, i int, c Counter) (int64, error) {
	return messageTokens(t, i, rollout.StripReward(t.Messages[i].Content), c)
}

func messageTokens(t rollout.Trajectory, i int, text string, c Counter) (int64, error) {
	if n := t.Messages[i].Tokens; n != rollout.Unrecorded {
		return n, nil
	}
	if c == nil {
		return 0, fmt.Errorf("%s: messages[%d].tokens: %w", t.Pos, i, ErrNoTokenizer)
	}
	return int64(c.Count(text)), nil
}

// Check adds sys, every turn's counts and the trailing message's with
// checked addition: a negative count, or a sum past MaxTokens, is a
// *ParseError at t's position naming the message that went past it and
// wrapping ErrTokenOverflow. Once Check(t, sys) succeeds, Total(sys) and
// every partial sum of it fit in an int64 with room to spare.
func (a Accounting) Check(t rollout.Trajectory, sys int64) error {
	var sum int64
	add := func(n int64, field string) error {
		if n >= 0 && n <= MaxTokens-sum {
			sum += n
			return nil
		}
		err := fmt.Errorf("%w (custom_id %q)", ErrTokenOverflow, t.ID)
		if n < 0 {
			err = fmt.Errorf("negative token count %d (custom_id %q)", n, t.ID)
		}
		return &ParseError{File: t.Pos.File, Line: t.Pos.Line, Index: t.Pos.Index, Field: field, Err: err}
	}
	if err := add(sys, "system prompt"); err != nil {
		return err
	}
	for k, tt := range a.Turns {
		if err := add(tt.In, fmt.Sprintf("messages[%d]", a.Pairs[k][0])); err != nil {
			return err
		}
		if err := add(tt.Out, fmt.Sprintf("messages[%d]", a.Pairs[k][1])); err != nil {
			return err
		}
	}
	if a.TrailingAt >= 0 {
		return add(a.Trailing, fmt.Sprintf("messages[%d]", a.TrailingAt))
	}
	return nil
}

// Total is sys + Σ_k (in_k + out_k): the tokens of the whole rollout, the
// trailing message excluded. It does not check for overflow: call Check
// first on counts from a file.
func (a Accounting) Total(sys int64) int64 {
	total := sys
	for _, t := range a.Turns {
		total += t.In + t.Out
	}
	return total
}

// Basis says where one turn's input count in_k comes from in the replay
// accounting (NewReplay). Every turn has exactly one.
type Basis uint8

const (
	// BasisMessages: no turn of the rollout records its input; in_k is the
	// user message's count, as in build.
	BasisMessages Basis = iota
	// BasisLog: the log's own numbers — the turn's input as recorded, or
	// the request delta input_k − input_{k−1} − vis_{k−1} with vis_{k−1}
	// the previous output less its recorded reasoning (the whole output
	// when the log records no reasoning and the request grew by at least
	// that much).
	BasisLog
	// BasisEstimated: a request delta where the request grew by less than
	// the previous turn's output although the log records no reasoning for
	// it — proof of hidden reasoning the log does not break out. vis_{k−1}
	// is then estimated as the count of the previous assistant text
	// (recorded, else the tokenizer's), at most the growth.
	BasisEstimated
	// BasisNoUsage: the turn records no input; in_k is its user message's
	// count (for the first turn with the log's own system message, which
	// the first request holds).
	BasisNoUsage
	// BasisAfterGap: the previous turn records no input or output, so
	// there is no delta; in_k is the user message's count.
	BasisAfterGap
	// BasisHistoryCut: the request grew by less than the previous visible
	// output (the harness dropped history); in_k is the user message's
	// count.
	BasisHistoryCut
)

func (b Basis) String() string {
	switch b {
	case BasisLog:
		return "log"
	case BasisEstimated:
		return "estimated"
	case BasisNoUsage:
		return "no usage"
	case BasisAfterGap:
		return "after a turn without usage"
	case BasisHistoryCut:
		return "history cut"
	}
	return "messages"
}

// Bases counts the turns of a by Basis (no entry for a Basis no turn
// has); empty for an Accounting made by Account, which records none.
func (a Accounting) Bases() map[Basis]int {
	n := map[Basis]int{}
	for _, b := range a.Basis {
		n[b]++
	}
	return n
}

// HistoryIncluded reports whether per-request input counts include the
// conversation so far: input_k ≥ input_j + output_{k−1}, with input_j the
// last recorded input before turn k, holds for at least half of the turns
// k = 1 … n−1 that record their input and follow one that does (an
// Unrecorded input is skipped). With no such turn it never does.
func HistoryIncluded(input, output []int64) bool {
	n := min(len(input), len(output))
	hits, compared := 0, 0
	prev := int64(rollout.Unrecorded)
	for k := 0; k < n; k++ {
		if input[k] == rollout.Unrecorded {
			continue
		}
		if prev != rollout.Unrecorded {
			compared++
			if input[k] >= prev+output[k-1] {
				hits++
			}
		}
		prev = input[k]
	}
	return compared > 0 && 2*hits >= compared
}

// accountingRule is how a compat turns recorded usage into per-turn
// usage; the zero value is Native's (nativeVote, nativeInputs).
type accountingRule struct {
	// history decides whether request inputs include the history when the
	// log does not say; nil is nativeVote.
	history func(t rollout.Trajectory, a Accounting, c Counter) bool
	// inputs sets a.Turns[k].In and a.Basis[k] from the recorded usage;
	// nil is nativeInputs.
	inputs func(t rollout.Trajectory, c Counter, a *Accounting, src InputSource) error
}

// replayAccount is the accounting step of the replay (see the package
// doc, "Usage accounting"): outputs as recorded, inputs by the rule. It is
// the one place where history-inclusive request inputs become per-turn
// deltas, for every reader that records them.
func replayAccount(t rollout.Trajectory, c Counter, rule accountingRule) (Accounting, InputSource, error) {
	pairs, trailing := Pair(t.Messages)
	a := Accounting{Pairs: pairs, TrailingAt: trailing, Turns: make([]TurnTokens, len(pairs)), Basis: make([]Basis, len(pairs))}
	for k, p := range pairs {
		out := int64(rollout.Unrecorded)
		if k < len(t.API) {
			out = t.API[k].Output
		}
		if out == rollout.Unrecorded {
			var err error
			if out, err = messageTokens(t, p[1], t.Messages[p[1]].Content, c); err != nil {
				return a, 0, err
			}
		}
		if k < len(t.API) {
			out += t.API[k].Retried.Output
		}
		a.Turns[k].Out = out
	}
	src := InputMessages
	if anyInput(t.API, len(pairs)) {
		src = inputKind(t, a, c, rule)
	}
	if src == InputMessages {
		for k, p := range pairs {
			in, err := userTokens(t, p[0], c)
			if err != nil {
				return a, 0, err
			}
			a.Turns[k].In = in
		}
		return a, src, nil
	}
	inputs := rule.inputs
	if inputs == nil {
		inputs = nativeInputs
	}
	return a, src, inputs(t, c, &a, src)
}

// anyInput reports whether any of the first n turns records its input.
func anyInput(api []rollout.APITokens, n int) bool {
	for k := 0; k < min(n, len(api)); k++ {
		if api[k].Input != rollout.Unrecorded {
			return true
		}
	}
	return false
}

// apiAt is turn k's usage, Unrecorded counts for a turn past t.API.
func apiAt(t rollout.Trajectory, k int) rollout.APITokens {
	if k < len(t.API) {
		return t.API[k]
	}
	return rollout.APITokens{Input: rollout.Unrecorded, Output: rollout.Unrecorded}
}

// inputKind decides what the recorded inputs measure: what the log says
// (t.Inputs), else the rule's vote.
func inputKind(t rollout.Trajectory, a Accounting, c Counter, rule accountingRule) InputSource {
	history := rule.history
	if history == nil {
		history = nativeVote
	}
	switch {
	case t.Inputs == rollout.InputsRequest:
		return InputAPIDeltas
	case t.Inputs == rollout.InputsTurn:
		return InputAPI
	case history(t, a, c):
		return InputAPIDeltas
	}
	return InputAPI
}

// nativeVote is HistoryIncluded against a lower bound of each visible
// output (voteVisible), so that hidden reasoning the log does not record
// does not make cumulative inputs look per-turn.
func nativeVote(t rollout.Trajectory, a Accounting, c Counter) bool {
	n := len(a.Pairs)
	in, vis := make([]int64, n), make([]int64, n)
	for k, p := range a.Pairs {
		api := apiAt(t, k)
		in[k], vis[k] = api.Input, voteVisible(t, api, p[1], a.Turns[k].Out-api.Retried.Output, c)
	}
	return HistoryIncluded(in, vis)
}

// voteVisible is a lower bound of the visible output of a turn with output
// out: output − reasoning where recorded, else the smaller of out and the
// count of the assistant text (message i) when one can be had.
func voteVisible(t rollout.Trajectory, api rollout.APITokens, i int, out int64, c Counter) int64 {
	if v, ok := api.Visible(); ok {
		return v
	}
	n := t.Messages[i].Tokens
	if n == rollout.Unrecorded {
		if c == nil {
			return out
		}
		n = int64(c.Count(t.Messages[i].Content))
	}
	return min(n, out)
}

// nativeInputs is this tool's rule: every turn keeps the log's number
// where the log gives one (BasisLog); the previous visible output is
// estimated only where the numbers prove unrecorded hidden reasoning
// (BasisEstimated); a turn without usage, the turn after it and a turn
// whose request shrank fall back to message counts on their own, and a
// gap of turns without usage between two recorded requests then shares
// the known growth of the request (bridgeGaps).
func nativeInputs(t rollout.Trajectory, c Counter, a *Accounting, src InputSource) error {
	if err := nativeTurnInputs(t, c, a, src); err != nil {
		return err
	}
	if src == InputAPIDeltas {
		return bridgeGaps(t, c, a)
	}
	return nil
}

func nativeTurnInputs(t rollout.Trajectory, c Counter, a *Accounting, src InputSource) error {
	for k, p := range a.Pairs {
		api := apiAt(t, k)
		in, basis := api.Input, BasisLog
		switch {
		case api.Input == rollout.Unrecorded:
			basis = BasisNoUsage
		case src == InputAPIDeltas && k > 0:
			var err error
			if in, basis, err = nativeDelta(t, c, a, k); err != nil {
				return err
			}
		}
		if basis != BasisLog && basis != BasisEstimated {
			var err error
			if in, err = fallbackInput(t, p[0], k, c); err != nil {
				return err
			}
		}
		a.Turns[k].In, a.Basis[k] = in, basis
	}
	return nil
}

// bridgeGaps makes the fallbacks of a gap add up to what the log knows.
// With history-inclusive inputs, a request q that follows turns without
// usage (or a turn without its output) still fixes their sum: the turns
// p < j ≤ q after the last recorded request p added
//
//	input_q − input_p − vis_p = Σ_{p<j<q} (in_j + vis_j) + in_q
//
// (p = −1 before the first turn: input_p = vis_p = 0). The outputs of the
// turns in between stay as counted; what is left is split between the
// inputs in_{p+1} … in_q in the ratio of their message counts (the
// fallback), the last taking the rounding. The total then is the log's
// own: the last request plus its output, plus the reasoning the log says
// was not sent back. A gap whose counts leave less than nothing (a cut
// history) keeps the message counts.
//
// A probe inside a gap sees the fallback counts (Provisional); inside a
// leading gap, where no request before it records its input, the prefix
// is accounted from the messages (InputMessages): the first turn's input
// is its user message alone, the system prompt counted apart.
func bridgeGaps(t rollout.Trajectory, c Counter, a *Accounting) error {
	p := -1
	for q := range a.Pairs {
		api := apiAt(t, q)
		if api.Input == rollout.Unrecorded {
			continue
		}
		if q > p+1 || a.Basis[q] == BasisAfterGap {
			bridge(t, a, p, q)
		}
		p = q
	}
	if len(a.Provisional) > 0 && a.Provisional[0].Turn == 0 {
		n, err := userTokens(t, a.Pairs[0][0], c)
		if err != nil {
			return err
		}
		a.Provisional[0].In = n
	}
	return nil
}

// LeadingGap is the turn whose request closes a leading gap (turns
// without a recorded input from the first on), 0 when there is none: a
// prefix of fewer turns is accounted from the messages.
func (a Accounting) LeadingGap() int {
	if len(a.Provisional) > 0 && a.Provisional[0].Turn == 0 {
		return a.Provisional[0].Until
	}
	return 0
}

// bridge shares input_q − input_p − vis_p − Σ vis_j between the inputs of
// turns p+1 … q (see bridgeGaps).
func bridge(t rollout.Trajectory, a *Accounting, p, q int) {
	left := apiAt(t, q).Input
	if p >= 0 {
		left -= apiAt(t, p).Input + visibleOut(t, a, p)
	}
	var weight int64
	for j := p + 1; j <= q; j++ {
		if j < q {
			left -= visibleOut(t, a, j)
		}
		weight += a.Turns[j].In
	}
	if left < 0 {
		return
	}
	for j := p + 1; j < q; j++ {
		n := int64(0)
		if weight > 0 {
			n = int64(float64(left) * float64(a.Turns[j].In) / float64(weight))
		}
		a.Provisional = append(a.Provisional, Provisional{Turn: j, Until: q, In: a.Turns[j].In})
		a.Turns[j].In = n
		left -= n
	}
	a.Turns[q].In = left
}

// visibleOut is what turn k's output put into the next request: its
// output less the reasoning the log records (retried calls' outputs are
// never resent); the whole output where the log does not break it out.
func visibleOut(t rollout.Trajectory, a *Accounting, k int) int64 {
	api := apiAt(t, k)
	if v, ok := api.Visible(); ok {
		return v
	}
	return a.Turns[k].Out - api.Retried.Output
}

// nativeDelta is in_k = input_k − input_{k−1} − vis_{k−1} for k ≥ 1 and
// its basis; a basis other than BasisLog and BasisEstimated leaves in_k to
// the fallback.
func nativeDelta(t rollout.Trajectory, c Counter, a *Accounting, k int) (int64, Basis, error) {
	prev, cur := apiAt(t, k-1), apiAt(t, k)
	if prev.Input == rollout.Unrecorded || prev.Output == rollout.Unrecorded {
		return 0, BasisAfterGap, nil
	}
	growth := cur.Input - prev.Input
	if vis, ok := prev.Visible(); ok {
		if growth < vis {
			return 0, BasisHistoryCut, nil
		}
		return growth - vis, BasisLog, nil
	}
	switch {
	case growth >= prev.Output:
		return growth - prev.Output, BasisLog, nil
	case growth < 0:
		return 0, BasisHistoryCut, nil
	}
	i := a.Pairs[k-1][1]
	n, err := messageTokens(t, i, t.Messages[i].Content, c)
	if err != nil {
		return 0, 0, fmt.Errorf("%w (estimating the visible output: the request of turn %d grew by %d tokens, less than turn %d's output of %d, and the log records no reasoning)", err, k+1, growth, k, prev.Output)
	}
	return growth - min(n, growth), BasisEstimated, nil
}

// fallbackInput is in_k without the log's input: the user message's count,
// and for the first turn also the log's own system message, which the
// first request holds.
func fallbackInput(t rollout.Trajectory, user, k int, c Counter) (int64, error) {
	n, err := userTokens(t, user, c)
	if err != nil || k > 0 || len(t.Messages) == 0 || t.Messages[0].Role != "system" {
		return n, err
	}
	s, err := messageTokens(t, 0, t.Messages[0].Content, c)
	return n + s, err
}

// bagenV1Accounting is the authors' conversion of request usage to turn
// usage (token_estimation/env.py, _request_usage_input_includes_history
// and _convert_request_usage_to_turn_usage, mll-lab-nu/BAGEN 58bef4c).
var bagenV1Accounting = accountingRule{history: bagenV1Vote, inputs: bagenV1Inputs}

// bagenV1Visible is _estimate_turn_visible_output_tokens on a turn's
// usage: output − reasoning where the reasoning is recorded (0 included;
// for an estimation dialogue read by Compat.Decode it carries their
// word-ratio estimate), else the whole output; false when the output is
// not recorded.
func bagenV1Visible(api rollout.APITokens) (int64, bool) {
	if v, ok := api.Visible(); ok {
		return v, true
	}
	return max(0, api.Output), api.Output != rollout.Unrecorded
}

// bagenV1Vote: a turn with a recorded input is compared with the last
// recorded input before it plus the previous turn's visible output (when
// known); inputs include the history when at least half of the compared
// turns have input ≥ that baseline.
func bagenV1Vote(t rollout.Trajectory, a Accounting, _ Counter) bool {
	prev := int64(rollout.Unrecorded)
	compared, votes := 0, 0
	for k := range a.Pairs {
		in := apiAt(t, k).Input
		if prev != rollout.Unrecorded && in != rollout.Unrecorded {
			compared++
			base := prev
			if v, ok := bagenV1Visible(apiAt(t, k-1)); ok {
				base += v
			}
			if in >= base {
				votes++
			}
		}
		if in != rollout.Unrecorded {
			prev = in
		}
	}
	return compared > 0 && 2*votes >= compared
}

// bagenV1Inputs: with history-inclusive inputs, in_k = max(0, input_k −
// the last recorded input before it − the previous visible output); else
// the input as recorded. A clamped delta is counted as BasisHistoryCut
// (its value stays 0, as theirs). A turn without a recorded input, which
// their prompt shows as "unknown tokens", falls back to the message count.
func bagenV1Inputs(t rollout.Trajectory, c Counter, a *Accounting, src InputSource) error {
	prev := int64(rollout.Unrecorded)
	for k, p := range a.Pairs {
		api := apiAt(t, k)
		in, basis := api.Input, BasisLog
		switch {
		case api.Input == rollout.Unrecorded:
			var err error
			if in, err = fallbackInput(t, p[0], k, c); err != nil {
				return err
			}
			basis = BasisNoUsage
		case src == InputAPIDeltas && prev != rollout.Unrecorded:
			base := prev
			if v, ok := bagenV1Visible(apiAt(t, k-1)); ok {
				base += v
			}
			if in = api.Input - base; in < 0 {
				in, basis = 0, BasisHistoryCut
			}
		}
		if api.Input != rollout.Unrecorded {
			prev = api.Input
		}
		a.Turns[k].In, a.Basis[k] = in, basis
	}
	return nil
}
