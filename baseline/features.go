package baseline

import (
	"fmt"
	"hash/fnv"
	"math"
	"regexp"
	"slices"
	"strings"

	"bagen-data/reward"
)

// Feature is one named input of the models, read from a probe's text.
type Feature struct {
	Name  string `json:"name"`
	Group string `json:"group"`
	Doc   string `json:"doc"`
}

// group is a family of features: the generic ones every task has, the
// learned word score, or one task's (Task names it).
type group struct {
	name     string
	task     string // "" for every task
	features []Feature
	// fill writes the group's values for v into out (len(features)).
	fill func(v *View, out []float64)
}

// Group names, the units of --features and of the README's ablation.
const (
	GroupNumeric = "numeric" // what the estimation prompt states
	GroupRepeat  = "repeat"  // repeated observations and actions, error results
	GroupWords   = "words"   // the cross-fitted naive-Bayes word score
	GroupTask    = "task"    // the task's own file (sokoban.go, searchr1.go)
)

// Groups is every group name, in the order features are laid out.
var Groups = []string{GroupNumeric, GroupRepeat, GroupWords, GroupTask}

// groups lists every group; a model uses the generic ones and its task's.
var groups = []*group{numericGroup, repeatGroup, wordsGroup, sokobanGroup, searchGroup}

// layout returns the groups a model of task uses, given the enabled group
// names (GroupTask enables the task's own).
func layout(task string, enabled []string) []*group {
	var out []*group
	for _, g := range groups {
		name := g.name
		if g.task != "" {
			if g.task != task {
				continue
			}
			name = GroupTask
		}
		if slices.Contains(enabled, name) {
			out = append(out, g)
		}
	}
	return out
}

