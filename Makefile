# onellm-mcp: `make run` serves the embedded default over stdio; `make test`
# runs every test (unit with -race, fuzz seeds, e2e).
GO      ?= go
BIN     ?= bin/onellm-mcp
# The sandbox helper alone (cmd/onellm-sandbox), built beside $(BIN): the
# server reads it once into a sealed memfd and starts every helper from
# there when its SHA-256 is the one linked into the server (README, "Build").
HELPER  := $(dir $(BIN))onellm-sandbox
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT)
HELPER_DIGEST_VAR := github.com/onellm/onellm-mcp/shelltool/sandbox.helperSHA256
FUZZTIME ?= 10s

# A host may run `make -C /path/to/onellm-mcp run`: make's "Entering
# directory" lines would otherwise go to the MCP stdout. GNU make 4.4.1 and
# later apply this line to the make that reads it; older ones print the
# line for -C before reading any Makefile, so there the host runs
# `make -s -C /path/to/onellm-mcp run` (README, "Quick start").
MAKEFLAGS += --no-print-directory

.PHONY: build run run-http test test-unit test-e2e bench fuzz-short vet clean

# The helper first: the server is linked with its digest.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -o $(HELPER) ./cmd/onellm-sandbox
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS) -X $(HELPER_DIGEST_VAR)=$$(sha256sum $(HELPER) | cut -d' ' -f1)" -o $(BIN) ./cmd/onellm-mcp

# Serve the embedded default (profile interactive-dev, workspace = this folder) over stdio.
# stdout carries only the server's MCP messages: make echoes nothing, and the
# build's own output goes to stderr.
run:
	@$(MAKE) --no-print-directory -s build >&2
	@exec ./$(BIN) serve

# Serve streamable HTTP on loopback (stdout, likewise, is the server's alone).
run-http:
	@$(MAKE) --no-print-directory -s build >&2
	@exec ./$(BIN) serve --http 127.0.0.1:8080

# Every test: unit tests with the race detector (fuzz seed corpora run as
# ordinary tests), then the end-to-end tests against the built binary.
test: vet test-unit test-e2e

vet:
	$(GO) vet ./...

test-unit:
	$(GO) test -race -count=1 $$($(GO) list ./... | grep -v /e2e)

test-e2e:
	$(GO) test -count=1 -timeout 10m ./e2e/...

bench:
	$(GO) test -run=NONE -bench=. -benchmem ./...

# A short run of every fuzzer ($(FUZZTIME) each).
fuzz-short:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run=NONE -fuzz="^$$f$$" -fuzztime=$(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

clean:
	rm -rf bin
