package ignition_test

import (
	"testing"

	v35 "github.com/coreos/ignition/v2/config/v3_5"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/ignition"
)

// FuzzRenderIgnition renders plans made of arbitrary strings, with arbitrary
// additional config, in every dialect: it must never panic, and whatever it
// returns without error in a native version passes Ignition's parser and
// validation (Render validates its generated part by construction, so this
// checks the construction).
func FuzzRenderIgnition(f *testing.F) {
	f.Add("hello\n", "0644", "root:root", "echo pre", "capi", "ALL=(ALL) ALL", "/data", "", uint8(0))
	f.Add("  x\n\ty", "644", ":g", "a\r\nb", "u #1", "", "LABEL=x", "variant: flatcar\nversion: 1.0.0\n", uint8(7))
	f.Add("aGVsbG8=", "0600", "core", "", "~", "x\n", "etcd", "{\"ignition\":{\"version\":\"3.3.0\"}}", uint8(13))
	f.Add("", "0755", "", "", "", "", "", "storage:\n  files:\n  - path: /x\n", uint8(255))
	r := &ignition.Renderer{}
	f.Fuzz(func(t *testing.T, content, mode, owner, cmd, user, sudo, mount, additional string, flags uint8) {
		p := basePlan()
		p.Files[0].Content, p.Files[0].Permissions, p.Files[0].Owner = content, mode, owner
		p.Files[0].Encoding = provisioning.Encodings[flags%4]
		p.Files[0].Append = []*bool{nil, ptr(true), ptr(false)}[int(flags>>2)%3]
		p.Commands[0].Script = cmd
		p.Users = []provisioning.User{{Name: user, Sudo: sudo, Gecos: content, Passwd: sudo, LockPassword: ptr(flags&16 == 0),
			Inactive: ptr(flags&32 != 0), SSHAuthorizedKeys: []string{owner}}}
		p.Mounts = []provisioning.Mount{{mount, "/mnt/" + user, mode}}
		p.NTP = &provisioning.NTP{Enabled: ptr(flags&64 != 0), Servers: []string{mount}}
		p.Disks = &provisioning.DiskSetup{
			Partitions:  []provisioning.Partition{{Device: "/dev/sdb", Layout: ptr(flags&128 != 0), TableType: mode}},
			Filesystems: []provisioning.Filesystem{{Device: "/dev/sdb" + mode, Filesystem: "ext4", Label: mount, Partition: owner}},
		}
		if flags&8 != 0 {
			p.BootCommands = []string{cmd}
		}
		for _, v := range ignition.Versions {
			opts := provisioning.Options{Version: v, AdditionalConfig: []byte(additional), Strict: flags&1 != 0, Compress: flags&2 != 0 && v != ignition.VersionCABPK}
			checkErr := r.Check(p, opts).Err()
			out, renderErr := r.Render(p, opts)
			if renderErr == nil && v != "" && !opts.Compress {
				if _, rep, err := v35.ParseCompatibleVersion(out.Data); err != nil || rep.IsFatal() {
					t.Fatalf("version %q: Ignition rejects the output: %v %s", v, err, rep.String())
				}
			}
			// Check is the promise Render keeps: it fails exactly when Check
			// found an error (a size budget is not set here).
			if (checkErr == nil) != (renderErr == nil) {
				t.Fatalf("version %q: Check error %v, Render error %v", v, checkErr, renderErr)
			}
		}
	})
}
