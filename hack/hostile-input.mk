# Hostile input (issue 11, reader half): the document reader's fuzzer, and
# the embedded CRD schemas the CLI validates with, regenerated from the
# pinned Cluster API module (internal/crdvalidate checks they match).

.PHONY: fuzz-documents crdvalidate-crds

fuzz-documents:
	$(GO) test -run XXX -fuzz FuzzDocuments -fuzztime $(FUZZTIME) -fuzzminimizetime 2s ./bootstrap/manifest/

crdvalidate-crds:
	cd internal/crdvalidate && $(GO) test . -run TestEmbeddedSchemasArePinned -update -count=1
