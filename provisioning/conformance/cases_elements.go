package conformance

import (
	"os"

	"github.com/nodeboot/nodeboot/provisioning"
)

// ElementCases are the Cases of the elements nodeCase does not use: a file
// appended to and encoded contents; password hashes and groups several
// users share; setuid, setgid and sticky modes; boot commands. Each Case costs every runner a boot, so related elements
// share one: a format that lacks one of them refuses the whole Case (CABPK's
// Ignition 2.3 has no gzip, so it refuses file-contents).
func ElementCases() []Case {
	return []Case{fileContentsCase(), fileModesCase(), accountsCase(), bootCommandsCase()}
}

// fileModesCase: setuid, setgid and sticky bits are part of the mode a
// file gets, with and without an owner (chown clears setuid and setgid, so
// the mode must be set after the owner).
func fileModesCase() Case {
	return Case{
		Name: "file-modes",
		Plan: func() *provisioning.Plan {
			return &provisioning.Plan{
				Role: provisioning.RoleJoinWorker,
				Files: []provisioning.File{
					{Path: "/usr/local/bin/conformance-setuid", Owner: "root:root", Permissions: "4755", Content: "#!/bin/sh\n"},
					{Path: "/usr/local/bin/conformance-setgid", Permissions: "2755", Content: "#!/bin/sh\n"},
					{Path: "/etc/conformance/sticky", Owner: "root", Permissions: "1644", Content: "sticky\n"},
				},
				Commands: bootstrapOnly(),
				Sentinel: Sentinel,
			}
		},
		Uses: []provisioning.Element{provisioning.ElementFiles, provisioning.ElementFileOwner, provisioning.ElementFileSpecialBits, provisioning.ElementCommands, provisioning.ElementSentinel},
		Want: State{
			Files: []File{
				{Path: "/usr/local/bin/conformance-setuid", Content: "#!/bin/sh\n", Mode: os.ModeSetuid | 0o755, Owner: "root:root"},
				{Path: "/usr/local/bin/conformance-setgid", Content: "#!/bin/sh\n", Mode: os.ModeSetgid | 0o755, Owner: "root:root"},
				{Path: "/etc/conformance/sticky", Content: "sticky\n", Mode: os.ModeSticky | 0o644, Owner: "root:root"},
				{Path: Sentinel, Content: "success\n", Mode: 0o644, Owner: "root:root"},
			},
			Log: []string{"bootstrap"},
		},
	}
}

// bootCommandsCase: boot commands run first, in order, each in its own
// shell (a variable one sets is gone in the next).
func bootCommandsCase() Case {
	return Case{
		Name: "boot-commands",
		Plan: func() *provisioning.Plan {
			return &provisioning.Plan{
				Role: provisioning.RoleJoinWorker,
				BootCommands: []string{
					"NODEBOOT_CONFORMANCE_BOOT=set; " + log("boot one"),
					`if [ -z "${NODEBOOT_CONFORMANCE_BOOT:-}" ]; then ` + log("boot two in its own shell") + `; else ` + log("boot two saw boot one's variable") + `; fi`,
				},
				Commands: bootstrapOnly(),
				Sentinel: Sentinel,
			}
		},
		Uses: []provisioning.Element{provisioning.ElementBootCommands, provisioning.ElementCommands, provisioning.ElementSentinel},
		Want: State{
			Files: []File{{Path: Sentinel, Content: "success\n", Mode: 0o644, Owner: "root:root"}},
			Log:   []string{"boot one", "boot two in its own shell", "bootstrap"},
		},
	}
}

// bootstrapOnly are the commands of a Case about something else: one
// bootstrap command, so the sentinel says the boot got through.
func bootstrapOnly() []provisioning.Command {
	return []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: log("bootstrap")}}
}

// appendLine is what file-contents appends to /etc/environment.
const appendLine = "HTTPS_PROXY=http://proxy.conformance.example:3128\n"

// gzipBase64 is "gzip+base64 {{ kept }}\n" as `gzip -9n | base64 -w0`
// writes it.
const gzipBase64 = "H4sIAAAAAAACA0uvyizQTkosTjUzUaiuVshOLShRqK3lAgCafmZ8FwAAAA=="

