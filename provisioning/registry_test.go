package provisioning

import (
	"errors"
	"testing"
)

type fakeProvisioner struct{ format string }

func (f fakeProvisioner) Format() string                { return f.format }
func (f fakeProvisioner) Check(*Plan, Options) Problems { return nil }
func (f fakeProvisioner) Render(*Plan, Options) (*Output, error) {
	return &Output{Format: f.format}, nil
}

func TestRegistry(t *testing.T) {
	Register(fakeProvisioner{"test-format"})
	p, err := Get("test-format")
	if err != nil || p.Format() != "test-format" {
		t.Fatalf("Get: %v, %v", p, err)
	}
	if _, err := Get("no-such-format"); !errors.Is(err, ErrUnknownFormat) {
		t.Fatalf("want ErrUnknownFormat, got %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("registering a format twice must panic")
		}
	}()
	Register(fakeProvisioner{"test-format"})
}

func TestUnsupportedNamesProvisionerAndField(t *testing.T) {
	var ps Problems
	Unsupported(&ps, "ignition-2.3", NewPath("spec", "files").Index(1).Field("append"), "appending to a file")
	if got, want := ps.Err().Error(), "spec.files[1].append: appending to a file is not supported by the ignition-2.3 provisioner"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
