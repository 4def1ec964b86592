# Targets for the script provisioner and the k3s example module. The
# top-level Makefile includes this file; `make test` runs both already
# (test/examples runs the nested module's tests).
#
#   make script-test        the script package: syntax (dash, bash --posix),
#                           the sh-free round trip, and the scripts run as
#                           root in a chroot of cloudinit-apply's cached root
#   make script-fuzz        FuzzRender for FUZZTIME (the Makefile's, 30s by default)
#   make k3s-example        render the k3s server and agent into examples/k3s/out
#   make k3s-example-test   the example module's tests (real validators,
#                           chroot, cloudinit-apply: about 20-40 s)
#   make k3s-example-tidy   go mod tidy in the example module

K3S_EXAMPLE_ENV = GOWORK=off GOFLAGS=-buildvcs=false

.PHONY: script-test script-fuzz k3s-example k3s-example-test k3s-example-tidy

script-test:
	GOFLAGS=-buildvcs=false $(GO) -C provisioning test -count=1 ./script/

script-fuzz:
	GOFLAGS=-buildvcs=false $(GO) -C provisioning test -run '^$$' -fuzz FuzzRender -fuzztime $(FUZZTIME) ./script/

k3s-example:
	cd examples/k3s && $(K3S_EXAMPLE_ENV) $(GO) run . -out out

k3s-example-test:
	cd examples/k3s && $(K3S_EXAMPLE_ENV) $(GO) test -count=1 ./...

k3s-example-tidy:
	cd examples/k3s && $(K3S_EXAMPLE_ENV) $(GO) mod tidy
