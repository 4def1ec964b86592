package script_test

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/script"
)

// hostilePlan puts shell syntax into every value the script carries.
func hostilePlan() *provisioning.Plan {
	nasty := "it's $(id) `id` \"q\" \\ ; & | > < * ? [a] # ~ {x} \t end"
	return &provisioning.Plan{
		Files: []provisioning.File{
			{Path: "/etc/x/" + strings.ReplaceAll(nasty, "/", "_"), Owner: "us'er:gr$oup", Content: nasty + "\nNODEBOOT_EOF\nNODEBOOT_EOF_1\n"},
			{Path: "/etc/x/bin", Content: "\x00\x01\xff binary\n"},
			{Path: "/etc/x/crlf", Content: "a\r\nb\r\n"},
		},
		Users:        []provisioning.User{{Name: "u'x", Gecos: nasty, Sudo: nasty, SSHAuthorizedKeys: []string{nasty}, Passwd: "$6$'x"}},
		Units:        []provisioning.Unit{{Name: "a\\x2db.service", Contents: nasty + "\n", Enabled: ptr(true)}},
		BootCommands: []string{nasty},
		Commands: []provisioning.Command{
			{Phase: provisioning.PhaseBootstrap, Script: nasty + "\n'\n\"", Origin: provisioning.NewPath("spec", "it's").Index(0).WithFields()},
		},
		Sentinel: "/run/it's $x",
	}
}

func render(t *testing.T, p *provisioning.Plan) []byte {
	t.Helper()
	out, err := (&script.Renderer{}).Render(p, provisioning.Options{})
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return out.Data
}

// TestSyntax parses rendered scripts with dash (Debian's /bin/sh) and bash
// in POSIX mode, without running them.
func TestSyntax(t *testing.T) {
	plans := map[string]*provisioning.Plan{
		"full": fullPlan(t), "hostile": hostilePlan(), "empty": {},
		"commands only": {Commands: []provisioning.Command{{Phase: provisioning.PhasePost, Script: "echo post"}}},
	}
	dir := t.TempDir()
	var files []string
	for name, p := range plans {
		f := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".sh")
		if err := os.WriteFile(f, render(t, p), 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	for _, shell := range [][]string{{"sh", "-n"}, {"dash", "-n"}, {"bash", "--posix", "-n"}} {
		for _, f := range files {
			if out, err := exec.Command(shell[0], append(shell[1:], f)...).CombinedOutput(); err != nil {
				t.Errorf("%s %s: %v\n%s", strings.Join(shell, " "), filepath.Base(f), err, out)
			}
		}
	}
	if out, err := exec.Command("dash", "-n", "preamble.sh").CombinedOutput(); err != nil {
		t.Errorf("preamble.sh: %v\n%s", err, out)
	}
}

func planContent(t testing.TB, f provisioning.File) string {
	t.Helper()
	c := f.Content
	if f.Encoding == provisioning.EncodingBase64 || f.Encoding == provisioning.EncodingGzipBase64 {
		raw, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(c), ""))
		if err != nil {
			t.Fatal(err)
		}
		c = string(raw)
	}
	if f.Encoding == provisioning.EncodingGzip || f.Encoding == provisioning.EncodingGzipBase64 {
		zr, err := gzip.NewReader(strings.NewReader(c))
		if err != nil {
			t.Fatal(err)
		}
		raw, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		c = string(raw)
	}
	return c
}

// expectedSteps is what the shell must read from the script of p: every
// file, the sudo rules, unit files and the sentinel, with the contents the
// node must get, and every command with its label, in order.
func expectedSteps(t testing.TB, p *provisioning.Plan) []step {
	t.Helper()
	var out []step
	file := func(path, mode, content string) {
		out = append(out, step{words: []string{"nb_file", path, mode}, body: content})
	}
	for i, c := range p.BootCommands {
		out = append(out, step{words: []string{"nb_run", p.SectionPath(provisioning.SectionBootCommands).Index(i).String(), c}})
	}
	for _, f := range p.Files {
		mode := f.Permissions
		if mode == "" {
			mode = "0644"
		}
		file(f.Path, mode, planContent(t, f))
	}
	var sudo string
	for _, u := range p.Users {
		if u.Sudo != "" {
			sudo += u.Name + " " + u.Sudo + "\n"
		}
	}
	if sudo != "" {
		file("/etc/sudoers.d/.90-nodeboot-users.new", "0440", sudo)
	}
	for _, u := range p.Units {
		if u.Contents != "" {
			file(provisioning.UnitFile(u.Name), "0644", u.Contents)
		}
		for _, d := range u.DropIns {
			file(provisioning.DropInFile(u.Name, d.Name), "0644", d.Contents)
		}
	}
	for _, phase := range []provisioning.Phase{provisioning.PhasePre, provisioning.PhaseBootstrap, provisioning.PhasePost} {
		for i, c := range p.Commands {
			if c.Phase == phase {
				out = append(out, step{words: []string{"nb_run", p.CommandPath(i).String(), c.Script}})
				if phase == provisioning.PhaseBootstrap && p.Sentinel != "" {
					file(p.Sentinel, "0644", "success\n")
				}
			}
		}
	}
	return out
}

