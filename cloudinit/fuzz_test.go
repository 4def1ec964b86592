package cloudinit

import (
	"strings"
	"testing"

	"github.com/nodeboot/nodeboot/provisioning"
)

// FuzzRender renders Plans whose strings come from the fuzzer, with and
// without corrections: errors are fine, panics are not, and output that
// renders must never lose the file content when corrections base64-encode it.
func FuzzRender(f *testing.F) {
	f.Add("/etc/a", "content\n", "echo hi", "ops", "0644", "LABEL=x", true)
	f.Add("/etc/{{x}}", "{{ .v }}{% x %}{#", "{{.ID}}", "a b", "999", "0", false)
	f.Fuzz(func(t *testing.T, path, content, cmd, user, mode, mount string, corrections bool) {
		p := &provisioning.Plan{
			Role:         provisioning.RoleInit,
			Files:        []provisioning.File{{Path: path, Content: content, Permissions: mode}},
			Users:        []provisioning.User{{Name: user, Inactive: &corrections}},
			Mounts:       []provisioning.Mount{{mount, "/mnt"}},
			BootCommands: []string{cmd},
			Commands:     []provisioning.Command{{Phase: provisioning.PhasePre, Script: cmd}, {Phase: provisioning.PhaseBootstrap, Script: cmd}},
			Sentinel:     "/run/done",
		}
		r := &Renderer{}
		out, err := r.Render(p, provisioning.Options{Corrections: corrections})
		if checkErr := r.Check(p, provisioning.Options{Corrections: corrections}).Err(); (checkErr == nil) != (err == nil) {
			t.Fatalf("Check error %v, Render error %v", checkErr, err)
		}
		if err != nil {
			return
		}
		if !strings.HasPrefix(string(out.Data), header) {
			t.Fatalf("output lost its header")
		}
	})
}
