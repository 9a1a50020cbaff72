package agenttest

// Scripts are the sessions the readers' test data was made from
// (tools/agentsessions) and the live tests replay: every one ends in a
// final answer; between them they have cached, cache-written and reasoning
// tokens, text beside a tool call, and a call with reasoning only.
var Scripts = map[string]Script{
	// two-calls writes a file, reads it back and answers.
	"two-calls": {Answers: []Answer{
		{Command: "echo one > one.txt", Text: "Writing one.", Usage: Usage{Input: 1200, Cached: 1000, Output: 30, Reasoning: 10}},
		{Command: "cat one.txt", Reasoning: "Check the file.", Usage: Usage{Input: 1300, Cached: 1100, Output: 20, Reasoning: 5}},
		{Text: "The file holds one.", Usage: Usage{Input: 1400, Cached: 1200, Output: 12}},
	}},
	// answer answers at once, after thinking, with a cache write.
	"answer": {Answers: []Answer{
		{Text: "Nothing to run: the answer is 4.", Reasoning: "2 + 2 is 4.", Usage: Usage{Input: 900, CacheWrite: 800, Output: 25, Reasoning: 9}},
	}},
	// three-calls lists, counts and cleans up, with growing cache reads.
	"three-calls": {Answers: []Answer{
		{Command: "printf 'a\\nb\\nc\\n' > list.txt", Text: "Making the list.", Usage: Usage{Input: 2000, CacheWrite: 1500, Output: 41, Reasoning: 0}},
		{Command: "wc -l < list.txt", Reasoning: "Count the lines.", Usage: Usage{Input: 2100, Cached: 1500, Output: 33, Reasoning: 7}},
		{Command: "rm list.txt", Usage: Usage{Input: 2200, Cached: 2050, Output: 18}},
		{Text: "The list had 3 lines; it is removed.", Usage: Usage{Input: 2300, Cached: 2150, Output: 16, Reasoning: 3}},
	}},
}

// Prompts are the user prompts the scripts answer.
var Prompts = map[string]string{
	"two-calls":   "Write one.txt and read it back.",
	"answer":      "What is 2 + 2?",
	"three-calls": "Make a list of three lines, count them and remove it.",
}

// Usages is the usage of each answer, in order: what a session that
// follows the script to its end reports.
func (s Script) Usages() []Usage {
	out := make([]Usage, len(s.Answers))
	for i, a := range s.Answers {
		out[i] = a.Usage
	}
	return out
}
