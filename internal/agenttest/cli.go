package agenttest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"bagen-data/internal/testenv"

	"bagen-data/internal/cache"
)

// Agent names a coding-agent CLI.
type Agent string

// The CLIs `make agents` installs.
const (
	Claude Agent = "claude" // Claude Code: Anthropic Messages
	Codex  Agent = "codex"  // Codex: OpenAI Responses
	Qwen   Agent = "qwen"   // Qwen Code: OpenAI Chat Completions
)

// BinDir is where `make agents` installs the CLIs:
// $BAGEN_DATA_CACHE/agents/node_modules/.bin.
func BinDir() string {
	d, err := cache.Path("agents", "node_modules", ".bin")
	if err != nil {
		return filepath.Join(os.TempDir(), "agents", "node_modules", ".bin")
	}
	return d
}

// Binary is the path of a CLI (or of ccusage) in BinDir.
func Binary(name string) string { return filepath.Join(BinDir(), name) }

// Available reports why a CLI cannot run here, nil when it can.
func Available(a Agent) error {
	p := Binary(string(a))
	if _, err := os.Stat(p); err != nil {
		return fmt.Errorf("%s is not installed (run `make agents`): %w", a, err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		return fmt.Errorf("%s needs node: %w", a, err)
	}
	return nil
}

// CLI is one headless run of a coding-agent CLI against a model server.
// The zero values of the optional fields are documented defaults.
type CLI struct {
	Agent   Agent
	BaseURL string // the model server, http://host:port (no /v1)
	Prompt  string
	// Model is the model name the CLI asks for; zero means "agenttest-model".
	Model string
	// APIKey is the key the CLI sends upstream; zero means "agenttest-key".
	APIKey string
	// Home is the run's HOME (the session logs land under it); zero means a
	// new temporary directory.
	Home string
	// Dir is the working directory; zero means Home/work.
	Dir string
	// Timeout bounds the run; zero means 3 minutes.
	Timeout time.Duration
	// Env adds variables (NAME=value) after the ones the runner sets.
	Env []string
}

// Result is how a run ended.
type Result struct {
	ExitCode int
	Stdout   string
	Stderr   string
	Home     string // the run's HOME
	Dir      string // the working directory
}

// Run runs c for a test: it skips the test when the CLI is not installed
// and fails it when the CLI cannot be started or times out. A CLI that
// exits non-zero is not a failure here; check Result.ExitCode.
func Run(tb testing.TB, c CLI) Result {
	tb.Helper()
	testenv.Need(tb, string(c.Agent), Available(c.Agent))
	if c.Home == "" {
		c.Home = tb.TempDir()
	}
	res, err := c.Run(context.Background())
	if err != nil {
		tb.Fatalf("agenttest: %v\nstdout:\n%s\nstderr:\n%s", err, res.Stdout, res.Stderr)
	}
	return res
}

// Run runs the CLI headless and waits for it. The error is nil when the
// CLI ran to an exit, whatever its status.
func (c CLI) Run(ctx context.Context) (Result, error) {
	if err := Available(c.Agent); err != nil {
		return Result{}, err
	}
	c = c.withDefaults()
	res := Result{Home: c.Home, Dir: c.Dir}
	if c.Home == "" {
		h, err := os.MkdirTemp("", "agenttest-home-")
		if err != nil {
			return res, err
		}
		c.Home, res.Home = h, h
		if c.Dir == "" {
			c.Dir, res.Dir = filepath.Join(h, "work"), filepath.Join(h, "work")
		}
	}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return res, err
	}
	args, env, err := c.setup()
	if err != nil {
		return res, fmt.Errorf("%s: set up %s: %w", c.Agent, c.Home, err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, Binary(string(c.Agent)), args...)
	cmd.Dir = c.Dir
	cmd.Env = env
	cmd.Stdin = strings.NewReader("")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	setGroup(cmd)
	cmd.Cancel = func() error { killGroup(cmd); return nil }
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	res.Stdout, res.Stderr = out.String(), errb.String()
	if ctx.Err() != nil {
		return res, fmt.Errorf("%s: no exit within %v", c.Agent, c.Timeout)
	}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		res.ExitCode = exit.ExitCode()
	case err != nil:
		return res, fmt.Errorf("%s: %w", c.Agent, err)
	}
	return res, nil
}

