package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
)

// childArgs names the environment variable that makes the test binary run
// bagen-data with the JSON-encoded arguments it holds, so a test can run
// the command in a process of its own and kill it.
const childArgs = "BAGEN_DATA_TEST_CHILD_ARGS"

func TestMain(m *testing.M) {
	if v := os.Getenv(childArgs); v != "" {
		var args []string
		if err := json.Unmarshal([]byte(v), &args); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(Main(append([]string{"bagen-data"}, args...)))
	}
	os.Exit(m.Run())
}
