# nodeboot — see README.md. `make test` is the whole suite, exactly what CI runs.
SHELL := /usr/bin/env bash
GO ?= go
PKGS ?= ./...
# The suite boots real cloud-init and Ignition and starts kube-apiservers; on
# a fresh machine the first run also builds those tools (see .ci/run).
TEST_TIMEOUT ?= 60m

.PHONY: all build build-tests test test-short bench lint fmt vet fuzz render

all: lint build test

## build: compile everything, and the two binaries into bin/.
build:
	$(GO) build $(PKGS)
	$(GO) build -o bin/nodeboot ./cmd/nodeboot
	$(GO) build -o bin/manager ./cmd/manager

## test: the whole test suite (needs root for the cloud-init and Ignition first-boot tests).
## Packages run one at a time (-p 1): the real-tool and API-server suites each
## load both cores, and timing-sensitive tests (manager restarts, token
## expiry) must not compete. Building stays parallel: run `make build-tests`
## first to compile every test binary at full speed.
test:
	$(GO) test -count=1 -p 1 -timeout $(TEST_TIMEOUT) $(PKGS)

## build-tests: compile and link every test binary (runs no test).
build-tests:
	$(GO) test -count=1 -run '^$$' $(PKGS) >/dev/null

## test-short: everything except the tests that drive slow real tools.
test-short:
	$(GO) test -short -count=1 $(PKGS)

## bench: renderer benchmarks, nodeboot and CABPK side by side in one run.
bench:
	$(GO) test -run XXX -bench . -benchmem ./test/bench/ ./test/ignition/

## lint: gofmt, go vet and golangci-lint (hack/lint.mk).
lint: fmt vet
fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
vet:
	$(GO) vet -tags e2e $(PKGS)

## fuzz: a short fuzzing session per fuzz target.
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run XXX -fuzz 'FuzzRender$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2s ./cloudinit/
	$(GO) test -run XXX -fuzz FuzzDoubleQuoted -fuzztime $(FUZZTIME) -fuzzminimizetime 2s ./cloudinit/
	$(GO) test -run XXX -fuzz FuzzRenderIgnition -fuzztime $(FUZZTIME) -fuzzminimizetime 2s ./ignition/
	$(GO) test -run XXX -fuzz FuzzRender -fuzztime $(FUZZTIME) -fuzzminimizetime 2s ./cmd/nodeboot/

## render: nodeboot's main job on the embedded example.
render:
	$(GO) run ./cmd/nodeboot render

# Tool definitions first: the other files name tool paths as prerequisites,
# and make expands a prerequisite as it reads the rule. With hack/*.mk in name
# order, lint.mk was read before tools.mk and `golangci-lint` lost its build
# step (issue 21); test/makefile checks the plan with empty tool caches.
include hack/tools.mk
include $(filter-out hack/tools.mk,$(sort $(wildcard hack/*.mk)))
