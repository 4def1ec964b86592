package cloudinit

import (
	"bytes"
	"strings"
	"testing"
)

// checkEmit fails when emitPlain writes d other than yaml.v3 does, and
// reports whether emitPlain wrote it.
func checkEmit(t *testing.T, d *plainDoc) bool {
	t.Helper()
	want, err := encodePlain(d)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := emitPlain([]byte(plainHeader), d)
	if ok && !bytes.Equal(got, want) {
		t.Fatalf("emitPlain differs from yaml.v3:\n--- emitPlain\n%s\n--- yaml.v3\n%s", got, want)
	}
	return ok
}

// emitDoc puts v in every string the document has, in every position
// (mapping value at two depths, sequence item at two depths).
func emitDoc(s string) *plainDoc {
	yes, no := true, false
	v := plainText(s)
	return &plainDoc{
		BootCmd:    []string{"set -e", s},
		WriteFiles: []plainFile{{Path: v, Encoding: v, Owner: v, Permissions: v, Append: true, Defer: true, Content: v}, {Path: "/etc/b", Content: ""}},
		Users: []plainUser{
			{Name: v, Gecos: v, Groups: []string{s, "adm"}, HomeDir: v, Shell: v, PrimaryGroup: v, Passwd: v, LockPasswd: &no, ExpireDate: v, Sudo: v, SSHAuthorizedKeys: []string{s}},
			{Name: "ops", LockPasswd: &yes},
		},
		Mounts: []plainLines{{s, "/mnt"}, {"/dev/sdb", s}, {s}},
		NTP:    &plainNTP{Enabled: &yes, Servers: []string{s}},
		RunCmd: []string{"set -e", s},
	}
}

// TestPlainEmit: each of yaml.v3's scalar styles, and the document's
// shapes, come out as yaml.v3 writes them; what emitPlain leaves to
// yaml.v3 is left.
func TestPlainEmit(t *testing.T) {
	long := strings.Repeat("apiVersion: v1\tkind: ConfigMap # {{ x }} 'q' \"d\" \\ : - ? | > % @ `\n", 4)
	for _, c := range []struct {
		v     string
		style scalarStyleKind
	}{
		{"/etc/kubernetes/admin.conf", stylePlain},
		{"echo {{ not jinja }} > /tmp/pre", stylePlain},
		{"a:b c#d e- f?g <<", stylePlain},
		// yaml.v3 writes these two plain; PyYAML reads them as tags
		// (plain_pyyaml.go), so neither writer leaves them plain.
		{"<<", styleDoubleQuoted},
		{"=", styleDoubleQuoted},
		{"\n", styleUnknown},
		{" a\n", styleUnknown},
		{"yesterday", stylePlain},
		{"-x", stylePlain},
		{"ALL=(ALL) NOPASSWD: ALL", styleSingleQuoted},
		{"Ops: on-call #2", styleSingleQuoted},
		{"it's: 'quoted'", styleSingleQuoted},
		{"- item", styleSingleQuoted},
		{"? key", styleSingleQuoted},
		{":", styleSingleQuoted},
		{"key:", styleSingleQuoted},
		{"#comment", styleSingleQuoted},
		{"a #comment", styleSingleQuoted},
		{"--- doc", styleSingleQuoted},
		{"... end", styleUnknown},
		{"0.pool.ntp.org", stylePlain},
		{"10.0.0.1", stylePlain},
		{"10.0", styleUnknown},
		{"1e3", styleUnknown},
		{"2001-12-14 21:59:43.10 -5", styleUnknown},
		{"0x1F", styleUnknown},
		{"1h", stylePlain},
		{"-_1", styleUnknown},
		{".nan", styleDoubleQuoted},
		{"-", styleSingleQuoted},
		{"-.", styleUnknown},
		{" leading", styleSingleQuoted},
		{"trailing ", styleSingleQuoted},
		{"{{ .Token }}", styleSingleQuoted},
		{"%x", styleSingleQuoted},
		{"*alias", styleSingleQuoted},
		{"", styleDoubleQuoted},
		{"0644", styleDoubleQuoted},
		{"600", styleDoubleQuoted},
		{"123456789012345678901234567890", styleDoubleQuoted},
		{"true", styleDoubleQuoted},
		{"NULL", styleDoubleQuoted},
		{"~", styleDoubleQuoted},
		{"on", styleDoubleQuoted},
		{"Off", styleDoubleQuoted},
		{"y", styleDoubleQuoted},
		{long, styleLiteral},
		{strings.TrimSuffix(long, "\n"), styleLiteral},
		{"#!/bin/sh\n\n\t\nset -e\n\n\nend", styleLiteral},
		{"a\n---\n...\n- b\n", styleLiteral},
		{"tab\there", styleUnknown},
		{"1:20", styleUnknown},
		{"-1", styleUnknown},
		{".inf", styleDoubleQuoted},
		{"2001-12-14", styleUnknown},
		{"café", styleUnknown},
		{"a\r\nb", styleUnknown},
		{" a\nb", styleUnknown},
		{"a \nb", styleUnknown},
		{"a\nb\n\n", styleUnknown},
		{"a\nb ", styleUnknown},
	} {
		if got := scalarStyle(c.v); got != c.style {
			t.Errorf("scalarStyle(%q) = %d, want %d", c.v, got, c.style)
		}
		if emitted := checkEmit(t, emitDoc(c.v)); emitted != (c.style != styleUnknown) {
			t.Errorf("%q: emitPlain wrote the document = %v", c.v, emitted)
		}
	}
	yes := true
	for name, d := range map[string]*plainDoc{
		"empty":         {},
		"ntp {}":        {NTP: &plainNTP{}},
		"ntp enabled":   {NTP: &plainNTP{Enabled: &yes}},
		"ntp servers":   {NTP: &plainNTP{Servers: []string{"0.pool.ntp.org"}}},
		"runcmd only":   {RunCmd: []string{"set -e"}},
		"file defaults": {WriteFiles: []plainFile{{Path: "/a", Content: "x"}}},
	} {
		if !checkEmit(t, d) {
			t.Errorf("%s: emitPlain did not write it", name)
		}
	}
	for name, d := range map[string]*plainDoc{
		"fs_setup":    {FSSetup: []plainFS{{Label: "x"}}},
		"disk_setup":  {DiskSetup: map[plainText]plainDisk{"/dev/sdb": {Layout: true}}},
		"empty mount": {Mounts: []plainLines{{}}},
	} {
		if checkEmit(t, d) {
			t.Errorf("%s: emitPlain wrote it, which it leaves to yaml.v3", name)
		}
	}
}

// FuzzPlainEmit: for any strings, emitPlain writes the document as yaml.v3
// does, or leaves it to yaml.v3.
func FuzzPlainEmit(f *testing.F) {
	f.Add("ALL=(ALL) NOPASSWD: ALL", "0644")
	f.Add("#!/bin/sh\n\n\tset -e\n", "a: b")
	f.Add("a\n \n", "-")
	f.Add("x\x85y\u2028", "'")
	f.Add("\n\xff\n", "\n")
	f.Fuzz(func(t *testing.T, a, b string) {
		d := emitDoc(a)
		d.WriteFiles[1].Content = plainText(b)
		d.Users[1].Sudo = plainText(b)
		d.RunCmd = append(d.RunCmd, b, a+b)
		checkEmit(t, d)
	})
}
