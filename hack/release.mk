# Shipping: the manager image, built without a container engine, and the
# release artefacts clusterctl installs. The top-level Makefile includes this
# file.
#
#   make image                      out/nodeboot-manager.tar: an OCI image
#                                   archive (also a Docker archive) that
#                                   `docker load` / `podman load` accept;
#                                   IMG names it, VERSION overrides the version
#   make release IMG=<registry>/nodeboot-manager:<version> [VERSION=<version>]
#                                   the image and the components for it:
#                                   out/bootstrap-components.yaml,
#                                   out/metadata.yaml, out/nodeboot-manager.tar
#   make clusterctl                 bin/clusterctl, from the pinned cluster-api
#                                   module (a go.mod tool)
#
# Push the archive with any OCI tool, e.g. `crane push out/nodeboot-manager.tar
# $(IMG)`, `skopeo copy oci-archive:out/nodeboot-manager.tar docker://$(IMG)`,
# or `docker load -i` then `docker push`.

IMAGE_TAR ?= $(RELEASE_DIR)/nodeboot-manager.tar
# Empty: the version the Go toolchain stamps from git (the tag, or a
# pseudo-version); set it for a release cut from an untagged commit.
VERSION ?=
ARCH ?= $(shell $(GO) env GOARCH)

.PHONY: image release clusterctl

image:
	$(GO) run ./cmd/image -o $(IMAGE_TAR) -tag $(IMG) -arch $(ARCH) $(if $(VERSION),-version $(VERSION))

# clusterctl refuses components whose image is not a full reference
# (registry/repository:tag), so release insists on one.
release:
	@case "$(IMG)" in */*:*) ;; *) echo "make release: IMG=$(IMG) is not a full image reference (registry/repository:tag); clusterctl refuses short names" >&2; exit 1;; esac
	$(MAKE) --no-print-directory image release-manifests IMG=$(IMG) VERSION=$(VERSION) RELEASE_DIR=$(RELEASE_DIR)
	@echo "release artefacts in $(RELEASE_DIR): bootstrap-components.yaml metadata.yaml $(notdir $(IMAGE_TAR))"

clusterctl:
	$(GO) build -o bin/clusterctl sigs.k8s.io/cluster-api/cmd/clusterctl
