package cloudinit_test

import (
	"testing"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/cloudinit"
)

// TestSpecialModeWarning: CABPK's dialect writes a setuid mode as CABPK does,
// which cloud-init's write_files loses (chown after chmod), and says so at
// the field; a mode chown leaves alone (sticky, setgid without group
// execute: test/conformance's file-modes case shows the kernel keeps them)
// or without special bits says nothing.
func TestSpecialModeWarning(t *testing.T) {
	for _, c := range []struct {
		mode string
		warn bool
	}{{"4755", true}, {"4644", true}, {"2755", true}, {"6711", true}, {"2745", false}, {"2644", false}, {"1777", false}, {"1644", false}, {"0755", false}, {"755", false}} {
		p := &provisioning.Plan{
			Files:    []provisioning.File{{Path: "/usr/local/bin/x", Owner: "root:root", Permissions: c.mode, Content: "#!/bin/sh\n"}},
			Commands: []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: "true"}},
		}
		out, err := (&cloudinit.Renderer{}).Render(p, provisioning.Options{Version: cloudinit.VersionCABPK})
		if err != nil {
			t.Fatalf("%s: %v", c.mode, err)
		}
		warned := false
		for _, w := range out.Warnings {
			warned = warned || w.Path.String() == "files[0].permissions"
		}
		if warned != c.warn {
			t.Errorf("mode %s: warning at files[0].permissions %v, want %v (warnings %v)", c.mode, warned, c.warn, out.Warnings)
		}
	}
}
