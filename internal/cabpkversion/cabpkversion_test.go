package cabpkversion

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodeboot/nodeboot/test/testenv"
)

func TestLookup(t *testing.T) {
	for in, want := range map[string]string{
		"v1.13": "v1.13", "1.13": "v1.13", "v1.13.0": "v1.13", "v1.13.6": "v1.13",
		"v1.14.0": "v1.14.0", "v1.14": "v1.14", "v1.14.1": "v1.14", "v1.14.2": "v1.14", "v1.14.12": "v1.14",
	} {
		v, err := Lookup(in)
		if err != nil || v.Name != want {
			t.Errorf("Lookup(%q) = %q, %v; want %q", in, v.Name, err, want)
		}
	}
	for _, in := range []string{"", "v1.12", "v1.15", "v1.13.7", "v2.14", "v1.14.01", "v1.14.x", "latest", " v1.14", "v1.14.99999"} {
		if v, err := Lookup(in); !errors.Is(err, ErrUnknownVersion) {
			t.Errorf("Lookup(%q) = %q, %v; want ErrUnknownVersion", in, v.Name, err)
		}
	}
}

// TestRender: on CABPK v1.14.2's reference data, the current version is the
// identity; v1.13 and v1.14.0 change the kubeadm.service ExecStart of every
// Ignition 2.3 config and nothing of cloud-config. Data without the unit, or
// with it twice, cannot be rewritten; nodeboot's Ignition v3 is not CABPK's.
func TestRender(t *testing.T) {
	dirs := append(testenv.Vectors(t, "cc-"), testenv.Vectors(t, "ign-")...)
	if len(dirs) < 20 {
		t.Fatalf("%d reference vectors, want 20", len(dirs))
	}
	for _, dir := range dirs {
		file := filepath.Join(dir, "bootstrap-data")
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		format, err := os.ReadFile(filepath.Join(filepath.Dir(file), "format"))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range All {
			got, err := v.Render(string(format), data)
			if err != nil {
				t.Fatalf("%s: %s: %v", file, v.Name, err)
			}
			old := v.Name != Current.Name && string(format) == "ignition"
			if changed := !bytes.Equal(got, data); changed != old {
				t.Errorf("%s: %s changed the data: %v, want %v", file, v.Name, changed, old)
			}
			if old && (!bytes.Contains(got, []byte(`ExecStart=/etc/kubeadm.sh\n`)) || bytes.Contains(got, []byte("/bin/bash /etc/kubeadm.sh")) || len(got) != len(data)-len("/bin/bash ")) {
				t.Errorf("%s: %s: not the one-line change", file, v.Name)
			}
			if m := names(Match(got, string(format), data, string(format), All)); !strings.Contains(" "+m+" ", " "+v.Name+" ") {
				t.Errorf("%s: Match of %s's data = %q", file, v.Name, m)
			}
		}
	}
	unit := execStartWithoutBash.From
	v2 := []byte(`{"ignition":{"version":"2.3.0"},"systemd":{"units":[`)
	for name, data := range map[string][]byte{
		"no unit":   append(append([]byte{}, v2...), "]}}"...),
		"two units": append(append(append(append(append([]byte{}, v2...), unit...), ',', ' '), unit...), "]}}"...),
	} {
		if _, err := V1_13.Render("ignition", data); !errors.Is(err, ErrNotDerivable) {
			t.Errorf("%s: %v, want ErrNotDerivable", name, err)
		}
	}
	v3 := append(append([]byte(`{"ignition":{"version":"3.4.0"},"systemd":{"units":[`), unit...), "]}}"...)
	if got, err := V1_13.Render("ignition", v3); err != nil || !bytes.Equal(got, v3) {
		t.Errorf("Ignition v3: %v, want it unchanged", err)
	}
	if m := Match([]byte("x"), "cloud-config", []byte("x"), "ignition", All); m != nil {
		t.Errorf("formats differ: %q", names(m))
	}
}

func names(vs []Version) string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Name)
	}
	return strings.Join(out, " ")
}
