## fuzz-templates: fuzz the bounded contentFormat: Template renderer against
## CABPK's code path (text/template); part of `make fuzz`.
.PHONY: fuzz-templates
fuzz-templates:
	$(GO) test -run XXX -fuzz 'FuzzTemplate$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2s ./bootstrap/
