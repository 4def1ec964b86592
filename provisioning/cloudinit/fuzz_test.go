package cloudinit

import (
	"strings"
	"testing"
	"unicode/utf8"

	yaml "gopkg.in/yaml.v3"

	"github.com/nodeboot/nodeboot/provisioning"
)

// FuzzRender renders Plans whose strings come from the fuzzer in every
// field the hazard scan reads, with and without corrections: errors are
// fine, panics are not, and Check agrees with Render.
func FuzzRender(f *testing.F) {
	f.Add("/etc/a", "content\n", "echo hi", "ops", "0644", "LABEL=x", "Ops", true)
	f.Add("/etc/{{x}}", "{{ .v }}{% x %}{#", "{{.ID}}", "a b", "999", "0", "Ops: on-call #2", false)
	f.Add(`C:\k\a.json`, "  x\r\n\u2028", "echo \xff", "u\nx", "'", "\x00", "ALL=(ALL) NOPASSWD: ALL", true)
	f.Fuzz(func(t *testing.T, path, content, cmd, user, mode, mount, value string, corrections bool) {
		p := &provisioning.Plan{
			Role:         provisioning.RoleInit,
			Files:        []provisioning.File{{Path: path, Content: content, Permissions: mode}},
			Users:        []provisioning.User{{Name: user, Inactive: &corrections, Gecos: value, Sudo: value, SSHAuthorizedKeys: []string{value}}},
			NTP:          &provisioning.NTP{Servers: []string{value, value}},
			Disks:        &provisioning.DiskSetup{Partitions: []provisioning.Partition{{Device: value}}, Filesystems: []provisioning.Filesystem{{Device: mount, Filesystem: value, Partition: value}}},
			Mounts:       []provisioning.Mount{{mount, "/mnt"}},
			BootCommands: []string{cmd},
			Commands:     []provisioning.Command{{Phase: provisioning.PhasePre, Script: cmd}, {Phase: provisioning.PhaseBootstrap, Script: cmd}},
			Sentinel:     "/run/done",
		}
		r := &Renderer{}
		out, err := r.Render(p, provisioning.Options{Version: provisioning.VersionCABPK, Corrections: corrections})
		if checkErr := r.Check(p, provisioning.Options{Version: provisioning.VersionCABPK, Corrections: corrections}).Err(); (checkErr == nil) != (err == nil) {
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

// FuzzDoubleQuoted: every valid UTF-8 value the corrections double-quote
// reads back as itself, and is never refused.
func FuzzDoubleQuoted(f *testing.F) {
	for _, s := range []string{"", "a: b #c", "{{ x }}", "\x00\x1b\u0085\u2028\ufeff\"\\'", "\t\r\n", "é✓🙂"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, ok := doubleQuoted(s, true)
		if !utf8.ValidString(s) {
			if ok {
				t.Fatalf("invalid UTF-8 quoted as %s", q)
			}
			return
		}
		if strings.Contains(q, "{") {
			t.Fatalf("%s keeps a brace for jinja to read", q)
		}
		var doc struct{ K string }
		if err := yaml.Unmarshal([]byte("k: "+q+"\n"), &doc); err != nil || doc.K != s {
			t.Fatalf("%q quoted as %s reads back %q (%v)", s, q, doc.K, err)
		}
	})
}
