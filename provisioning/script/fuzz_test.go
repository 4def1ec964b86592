package script_test

import (
	"errors"
	"testing"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/script"
)

// FuzzRender renders Plans from arbitrary strings: rendering never panics,
// refuses only with Problems, and whatever it renders reads back, through
// the sh-free reader, as exactly the Plan's paths, contents and commands.
func FuzzRender(f *testing.F) {
	f.Add("/etc/a", "root:root", "x\n", uint8(0), "echo 'hi'", "core", "ALL=(ALL) ALL", "/run/s", "k3s.service", "[Unit]\n")
	f.Add("/etc/it's", "a'b", "NODEBOOT_EOF\n", uint8(0), "'\"$(id)`\\", "u'x", "$x", "/run/'", "a.service", "")
	f.Add("/b", "", "aGk=", uint8(1), "", "", "", "", "", "")
	f.Add("/b", "", "\x1f\x8b", uint8(2), "\n", "", "", "/", "", "x")
	f.Add("/b", "", "no newline", uint8(3), "exit 3", "n", "", "", "x.timer", "NODEBOOT_EOF")
	f.Fuzz(func(t *testing.T, path, owner, content string, enc uint8, cmd, user, sudo, sentinel, unit, unitContents string) {
		p := &provisioning.Plan{
			Files:    []provisioning.File{{Path: path, Owner: owner, Encoding: provisioning.Encodings[int(enc)%len(provisioning.Encodings)], Content: content}},
			Commands: []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: cmd}, {Phase: provisioning.PhasePre, Script: content}},
			Sentinel: sentinel,
		}
		if user != "" {
			p.Users = []provisioning.User{{Name: user, Sudo: sudo, Gecos: content, SSHAuthorizedKeys: []string{sudo}}}
		}
		if unit != "" {
			p.Units = []provisioning.Unit{{Name: unit, Contents: unitContents, DropIns: []provisioning.DropIn{{Name: "10-a.conf", Contents: content}}}}
		}
		out, err := (&script.Renderer{}).Render(p, provisioning.Options{})
		if err != nil {
			var ps provisioning.Problems
			if !errors.As(err, &ps) || len(ps.Errors()) == 0 {
				t.Fatalf("error %v (%T) is no Problems", err, err)
			}
			return
		}
		got, err := parseSteps(string(out.Data))
		if err != nil {
			t.Fatalf("%v\n%s", err, out.Data)
		}
		if diff := sameSteps(got, expectedSteps(t, p)); diff != "" {
			t.Fatalf("%s\n%s", diff, out.Data)
		}
	})
}
