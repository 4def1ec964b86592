package addons

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// redactCases are URLs and what may be recorded or shown of them; Go
// (RedactURL) and the apply step (redact in apply.sh) must agree on each.
var redactCases = []struct{ name, in, want string }{
	{"plain", "https://example.com/addons/cni.yaml", "https://example.com/addons/cni.yaml"},
	{"presigned S3", "https://bucket.s3.amazonaws.com/cni.yaml?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=deadbeef", "https://bucket.s3.amazonaws.com/cni.yaml"},
	{"SAS token and fragment", "https://acct.blob.core.windows.net/c/cni.yaml?sv=2024&sig=s3cr3t%3D#part", "https://acct.blob.core.windows.net/c/cni.yaml"},
	{"fragment only", "http://h/x.yaml#s3cr3t", "http://h/x.yaml"},
	{"userinfo", "https://user:s3cr3t@h:8443/x.yaml", "https://h:8443/x.yaml"},
	{"userinfo with @ in the password", "https://user:p@ss@h/x.yaml?token=s3cr3t", "https://h/x.yaml"},
	{"userinfo without a path", "https://s3cr3t@h?x=1", "https://h"},
	{"@ in the path is kept", "https://h/users/@me/x.yaml", "https://h/users/@me/x.yaml"},
	{"query before any path", "https://h?token=s3cr3t/x@y", "https://h"},
	{"not a URL", "h/x.yaml?token=s3cr3t", "h/x.yaml"},
	{"not a URL, with userinfo", "https//admin:S3cretPassw0rd@example.com/cni.yaml", "example.com/cni.yaml"},
	{"empty", "", ""},
}

func TestRedactURL(t *testing.T) {
	for _, c := range redactCases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, RedactURL(c.in))
		})
	}
}

// TestScriptRedactsAsGo runs apply.sh's redact function, taken from the
// embedded script, under /bin/sh (and dash where available) on every case.
func TestScriptRedactsAsGo(t *testing.T) {
	start := strings.Index(Script(), "\nredact() {\n")
	require.GreaterOrEqual(t, start, 0, "apply.sh defines redact()")
	end := strings.Index(Script()[start:], "\n}\n")
	require.Greater(t, end, 0)
	fn := Script()[start : start+end+3]
	shells := []string{"/bin/sh"}
	if p, err := exec.LookPath("dash"); err == nil {
		shells = append(shells, p)
	}
	for _, shell := range shells {
		for _, c := range redactCases {
			t.Run(shell+"/"+c.name, func(t *testing.T) {
				out, err := exec.Command(shell, "-c", fn+`redact "$1"`, "redact", c.in).CombinedOutput()
				require.NoError(t, err, string(out))
				require.Equal(t, c.want, string(out))
			})
		}
	}
}

func TestRedactURLs(t *testing.T) {
	// A URL runs to the next blank or quote.
	got := RedactURLs("failed: cannot fetch https://u:pw@h/a.yaml?sig=s3cr3t\nalso HTTP://h/b?x=s3cr3t#f and 'https://h/c?t=s3cr3t'")
	want := "failed: cannot fetch https://h/a.yaml\nalso HTTP://h/b and 'https://h/c'"
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("RedactURLs (-want +got):\n%s", d)
	}
}

// TestRedactResult: a failed apply's recorded kubectl output loses its
// secrets and its control characters before it becomes a status.
func TestRedactResult(t *testing.T) {
	in := `failed: Error from server (BadRequest): error when creating "/etc/nodeboot/addons/db.yaml": ` +
		`stringData.password: Invalid value: "hunter2hunter2" ` + "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY " +
		"from https://u:pw@h/x.yaml?sig=s3cr3t \x1b]0;t\x07 \u202eevil"
	got := RedactResult(in)
	for _, leak := range []string{"hunter2", "wJalrXUtnFEMI", "pw@", "s3cr3t", "\x1b", "\u202e"} {
		require.NotContains(t, got, leak)
	}
	for _, keep := range []string{`error when creating "/etc/nodeboot/addons/db.yaml": stringData.password: [redacted] (invalid value) `, "AWS_SECRET_ACCESS_KEY=[redacted]", "https://h/x.yaml", `\x1b]0;t\x07`, `\u202eevil`} {
		require.Contains(t, got, keep)
	}
}
