package provisioning

import (
	pathpkg "path"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func ptrBool(b bool) *bool { return &b }

func TestValidate(t *testing.T) {
	ok := func() Plan {
		return Plan{
			Role:     RoleJoinWorker,
			Files:    []File{{Path: "/etc/a", Permissions: "0644", Origin: NewPath("spec", "files").Index(0).WithFields()}},
			Users:    []User{{Name: "ops", Origin: NewPath("spec", "users").Index(0).WithFields()}},
			Commands: []Command{{Phase: PhaseBootstrap, Script: "join"}},
			Sentinel: "/run/done",
		}
	}
	tests := []struct {
		name   string
		mutate func(*Plan)
		want   []string
	}{
		{"valid", func(*Plan) {}, nil},
		{"relative path", func(p *Plan) { p.Files[0].Path = "etc/a" }, []string{"spec.files[0].path: must be absolute"}},
		{"empty path", func(p *Plan) { p.Files[0].Path = "" }, []string{"spec.files[0].path: must not be empty"}},
		{"unclean path", func(p *Plan) { p.Files[0].Path = "/etc/../a" }, []string{"spec.files[0].path: must be clean (no '..', '//' or '.')"}},
		{"directory path", func(p *Plan) { p.Files[0].Path = "/etc/" }, []string{"spec.files[0].path: must name a file, not a directory"}},
		{"duplicate path", func(p *Plan) { p.Files = append(p.Files, File{Path: "/etc/a"}) },
			[]string{"files[1].path: duplicate path (also spec.files[0]): the later file replaces the earlier"}},
		{"append to same path is fine", func(p *Plan) { p.Files = append(p.Files, File{Path: "/etc/a", Append: ptrBool(true)}) }, nil},
		{"bad permissions", func(p *Plan) { p.Files[0].Permissions = "rw-r--r--" },
			[]string{"spec.files[0].permissions: must be an octal mode such as 0640"}},
		{"non-octal digit", func(p *Plan) { p.Files[0].Permissions = "0648" },
			[]string{"spec.files[0].permissions: must be an octal mode such as 0640"}},
		{"unknown encoding", func(p *Plan) { p.Files[0].Encoding = "zstd" },
			[]string{"spec.files[0].encoding: unknown encoding (want one of base64, gzip, gzip+base64)"}},
		{"owner with space", func(p *Plan) { p.Files[0].Owner = "root root" }, []string{"spec.files[0].owner: must be user or user:group, without blanks or line breaks"}},
		{"empty user name", func(p *Plan) { p.Users[0].Name = " " }, []string{"spec.users[0].name: must not be blank", "spec.users[0].name: must not contain blanks or ':'; no system can create such an account"}},
		{"user name as a path", func(p *Plan) { p.Users[0].Name = "../etc" },
			[]string{"spec.users[0].name: must not contain '/' or be '.' or '..': provisioners that write per-user files (sudoers) use the name as a path"}},
		{"windows paths are absolute", func(p *Plan) {
			p.Files = append(p.Files, File{Path: `C:\k\node.json`}, File{Path: "c:/k/azure.json"}, File{Path: "D:/a b/c.ps1"})
		}, nil},
		{"a drive letter alone is not a path", func(p *Plan) { p.Files[0].Path = "c:" }, []string{"spec.files[0].path: must be absolute"}},
		{"duplicate user", func(p *Plan) { p.Users = append(p.Users, User{Name: "ops"}) }, []string{"users[1].name: duplicate user name (also an earlier users entry)"}},
		{"empty ssh key", func(p *Plan) { p.Users[0].SSHAuthorizedKeys = []string{""} }, []string{"spec.users[0].sshAuthorizedKeys[0]: must not be blank"}},
		{"empty ntp server", func(p *Plan) { p.NTP = &NTP{Servers: []string{""}} }, []string{"ntp.servers[0]: must not be blank"}},
		{"short mount", func(p *Plan) { p.Mounts = []Mount{{"/dev/sdb"}} }, []string{"mounts[0]: needs at least a device and a mount point"}},
		{"bad table type", func(p *Plan) { p.Disks = &DiskSetup{Partitions: []Partition{{Device: "/dev/sdb", TableType: "dos"}}} },
			[]string{`disks.partitions[0].tableType: must be mbr or gpt`}},
		{"layout over 100%", func(p *Plan) {
			p.Disks = &DiskSetup{Partitions: []Partition{{Device: "/dev/sdb", DiskLayout: []PartitionSpec{{Percentage: 70}, {Percentage: 40}}}}}
		}, []string{"disks.partitions[0].diskLayout: percentages add up to 110, more than 100"}},
		{"filesystem without type", func(p *Plan) { p.Disks = &DiskSetup{Filesystems: []Filesystem{{Device: "/dev/sdb1"}}} },
			[]string{"disks.filesystems[0].filesystem: must not be empty"}},
		{"two bootstrap commands", func(p *Plan) { p.Commands = append(p.Commands, Command{Phase: PhaseBootstrap}) },
			[]string{"commands[1]: a plan has at most one bootstrap command"}},
		{"unknown phase", func(p *Plan) { p.Commands = append(p.Commands, Command{Phase: 7}) }, []string{"commands[1]: unknown phase 7"}},
		{"sentinel without bootstrap command", func(p *Plan) { p.Commands = nil },
			[]string{"sentinel: is set but the plan has no bootstrap command whose success it would record"}},
		{"no sentinel, no bootstrap command", func(p *Plan) { p.Commands, p.Sentinel = nil, "" }, nil},
		{"sentinel with a line break", func(p *Plan) { p.Sentinel = "/run/a\nb" }, []string{"sentinel: must not contain line breaks or NUL"}},
		{"owner with two colons", func(p *Plan) { p.Files[0].Owner = "a:b:c" },
			[]string{"spec.files[0].owner: must be user or user:group, without blanks or line breaks"}},
		{"owner without user", func(p *Plan) { p.Files[0].Owner = ":wheel" },
			[]string{"spec.files[0].owner: must be user or user:group, without blanks or line breaks"}},
		{"owner without group", func(p *Plan) { p.Files[0].Owner = "root:" },
			[]string{"spec.files[0].owner: must be user or user:group, without blanks or line breaks"}},
		{"owner user:group", func(p *Plan) { p.Files[0].Owner = "root:wheel" }, nil},
		{"owner with a tab", func(p *Plan) { p.Files[0].Owner = "root\t" },
			[]string{"spec.files[0].owner: must be user or user:group, without blanks or line breaks"}},
		{"shell with a line break", func(p *Plan) { p.Users[0].Shell = "/bin/sh\nroot::0:0::/:/bin/sh" },
			[]string{"spec.users[0].shell: must not contain line breaks"}},
		{"mount field with a line break", func(p *Plan) { p.Mounts = []Mount{{"LABEL=x", "/mnt\n/dev/sda /"}} },
			[]string{"mounts[0][1]: must not contain line breaks: an fstab entry is one line"}},
		{"section origins name the input", func(p *Plan) {
			p.Origins.Mounts = NewPath("spec", "mounts")
			p.Mounts = []Mount{{"/dev/sdb"}}
		}, []string{"spec.mounts[0]: needs at least a device and a mount point"}},
		{"base64 content that does not decode", func(p *Plan) { p.Files[0].Encoding, p.Files[0].Content = EncodingBase64, "not base64!" },
			[]string{"spec.files[0].content: is not valid base64 (line breaks and blanks aside) for encoding base64: the node gets no file or different bytes"}},
		{"relative sentinel", func(p *Plan) { p.Sentinel = "done" }, []string{"sentinel: must be absolute"}},
		{"unknown role", func(p *Plan) { p.Role = "leader" }, []string{`role: unknown role "leader"`}},
		{"every problem at once", func(p *Plan) { p.Files[0].Path = "a"; p.Users[0].Name = ""; p.Sentinel = "x" },
			[]string{"spec.files[0].path: must be absolute", "spec.users[0].name: must not be empty", "sentinel: must be absolute"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := ok()
			tt.mutate(&p)
			var got []string
			for _, pr := range p.Validate() {
				got = append(got, pr.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHazards: what CABPK renders anyway is a hazard, which Tolerate turns
// into a warning; what no provisioner can render stays an error.
func TestHazards(t *testing.T) {
	p := Plan{
		Files:    []File{{Path: "etc/a", Permissions: "rw", Owner: "a b"}, {Path: "", Encoding: "zstd"}, {Path: "/x"}, {Path: "/x"}},
		Users:    []User{{Name: "a/b"}, {Name: ""}, {Name: "a/b", SSHAuthorizedKeys: []string{" "}}},
		NTP:      &NTP{Servers: []string{" "}},
		Mounts:   []Mount{{"/dev/sdb"}, {"a", "b", "c", "d", "e", "f", "g"}},
		Commands: []Command{{Phase: PhaseBootstrap}, {Phase: PhaseBootstrap}},
	}
	var hazards, errs []string
	for _, pr := range p.Validate() {
		if pr.Severity != SeverityError {
			t.Fatalf("Validate returned a warning: %v", pr)
		}
		if pr.Hazard {
			hazards = append(hazards, pr.Path.String())
		} else {
			errs = append(errs, pr.Path.String())
		}
	}
	wantHazards := []string{"files[0].path", "files[0].permissions", "files[0].owner", "files[3].path", "users[0].name", "users[2].name", "users[2].name", "users[2].sshAuthorizedKeys[0]", "ntp.servers[0]", "mounts[0]", "mounts[1]"}
	wantErrs := []string{"files[1].path", "files[1].encoding", "users[1].name", "commands[1]"}
	if diff := cmp.Diff(wantHazards, hazards); diff != "" {
		t.Errorf("hazards (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantErrs, errs); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	tolerated := p.Validate().Tolerate()
	if got := len(tolerated.Errors()); got != len(wantErrs) {
		t.Errorf("after Tolerate %d errors, want %d", got, len(wantErrs))
	}
	if got := len(tolerated.Warnings()); got != len(wantHazards) {
		t.Errorf("after Tolerate %d warnings, want %d", got, len(wantHazards))
	}
}

func TestProblemsErr(t *testing.T) {
	var ps Problems
	ps.Warnf(NewPath("a"), "careful")
	if ps.Err() != nil {
		t.Fatal("warnings alone are not an error")
	}
	ps.Errorf(NewPath("b"), "broken %d", 1)
	if ps.Err() == nil || ps.Err().Error() != "b: broken 1" {
		t.Fatalf("got %v", ps.Err())
	}
}

// TestFastPathsAgree holds Validate's one-pass checks to the definitions
// they replace (path.Clean, strings.Cut, strings.ContainsAny), over every
// string up to four bytes from the characters those definitions look at,
// and longer paths with each of them in every position.
func TestFastPathsAgree(t *testing.T) {
	const alphabet = "/.a:\n\r\x00 \t"
	var values []string
	var grow func(prefix string)
	grow = func(prefix string) {
		values = append(values, prefix)
		if len(prefix) == 4 {
			return
		}
		for i := 0; i < len(alphabet); i++ {
			grow(prefix + alphabet[i:i+1])
		}
	}
	grow("")
	for _, base := range []string{"/etc/kubernetes/pki/ca.crt", "/a/b", "root:root"} {
		for pos := range len(base) {
			for i := 0; i < len(alphabet); i++ {
				values = append(values, base[:pos]+alphabet[i:i+1]+base[pos+1:], base[:pos]+alphabet[i:i+1]+base[pos:])
			}
		}
	}
	for _, v := range values {
		wantPath := pathpkg.IsAbs(v) && !strings.HasSuffix(v, "/") && pathpkg.Clean(v) == v && !strings.ContainsAny(v, "\n\r\x00")
		if got := cleanFilePath(v); got != wantPath {
			t.Errorf("cleanFilePath(%q) = %v, want %v", v, got, wantPath)
		}
		user, group, hasGroup := strings.Cut(v, ":")
		wantOwner := v == "" || !strings.ContainsAny(v, " \t\n\r\x00") && user != "" && (!hasGroup || group != "" && !strings.Contains(group, ":"))
		if got := validOwner(v); got != wantOwner {
			t.Errorf("validOwner(%q) = %v, want %v", v, got, wantOwner)
		}
		if got, want := hasLineBreak(v), strings.ContainsAny(v, lineBreaks); got != want {
			t.Errorf("hasLineBreak(%q) = %v, want %v", v, got, want)
		}
		if got, want := blank(v), strings.TrimSpace(v) == ""; got != want {
			t.Errorf("blank(%q) = %v, want %v", v, got, want)
		}
	}
	t.Logf("%d values", len(values))
}