// ParseGroups reads a comma-separated list of group names; "" or "all"
// means every group.
func ParseGroups(s string) ([]string, error) {
	if s == "" || s == "all" {
		return slices.Clone(Groups), nil
	}
	var out []string
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if !slices.Contains(Groups, name) {
			return nil, fmt.Errorf("%w: feature group %q: want %s or all", ErrConfig, name, strings.Join(Groups, ", "))
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	// Layout order, whatever order they were given in.
	slices.SortFunc(out, func(a, b string) int { return slices.Index(Groups, a) - slices.Index(Groups, b) })
	return out, nil
}

var numericGroup = &group{
	name: GroupNumeric,
	features: []Feature{
		{"turns", GroupNumeric, "completed turns k"},
		{"log_used", GroupNumeric, "log(1 + tokens the stated turns spent)"},
		{"spent_share", GroupNumeric, "tokens spent / budget"},
		{"log_left", GroupNumeric, "log(1 + budget left)"},
		{"log_mean_turn", GroupNumeric, "log(1 + mean tokens per completed turn)"},
		{"log_last_turn", GroupNumeric, "log(1 + tokens of the last turn)"},
		{"growth", GroupNumeric, "last turn's tokens / mean turn's"},
		{"first", GroupNumeric, "1 before the first turn (p = 0)"},
		{"log_turns_affordable", GroupNumeric, "log(1 + budget left / mean turn's tokens)"},
	},
	fill: fillNumeric,
}

func fillNumeric(v *View, out []float64) {
	k := v.Turns()
	used := float64(v.Used())
	budget := float64(v.Stated.Budget)
	left := max(budget-used, 0)
	mean, last := 0.0, 0.0
	if k > 0 {
		mean = used / float64(k)
		t := v.Stated.Turns[k-1]
		last = float64(t.In + t.Out)
	}
	growth, affordable := 1.0, left
	if mean > 0 {
		growth, affordable = last/mean, left/mean
	}
	out[0] = float64(k)
	out[1] = math.Log1p(used)
	out[2] = used / budget
	out[3] = math.Log1p(left)
	out[4] = math.Log1p(mean)
	out[5] = math.Log1p(last)
	out[6] = growth
	out[7] = b2f(k == 0)
	out[8] = math.Log1p(affordable)
}

// window bounds how far back a repeat is looked for, and recent how many
// of the newest observations and answers the repeat features read, so
// that they cost the same on a session's 100th turn as on its 10th.
const (
	window = 6
	recent = 12
)

// sameLines is the share of shared lines at which two observations count
// as the same state.
const sameLines = 0.75

var repeatGroup = &group{
	name: GroupRepeat,
	features: []Feature{
		{"obs_repeat", GroupRepeat, "share of the 12 newest observations that repeat one of the 6 before them (≥ 75% of lines shared)"},
		{"obs_same_last", GroupRepeat, "share of lines the last two observations share"},
		{"obs_stuck", GroupRepeat, "consecutive newest observations that repeat the one before (at most 12)"},
		{"ans_repeat", GroupRepeat, "share of the 12 newest answers equal to one of the 6 before them"},
		{"ans_same_last", GroupRepeat, "1 when the last answer equals the one before"},
		{"error_share", GroupRepeat, "share of the 12 newest observations (the task's first message aside) that report an error"},
	},
	fill: fillRepeat,
}

var errorRe = regexp.MustCompile(`(?i)\b(error|exception|traceback|invalid|failed|not found|no such)\b`)

func fillRepeat(v *View, out []float64) {
	from := max(0, len(v.Observations)-recent-window)
	obs := make([][]uint64, len(v.Observations)-from)
	for i, o := range v.Observations[from:] {
		obs[i] = lineSet(o)
	}
	out[0], out[2] = repeats(len(obs), func(i, j int) bool { return jaccard(obs[i], obs[j]) >= sameLines })
	if n := len(obs); n > 1 {
		out[1] = jaccard(obs[n-1], obs[n-2])
	}
	from = max(0, len(v.Answers)-recent-window)
	ans := make([]string, len(v.Answers)-from)
	for i, a := range v.Answers[from:] {
		ans[i] = answerOf(a)
	}
	out[3], _ = repeats(len(ans), func(i, j int) bool { return ans[i] == ans[j] })
	if n := len(ans); n > 1 {
		out[4] = b2f(ans[n-1] == ans[n-2])
	}
	errs, n := 0, 0
	for i := max(1, len(v.Observations)-recent); i < len(v.Observations); i++ {
		n++
		if errorRe.MatchString(v.Observations[i]) {
			errs++
		}
	}
	if n > 0 {
		out[5] = float64(errs) / float64(n)
	}
}

// repeats returns, for n items of which same(i, j) says whether two are
// the same, the share of the recent newest (each after the first) that
// repeat one of the window before them, and how many newest items in a
// row repeat the one before.
func repeats(n int, same func(i, j int) bool) (share, stuck float64) {
	hits, of := 0, 0
	for i := max(1, n-recent); i < n; i++ {
		of++
		for j := i - 1; j >= max(0, i-window); j-- {
			if same(i, j) {
				hits++
				break
			}
		}
	}
	for i := n - 1; i >= 1 && i >= n-recent && same(i, i-1); i-- {
		stuck++
	}
	if of > 0 {
		share = float64(hits) / float64(of)
	}
	return share, stuck
}

// answerOf is an answer's action: its <answer> content, else the whole
// text, trimmed.
func answerOf(s string) string {
	if a, ok := reward.Answer(s); ok {
		return a
	}
	return strings.TrimSpace(s)
}

// lineSet hashes the non-blank lines of s, sorted and deduplicated.
func lineSet(s string) []uint64 {
	var out []uint64
	for line := range strings.Lines(s) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		h := fnv.New64a()
		h.Write([]byte(line))
		out = append(out, h.Sum64())
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// jaccard is |a ∩ b| / |a ∪ b| of two sorted sets; 0 when both are empty.
func jaccard(a, b []uint64) float64 {
	inter, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			inter++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	union := len(a) + len(b) - inter
	if union == 0 {
		return 0
	}
	return float64(inter) / float64(union)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
