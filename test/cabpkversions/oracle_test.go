// Package cabpkversions holds verify's CABPK version table
// (internal/cabpkversion) to CABPK's own renderer: the module in
// ../cabpk113 links CABPK v1.13.6's KubeadmConfig reconciler and renders the
// reference vectors with it.
package cabpkversions

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nodeboot/nodeboot/internal/cabpkversion"
	_ "github.com/nodeboot/nodeboot/provisioning/cloudinit"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/legacy"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/v3"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// unsupported are the vectors v1.13's API cannot hold, and why: a v1.13
// management cluster has no such object, so there is no data to compare.
var unsupported = map[string]string{
	"cc-join-worker-template-kcp-v1.33": `unknown field "contentFormat"`,
}

// TestCABPK113: for every reference vector, the version table turns the
// bytes nodeboot renders (v1.14.2's) into exactly the bytes CABPK v1.13.6's
// reconciler renders; the matching verify does classifies those as CABPK
// v1.13's (and v1.14.0's, whose data is the same) and, with only v1.14
// accepted (--cabpk-version v1.14), as no match.
func TestCABPK113(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not building CABPK v1.13.6")
	}
	out := t.TempDir()
	start := time.Now()
	cmd := exec.Command("go", "run", ".", testenv.VectorsDir(t), out)
	cmd.Dir = filepath.Join(testenv.ModuleRoot(), "test", "cabpk113")
	// The oracle's own module: its go.sum pins what the proxy serves.
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod -buildvcs=false", "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("CABPK v1.13.6 oracle: %v\n%s", err, b)
	}
	t.Logf("CABPK v1.13.6 rendered the vectors in %s", time.Since(start).Round(time.Millisecond))

	dirs := append(testenv.Vectors(t, "cc-"), testenv.Vectors(t, "ign-")...)
	changed, compared := 0, 0
	for _, dir := range dirs {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			got := filepath.Join(out, name)
			if why, ok := unsupported[name]; ok {
				b, err := os.ReadFile(filepath.Join(got, "unsupported"))
				if err != nil || !strings.Contains(string(b), why) {
					t.Fatalf("want the oracle to refuse it (%s): %v %s", why, err, b)
				}
				return
			}
			want, err := os.ReadFile(filepath.Join(got, "bootstrap-data"))
			if err != nil {
				t.Fatalf("the oracle rendered nothing: %v", err)
			}
			wantFormat, err := os.ReadFile(filepath.Join(got, "format"))
			if err != nil {
				t.Fatal(err)
			}
			ours, err := testenv.BuildVector(t, dir).Render()
			if err != nil {
				t.Fatal(err)
			}
			if ours.Format != string(wantFormat) {
				t.Fatalf("format %q, CABPK v1.13.6 %q", ours.Format, wantFormat)
			}
			derived, err := cabpkversion.V1_13.Render(ours.Format, ours.Data)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(derived, want) {
				t.Fatalf("the table's v1.13 data differs from CABPK v1.13.6's:\n%s", firstDiff(derived, want))
			}
			compared++
			if !bytes.Equal(ours.Data, want) {
				changed++
			}
			var names []string
			for _, v := range cabpkversion.Match(want, string(wantFormat), ours.Data, ours.Format, cabpkversion.All) {
				names = append(names, v.Name)
			}
			if !strings.Contains(" "+strings.Join(names, " ")+" ", " v1.13 ") {
				t.Errorf("CABPK v1.13.6's data matches %q, want v1.13 among them", names)
			}
			onlyCurrent := cabpkversion.Match(want, string(wantFormat), ours.Data, ours.Format, []cabpkversion.Version{cabpkversion.Current})
			if isIgnition := ours.Format == "ignition"; (len(onlyCurrent) == 0) != isIgnition {
				t.Errorf("with only v1.14 accepted: %d matches, want a match only for cloud-config", len(onlyCurrent))
			}
		})
	}
	// Every Ignition vector carries the one-line change; cloud-config none.
	if want := len(testenv.Vectors(t, "ign-")); changed != want || compared != len(dirs)-len(unsupported) {
		t.Errorf("%d of %d vectors differ from v1.14.2's data, want %d (the Ignition ones)", changed, compared, want)
	}
}

// firstDiff shows where a and b part.
func firstDiff(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(i-80, 0)
	return "table: " + string(a[lo:min(i+80, len(a))]) + "\nCABPK: " + string(b[lo:min(i+80, len(b))])
}
