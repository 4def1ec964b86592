# Manager scale benchmark and sharding test (test/scale). The top-level
# Makefile includes this file.
#
#   make scale-bench     nodeboot's and CABPK v1.14.2's manager binaries, each
#                        on a fresh envtest API server, bootstrap 5,051
#                        KubeadmConfigs: configs/s, writes/config, peak-RSS-MB;
#                        heap profiles land in $(SCALE_PROFILES)
#   make scale-test      the --watch-filter sharding test (also in make test)

SCALE_PROFILES ?= out/scale-profiles

.PHONY: scale-bench scale-test

scale-bench:
	mkdir -p $(SCALE_PROFILES)
	NODEBOOT_SCALE_PROFILES=$(abspath $(SCALE_PROFILES)) $(GO) test ./test/scale/ -run '^$$' -bench ManagerScale -benchtime 1x -timeout 60m

scale-test:
	$(GO) test ./test/scale/ -run TestWatchFilterShards -count=1 -v
