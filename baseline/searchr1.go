package baseline

import (
	"math"
	"regexp"
	"slices"
	"strings"
)

// The Search-R1 features read the agent's search[query] and finish[answer]
// actions and the <information> results: a run that repeats its queries
// and keeps getting the same documents is lost; one whose results name the
// question's words is closing in.
var searchGroup = &group{
	name: "searchr1",
	task: "searchr1",
	features: []Feature{
		{"sr_searches", "searchr1", "search actions so far"},
		{"sr_query_repeat", "searchr1", "share of queries that repeat an earlier one"},
		{"sr_last_repeat", "searchr1", "1 when the last query repeats an earlier one"},
		{"sr_new_titles_last", "searchr1", "share of the last result's documents not retrieved before"},
		{"sr_log_titles", "searchr1", "log(1 + distinct documents retrieved)"},
		{"sr_question_hits", "searchr1", "share of the question's words in the retrieved documents' titles"},
		{"sr_last_hits", "searchr1", "share of the question's words in the last result"},
		{"sr_invalid", "searchr1", "share of answers that are neither search[…] nor finish[…]"},
	},
	fill: fillSearch,
}

var (
	searchRe   = regexp.MustCompile(`^search\[(.*)\]$`)
	titleRe    = regexp.MustCompile(`\(Title: "([^"]*)"\)`)
	questionRe = regexp.MustCompile(`Question: ([^\n]*)`)
)

func fillSearch(v *View, out []float64) {
	var queries []string
	repeats, invalid := 0, 0
	for _, a := range v.Answers {
		act := answerOf(a)
		m := searchRe.FindStringSubmatch(act)
		switch {
		case m != nil:
			q := strings.ToLower(strings.TrimSpace(m[1]))
			if slices.Contains(queries, q) {
				repeats++
			}
			queries = append(queries, q)
		case !strings.HasPrefix(act, "finish["):
			invalid++
		}
	}
	out[0] = float64(len(queries))
	if len(queries) > 0 {
		out[1] = float64(repeats) / float64(len(queries))
		last := queries[len(queries)-1]
		out[2] = b2f(slices.Contains(queries[:len(queries)-1], last))
	}
	if len(v.Answers) > 0 {
		out[7] = float64(invalid) / float64(len(v.Answers))
	}
	seen := map[string]bool{}
	var titles strings.Builder
	for i, o := range v.Observations {
		if i == 0 {
			continue
		}
		fresh, all := 0, 0
		for _, m := range titleRe.FindAllStringSubmatch(o, -1) {
			t := strings.ToLower(m[1])
			all++
			if !seen[t] {
				fresh++
				seen[t] = true
				titles.WriteString(t + " ")
			}
		}
		if i == len(v.Observations)-1 && all > 0 {
			out[3] = float64(fresh) / float64(all)
		}
	}
	out[4] = math.Log1p(float64(len(seen)))
	if len(v.Observations) == 0 {
		return
	}
	q := questionWords(v.Observations[0])
	out[5] = hits(q, titles.String())
	if len(v.Observations) > 1 {
		out[6] = hits(q, strings.ToLower(v.LastObservation()))
	}
}

// questionWords are the question's words of four letters or more.
func questionWords(first string) []string {
	m := questionRe.FindStringSubmatch(first)
	if m == nil {
		return nil
	}
	var out []string
	for _, w := range appendWords(nil, "", m[1]) {
		if len(w) >= 4 && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// hits is the share of ws found in text (lower-cased).
func hits(ws []string, text string) float64 {
	if len(ws) == 0 {
		return 0
	}
	n := 0
	for _, w := range ws {
		if strings.Contains(text, w) {
			n++
		}
	}
	return float64(n) / float64(len(ws))
}
