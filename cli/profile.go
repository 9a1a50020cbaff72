package cli

import (
	"fmt"
	"os"
	"runtime/pprof"

	ucli "github.com/urfave/cli/v2"
)

// cpuProfileFlag writes a CPU profile of the whole run, for `go tool pprof`.
var cpuProfileFlag = &ucli.StringFlag{Name: "cpuprofile", Usage: "write a CPU profile to `FILE`", Hidden: true}

func startProfile(c *ucli.Context) error {
	path := c.String("cpuprofile")
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("cpuprofile: %w", err)
	}
	return pprof.StartCPUProfile(f)
}

func stopProfile(c *ucli.Context) error {
	if c.String("cpuprofile") != "" {
		pprof.StopCPUProfile()
	}
	return nil
}
