package ignitionv3

import (
	"errors"
	"testing"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/ignition"
)

// TestV3UserDataRefusals: Ignition v3 carries only an Ignition config it
// can read and that leaves the bootstrap alone; each refusal is one
// problem at the document's field.
func TestV3UserDataRefusals(t *testing.T) {
	for _, c := range []struct {
		name string
		u    provisioning.UserData
		at   string
		err  error
	}{
		{"cloud-config", provisioning.UserData{Type: provisioning.UserDataCloudConfig, Content: "#cloud-config\n{}\n"}, "userData[0].type", provisioning.ErrUnsupported},
		{"script", provisioning.UserData{Type: provisioning.UserDataShellScript, Content: "#!/bin/sh\n"}, "userData[0].type", provisioning.ErrUnsupported},
		{"not json", provisioning.UserData{Type: provisioning.UserDataIgnition, Content: "variant: flatcar\n"}, "userData[0].content", provisioning.ErrInvalid},
		{"newer spec", provisioning.UserData{Type: provisioning.UserDataIgnition, Content: `{"ignition":{"version":"3.5.0"}}`}, "userData[0].content", provisioning.ErrInvalid},
		{"replaces the bootstrap", provisioning.UserData{Type: provisioning.UserDataIgnition,
			Content: `{"ignition":{"version":"3.3.0"},"storage":{"files":[{"path":"/etc/nodeboot/bootstrap.sh","overwrite":true,"contents":{"source":"data:,"}}]}}`},
			"userData[0].content", provisioning.ErrInvalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &provisioning.Plan{
				Commands: []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: "true"}},
				UserData: []provisioning.UserData{c.u},
			}
			_, err := (&ignition.Renderer{}).Render(p, provisioning.Options{Version: "3.4.0"})
			var ps provisioning.Problems
			if !errors.As(err, &ps) || len(ps.Errors()) != 1 || ps.Errors()[0].Path.String() != c.at || !errors.Is(err, c.err) {
				t.Fatalf("want one %v problem at %s, got %v", c.err, c.at, err)
			}
		})
	}
}