func (c CLI) withDefaults() CLI {
	if c.Model == "" {
		c.Model = "agenttest-model"
	}
	if c.APIKey == "" {
		c.APIKey = "agenttest-key"
	}
	if c.Timeout == 0 {
		c.Timeout = 3 * time.Minute
	}
	if c.Home != "" && c.Dir == "" {
		c.Dir = filepath.Join(c.Home, "work")
	}
	return c
}

// baseEnv is the environment every CLI gets: its own HOME, the PATH, and
// no proxies or inherited keys.
func (c CLI) baseEnv() []string {
	env := []string{
		"HOME=" + c.Home,
		"PATH=" + os.Getenv("PATH"),
		"LANG=C.UTF-8",
		"TERM=dumb",
		"NO_COLOR=1",
		"CI=1",
		"XDG_CONFIG_HOME=" + filepath.Join(c.Home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(c.Home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(c.Home, ".local", "share"),
		"TMPDIR=" + os.TempDir(),
	}
	return env
}

// setup writes the CLI's configuration under Home and returns its
// arguments and environment.
func (c CLI) setup() ([]string, []string, error) {
	env := c.baseEnv()
	var args []string
	switch c.Agent {
	case Claude:
		env = append(env,
			"ANTHROPIC_BASE_URL="+c.BaseURL,
			"ANTHROPIC_API_KEY="+c.APIKey,
			"ANTHROPIC_MODEL="+c.Model,
			"ANTHROPIC_SMALL_FAST_MODEL="+c.Model,
			"ANTHROPIC_DEFAULT_HAIKU_MODEL="+c.Model,
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
			"DISABLE_AUTOUPDATER=1",
			"DISABLE_TELEMETRY=1",
			"DISABLE_ERROR_REPORTING=1",
			"DISABLE_BUG_COMMAND=1",
			"CLAUDE_CODE_ENABLE_TELEMETRY=0",
			"CLAUDE_CODE_IDE_SKIP_AUTO_INSTALL=1",
		)
		args = []string{"-p", c.Prompt, "--allowedTools", "Bash", "--model", c.Model}
	case Codex:
		codexHome := filepath.Join(c.Home, ".codex")
		if err := os.MkdirAll(codexHome, 0o755); err != nil {
			return nil, nil, err
		}
		if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(c.codexConfig()), 0o644); err != nil {
			return nil, nil, err
		}
		env = append(env, "CODEX_HOME="+codexHome, "AGENTTEST_API_KEY="+c.APIKey)
		args = []string{"exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "-m", c.Model, c.Prompt}
	case Qwen:
		qwenDir := filepath.Join(c.Home, ".qwen")
		if err := os.MkdirAll(qwenDir, 0o755); err != nil {
			return nil, nil, err
		}
		if err := os.WriteFile(filepath.Join(qwenDir, "settings.json"), []byte(qwenSettings), 0o644); err != nil {
			return nil, nil, err
		}
		env = append(env,
			"OPENAI_API_KEY="+c.APIKey,
			"OPENAI_BASE_URL="+c.BaseURL+"/v1",
			"OPENAI_MODEL="+c.Model,
			"QWEN_USAGE_STATISTICS_ENABLED=0",
			"QWEN_TELEMETRY_ENABLED=0",
			"QWEN_CODE_DISABLE_PRECONNECT=1",
			"QWEN_CODE_SUPPRESS_YOLO_WARNING=1",
		)
		args = []string{"-p", c.Prompt, "--auth-type", "openai", "--model", c.Model, "--yolo"}
	default:
		return nil, nil, fmt.Errorf("unknown agent %q", c.Agent)
	}
	return args, append(env, c.Env...), nil
}

// codexConfig is Codex's config.toml: one provider at BaseURL speaking the
// Responses API, no update checks, no analytics.
func (c CLI) codexConfig() string {
	return fmt.Sprintf(`model = %q
model_provider = "agenttest"
check_for_update_on_startup = false

[model_providers.agenttest]
name = "agenttest"
base_url = %q
wire_api = "responses"
env_key = "AGENTTEST_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[otel]
exporter = "none"
`, c.Model, c.BaseURL+"/v1")
}

// qwenSettings turns off Qwen Code's usage statistics, telemetry, update
// checks and background memory agents (which would call the model on
// their own, with the shell tool offered, after the session's answer).
const qwenSettings = `{
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false},
  "general": {"enableAutoUpdate": false},
  "memory": {"enableManagedAutoMemory": false, "enableManagedAutoDream": false, "enableAutoSkill": false}
}
`
