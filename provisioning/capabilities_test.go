package provisioning

import (
	"errors"
	"testing"
)

// noTimeProvisioner refuses NTP and any version but "v1", as a
// provisioner without a time client and with one dialect would.
type noTimeProvisioner struct{ fakeProvisioner }

func (noTimeProvisioner) Check(p *Plan, opts Options) Problems {
	var ps Problems
	if opts.Version != "v1" {
		UnsupportedErr(&ps, ErrUnknownFormat, "no-time", opts.VersionPath(), "this version")
	}
	if p.NTP != nil {
		Unsupported(&ps, "no-time", p.SectionPath(SectionNTP), "NTP")
	}
	return ps
}

func TestCapabilities(t *testing.T) {
	Register(noTimeProvisioner{fakeProvisioner{"capabilities-test"}})
	s, err := Capabilities("capabilities-test", "v1")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range Elements {
		if want := e != ElementNTP; s.Supports(e) != want {
			t.Errorf("%s: supported %v, want %v", e, s.Supports(e), want)
		}
	}
	if _, err := Capabilities("capabilities-test", "v2"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("a version the provisioner refuses: got %v, want ErrUnsupported", err)
	}
	if _, err := Capabilities("no-such-format", ""); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("an unknown format: got %v, want ErrUnknownFormat", err)
	}
	for _, e := range Elements {
		if probes[e] == nil {
			t.Errorf("element %s has no probe", e)
		}
	}
}
