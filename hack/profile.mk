# CPU and heap profiles of the two render benchmarks, nodeboot and CABPK side
# by side. The top-level Makefile includes this file.
#
#   make profile   out/profiles/{cloudinit,ignition}.{cpu,mem}.pprof plus the
#                  test binaries they were taken from and each run's output
#                  (read one with: go tool pprof -top out/profiles/ignition.test out/profiles/ignition.cpu.pprof)
#
#   make fuzz-ignition-encoding   fuzz the Ignition renderers' own encoders
#                  against the libraries they stand in for (part of make fuzz)
#
# PROFILE_BENCHTIME sets each benchmark's -benchtime (default 2s).

PROFILE_DIR ?= out/profiles
PROFILE_BENCHTIME ?= 2s

.PHONY: profile

profile:
	@mkdir -p $(PROFILE_DIR)
	$(GO) test -c -o $(PROFILE_DIR)/cloudinit.test ./test/bench/
	$(GO) test -c -o $(PROFILE_DIR)/ignition.test ./test/ignition/
	set -o pipefail; cd ./test/bench && $(abspath $(PROFILE_DIR))/cloudinit.test -test.run XXX -test.bench RenderInitControlPlane -test.benchmem \
		-test.benchtime $(PROFILE_BENCHTIME) -test.cpuprofile $(abspath $(PROFILE_DIR))/cloudinit.cpu.pprof \
		-test.memprofile $(abspath $(PROFILE_DIR))/cloudinit.mem.pprof | tee $(abspath $(PROFILE_DIR))/cloudinit.txt
	set -o pipefail; cd ./test/ignition && $(abspath $(PROFILE_DIR))/ignition.test -test.run XXX -test.bench RenderIgnition -test.benchmem \
		-test.benchtime $(PROFILE_BENCHTIME) -test.cpuprofile $(abspath $(PROFILE_DIR))/ignition.cpu.pprof \
		-test.memprofile $(abspath $(PROFILE_DIR))/ignition.mem.pprof | tee $(abspath $(PROFILE_DIR))/ignition.txt

# The encoders the fast render paths use instead of the libraries' own are
# fuzzed against them: the data: URLs (against dataurl) and the JSON strings
# (against encoding/json).
.PHONY: fuzz-ignition-encoding
fuzz-ignition-encoding:
	$(GO) -C provisioning test -run XXX -fuzz FuzzDataURL -fuzztime $(FUZZTIME) -fuzzminimizetime 2s ./ignition/v3/
	$(GO) -C provisioning test -run XXX -fuzz FuzzDataURL -fuzztime $(FUZZTIME) -fuzzminimizetime 2s ./ignition/legacy/
	$(GO) -C provisioning test -run XXX -fuzz FuzzLegacyJSONString -fuzztime $(FUZZTIME) -fuzzminimizetime 2s ./ignition/legacy/
