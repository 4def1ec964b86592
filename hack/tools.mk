# Pinned tool versions, defined once for every hack/*.mk file. The tools are
# built from the Go module proxy with $(GO), at these versions; nothing is
# installed globally. The top-level Makefile includes this file (and sets GO).
#
#   controller-gen   deepcopy, CRDs and RBAC (addons.mk, controllers.mk)
#   kustomize        release manifests (controllers.mk)
#   golangci-lint    `make golangci-lint` (lint.mk); built once into
#                    $(TOOLS_DIR) because a `go run` of it would link its
#                    ~70 MB binary on every call

CONTROLLER_GEN_VERSION ?= v0.23.0
KUSTOMIZE_VERSION ?= v5.7.1
GOLANGCI_LINT_VERSION ?= v2.15.0

TOOLS_DIR ?= $(HOME)/.cache/nodeboot-tools

CONTROLLER_GEN ?= $(GO) run sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)
KUSTOMIZE ?= $(GO) run sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION)
GOLANGCI_LINT ?= $(TOOLS_DIR)/golangci-lint-$(GOLANGCI_LINT_VERSION)/golangci-lint
