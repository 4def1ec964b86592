package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodeboot/nodeboot/internal/cabpkversion"
	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// TestVerifyCABPKVersions: data of CABPK v1.13 or v1.14.0 is identical and
// named so; nodeboot's own data is plain identical; a demanded version
// accepts its data only, and everything else differs with a line saying how.
func TestVerifyCABPKVersions(t *testing.T) {
	vector := func(name string) *provisioning.Output {
		dir := filepath.Join(testenv.VectorsDir(t), name)
		data, err := os.ReadFile(filepath.Join(dir, "bootstrap-data"))
		if err != nil {
			t.Fatal(err)
		}
		format, err := os.ReadFile(filepath.Join(dir, "format"))
		if err != nil {
			t.Fatal(err)
		}
		return &provisioning.Output{Data: data, Format: string(format)}
	}
	ign, cc := vector("ign-join-worker-minimal-v1.33"), vector("cc-join-worker-minimal-v1.33")
	old, err := cabpkversion.V1_13.Render(ign.Format, ign.Data)
	if err != nil || bytes.Equal(old, ign.Data) {
		t.Fatalf("no v1.13 data: %v", err)
	}
	demand := func(name string) []cabpkversion.Version {
		v, err := cabpkversion.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		return []cabpkversion.Version{v}
	}
	for _, c := range []struct {
		name     string
		stored   []byte
		out      *provisioning.Output
		versions []cabpkversion.Version
		want     string // the row as printed
	}{
		{"v1.13 Ignition", old, ign, cabpkversion.All, "identical (CABPK v1.13 or v1.14.0)"},
		{"v1.13 Ignition, v1.13 demanded", old, ign, demand("v1.13"), "identical (CABPK v1.13)"},
		{"v1.13 Ignition, v1.14.0 demanded", old, ign, demand("v1.14.0"), "identical (CABPK v1.14.0)"},
		{"v1.13 Ignition, v1.14 demanded", old, ign, demand("v1.14"), "differs: line 37: Secret ns/s has"},
		{"own Ignition", ign.Data, ign, cabpkversion.All, "identical"},
		{"own Ignition, v1.14.2 demanded", ign.Data, ign, demand("v1.14.2"), "identical (CABPK v1.14)"},
		{"own Ignition, v1.13 demanded", ign.Data, ign, demand("v1.13"), "differs: line 37: Secret ns/s has"},
		{"cloud-config", cc.Data, cc, cabpkversion.All, "identical"},
		{"cloud-config, v1.13 demanded", cc.Data, cc, demand("v1.13"), "identical (CABPK v1.13)"},
		{"changed cloud-config", append([]byte("#"), cc.Data...), cc, cabpkversion.All, "differs: line 1: Secret ns/s has"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmp, matched := compareVersions("KubeadmConfig ns/c", "Secret ns/s", c.stored, c.out.Format, c.out, false, c.versions, nil)
			row := verifyRow{Result: resultDiffers, Details: cmp.details}
			if cmp.identical {
				row = verifyRow{Result: resultIdentical, CABPKVersions: versionNames(matched, c.versions)}
			}
			got := row.label()
			if len(row.Details) > 0 {
				got = strings.Join(row.Details, "\n")
			}
			if !strings.HasPrefix(got, c.want) {
				t.Errorf("got %q, want it to start %q", got, c.want)
			}
		})
	}
	// Ignition compares line by line on indented JSON: the line is the unit's.
	cmp, _ := compareVersions("KubeadmConfig ns/c", "Secret ns/s", old, ign.Format, ign, false, demand("v1.14"), nil)
	if len(cmp.details) != 2 || !strings.Contains(cmp.details[0], `ExecStart=/etc/kubeadm.sh`) ||
		cmp.details[1] != "differs: Secret ns/s holds the data of CABPK v1.13 or v1.14.0, not of CABPK v1.14" {
		t.Errorf("details %q, want the ExecStart line and the versions it is data of", cmp.details)
	}
}

func TestVerifySummaryNamesVersions(t *testing.T) {
	s := verifySummary{Identical: 5, Compared: 6, Skipped: 1, CABPKVersions: map[string]int{"v1.13 or v1.14.0": 2, "v1.14": 1}}
	if got, want := s.String(), "identical: 5/6 (CABPK v1.13 or v1.14.0: 2, CABPK v1.14: 1), skipped: 1"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := (verifySummary{Identical: 1, Compared: 1}).String(); got != "identical: 1/1" {
		t.Errorf("nodeboot's own data only: %q", got)
	}
}

// TestVerifyCABPKVersionFlag: a version verify does not know is a usage
// error naming the versions it knows, before any cluster is read.
func TestVerifyCABPKVersionFlag(t *testing.T) {
	for _, v := range []string{"v1.12", "v1.13.7", "latest"} {
		var stdout, stderr bytes.Buffer
		code := run([]string{"verify", "--kubeconfig", "/nonexistent", "--cabpk-version", v}, nil, &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), "--cabpk-version: ") || !strings.Contains(stderr.String(), "v1.14, v1.13, v1.14.0") {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 naming the known versions", v, code, stderr.String())
		}
	}
}
