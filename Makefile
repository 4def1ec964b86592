# nodeboot — see README.md. `make test` is the whole suite, exactly what CI runs.
SHELL := /usr/bin/env bash
GO ?= go
PKGS ?= ./...
# The library (the Plan and the provisioners) is a Go module of its own in
# provisioning/, so a provider imports it without taking the root module's
# pins; ./... from the root does not reach it. Every target that runs the
# go command runs it in both modules. LIB_PKGS= leaves the library out.
LIB := provisioning
LIB_PKGS ?= ./...
# The suite boots real cloud-init and Ignition and starts kube-apiservers; on
# a fresh machine the first run also builds those tools (see .ci/run).
TEST_TIMEOUT ?= 60m

.PHONY: all build build-tests test test-short bench lint fmt vet fuzz fuzz-ci bench-smoke render

all: lint build test

## build: compile everything, and the two binaries into bin/.
build:
	$(if $(LIB_PKGS),$(GO) -C $(LIB) build $(LIB_PKGS))
	$(GO) build $(PKGS)
	$(GO) build -o bin/nodeboot ./cmd/nodeboot
	$(GO) build -o bin/manager ./cmd/manager

## test: the whole test suite (needs root for the cloud-init and Ignition first-boot tests).
## Packages run one at a time (-p 1): the real-tool and API-server suites each
## load both cores, and timing-sensitive tests (manager restarts, token
## expiry) must not compete. Building stays parallel: run `make build-tests`
## first to compile every test binary at full speed.
## The library's tests run first (about 12 s); a failure there still lets
## the root's suite run, so one run reports both.
test:
	rc=0; \
	$(if $(LIB_PKGS),$(GO) -C $(LIB) test -count=1 -p 1 -timeout $(TEST_TIMEOUT) $(LIB_PKGS) || rc=1;) \
	$(GO) test -count=1 -p 1 -timeout $(TEST_TIMEOUT) $(PKGS) || rc=1; \
	exit $$rc

## build-tests: compile and link every test binary (runs no test).
build-tests:
	$(if $(LIB_PKGS),$(GO) -C $(LIB) test -count=1 -run '^$$' $(LIB_PKGS) >/dev/null)
	$(GO) test -count=1 -run '^$$' $(PKGS) >/dev/null

## test-short: everything except the tests that drive slow real tools.
test-short:
	$(if $(LIB_PKGS),$(GO) -C $(LIB) test -short -count=1 $(LIB_PKGS))
	$(GO) test -short -count=1 $(PKGS)

## bench: renderer benchmarks, nodeboot and CABPK side by side in one run.
bench:
	$(GO) test -run XXX -bench . -benchmem ./test/bench/ ./test/ignition/

## lint: gofmt, go vet and golangci-lint (hack/lint.mk).
lint: fmt vet
fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
vet:
	$(if $(LIB_PKGS),$(GO) -C $(LIB) vet $(LIB_PKGS))
	$(GO) vet -tags e2e $(PKGS)

## fuzz: every fuzz target in the repository (hack/fuzz.sh finds them in the
## source) for $(FUZZTIME) each, from its committed corpus in testdata/fuzz.
## A crasher is written to the package's testdata/fuzz: fix it, keep it.
FUZZTIME ?= 3m
fuzz:
	GO=$(GO) bash hack/fuzz.sh run $(FUZZTIME)

## fuzz-ci: the same fuzzers for a short fixed budget each, as CI runs them.
FUZZTIME_CI ?= 5s
fuzz-ci:
	GO=$(GO) FUZZMINIMIZETIME=5s bash hack/fuzz.sh run $(FUZZTIME_CI)

## bench-smoke: every benchmark once (-benchtime 1x), with -short shrinking
## the fleets of the API-server benchmarks, so a broken benchmark fails CI.
## The packages come from the source; files behind a build tag are left out
## (test/e2e's BenchmarkAddonDelivery needs real clusters: make e2e-bench).
## The envtest benchmarks need KUBEBUILDER_ASSETS, as make test does.
BENCH_PKGS = $(addprefix ./,$(sort $(dir $(shell git grep -l --untracked '^func Benchmark' -- '*_test.go' | xargs grep -L '^//go:build'))))
bench-smoke:
	GO=$(GO) bash hack/gomod.sh test -count=1 -p 1 -short -run '^$$' -bench . -benchtime 1x -- $(BENCH_PKGS)

## render: nodeboot's main job on the embedded example.
render:
	$(GO) run ./cmd/nodeboot render

# Tool definitions first: the other files name tool paths as prerequisites,
# and make expands a prerequisite as it reads the rule. With hack/*.mk in name
# order, lint.mk was read before tools.mk and `golangci-lint` lost its build
# step (issue 21); test/makefile checks the plan with empty tool caches.
include hack/tools.mk
include $(filter-out hack/tools.mk,$(sort $(wildcard hack/*.mk)))
