# Targets for the KubeadmConfig controller, its manager and its deployment
# artefacts. The top-level Makefile includes this file.
#
#   make controllers-manifests  regenerate config/rbac/role.yaml from the
#                               kubebuilder markers and refresh the CRDs
#   make controllers-verify     fail if the checked-in artefacts are stale
#   make release-manifests      out/bootstrap-components.yaml + out/metadata.yaml
#                               for clusterctl (IMG=<image> sets the image);
#                               includes the FirstBootAddon CRD
#   make manager                build bin/manager
#   make controllers-test       the envtest suite (reference vectors, side by
#                               side with CABPK, init lock, tokens, crashes)
#   make controllers-bench      throughput benchmark, nodeboot vs CABPK
#
# Tools run from the Go module proxy at the versions pinned in tools.mk;
# nothing is installed globally.

IMG ?= nodeboot-manager:dev
RELEASE_DIR ?= out
CAPI_DIR = $(shell $(GO) list -m -f '{{.Dir}}' sigs.k8s.io/cluster-api)

.PHONY: controllers-manifests controllers-rbac controllers-crds controllers-verify release-manifests manager controllers-test controllers-bench

controllers-manifests: controllers-rbac controllers-crds

# Only the packages the manager links, each named: ./controllers, the
# first-boot add-on controller ./controllers/addons, and ./cmd/manager.
controllers-rbac:
	$(CONTROLLER_GEN) rbac:roleName=manager-role paths=./controllers paths=./controllers/addons paths=./cmd/manager output:rbac:artifacts:config=config/rbac

# CABPK's own CRDs, unchanged, from the pinned cluster-api module. They are
# copied at build time rather than committed (config/crd/bases/.gitignore).
controllers-crds:
	cp $(CAPI_DIR)/bootstrap/kubeadm/config/crd/bases/*.yaml config/crd/bases/
	chmod u+w config/crd/bases/*.yaml

controllers-verify: controllers-manifests
	@git diff --exit-code -- config/rbac || (echo "config/rbac is stale: run make controllers-manifests" && exit 1)

release-manifests: controllers-crds
	mkdir -p $(RELEASE_DIR) $(RELEASE_DIR)/kustomize
	rm -rf $(RELEASE_DIR)/kustomize/config && cp -r config $(RELEASE_DIR)/kustomize/config
	cd $(RELEASE_DIR)/kustomize/config/default && $(KUSTOMIZE) edit set image nodeboot-manager:dev=$(IMG)
	$(KUSTOMIZE) build $(RELEASE_DIR)/kustomize/config/default > $(RELEASE_DIR)/bootstrap-components.yaml
	cp config/metadata.yaml $(RELEASE_DIR)/metadata.yaml

manager:
	$(GO) build -o bin/manager ./cmd/manager

controllers-test:
	$(GO) test ./controllers/... ./cmd/manager/... ./test/controllers/... -count=1 -timeout 15m

controllers-bench:
	$(GO) test ./test/controllers/ -run '^$$' -bench Throughput -benchtime 1x -timeout 20m
