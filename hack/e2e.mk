# Real clusters, offline (test/e2e). The top-level Makefile includes this file.
#
#   make e2e-assets   build (or check) everything the nodes run: Kubernetes,
#                     containerd, CNI plugins, Flannel, CoreDNS, images and the
#                     node root (test/e2e/assets/build.sh; cached under
#                     $(HOME)/.cache/nodeboot-e2e, seconds when warm)
#   make e2e          the scenarios: cloud-config, Ignition v3, RSA-2048 with the
#                     fetch fallback, legacy Ignition, the plain and script
#                     provisioners joining, failing workers reporting (as root)
#   make e2e-bench    add-on delivery side by side: nodeboot's first-boot add-ons
#                     and a ClusterResourceSet, 3 clusters each (medians)
#
# E2E_ARTIFACTS keeps every node's journal, console and cloud-init logs and the
# managers' logs (default: a new directory under /tmp, printed at the end).

E2E_TIMEOUT ?= 60m
E2E_ARTIFACTS ?=
E2E_RUN ?=

.PHONY: e2e e2e-assets e2e-bench

e2e-assets:
	test/e2e/assets/build.sh

e2e: e2e-assets
	NODEBOOT_E2E_ASSETS="$$(test/e2e/assets/build.sh 2>/dev/null | tail -1)" \
	KUBEBUILDER_ASSETS="$$(../shared/tools/envtest-assets.sh | tail -1)" \
	NODEBOOT_E2E_ARTIFACTS="$(E2E_ARTIFACTS)" \
	$(GO) test -tags e2e -count=1 -v -timeout $(E2E_TIMEOUT) $(if $(E2E_RUN),-run '$(E2E_RUN)') ./test/e2e/

e2e-bench: e2e-assets
	NODEBOOT_E2E_ASSETS="$$(test/e2e/assets/build.sh 2>/dev/null | tail -1)" \
	KUBEBUILDER_ASSETS="$$(../shared/tools/envtest-assets.sh | tail -1)" \
	NODEBOOT_E2E_ARTIFACTS="$(E2E_ARTIFACTS)" \
	$(GO) test -tags e2e -count=1 -v -timeout 120m -run '^$$' -bench AddonDelivery -benchtime 1x ./test/e2e/
