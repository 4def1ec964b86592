package redact_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/nodeboot/nodeboot/internal/redact"
)

// corpusCase is a realistic piece of output that leaks a secret (or, for
// class "none", none at all).
type corpusCase struct {
	Name  string `json:"name"`
	Class string `json:"class"`
	In    string `json:"in"`
	// Secrets must not survive; Keep must, as the context that says what
	// happened.
	Secrets []string `json:"secrets"`
	Keep    []string `json:"keep"`
	// Want, when set, is the exact output.
	Want *string `json:"want"`
}

// corpus is testdata/corpus.json; the manager's tests read it too.
func corpus(t testing.TB) []corpusCase {
	t.Helper()
	b, err := os.ReadFile("testdata/corpus.json")
	if err != nil {
		t.Fatal(err)
	}
	var cs []corpusCase
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	return cs
}

// check reports what of c a redactor's output got wrong: a secret left, a
// piece of context lost, or other than the exact output wanted.
func (c corpusCase) check(out string) []string {
	var bad []string
	for _, s := range c.Secrets {
		if strings.Contains(out, s) {
			bad = append(bad, "leaks "+s)
		}
	}
	for _, k := range c.Keep {
		if !strings.Contains(out, k) {
			bad = append(bad, "lost "+k)
		}
	}
	if c.Want != nil && out != *c.Want {
		bad = append(bad, "changed a line without a secret")
	}
	return bad
}

// TestCorpus: every case of the corpus, redacted in Go, loses its secrets
// and keeps its context; every class has a case.
func TestCorpus(t *testing.T) {
	cs := corpus(t)
	if len(cs) < 40 {
		t.Fatalf("corpus has %d cases, want 40 or more", len(cs))
	}
	covered := map[string]bool{}
	for _, c := range cs {
		covered[c.Class] = true
		t.Run(c.Name, func(t *testing.T) {
			out := redact.Text(c.In)
			if bad := c.check(out); len(bad) > 0 {
				t.Errorf("%s\nin:\n%s\nout:\n%s", strings.Join(bad, "; "), c.In, out)
			}
			if again := redact.Text(out); again != out {
				t.Errorf("redacting twice changes the text (the manager redacts what the node did):\n%s\n%s", out, again)
			}
		})
	}
	for _, c := range redact.Classes() {
		if !covered[c.Name] {
			t.Errorf("class %s has no corpus case", c.Name)
		}
	}
}

// TestBase64PEM: a base64-encoded PEM block goes when its BEGIN line names a
// private or secret key, whatever the label's length (so PRIVATE at each
// alignment), and stays when it is public.
func TestBase64PEM(t *testing.T) {
	enc := func(label string) string {
		return base64.StdEncoding.EncodeToString([]byte("-----BEGIN " + label + "-----\nMIIBsecretbody0123456789\n-----END " + label + "-----\n"))
	}
	for _, l := range []string{"PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY", "DSA PRIVATE KEY", "OPENSSH PRIVATE KEY",
		"ENCRYPTED PRIVATE KEY", "PGP PRIVATE KEY BLOCK", "PGP SECRET KEY BLOCK", "SSH2 ENCRYPTED PRIVATE KEY", "TSS2 PRIVATE KEY"} {
		in := "  tls.key: " + enc(l)
		if out := redact.Text(in); out != "  tls.key: "+redact.RedactedPrivateKey {
			t.Errorf("%s: %q", l, out)
		}
	}
	for _, l := range []string{"CERTIFICATE", "TRUSTED CERTIFICATE", "CERTIFICATE REQUEST", "NEW CERTIFICATE REQUEST", "PUBLIC KEY",
		"RSA PUBLIC KEY", "PGP PUBLIC KEY BLOCK", "PGP SIGNATURE", "PGP MESSAGE", "X509 CRL", "EC PARAMETERS", "DH PARAMETERS",
		"SSH2 PUBLIC KEY", "OPENSSH PUBLIC KEY", "PKCS7", "CMS", "ATTRIBUTE CERTIFICATE"} {
		in := "  ca.crt: " + enc(l)
		if out := redact.Text(in); out != in {
			t.Errorf("%s changed: %q", l, out)
		}
	}
}
