package cli

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bagen-data/dataset"
)

// outputsRun is the fixed set of commands whose every output file
// TestOutputsStayByteIdentical digests. Paths are relative to the run's
// directory, where "repo" links to the module's directory (so that the
// paths the outputs record do not depend on where the module is checked out).
var outputsRun = [][]string{
	{"build", "-q", "--input", "repo/fixtures/rollouts/sokoban", "--task", "sokoban", "--budget", "2500", "--width", "pct30", "--out", "data"},
	{"build", "-q", "--compat", "bagen-v1", "--width", "pct10", "--out", "v1"},
	{"build", "-q", "--task", "swebench", "--input", "repo/rollout/testdata/mini2", "--accounting", "replay", "--split", "0/0/100", "--budget", "5000", "--out", "replay"},
	{"probes", "--task", "sokoban", "--out", "sokoban-probes.parquet"},
	{"probes", "--task", "warehouse", "--preset", "bagen-v1", "--out", "warehouse.parquet"},
	{"probes", "--task", "swebench", "--input", "repo/probes/testdata/replay/swebench.jsonl", "--budget", "median", "--max-samples", "128", "--out", "swebench-probes.parquet"},
	{"convert", "-i", "repo/rollout/testdata/sessions", "--out", "sessions.jsonl"},
	{"eval", "-q", "--data", "data/eval/test.parquet", "--predictions", "preds.jsonl", "--json", "eval.json", "--bootstrap", "200"},
	{"reward", "score", "--data", "data/eval/test.parquet", "--predictions", "preds.jsonl", "--out", "scored.jsonl"},
}

// outputsDigests is the sha256 of every file the run writes, pinned when
// the house was redesigned: a move of code that changes any byte of a
// dataset, a manifest, a probe set, a converted log, an eval or a score
// fails here.
const outputsDigests = `477795af7b5c43f5e7c87280bec56974c3ca0d4ff031897b29b50f6ea5c4a085  data/eval/test.parquet
771f2747030ceff5d8f2f6263d30d794365832022912b7c1603a665c7f1753d4  data/manifest.json
6d26b4d76000a134508fe5885b33f4b8bc4befd1357e7746cab83a146f49820c  data/rl/train.parquet
bfc243201ca6ef211841ce72a44e2e6c9f625adb983850efd1673dfcb213539a  data/sft/train.parquet
0ba2a1af814bc7e2d63244fce5a6fb6b002efe5290a6b8ef8f578b110ef57e1b  eval.json
2ce8b71a619431d04fc5f726d107668d6c590a7bfd8b12ae1879ee33436bde3c  preds.jsonl
a06158334a0b511696708fd3658530c1c43c2d9fecad93343a823ad49b9e3bd3  replay/eval/test.parquet
a43152cdef7727452ad82dc7e148b822f01bde1afe34ab218db85d61cd33d4dc  replay/manifest.json
aca69dba8c13c6ed9243a0320832aa35d4f53eb4e7fb0cecfba25b929876f80d  replay/rl/train.parquet
34eda283888e576817f59d3e53c4eaf6264c423bba1884377a1e6e2a3d54f0e6  replay/sft/train.parquet
2d72b57ebcf2fa13cec211d217992e25ae3ed0d0b2ce44358d1de3afcb46621e  scored.jsonl
7cae5a97ff6094e864473b8f8c1cff7fb2a6abebef6b6505100498150b1db2d2  sessions.jsonl
d011ad2855cb6c6c0a62a6cb3994ed7ba978c38fa8d6bd722b8ef3895a799a73  sokoban-probes.parquet
a74f532860d647ac97b507c58ea6a47396dbf65cc6a1489b670f753b9216de57  swebench-probes.parquet
6dc8bc0df30e917f43ac081d6be44302d77106c8cf0c871110a6ebc10c237a17  v1/eval/test.parquet
e8de5b1630795adf9f12977f9d7d70bacb0a212a9c8d44193640d8cff7f5991c  v1/manifest.json
8f783f7e51b5467a4bd53b4de90b43f8fa1bf74294b1ac19b7d4e3cf52c853b8  v1/rl/train.parquet
e883989573fbfbb600fe8a7314cb4f06d2199052189f35373426e06ed07e6409  v1/sft/train.parquet
db65a9e897cbeb59aaee9555989497616273a7adb7de1c52cde7bb6b6eaa8224  warehouse.parquet
`

// TestOutputsStayByteIdentical runs build, probes, convert, eval and
// reward score on the embedded fixtures and recorded logs and compares the
// digest of every file they write with the pinned list.
func TestOutputsStayByteIdentical(t *testing.T) {
	needTokenizer(t)
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.Symlink(repo, "repo"); err != nil {
		t.Fatal(err)
	}
	for _, args := range outputsRun {
		if args[0] == "eval" {
			writeOutputsPredictions(t, "data/eval/test.parquet", "preds.jsonl")
		}
		if code := Main(append([]string{"bagen-data"}, args...)); code != 0 {
			t.Fatalf("%s: exit %d", strings.Join(args, " "), code)
		}
	}
	got := digestTree(t, dir)
	if got != outputsDigests {
		t.Errorf("outputs changed:\n%s", got)
	}
}

// writeOutputsPredictions answers every probe of data with a fixed rule
// of its position: every third impossible, the others a range around the
// tokens spent so far.
func writeOutputsPredictions(t *testing.T, data, out string) {
	t.Helper()
	if _, err := os.Stat(out); err == nil {
		return
	}
	rows, err := dataset.ReadRL(data)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i, r := range rows {
		answer := "<answer>impossible</answer>"
		if i%3 != 0 {
			used := r.ExtraInfo.TokensUsed
			answer = fmt.Sprintf("<answer>[%d, %d]</answer>", used/2+int64(i), used*2+int64(i))
		}
		fmt.Fprintf(&b, "{\"custom_id\":%q,\"response\":%q}\n", r.ExtraInfo.CustomID, answer)
	}
	if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// digestTree lists "sha256  path" for every regular file under dir,
// sorted by path.
func digestTree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		fmt.Fprintf(&b, "%x  %s\n", sha256.Sum256(data), filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