// sameSteps compares what the shell reads with what the Plan says,
// ignoring nb_file's how and kind words, which are the renderer's choice.
func sameSteps(got, want []step) string {
	if len(got) != len(want) {
		return "step count differs"
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.words[0] == "nb_file" {
			g.words = g.words[:3]
		}
		if strings.Join(g.words, "\x00") != strings.Join(w.words, "\x00") || g.body != w.body {
			return "step " + strings.Join(w.words[:2], " ") + " differs"
		}
	}
	return ""
}

func TestRoundTrip(t *testing.T) {
	for name, p := range map[string]*provisioning.Plan{"full": fullPlan(t), "hostile": hostilePlan()} {
		t.Run(name, func(t *testing.T) {
			got, err := parseSteps(string(render(t, p)))
			if err != nil {
				t.Fatal(err)
			}
			if diff := sameSteps(got, expectedSteps(t, p)); diff != "" {
				t.Errorf("%s\n got %q\nwant %q", diff, got, expectedSteps(t, p))
			}
		})
	}
}

// TestRoundTripCatchesQuoting proves the reader sees a quoting mistake.
func TestRoundTripCatchesQuoting(t *testing.T) {
	for _, bad := range []string{
		"nb_run 'commands[0]' 'it's'\n",
		"nb_run 'commands[0]' echo $(id)\n",
		"nb_file '/a' 0644 write text <<'NODEBOOT_EOF'\nbody\n",
	} {
		if _, err := parseSteps(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	steps, err := parseSteps("nb_run 'a' 'it'\\''s'\n")
	if err != nil || steps[0].words[2] != "it's" {
		t.Errorf("escaped quote: %q %v", steps, err)
	}
}

func TestDelimiterNeverInBody(t *testing.T) {
	content := "NODEBOOT_EOF\nNODEBOOT_EOF_1\nNODEBOOT_EOF_2\n"
	p := &provisioning.Plan{Files: []provisioning.File{{Path: "/a", Content: content}}}
	data := string(render(t, p))
	if !strings.Contains(data, "<<'NODEBOOT_EOF_3'\n"+content+"NODEBOOT_EOF_3\n") {
		t.Errorf("want delimiter NODEBOOT_EOF_3:\n%s", data)
	}
}

func TestProblems(t *testing.T) {
	bootstrap := []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: "true"}}
	cases := []struct {
		name  string
		plan  *provisioning.Plan
		opts  provisioning.Options
		path  string
		class error
	}{
		{"nil plan", nil, provisioning.Options{}, "", provisioning.ErrInvalid},
		{"version", &provisioning.Plan{}, provisioning.Options{Version: "2"}, "options.version", provisioning.ErrInvalid},
		{"compress", &provisioning.Plan{}, provisioning.Options{Compress: true}, "options.compress", provisioning.ErrUnsupported},
		{"additional config", &provisioning.Plan{}, provisioning.Options{AdditionalConfig: []byte("x")}, "additionalConfig", provisioning.ErrUnsupported},
		{"ntp", &provisioning.Plan{NTP: &provisioning.NTP{Servers: []string{"pool.example"}}}, provisioning.Options{}, "ntp", provisioning.ErrUnsupported},
		{"partitions", &provisioning.Plan{Disks: &provisioning.DiskSetup{Partitions: []provisioning.Partition{{Device: "/dev/sdb"}}}}, provisioning.Options{}, "disks.partitions", provisioning.ErrUnsupported},
		{"filesystems", &provisioning.Plan{Disks: &provisioning.DiskSetup{Filesystems: []provisioning.Filesystem{{Device: "/dev/sdb1", Filesystem: "ext4"}}}}, provisioning.Options{}, "disks.filesystems", provisioning.ErrUnsupported},
		{"mounts", &provisioning.Plan{Mounts: []provisioning.Mount{{"/dev/sdb1", "/data"}}}, provisioning.Options{}, "mounts", provisioning.ErrUnsupported},
		{"windows path", &provisioning.Plan{Files: []provisioning.File{{Path: `C:\k\a.json`}}}, provisioning.Options{}, "files[0].path", provisioning.ErrUnsupported},
		{"relative path is a hazard, so an error here", &provisioning.Plan{Files: []provisioning.File{{Path: "etc/a"}}}, provisioning.Options{}, "files[0].path", provisioning.ErrInvalid},
		{"bad base64", &provisioning.Plan{Files: []provisioning.File{{Path: "/a", Encoding: provisioning.EncodingBase64, Content: "!!"}}}, provisioning.Options{}, "files[0].content", provisioning.ErrInvalid},
		{"NUL in a command", &provisioning.Plan{Commands: []provisioning.Command{{Phase: provisioning.PhasePre, Script: "a\x00b"}}}, provisioning.Options{}, "commands[0].script", provisioning.ErrInvalid},
		{"command too long", &provisioning.Plan{Commands: []provisioning.Command{{Phase: provisioning.PhasePre, Script: strings.Repeat("x", 128<<10)}}}, provisioning.Options{}, "commands[0].script", provisioning.ErrInvalid},
		{"NUL in a boot command", &provisioning.Plan{BootCommands: []string{"\x00"}}, provisioning.Options{}, "bootCommands[0]", provisioning.ErrInvalid},
		{"colon in gecos", &provisioning.Plan{Users: []provisioning.User{{Name: "a", Gecos: "a:b"}}}, provisioning.Options{}, "users[0].gecos", provisioning.ErrInvalid},
		{"colon in a hash", &provisioning.Plan{Users: []provisioning.User{{Name: "a", Passwd: "x:y"}}}, provisioning.Options{}, "users[0].passwd", provisioning.ErrInvalid},
		{"two sudo rules", &provisioning.Plan{Users: []provisioning.User{{Name: "a", Sudo: "ALL=(ALL) ALL\nALL=(ALL) NOPASSWD:ALL"}}}, provisioning.Options{}, "users[0].sudo", provisioning.ErrInvalid},
		{"blank in a group", &provisioning.Plan{Users: []provisioning.User{{Name: "a", Groups: "a b"}}}, provisioning.Options{}, "users[0].groups", provisioning.ErrInvalid},
		{"two-line key", &provisioning.Plan{Users: []provisioning.User{{Name: "a", SSHAuthorizedKeys: []string{"k1\nk2"}}}}, provisioning.Options{}, "users[0].sshAuthorizedKeys[0]", provisioning.ErrInvalid},
		{"origin names the input", &provisioning.Plan{Users: []provisioning.User{{Name: "a", Shell: "a:b", Origin: provisioning.NewPath("spec", "users").Index(3).WithFields()}}}, provisioning.Options{}, "spec.users[3].shell", provisioning.ErrInvalid},
		{"unit name with a slash", &provisioning.Plan{Units: []provisioning.Unit{{Name: "../x.service", Contents: "x"}}}, provisioning.Options{}, "units[0].name", provisioning.ErrInvalid},
		{"sentinel without bootstrap", &provisioning.Plan{Sentinel: "/run/s"}, provisioning.Options{}, "sentinel", provisioning.ErrInvalid},
		{"budget", &provisioning.Plan{Commands: bootstrap}, provisioning.Options{MaxBytes: 100}, "", provisioning.ErrTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &script.Renderer{}
			out, err := r.Render(c.plan, c.opts)
			if err == nil || out != nil {
				t.Fatalf("rendered, want an error at %q", c.path)
			}
			if !errors.Is(err, c.class) {
				t.Errorf("%v does not match %v", err, c.class)
			}
			if errors.Is(c.class, provisioning.ErrTooLarge) {
				return
			}
			var ps provisioning.Problems
			if !errors.As(err, &ps) {
				t.Fatalf("%T is not provisioning.Problems", err)
			}
			found := false
			for _, p := range ps {
				found = found || p.Path.String() == c.path
				if strings.Contains(p.Message, "hashhash") || strings.Contains(p.Message, "x:y") {
					t.Errorf("message names a value: %s", p)
				}
			}
			if !found {
				t.Errorf("no problem at %q: %v", c.path, err)
			}
			if got := r.Check(c.plan, c.opts).Err(); got == nil || got.Error() != err.Error() {
				t.Errorf("Check says %v, Render %v", got, err)
			}
		})
	}
}

