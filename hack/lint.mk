# Static checks beyond gofmt and go vet, and the generated-file checks. The
# top-level Makefile includes this file; versions are in tools.mk.
#
#   make golangci-lint      golangci-lint with .golangci.yml (depguard for
#                           DESIGN.md's import table, errorlint, thelper,
#                           gosec, godot); part of `make lint`
#   make golangci-lint-install
#                           build the pinned linter into $(TOOLS_DIR) (once
#                           per machine: about 4-5 minutes on two cores)
#   make verify-generated   controllers-verify and addons-verify-generate:
#                           fail when RBAC, deepcopy or CRDs are stale
#
# The linter is built from source with this repository's Go toolchain, so it
# always understands the language version go.mod declares. Its analysis cache
# is golangci-lint's own ($(HOME)/.cache/golangci-lint): a warm run takes
# seconds.

GOLANGCI_LINT_CONCURRENCY ?= 2

.PHONY: golangci-lint golangci-lint-install verify-generated

lint: golangci-lint

ifeq ($(GOLANGCI_LINT),)
$(error hack/lint.mk read before hack/tools.mk: GOLANGCI_LINT is empty, so the linter would never be built)
endif

# GOLANGCI_LINT may name another binary; only a path of ours is built.
ifneq ($(findstring /,$(GOLANGCI_LINT)),)
$(GOLANGCI_LINT):
	GOBIN=$(abspath $(dir $@)) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
endif

golangci-lint-install: $(GOLANGCI_LINT)

# Once per module: the library in provisioning/ is a module of its own,
# linted with the same configuration (its depguard rules name its paths).
golangci-lint: $(GOLANGCI_LINT)
	cd provisioning && $(if $(findstring /,$(GOLANGCI_LINT)),$(abspath $(GOLANGCI_LINT)),$(GOLANGCI_LINT)) run --config $(abspath .golangci.yml) --concurrency $(GOLANGCI_LINT_CONCURRENCY) ./...
	$(GOLANGCI_LINT) run --concurrency $(GOLANGCI_LINT_CONCURRENCY) ./...

verify-generated: controllers-verify addons-verify-generate
