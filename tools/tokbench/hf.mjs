// hf.mjs times Hugging Face's tokenizers (npm tokenizers@0.23.2) on a corpus
// and writes each document's ids: node hf.mjs TOKENIZER CORPUS OUT ROUNDS.
// It prints {"seconds": best round, "threads": cores} on stdout.
import { createRequire } from "node:module";
import { readFileSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { pathToFileURL } from "node:url";

const require = createRequire(pathToFileURL(process.cwd() + "/").href);
const { Tokenizer } = require("tokenizers");
const [tokPath, corpusPath, outPath, roundsArg] = process.argv.slice(2);
const docs = readFileSync(corpusPath, "utf8").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
let best = Infinity;
let encs;
for (let i = 0; i < Number(roundsArg); i++) {
  const tk = Tokenizer.fromFile(tokPath);
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  encs = await tk.encodeBatch(docs, { addSpecialTokens: false });
  const ids = encs.map((e) => e.getIds());
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  best = Math.min(best, s);
  const c = process.cpuUsage(c0); process.stderr.write(`round ${i}: wall ${s.toFixed(3)} s, cpu ${((c.user + c.system) / 1e6).toFixed(3)} s\n`);
  if (i === Number(roundsArg) - 1) {
    writeFileSync(outPath, ids.map((x) => JSON.stringify(Array.from(x))).join("\n") + "\n");
  }
}
process.stdout.write(JSON.stringify({ seconds: best, threads: availableParallelism() }) + "\n");
