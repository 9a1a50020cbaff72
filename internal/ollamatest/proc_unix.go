//go:build unix

package ollamatest

import (
	"os/exec"
	"syscall"
)

// setGroup starts cmd in its own process group, so that stopping it also
// stops the runner processes `ollama serve` spawns.
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends SIGINT (or SIGKILL when kill is set) to cmd's group.
func signalGroup(cmd *exec.Cmd, kill bool) {
	sig := syscall.SIGINT
	if kill {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig)
}
