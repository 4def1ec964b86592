# Make targets for the FirstBootAddon API and the add-on packages.
# The lead's Makefile includes this file; run from the repository root.

ADDONS_CRD_DIR ?= config/crd/addons
ADDONS_PKGS ?= ./api/... ./addons/... ./controllers/addons/... ./test/addons/...

.PHONY: addons-generate addons-verify-generate addons-test

## addons-generate: deepcopy functions and the FirstBootAddon CRD.
addons-generate:
	$(CONTROLLER_GEN) object paths=./api/...
	$(CONTROLLER_GEN) crd paths=./api/... output:crd:artifacts:config=$(ADDONS_CRD_DIR)

## addons-verify-generate: fails when generated files are stale.
addons-verify-generate:
	@tmp=$$(mktemp -d) && cp -r api $(ADDONS_CRD_DIR) $$tmp/ && \
	$(MAKE) --no-print-directory addons-generate >/dev/null && \
	diff -r $$tmp/api api && diff -r $$tmp/addons $(ADDONS_CRD_DIR); \
	rc=$$?; rm -rf $$tmp; exit $$rc

## addons-test: every add-on test, including the envtest and kubectl ones
## (set KUBEBUILDER_ASSETS, or let test/testenv build the assets once).
addons-test:
	$(GO) test -count=1 $(ADDONS_PKGS)
