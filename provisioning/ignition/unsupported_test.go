package ignition_test

import (
	"errors"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/ignition"
)

// unsupportedCase changes basePlan to use one feature and names the field
// the error must carry.
type unsupportedCase struct {
	name   string
	change func(p *provisioning.Plan)
	path   string
}

var legacyUnsupported = []unsupportedCase{
	{"gzip encoding", func(p *provisioning.Plan) { p.Files[0].Encoding = provisioning.EncodingGzip }, "spec.files[0].encoding"},
	{"gzip+base64 encoding", func(p *provisioning.Plan) { p.Files[0].Encoding = provisioning.EncodingGzipBase64 }, "spec.files[0].encoding"},
	{"file without permissions", func(p *provisioning.Plan) { p.Files[0].Permissions = "" }, "spec.files[0].permissions"},
	{"bootCommands", func(p *provisioning.Plan) { p.BootCommands = []string{"echo boot"} }, "bootCommands"},
	{"users inactive", func(p *provisioning.Plan) {
		p.Users = []provisioning.User{{Name: "u", Inactive: ptr(true), Origin: provisioning.NewPath("spec", "users").Index(0).WithFields()}}
	}, "spec.users[0].inactive"},
	{"tableType mbr", func(p *provisioning.Plan) {
		p.Disks = &provisioning.DiskSetup{Partitions: []provisioning.Partition{{Device: "/dev/sdb", Layout: ptr(true), TableType: "mbr"}}}
	}, "disks.partitions[0].tableType"},
	{"filesystem partition", func(p *provisioning.Plan) {
		p.Disks = &provisioning.DiskSetup{Filesystems: []provisioning.Filesystem{{Device: "/dev/sdb", Filesystem: "ext4", Label: "l", Partition: "auto", Overwrite: ptr(false)}}}
	}, "disks.filesystems[0].partition"},
	{"filesystem replaceFS", func(p *provisioning.Plan) {
		p.Disks = &provisioning.DiskSetup{Filesystems: []provisioning.Filesystem{{Device: "/dev/sdb", Filesystem: "ext4", Label: "l", ReplaceFS: "ntfs", Overwrite: ptr(false)}}}
	}, "disks.filesystems[0].replaceFS"},
}

// legacyWarned are inputs CABPK renders although it drops or inverts them:
// the legacy dialect renders the same bytes and warns, naming the field.
var legacyWarned = []unsupportedCase{
	{"ntp enabled false", func(p *provisioning.Plan) {
		p.NTP = &provisioning.NTP{Enabled: ptr(false), Servers: []string{"a"}}
	}, "ntp.enabled"},
	{"ntp servers without enabled", func(p *provisioning.Plan) { p.NTP = &provisioning.NTP{Servers: []string{"a"}} }, "ntp.servers"},
	{"diskLayout", func(p *provisioning.Plan) {
		p.Disks = &provisioning.DiskSetup{Partitions: []provisioning.Partition{{Device: "/dev/sdb", DiskLayout: []provisioning.PartitionSpec{{Percentage: 100}}}}}
	}, "disks.partitions[0].diskLayout"},
	{"layout false", func(p *provisioning.Plan) {
		p.Disks = &provisioning.DiskSetup{Partitions: []provisioning.Partition{{Device: "/dev/sdb", Layout: ptr(false)}}}
	}, "disks.partitions[0].layout"},
	{"mount source not a filesystem label", func(p *provisioning.Plan) {
		p.Mounts = []provisioning.Mount{{"/dev/sdb1", "/data"}}
	}, "mounts[0][0]"},
}

// TestLegacyWarnsWhereCABPKDropsOrInverts: each renders, with exactly one
// warning, at the field, and the same output as the input without the
// feature would give where CABPK drops it.
func TestLegacyWarnsWhereCABPKDropsOrInverts(t *testing.T) {
	r := &ignition.Renderer{}
	for _, c := range legacyWarned {
		t.Run(c.name, func(t *testing.T) {
			p := basePlan()
			c.change(p)
			out, err := r.Render(p, provisioning.Options{Version: provisioning.VersionCABPK})
			require.NoError(t, err)
			require.Len(t, out.Warnings, 1, out.Warnings.Error())
			require.Equal(t, c.path, out.Warnings[0].Path.String())
		})
	}
}

var v3Unsupported = []unsupportedCase{
	{"tableType mbr", func(p *provisioning.Plan) {
		p.Disks = &provisioning.DiskSetup{Partitions: []provisioning.Partition{{Device: "/dev/sdb", Layout: ptr(true), TableType: "mbr"}}}
	}, "disks.partitions[0].tableType"},
	{"diskLayout percentage", func(p *provisioning.Plan) {
		p.Disks = &provisioning.DiskSetup{Partitions: []provisioning.Partition{{Device: "/dev/sdb", DiskLayout: []provisioning.PartitionSpec{{Percentage: 50}}}}}
	}, "disks.partitions[0].diskLayout[0].percentage"},
	{"diskLayout MBR-only type", func(p *provisioning.Plan) {
		p.Disks = &provisioning.DiskSetup{Partitions: []provisioning.Partition{{Device: "/dev/sdb", DiskLayout: []provisioning.PartitionSpec{{Percentage: 100, PartitionType: "LinuxExtended"}}}}}
	}, "disks.partitions[0].diskLayout[0].partitionType"},
	{"filesystem partition auto", func(p *provisioning.Plan) {
		p.Disks = &provisioning.DiskSetup{Filesystems: []provisioning.Filesystem{{Device: "/dev/sdb", Filesystem: "ext4", Partition: "auto"}}}
	}, "disks.filesystems[0].partition"},
	{"filesystem replaceFS", func(p *provisioning.Plan) {
		p.Disks = &provisioning.DiskSetup{Filesystems: []provisioning.Filesystem{{Device: "/dev/sdb", Filesystem: "ext4", ReplaceFS: "ntfs"}}}
	}, "disks.filesystems[0].replaceFS"},
	{"swap mount", func(p *provisioning.Plan) {
		p.Mounts = []provisioning.Mount{{"/dev/sdc", "none", "swap", "sw", "0", "0"}}
	}, "mounts[0]"},
	{"mount dump", func(p *provisioning.Plan) {
		p.Mounts = []provisioning.Mount{{"/dev/sdc", "/data", "ext4", "defaults", "1", "0"}}
	}, "mounts[0][4]"},
}

