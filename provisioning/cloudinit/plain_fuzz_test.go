package cloudinit

import (
	"bytes"
	"reflect"
	"testing"

	yaml "gopkg.in/yaml.v3"

	"github.com/nodeboot/nodeboot/provisioning"
)

// FuzzPlainRoundTrip: whatever strings a Plan holds, the plain dialect's
// output is "#cloud-config" and YAML that reads back as exactly the typed
// document it was marshalled from, or Render refuses the Plan with an
// error. Nothing in a value is YAML syntax there, as it is in CABPK's
// hand-laid layout. (TestPlainPassesCloudInitSchema checks that cloud-init's
// YAML 1.1 loader reads the same as this YAML 1.2 one.)
func FuzzPlainRoundTrip(f *testing.F) {
	f.Add("/etc/a", "content\n", "echo hi", "ops", "ALL=(ALL) NOPASSWD: ALL", "k3s.service", "[Service]\n", "0.pool.ntp.org")
	f.Add("/etc/{{x}}", "{{ .v }}{% x %}{#", "{{.ID}}", "on", "yes", "a@b.service", "", "1:20")
	f.Add("/etc/b", "  x\r\n\u2028\xff\x00", "- x: y", "0640", "~", "x.conf", "\t", "2001-12-14")
	f.Add("/x", "|\n>\n'\"", "#!/bin/sh\n", "null", "&a *a !t %", "\\x2d.swap", "key: [1, 2]", "-")
	r := &Renderer{}
	opts := provisioning.Options{Version: VersionPlain}
	f.Fuzz(func(t *testing.T, path, content, cmd, user, sudo, unit, unitContents, server string) {
		p := &provisioning.Plan{
			Files:        []provisioning.File{{Path: path, Owner: user, Permissions: "0644", Content: content}},
			Users:        []provisioning.User{{Name: user, Sudo: sudo, Gecos: content, SSHAuthorizedKeys: []string{sudo}}},
			Units:        []provisioning.Unit{{Name: unit, Contents: unitContents, DropIns: []provisioning.DropIn{{Name: "10.conf", Contents: content}}}},
			BootCommands: []string{cmd},
			Commands:     []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: cmd}},
			NTP:          &provisioning.NTP{Servers: []string{server}},
			Mounts:       []provisioning.Mount{{server, path}},
			Sentinel:     "/run/done",
		}
		out, err := r.Render(p, opts)
		checkErrs := r.Check(p, opts).Err()
		if (err == nil) != (checkErrs == nil) {
			t.Fatalf("Render error %v, Check errors %v", err, checkErrs)
		}
		if err != nil {
			return
		}
		body, ok := bytes.CutPrefix(out.Data, []byte(plainHeader))
		if !ok {
			t.Fatalf("no #cloud-config header:\n%s", out.Data)
		}
		var got plainDoc
		if err := yaml.Unmarshal(body, &got); err != nil {
			t.Fatalf("output is not YAML: %v\n%s", err, out.Data)
		}
		want := plainDocument(withUnits(p))
		if !reflect.DeepEqual(normalise(want), normalise(&got)) {
			t.Fatalf("output reads back as\n%#v\nwant\n%#v", got, *want)
		}
	})
}

// normalise makes the two readings comparable: YAML reads an empty list
// as absent, and the layout's any-typed fields back as generic values.
func normalise(d *plainDoc) string {
	raw, err := yaml.Marshal(d)
	if err != nil {
		panic(err)
	}
	return string(raw)
}
