package cloudinit_test

import (
	"encoding/base64"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/cloudinit"
)

func ptr[T any](v T) *T { return &v }

// hazardous has one of each construct CABPK's layout gets wrong.
func hazardous() *provisioning.Plan {
	return &provisioning.Plan{
		Role:     provisioning.RoleJoinWorker,
		Files:    []provisioning.File{{Path: "/etc/tpl", Content: "v={{ .Version }}\n", Origin: provisioning.NewPath("spec", "files").Index(0).WithFields()}},
		Users:    []provisioning.User{{Name: "old", Inactive: ptr(true), Origin: provisioning.NewPath("spec", "users").Index(0).WithFields()}},
		Disks:    &provisioning.DiskSetup{Partitions: []provisioning.Partition{{Device: "/dev/sdb"}}},
		Mounts:   []provisioning.Mount{{"LABEL=d", "/data", "ext4", "defaults", "0", "2"}},
		Commands: []provisioning.Command{{Phase: provisioning.PhasePre, Script: "docker ps --format '{{.ID}}'", Origin: provisioning.NewPath("spec", "preKubeadmCommands").Index(0).WithFields()}, {Phase: provisioning.PhaseBootstrap, Script: "join"}},
		Sentinel: "/run/cluster-api/bootstrap-success.complete",
	}
}

func TestWarningsNameEveryHazard(t *testing.T) {
	out, err := (&cloudinit.Renderer{}).Render(hazardous(), provisioning.Options{Version: provisioning.VersionCABPK})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, w := range out.Warnings {
		paths = append(paths, w.Path.String())
	}
	want := []string{"spec.files[0].content", "spec.preKubeadmCommands[0]", "spec.users[0].inactive", "disks.partitions[0].layout", "disks.filesystems", "mounts[0][4]", "mounts[0][5]"}
	if diff := cmp.Diff(want, paths); diff != "" {
		t.Fatalf("warning paths (-want +got):\n%s", diff)
	}
}

// cloudConfig is the part of cloud-init's schema the corrections touch.
type cloudConfig struct {
	WriteFiles []struct {
		Path, Encoding, Content string
	} `yaml:"write_files"`
	Runcmd []string `yaml:"runcmd"`
	Users  []map[string]any
	Disk   map[string]map[string]any `yaml:"disk_setup"`
	Mounts [][]any
}

func TestCorrectionsKeepMeaning(t *testing.T) {
	out, err := (&cloudinit.Renderer{}).Render(hazardous(), provisioning.Options{Version: provisioning.VersionCABPK, Corrections: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Warnings) != 0 {
		t.Fatalf("corrected output still warns: %v", out.Warnings)
	}
	var cc cloudConfig
	if err := yaml.Unmarshal(out.Data, &cc); err != nil {
		t.Fatalf("corrected output is not YAML: %v\n%s", err, out.Data)
	}
	f := cc.WriteFiles[0]
	decoded, err := base64.StdEncoding.DecodeString(f.Content)
	if err != nil || f.Encoding != "base64" || string(decoded) != "v={{ .Version }}\n" {
		t.Errorf("file: encoding %q, content %q (%v)", f.Encoding, decoded, err)
	}
	if got, want := cc.Runcmd[0], "docker ps --format '{{.ID}}'"; got != want {
		t.Errorf("runcmd[0] = %q, want %q", got, want)
	}
	if diff := cmp.Diff(map[string]any{"name": "old", "expiredate": "1970-01-02"}, cc.Users[0]); diff != "" {
		t.Errorf("user (-want +got):\n%s", diff)
	}
	if got := cc.Disk["/dev/sdb"]["layout"]; got != false {
		t.Errorf("layout = %#v, want false", got)
	}
	for i, v := range cc.Mounts[0] {
		if _, ok := v.(string); !ok {
			t.Errorf("mounts[0][%d] = %#v, want a string", i, v)
		}
	}
}

func TestCompressAndBudget(t *testing.T) {
	plain, err := (&cloudinit.Renderer{}).Render(hazardous(), provisioning.Options{Version: provisioning.VersionCABPK})
	if err != nil {
		t.Fatal(err)
	}
	gz, err := (&cloudinit.Renderer{}).Render(hazardous(), provisioning.Options{Version: provisioning.VersionCABPK, Compress: true})
	if err != nil {
		t.Fatal(err)
	}
	if gz.Data[0] != 0x1f || gz.Data[1] != 0x8b || gz.Sizes["uncompressed"] != len(plain.Data) || gz.Sizes["total"] != len(gz.Data) {
		t.Fatalf("gzip output: magic %x, sizes %v, plain %d", gz.Data[:2], gz.Sizes, len(plain.Data))
	}
	if _, err := (&cloudinit.Renderer{}).Render(hazardous(), provisioning.Options{Version: provisioning.VersionCABPK, MaxBytes: 10}); err == nil {
		t.Fatal("an output over budget must be an error")
	}
}
