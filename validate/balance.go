package validate

import (
	"fmt"

	"bagen-data/dataset"
	"bagen-data/rollout"
)

// chatFraming approximates the tokens ChatML adds around a prompt:
// "<|im_start|>role\n" … "<|im_end|>\n" is 5 tokens per message, and the
// generation prompt "<|im_start|>assistant\n" 3 more.
const (
	framingPerMessage = 5
	framingGeneration = 3
)

// promptTokens counts a prompt as a chat template renders it.
func (v *validator) promptTokens(msgs []rollout.Message) int {
	n := framingGeneration
	for _, m := range msgs {
		n += v.cfg.Counter.Count(m.Content) + framingPerMessage
	}
	return n
}

// checkLength warns about prompts longer than MaxPromptTokens.
func (v *validator) checkLength(f *file, at loc, msgs []rollout.Message) {
	if v.cfg.Counter == nil {
		return
	}
	n := v.promptTokens(msgs)
	if n > v.longest {
		v.longest, v.longLoc = n, at
	}
	if n > v.cfg.MaxPromptTokens {
		v.fs.add(CheckSize, Warning, "prompt-too-long", f.path,
			fmt.Sprintf("prompts longer than %d tokens (verl's max_prompt_length filters or truncates them)", v.cfg.MaxPromptTokens),
			at.example(fmt.Sprintf("%d tokens", n)))
	}
}

// balance reports each file's classes and duplicates, against the manifest
// when there is one.
func (v *validator) balance(f *file, s FileSummary) {
	file := Example{File: f.path, Row: -1}
	say := func(level Level, code, summary, msg string) {
		e := file
		e.Message = msg
		v.fs.add(CheckBalance, level, code, "", summary, e)
	}
	ratio := "n/a"
	if s.Possible > 0 {
		ratio = fmt.Sprintf("%.2f", float64(s.Impossible)/float64(s.Possible))
	}
	v.fs.add(CheckBalance, Info, "classes", "", "class counts", Example{File: f.path, Row: -1, Message: fmt.Sprintf("%s: %d possible, %d impossible (impossible/possible %s)", f.split, s.Possible, s.Impossible, ratio)})
	if s.Rows > 0 && (s.Possible == 0 || s.Impossible == 0) {
		say(Warning, "class-missing", "splits without one of the classes (F1 and recall of the absent class are undefined)",
			fmt.Sprintf("%d possible, %d impossible", s.Possible, s.Impossible))
	}
	var ms dataset.SplitStats
	known := false
	if v.manifest != nil && !f.probeSet {
		ms, known = v.manifest.Splits.ByName(f.split)
	}
	if known && (ms.Rows.Possible != s.Possible || ms.Rows.Impossible != s.Impossible) {
		say(Warning, "manifest-counts", "class counts differ from the manifest's",
			fmt.Sprintf("%d possible, %d impossible; manifest says %d, %d", s.Possible, s.Impossible, ms.Rows.Possible, ms.Rows.Impossible))
	}
	dups, impDups := duplicates(f)
	train := f.split == dataset.SplitSFT || f.split == dataset.SplitRL
	switch {
	case dups == 0:
	case known && ms.Duplicates == dups:
		say(Info, "oversampled", "duplicate rows (oversampled possible probes, as the manifest records)", fmt.Sprintf("%s: %d duplicate rows", f.split, dups))
	case train && v.manifest == nil && impDups == 0:
		say(Info, "oversampled", "duplicate rows (possible probes are oversampled in training splits)", fmt.Sprintf("%s: %d duplicate rows, all possible", f.split, dups))
	default:
		say(Warning, "duplicates", "rows repeating an earlier row's custom_id beyond what the manifest records (build duplicates possible probes only)",
			fmt.Sprintf("%d duplicate rows (%d possible, %d impossible)", dups, dups-impDups, impDups))
	}
}

// duplicates counts rows whose custom_id appeared earlier in the file, and
// how many of them are impossible probes (SFT: answer "impossible").
func duplicates(f *file) (n, impossible int) {
	seen := map[string]bool{}
	count := func(id string, possible bool) {
		if seen[id] {
			n++
			if !possible {
				impossible++
			}
		}
		seen[id] = true
	}
	for _, r := range f.sft {
		possible, _ := sftClass(r)
		count(r.CustomID, possible)
	}
	for _, r := range f.rl {
		count(r.ExtraInfo.CustomID, r.ExtraInfo.IsPossible)
	}
	return n, impossible
}
