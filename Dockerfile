# The manager image, for those with a container engine, in the usual shape
# of Cluster API providers' Dockerfiles. Without an engine, `make image`
# builds the same image (cmd/image): a static /manager run as 65532:65532.
#
#   docker build --build-arg builder_image=<golang 1.26 image> \
#     --build-arg base_image=<a distroless static:nonroot mirror, or scratch> \
#     -t <your-registry>/nodeboot-manager:<version> .
#
# The images are arguments without defaults that name a registry: pass the
# ones your build environment can pull.
ARG builder_image=golang:1.26
ARG base_image=scratch

# Build the manager binary.
FROM ${builder_image} AS builder
WORKDIR /workspace

# Run this with docker build --build-arg goproxy=$(go env GOPROXY) to override the goproxy.
ARG goproxy
ENV GOPROXY=${goproxy}

# Copy the Go modules manifests and cache the dependencies before the source,
# so a source change does not download them again.
COPY go.mod go.mod
COPY go.sum go.sum
# The library is a module of its own that the root module replaces locally.
COPY provisioning/go.mod provisioning/go.mod
COPY provisioning/go.sum provisioning/go.sum
RUN --mount=type=cache,target=/go/pkg/mod go mod download

# Copy the sources (with .git, so the binary is stamped with its commit).
COPY ./ ./

ARG ARCH=amd64
# -X github.com/nodeboot/nodeboot/internal/version.override=<version> sets the version.
ARG ldflags

RUN --mount=type=cache,target=/root/.cache/go-build --mount=type=cache,target=/go/pkg/mod \
    CGO_ENABLED=0 GOOS=linux GOARCH=${ARCH} go build -trimpath -ldflags "-s -w -buildid= ${ldflags}" -o /workspace/manager ./cmd/manager

# The final image: the binary alone, as a numeric non-root user.
FROM ${base_image}
LABEL org.opencontainers.image.source=https://github.com/nodeboot/nodeboot
WORKDIR /
COPY --from=builder /workspace/manager /manager
# Use uid of nonroot user (65532) because kubernetes expects numeric user when applying pod security policies.
USER 65532:65532
ENTRYPOINT ["/manager"]