func TestCheckAcceptsWhatItRenders(t *testing.T) {
	r := &script.Renderer{}
	for name, p := range map[string]*provisioning.Plan{"full": fullPlan(t), "hostile": hostilePlan()} {
		if ps := r.Check(p, provisioning.Options{Corrections: true, Strict: true}); len(ps) != 0 {
			t.Errorf("%s: %v", name, ps)
		}
	}
	// An empty DiskSetup touches no disk, so it is no unsupported feature.
	if ps := r.Check(&provisioning.Plan{Disks: &provisioning.DiskSetup{}}, provisioning.Options{}); len(ps) != 0 {
		t.Errorf("empty disks: %v", ps)
	}
}

func TestRegistered(t *testing.T) {
	p, err := provisioning.Get(script.Format)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.(*script.Renderer); !ok || p.Format() != "script" {
		t.Errorf("format %q is %T", script.Format, p)
	}
}

func TestSizes(t *testing.T) {
	out, err := (&script.Renderer{}).Render(fullPlan(t), provisioning.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Compressed || out.Sizes[provisioning.SizeTotal] != len(out.Data) {
		t.Errorf("total %d for %d bytes, compressed %v", out.Sizes[provisioning.SizeTotal], len(out.Data), out.Compressed)
	}
	parts := 0
	for _, k := range []string{provisioning.SizeFiles, script.SizeUsers, provisioning.SizeUnits, provisioning.SizeCommands} {
		if out.Sizes[k] <= 0 {
			t.Errorf("no size for %s: %v", k, out.Sizes)
		}
		parts += out.Sizes[k]
	}
	if parts >= len(out.Data) || !bytes.HasPrefix(out.Data, []byte("#!/bin/sh\n")) {
		t.Errorf("parts add up to %d of %d bytes", parts, len(out.Data))
	}
	if len(out.Sizes) != 5 {
		t.Errorf("undocumented size keys: %v", out.Sizes)
	}
}
