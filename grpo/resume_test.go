package grpo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fileDigests maps every file under dir to its SHA-256.
func fileDigests(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		out[p] = fmt.Sprintf("%d %s", len(b), hex.EncodeToString(sum[:]))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A resume whose train.jsonl does not hold what the checkpoint expects
// fails saying so and leaves every file byte-identical; in particular a
// short log is not padded with zero bytes.
func TestResumeVerifiesLogBeforeWriting(t *testing.T) {
	data := synthData()
	dir := t.TempDir()
	if _, err := Train(context.Background(), smallConfig, data, Options{Out: dir, Name: "test"}); err != nil {
		t.Fatal(err)
	}
	st, err := LoadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, LogFile)
	whole, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(whole)) != st.LogSize {
		t.Fatalf("log of %d bytes, checkpoint at %d: want equal after a finished run", len(whole), st.LogSize)
	}
	half := len(whole) / 2
	for _, tc := range []struct {
		name string
		log  []byte
		want string
	}{
		{"shorter", whole[:half], fmt.Sprintf("%s: invalid checkpoint: %d bytes, the checkpoint was taken at %d: the log was truncated or replaced (restore it, or start a new run in a new directory)", logPath, half, st.LogSize)},
		{"record cut at the checkpoint", append(whole[:len(whole)-1:len(whole)-1], 'x', '\n'), fmt.Sprintf("%s: invalid checkpoint: byte %d, where the checkpoint's part ends, is not the end of a record: the log was modified", logPath, st.LogSize)},
		{"garbage inside", append([]byte("{not json}\n"), whole[11:]...), fmt.Sprintf("invalid checkpoint: %s:1: invalid character 'n' looking for beginning of object key string", logPath)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(logPath, tc.log, 0o644); err != nil {
				t.Fatal(err)
			}
			before := fileDigests(t, dir)
			more := smallConfig
			more.Epochs = new(3)
			_, err := Train(context.Background(), more, data, Options{Out: dir, Name: "test", Resume: true})
			if !errors.Is(err, ErrCheckpoint) || err.Error() != tc.want {
				t.Fatalf("got %v\nwant %s (ErrCheckpoint)", err, tc.want)
			}
			if diff := cmp.Diff(before, fileDigests(t, dir)); diff != "" {
				t.Errorf("a failed resume changed files (-before +after):\n%s", diff)
			}
		})
	}
}
