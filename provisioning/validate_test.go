package provisioning

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func ptrBool(b bool) *bool { return &b }

func TestValidate(t *testing.T) {
	ok := func() Plan {
		return Plan{
			Role:     RoleJoinWorker,
			Files:    []File{{Path: "/etc/a", Permissions: "0644", Origin: "spec.files[0]"}},
			Users:    []User{{Name: "ops", Origin: "spec.users[0]"}},
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
			[]string{`files[1].path: duplicate path "/etc/a" (also spec.files[0])`}},
		{"append to same path is fine", func(p *Plan) { p.Files = append(p.Files, File{Path: "/etc/a", Append: ptrBool(true)}) }, nil},
		{"bad permissions", func(p *Plan) { p.Files[0].Permissions = "rw-r--r--" },
			[]string{`spec.files[0].permissions: must be an octal mode such as 0640, got "rw-r--r--"`}},
		{"non-octal digit", func(p *Plan) { p.Files[0].Permissions = "0648" },
			[]string{`spec.files[0].permissions: must be an octal mode such as 0640, got "0648"`}},
		{"unknown encoding", func(p *Plan) { p.Files[0].Encoding = "zstd" },
			[]string{`spec.files[0].encoding: unknown encoding "zstd" (want one of base64, gzip, gzip+base64)`}},
		{"owner with space", func(p *Plan) { p.Files[0].Owner = "root root" }, []string{"spec.files[0].owner: must be user or user:group"}},
		{"empty user name", func(p *Plan) { p.Users[0].Name = " " }, []string{"spec.users[0].name: must not be empty", "spec.users[0].name: must not contain blanks or ':'"}},
		{"duplicate user", func(p *Plan) { p.Users = append(p.Users, User{Name: "ops"}) }, []string{`users[1].name: duplicate user "ops"`}},
		{"empty ssh key", func(p *Plan) { p.Users[0].SSHAuthorizedKeys = []string{""} }, []string{"spec.users[0].sshAuthorizedKeys[0]: must not be empty"}},
		{"empty ntp server", func(p *Plan) { p.NTP = &NTP{Servers: []string{""}} }, []string{"ntp.servers[0]: must not be empty"}},
		{"short mount", func(p *Plan) { p.Mounts = []Mount{{"/dev/sdb"}} }, []string{"mounts[0]: needs at least a device and a mount point"}},
		{"bad table type", func(p *Plan) { p.Disks = &DiskSetup{Partitions: []Partition{{Device: "/dev/sdb", TableType: "dos"}}} },
			[]string{`disks.partitions[0].tableType: must be mbr or gpt, got "dos"`}},
		{"layout over 100%", func(p *Plan) {
			p.Disks = &DiskSetup{Partitions: []Partition{{Device: "/dev/sdb", DiskLayout: []PartitionSpec{{Percentage: 70}, {Percentage: 40}}}}}
		}, []string{"disks.partitions[0].diskLayout: percentages add up to 110, more than 100"}},
		{"filesystem without type", func(p *Plan) { p.Disks = &DiskSetup{Filesystems: []Filesystem{{Device: "/dev/sdb1"}}} },
			[]string{"disks.filesystems[0].filesystem: must not be empty"}},
		{"two bootstrap commands", func(p *Plan) { p.Commands = append(p.Commands, Command{Phase: PhaseBootstrap}) },
			[]string{"commands[1]: a plan has at most one bootstrap command"}},
		{"unknown phase", func(p *Plan) { p.Commands[0].Phase = 7 }, []string{"commands[0]: unknown phase 7"}},
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

func TestProblemsErr(t *testing.T) {
	var ps Problems
	ps.Warnf("a", "careful")
	if ps.Err() != nil {
		t.Fatal("warnings alone are not an error")
	}
	ps.Errorf("b", "broken %d", 1)
	if ps.Err() == nil || ps.Err().Error() != "b: broken 1" {
		t.Fatalf("got %v", ps.Err())
	}
}
