package script_test

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"testing"

	"github.com/nodeboot/nodeboot/provisioning"
)

func ptr[T any](v T) *T { return &v }

func gzipped(t testing.TB, s string) string {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// hostile is text that breaks naive quoting: quotes of both kinds, $(),
// backticks, a here-document delimiter of ours and a line of its own.
const hostile = "a 'single' \"double\" $(touch /tmp/pwned) `touch /tmp/pwned` $HOME \\\nNODEBOOT_EOF\n'\n"

// fullPlan uses every feature the script provisioner renders.
func fullPlan(t testing.TB) *provisioning.Plan {
	t.Helper()
	return &provisioning.Plan{
		Role: provisioning.RoleInit,
		Files: []provisioning.File{
			{Path: "/etc/nodeboot/plain.conf", Permissions: "0640", Owner: "kube:kube", Content: "key: value\n"},
			{Path: "/etc/nodeboot/hostile.txt", Content: hostile},
			{Path: "/etc/nodeboot/no-newline", Content: "no final newline"},
			{Path: "/etc/nodeboot/empty", Content: ""},
			{Path: "/etc/nodeboot/b64", Permissions: "0600", Encoding: provisioning.EncodingBase64, Content: base64.StdEncoding.EncodeToString([]byte("decoded from base64\n"))},
			{Path: "/etc/nodeboot/gz", Encoding: provisioning.EncodingGzip, Content: gzipped(t, "decoded from gzip\n")},
			{Path: "/etc/nodeboot/gzb64", Encoding: provisioning.EncodingGzipBase64, Content: base64.StdEncoding.EncodeToString([]byte(gzipped(t, "decoded from gzip+base64\n")))},
			{Path: "/etc/nodeboot/append", Content: "first\n"},
			{Path: "/etc/nodeboot/append", Append: ptr(true), Content: "second\n"},
			{Path: "/var/lib/deep/new/dirs/file", Permissions: "0755", Owner: "root", Content: "#!/bin/sh\nexit 0\n"},
			{Path: "/etc/nodeboot/template.yaml", Content: "value: {{ .Values.x }}\n"},
		},
		Users: []provisioning.User{
			{
				Name: "kube", Gecos: "Kube Admin", Groups: "adm, kubeops", Shell: "/bin/sh", HomeDir: "/home/kube",
				Passwd:            "$6$rounds=4096$salt$hashhashhash",
				LockPassword:      ptr(false),
				Sudo:              "ALL=(ALL) NOPASSWD:ALL",
				SSHAuthorizedKeys: []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFakeKeyOne kube@one", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFakeKeyTwo kube@two"},
			},
			{Name: "locked", PrimaryGroup: "lockgrp", Inactive: ptr(true)},
			{Name: "root", Groups: "kubeops"},
		},
		Units: []provisioning.Unit{
			{Name: "demo.service", Contents: "[Unit]\nDescription=demo\n\n[Service]\nExecStart=/bin/true\n\n[Install]\nWantedBy=multi-user.target\n", Enabled: ptr(true),
				DropIns: []provisioning.DropIn{{Name: "10-env.conf", Contents: "[Service]\nEnvironment=A=1\n"}}},
			{Name: "image.service", DropIns: []provisioning.DropIn{{Name: "20-more.conf", Contents: "[Service]\nEnvironment=B=2\n"}}},
			{Name: "off.service", Contents: "[Service]\nExecStart=/bin/false\n", Enabled: ptr(false)},
		},
		BootCommands: []string{"echo boot >> /var/log/nodeboot-order"},
		Commands: []provisioning.Command{
			{Phase: provisioning.PhasePost, Script: "echo post >> /var/log/nodeboot-order"},
			{Phase: provisioning.PhaseBootstrap, Script: "echo bootstrap >> /var/log/nodeboot-order"},
			{Phase: provisioning.PhasePre, Script: "echo pre1 >> /var/log/nodeboot-order"},
			{Phase: provisioning.PhasePre, Script: "printf '%s\\n' \"it's pre2\" >> /var/log/nodeboot-order\n[ \"$0\" = commands[3] ]"},
		},
		Sentinel: "/run/cluster-api/bootstrap-success.complete",
	}
}