// TestUnsupportedNamesField proves, for each feature a dialect cannot
// express, that Check and Render fail with an error naming the provisioner
// and exactly that field.
func TestUnsupportedNamesField(t *testing.T) {
	r := &ignition.Renderer{}
	for _, d := range []struct {
		version, name string
		cases         []unsupportedCase
	}{{provisioning.VersionCABPK, "ignition (legacy Ignition 2.3)", legacyUnsupported}, {"3.4.0", "ignition (Ignition v3)", v3Unsupported}} {
		for _, c := range d.cases {
			t.Run(d.name+"/"+c.name, func(t *testing.T) {
				p := basePlan()
				c.change(p)
				opts := provisioning.Options{Version: d.version}
				errs := r.Check(p, opts).Errors()
				require.Len(t, errs, 1, errs.Error())
				require.Equal(t, c.path, errs[0].Path.String())
				_, err := r.Render(p, opts)
				var ps provisioning.Problems
				require.True(t, errors.As(err, &ps), "%v", err)
				require.Equal(t, errs, ps)
				require.Regexp(t, ` is not supported by the `+regexp.QuoteMeta(d.name)+` provisioner$`, errs[0].Message)
			})
		}
	}
}

// TestLegacyAppendIsAWarning: CABPK writes an append file whole and the
// ign-init-all-features vector depends on it, so the legacy dialect keeps
// those bytes and says so in a warning naming the field.
func TestLegacyAppendIsAWarning(t *testing.T) {
	p := basePlan()
	p.Files[0].Append = ptr(true)
	out, err := (&ignition.Renderer{}).Render(p, provisioning.Options{Version: provisioning.VersionCABPK})
	require.NoError(t, err)
	require.Len(t, out.Warnings, 1)
	require.Equal(t, "spec.files[0].append", out.Warnings[0].Path.String())
}

// TestLegacyNeverQuotesAPassword: a password hash the legacy layout cannot
// carry is reported by field only; its text would reach a condition and logs.
func TestLegacyNeverQuotesAPassword(t *testing.T) {
	for _, hash := range []string{"{secret-hash", "x #secret-hash", "null"} {
		p := basePlan()
		p.Users = []provisioning.User{{Name: "u", Passwd: hash, LockPassword: ptr(false), Origin: provisioning.NewPath("spec", "users").Index(0).WithFields()}}
		ps := (&ignition.Renderer{}).Check(p, provisioning.Options{Version: provisioning.VersionCABPK})
		require.NotEmpty(t, ps, hash)
		for _, pr := range ps {
			require.NotContains(t, pr.Message, "secret-hash")
			require.NotContains(t, pr.Message, `"null"`)
		}
	}
}

// TestLegacyProblemsNeverQuoteValues: whatever YAML makes of a value in the
// legacy layout (an error, a changed reading, a dropped item), the problem
// names the field, never the value, which can be Secret content.
func TestLegacyProblemsNeverQuoteValues(t *testing.T) {
	for _, v := range []string{"x #leak-me", "leak-me\n", "leak-me\r\nline", "[leak-me", "'leak-me'", "leak-me\nx", "\tleak-me",
		"&leak-me", "leak-me\u2028x", "leak-me\a", "~"} {
		p := basePlan()
		p.Files[0].Content, p.Files[0].Owner = v, v
		p.Commands[0].Script = v
		p.Users = []provisioning.User{{Name: "u", Gecos: v, Groups: "a, " + v, Shell: v, Sudo: v, SSHAuthorizedKeys: []string{v},
			Passwd: v, LockPassword: ptr(false), Origin: provisioning.NewPath("spec", "users").Index(0).WithFields()}}
		p.NTP = &provisioning.NTP{Enabled: ptr(true), Servers: []string{v}}
		p.Disks = &provisioning.DiskSetup{Filesystems: []provisioning.Filesystem{{Device: "/dev/sdb1", Filesystem: "ext4", Label: "data",
			Overwrite: ptr(false), ExtraOpts: []string{v}}}}
		p.Mounts = []provisioning.Mount{{"data", "/mnt/data", v}}
		ps := (&ignition.Renderer{}).Check(p, provisioning.Options{Version: provisioning.VersionCABPK})
		require.NotEmpty(t, ps, v)
		for _, pr := range ps {
			require.NotContains(t, pr.Message, "leak-me", "%s: %q", pr.Path, v)
		}
	}
}
