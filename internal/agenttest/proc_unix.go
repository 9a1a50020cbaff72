//go:build unix

package agenttest

import (
	"os/exec"
	"syscall"
)

// setGroup starts cmd in its own process group, so that a timeout also
// stops the processes a CLI spawns (its shell commands, Codex's native
// binary).
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills cmd's process group.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
