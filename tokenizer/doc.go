// Package tokenizer counts and produces the token ids of Qwen2/Qwen3's
// byte-level BPE tokenizer exactly as Hugging Face's tokenizers library does
// for the model's tokenizer.json, with encode(text,
// add_special_tokens=False).
//
// Token counts are the paper's internal budget: the per-turn cost c_t^in,
// the cumulative cost C_k^in checked against the cap B^in (§3.1, "Budget
// Modalities"), and the remaining-token label r of every probe (appendix
// "Detailed Settings for Estimation RL and SFT"). They must be the counts
// the model's own tokenizer gives, token for token. The pipeline is Hugging
// Face's, in its order:
//
//  1. added tokens (<|im_start|>, <think>, …) are cut out of the raw text,
//     leftmost-longest, and each is one token;
//  2. each remaining segment is put in Unicode NFC;
//  3. the Split pre-tokenizer cuts it with Qwen2Pattern, with Oniguruma's
//     semantics: \s is Unicode White_Space, and (?i) folds ſ (U+017F) to s;
//  4. each piece's UTF-8 bytes are mapped to GPT-2's byte-level alphabet;
//  5. BPE repeatedly merges the adjacent pair with the lowest merge rank,
//     the leftmost one on ties.
//
// The tokenizer is written by hand rather than taken from a library for two
// reasons. Parity: Go's regexp has no lookahead for \s+(?!\S), and
// github.com/ollama/ollama/tokenizer, the Go BPE at hand, does not merge
// lowest-rank-leftmost: it gives 5 tokens for "\nCHAPTER XXIII" where
// Hugging Face gives [198 87439 29288 22615], and differs on 68 of the 524
// strings of testdata/golden.jsonl that have no added token, Sokoban grids
// among them. Speed: a matcher over
// runes, merges keyed by id pairs and a bounded per-word cache count English
// prose at over 100 MB/s on one core without allocating (BenchmarkCount).
// A call takes one of a few word caches for its whole length, so goroutines
// sharing a Tokenizer pay no lock or atomic operation per word
// (BenchmarkCountParallel).
//
// Text that is not valid UTF-8 (which Hugging Face cannot receive) is
// tokenized byte for byte: each invalid byte is a symbol of its own class
// and is encoded by its byte-level token.
package tokenizer
