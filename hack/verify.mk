# Targets for `nodeboot verify`. The top-level Makefile includes this file.
#
#   make verify-test    the envtest suite: CABPK writes the data of every
#                       reference vector and of 240 generated configs, and
#                       verify (as a user bound only to
#                       config/rbac/verify-role.yaml) checks it
#   make verify-bench   verify 1,000 configs on envtest, configs/s


.PHONY: verify-test verify-bench

verify-test:
	KUBEBUILDER_ASSETS="$$(../shared/tools/envtest-assets.sh | tail -1)" GOFLAGS=-buildvcs=false $(GO) test -count=1 -timeout 10m ./test/verify/

verify-bench:
	KUBEBUILDER_ASSETS="$$(../shared/tools/envtest-assets.sh | tail -1)" GOFLAGS=-buildvcs=false $(GO) test -count=1 -timeout 30m -run '^$$' -bench BenchmarkVerify -benchtime 5x ./test/verify/