// fileContentsCase: base64 and gzip+base64 contents reach the node
// decoded, bytes that are not text included; a file appended to keeps
// what it held and gets the Plan's content after it, with the Plan's mode.
// The appended file is one images have (/etc/environment, empty on the
// runners' Debian image), as providers append to it (a proxy for every
// login). Appending to a file the Plan writes itself is left out:
// cloudinit-apply's own check of write_files takes each entry for the
// whole file.
func fileContentsCase() Case {
	yes := true
	return Case{
		Name: "file-contents",
		Plan: func() *provisioning.Plan {
			return &provisioning.Plan{
				Role: provisioning.RoleJoinWorker,
				Files: []provisioning.File{
					{Path: "/etc/environment", Permissions: "0644", Append: &yes, Content: appendLine},
					// "base64 \x00\xff\n"
					{Path: "/etc/conformance/base64", Permissions: "0600", Encoding: provisioning.EncodingBase64, Content: "YmFzZTY0IAD/Cg=="},
					{Path: "/etc/conformance/gzip", Permissions: "0644", Encoding: provisioning.EncodingGzipBase64, Content: gzipBase64},
				},
				Commands: bootstrapOnly(),
				Sentinel: Sentinel,
			}
		},
		Uses: []provisioning.Element{
			provisioning.ElementFiles, provisioning.ElementFileAppend, provisioning.ElementFileGzip,
			provisioning.ElementCommands, provisioning.ElementSentinel,
		},
		Want: State{
			Files: []File{
				{Path: "/etc/environment", Content: appendLine, Mode: 0o644, Owner: "root:root"},
				{Path: "/etc/conformance/base64", Content: "base64 \x00\xff\n", Mode: 0o600, Owner: "root:root"},
				{Path: "/etc/conformance/gzip", Content: "gzip+base64 {{ kept }}\n", Mode: 0o644, Owner: "root:root"},
				{Path: Sentinel, Content: "success\n", Mode: 0o644, Owner: "root:root"},
			},
			Log: []string{"bootstrap"},
		},
	}
}

// passwordHash is `openssl passwd -6 -salt conformance conformance-only`.
const passwordHash = "$6$conformance$yUQajuRQpQCGfM5NWGPlNMV3EBZxL2w3fVy3F.xqDaKpPdgnxpdy1RksbABG/E/ZuGIBDnAVPLqDNB6Tzo4EP/"

// accountsCase: a user's Passwd is a hash stored as it is, usable when
// LockPassword is false and locked ("!" before it) otherwise, as
// cloud-init's lock_passwd default does; groups the image lacks are
// created, and every user the Plan puts in a group is its member, also
// when two users share it.
func accountsCase() Case {
	no := false
	return Case{
		Name: "accounts",
		Plan: func() *provisioning.Plan {
			return &provisioning.Plan{
				Role: provisioning.RoleJoinWorker,
				Users: []provisioning.User{
					{Name: "ada", Shell: "/bin/sh", Passwd: passwordHash, LockPassword: &no, Groups: "ops, audit"},
					{Name: "bob", Shell: "/bin/sh", Passwd: passwordHash, Groups: "ops"},
				},
				Commands: bootstrapOnly(),
				Sentinel: Sentinel,
			}
		},
		Uses: []provisioning.Element{provisioning.ElementUsers, provisioning.ElementUserPasswd, provisioning.ElementCommands, provisioning.ElementSentinel},
		Want: State{
			Users: []User{{Name: "ada", Groups: []string{"ops", "audit"}}, {Name: "bob", Groups: []string{"ops"}}},
			Contains: []Contains{
				{Paths: []string{"/etc/shadow"}, Text: "\nada:" + passwordHash + ":"},
				{Paths: []string{"/etc/shadow"}, Text: "\nbob:!" + passwordHash + ":"},
			},
			Files: []File{{Path: Sentinel, Content: "success\n", Mode: 0o644, Owner: "root:root"}},
			Log:   []string{"bootstrap"},
		},
	}
}
