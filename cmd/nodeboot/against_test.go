package main

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/addons"
	"github.com/nodeboot/nodeboot/bootstrap/manifest"
	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/cloudinit"
	"github.com/nodeboot/nodeboot/provisioning/ignition"
)

// endless yields an unending YAML-looking stream and counts what was read;
// it gives up (EOF) after stop bytes so a reader without a bound ends too.
type endless struct{ read, stop int }

func (e *endless) Read(p []byte) (int, error) {
	if e.read >= e.stop {
		return 0, errors.New("endless: read far past any bound")
	}
	for i := range p {
		p[i] = "a: b\n"[(e.read+i)%5]
	}
	e.read += len(p)
	return len(p), nil
}

// TestDiffAgainstIsBounded: --against reads through the same bounded
// reader as -f, so an endless source stops at manifest.MaxInputBytes.
func TestDiffAgainstIsBounded(t *testing.T) {
	in := &endless{stop: 4 * manifest.MaxInputBytes}
	var stdout, stderr bytes.Buffer
	code := run([]string{"diff", "--against", "-"}, in, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "standard input: larger than 33554432 bytes (manifest.MaxInputBytes)") {
		t.Fatalf("exit %d, stderr %.300q: want exit 1 and the input limit named", code, stderr.String())
	}
	if in.read > manifest.MaxInputBytes+64<<10 {
		t.Fatalf("read %d bytes of --against, want at most the limit (%d)", in.read, manifest.MaxInputBytes)
	}
}

// nestedList is a List holding a List ... depth levels deep, holding secret.
func nestedList(depth int, secret string) string {
	return strings.Repeat(`{"apiVersion":"v1","kind":"List","items":[`, depth) + secret + strings.Repeat("]}", depth)
}

// TestDiffAgainstNestedList: a List inside a List, which kubectl never
// prints and which cost time quadratic in the nesting, is refused naming
// where it is.
func TestDiffAgainstNestedList(t *testing.T) {
	secret := `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"example-control-plane-0","namespace":"default"},"type":"cluster.x-k8s.io/secret","data":{"value":"eA==","format":"Y2xvdWQtY29uZmln"}}`
	code, stdout, stderr := runDiff(t, "--against", writeTemp(t, nestedList(1, secret)))
	if code != 1 || !strings.Contains(stdout, "differs") {
		t.Fatalf("one List: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runDiff(t, "--against", writeTemp(t, nestedList(3, secret)))
	if code != 1 || stdout != "" || !strings.Contains(stderr, ": items[0]: a List inside a List is not read") {
		t.Fatalf("nested Lists: exit %d, want 1 and the nesting named\n%s%s", code, stdout, stderr)
	}
}

// BenchmarkReadSecretsNested prices --against's reader on nested Lists:
// refused at the second level, the cost stays linear in the input (it was
// quadratic: 132 KB took 49 s).
func BenchmarkReadSecretsNested(b *testing.B) {
	secret := `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"data":{"value":"eA=="}}`
	for _, depth := range []int{100, 1000, 3000} {
		raw := []byte(nestedList(depth, secret))
		b.Run("depth="+strconv.Itoa(depth), func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := readSecrets(raw); err == nil {
					b.Fatal("nested Lists accepted")
				}
			}
		})
	}
}

// TestCompareRedactsReportCredential: when a bootstrap reporter's
// credential differs, the differing line and the unified diff name the
// file, never the credential.
func TestCompareRedactsReportCredential(t *testing.T) {
	data := func(credential string) []byte {
		return []byte("## template: jinja\n#cloud-config\n\nwrite_files:\n-   path: /etc/nodeboot/report/token\n    owner: root:root\n    permissions: '0600'\n    content: " + credential + "\n")
	}
	stored, rendered := "c8YbNq3k2Zp0V1x7Lw4sR6tU9yA5dF3gH2jK8mN0pQ1", "Zz9YbNq3k2Zp0V1x7Lw4sR6tU9yA5dF3gH2jK8mN0pQ"
	c := compareData("KubeadmConfig ns/w", "Secret ns/w", data(stored), "cloud-config", data(rendered), "cloud-config", true, nil)
	out := strings.Join(c.details, "\n") + c.unified
	if c.identical || !strings.Contains(out, "differs: line 8") {
		t.Fatalf("want a difference on line 8:\n%s", out)
	}
	for _, s := range []string{stored, rendered} {
		if strings.Contains(out, s) {
			t.Fatalf("a report credential is in the output:\n%s", out)
		}
	}
}

// TestCompareRedactsFetchCredential: an add-on fetch credential, in the file
// the add-on step writes for it (addons.Contribute), never reaches diff's
// output, as cloud-config or as Ignition v3 alike.
func TestCompareRedactsFetchCredential(t *testing.T) {
	render := func(credential string, r provisioning.Provisioner, opts provisioning.Options) []byte {
		t.Helper()
		plan := &provisioning.Plan{
			Role:     provisioning.RoleInit,
			Commands: []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: "kubeadm init"}},
		}
		require.NoError(t, addons.Contribute(plan, []addons.Addon{{Name: "cni", Version: "v1", URL: "https://nodeboot-addons.example:9444/a.yaml",
			SHA256: strings.Repeat("ab", 32), Credential: credential, Origin: provisioning.NewPath("addons", "cni")}}, addons.Options{}))
		out, err := r.Render(plan, opts)
		require.NoError(t, err)
		return out.Data
	}
	stored, rendered := "c8YbNq3k2Zp0V1x7Lw4sR6tU9yA5dF3gH2jK8mN0pQ1", "Zz9YbNq3k2Zp0V1x7Lw4sR6tU9yA5dF3gH2jK8mN0pQ"
	for _, tc := range []struct {
		format string
		r      provisioning.Provisioner
		opts   provisioning.Options
	}{
		{"cloud-config", &cloudinit.Renderer{}, provisioning.Options{}},
		{"ignition", &ignition.Renderer{}, provisioning.Options{Version: "3.4.0"}},
	} {
		t.Run(tc.format, func(t *testing.T) {
			a, b := render(stored, tc.r, tc.opts), render(rendered, tc.r, tc.opts)
			require.Contains(t, string(a), stored, "the credential is in the data (else this test proves nothing)")
			c := compareData("KubeadmConfig ns/cp", "Secret ns/cp", a, tc.format, b, tc.format, true, nil)
			out := strings.Join(c.details, "\n") + c.unified
			require.False(t, c.identical)
			for _, s := range []string{stored, rendered} {
				require.NotContains(t, out, s, "a fetch credential is in the output")
			}
		})
	}
}
