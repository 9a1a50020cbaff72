//go:build !unix

package ollamatest

import (
	"os"
	"os/exec"
)

func setGroup(*exec.Cmd) {}

func signalGroup(cmd *exec.Cmd, kill bool) {
	if kill {
		_ = cmd.Process.Kill()
		return
	}
	_ = cmd.Process.Signal(os.Interrupt)
}
