package cli

import (
	"errors"
	"fmt"
	"os"
	"runtime/pprof"
	"sync"

	ucli "github.com/urfave/cli/v2"
)

// cpuProfileFlag writes a CPU profile of the whole run, for `go tool pprof`.
// It is accepted before the command name (`bagen-data --cpuprofile F build`)
// and among the command's own flags (`bagen-data build --cpuprofile F`).
var cpuProfileFlag = &ucli.StringFlag{Name: "cpuprofile", Usage: "write a CPU profile of the run to `FILE` (for go tool pprof)"}

// The commands take the flag too: init runs after the package's command
// variables are set.
func init() {
	for _, c := range []*ucli.Command{Build, Convert, Reward, Validate, Eval, Fixtures, GRPO, Probes, Guard} {
		addProfileFlag(c)
	}
}

// addProfileFlag gives every command that runs an action the --cpuprofile
// flag, starting the profile before the action and stopping it after.
func addProfileFlag(c *ucli.Command) {
	for _, sub := range c.Subcommands {
		addProfileFlag(sub)
	}
	if c.Action == nil {
		return
	}
	c.Flags = append(c.Flags, cpuProfileFlag)
	before, after := c.Before, c.After
	c.Before = func(ctx *ucli.Context) error {
		if err := startProfile(ctx); err != nil {
			return err
		}
		if before != nil {
			return before(ctx)
		}
		return nil
	}
	c.After = func(ctx *ucli.Context) error {
		var err error
		if after != nil {
			err = after(ctx)
		}
		return errors.Join(err, stopProfile(ctx))
	}
}

// profile is the running CPU profile, if any: the flag given both before
// and after the command name starts one profile (the command's value wins).
var profile struct {
	mu sync.Mutex
	f  *os.File
}

func startProfile(c *ucli.Context) error {
	path := c.String("cpuprofile")
	if path == "" {
		return nil
	}
	profile.mu.Lock()
	defer profile.mu.Unlock()
	if profile.f != nil {
		if profile.f.Name() == path {
			return nil
		}
		pprof.StopCPUProfile()
		profile.f.Close()
		profile.f = nil
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("cpuprofile: %w", err)
	}
	profile.f = f
	return nil
}

func stopProfile(*ucli.Context) error {
	profile.mu.Lock()
	defer profile.mu.Unlock()
	if profile.f == nil {
		return nil
	}
	pprof.StopCPUProfile()
	err := profile.f.Close()
	profile.f = nil
	if err != nil {
		return fmt.Errorf("cpuprofile: %w", err)
	}
	return nil
}
