package cli

import (
	"errors"

	ucli "github.com/urfave/cli/v2"
)

// Build is the `bagen-data build` command.
var Build = &ucli.Command{
	Name:  "build",
	Usage: "turn rollout logs into SFT, RL and eval probe parquet",
	Action: func(*ucli.Context) error {
		return errors.New("build: not implemented yet")
	},
}
