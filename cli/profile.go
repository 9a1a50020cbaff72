package cli

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"sync"

	ucli "github.com/urfave/cli/v3"
)

// cpuProfileFlag writes a CPU profile of the whole run, for `go tool pprof`.
// A flag of the tool's, it is accepted before the command name
// (`bagen-data --cpuprofile F build`) and among any command's flags
// (`bagen-data build --cpuprofile F`): urfave/cli passes it down.
var cpuProfileFlag = &ucli.StringFlag{Name: "cpuprofile", Usage: "write a CPU profile of the run to `FILE` (for go tool pprof)"}

// profile is the running CPU profile, if any.
var profile struct {
	mu sync.Mutex
	f  *os.File
}

// startProfile starts the CPU profile --cpuprofile names, if any; the
// tool's After, stopProfile, ends it.
func startProfile(ctx context.Context, c *ucli.Command) (context.Context, error) {
	path := c.String("cpuprofile")
	if path == "" {
		return ctx, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return ctx, fmt.Errorf("cpuprofile: %w", err)
	}
	profile.mu.Lock()
	defer profile.mu.Unlock()
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return ctx, fmt.Errorf("cpuprofile: %w", err)
	}
	profile.f = f
	return ctx, nil
}

func stopProfile(context.Context, *ucli.Command) error {
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
