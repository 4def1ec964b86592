# Make targets for bootstrap reports: the node reporter (package nodereport),
# its endpoint and extension (controllers/nodereport), the end-to-end test.
# The lead's Makefile includes this file; run from the repository root.

.PHONY: reporter-test reporter-e2e reporter-bench

## reporter-test: the reporter script under dash and BusyBox sh, Apply, the extension.
reporter-test:
	$(GO) test -count=1 ./nodereport/ ./controllers/nodereport/

## reporter-e2e: TestBootstrapReport (envtest, real cloud-init and Ignition; root).
reporter-e2e:
	$(GO) test -count=1 -timeout 15m ./test/report/

## reporter-bench: 2,000 reports from 500 configs on loopback (p99, lost reports).
reporter-bench:
	$(GO) test -count=1 -run '^$$' -bench Reports -benchtime 1x ./controllers/nodereport/
