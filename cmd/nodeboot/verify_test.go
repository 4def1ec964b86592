package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVerifyPrintsNoKubeconfigCredential: whatever way a kubeconfig holds a
// credential (token, basic auth, a password or token in the server URL, a
// client key) and however reading the cluster fails, nothing verify prints
// carries it.
func TestVerifyPrintsNoKubeconfigCredential(t *testing.T) {
	const (
		password = "pw-SECRET-9f3a"
		token    = "tok-SECRET-77c1"
	)
	kubeconfig := func(server, user string) string {
		return "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"" + server + "\"}}]\n" +
			"users: [{name: u, user: " + user + "}]\ncontexts: [{name: x, context: {cluster: c, user: u, namespace: default}}]\ncurrent-context: x\n"
	}
	cases := map[string]string{
		"password in the server URL":  kubeconfig("https://admin:"+password+"@127.0.0.1:1", "{token: "+token+"}"),
		"escaped password in the URL": kubeconfig("https://admin:"+password+"%2F%40@127.0.0.1:1", "{}"),
		"token in the URL query":      kubeconfig("https://127.0.0.1:1/?access_token="+token, "{}"),
		"basic auth":                  kubeconfig("https://127.0.0.1:1", "{username: bob, password: "+password+"}"),
		"token":                       kubeconfig("https://127.0.0.1:1", "{token: "+token+"}"),
		"unparsable server URL":       kubeconfig("https://admin:"+password+"@127.0.0.1:1:2:3", "{}"),
		"client key that is not PEM":  kubeconfig("https://127.0.0.1:1", "{client-certificate-data: Q0VSVA==, client-key-data: "+"cHctU0VDUkVULTlmM2E="+"}"),
		"unknown user field":          kubeconfig("https://127.0.0.1:1", "{tokn: "+token+"}"),
	}
	for name, kc := range cases {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "kubeconfig")
			if err := os.WriteFile(p, []byte(kc), 0o600); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			code := run([]string{"verify", "--kubeconfig", p, "--timeout", "20s"}, nil, &stdout, &stderr)
			out := stdout.String() + stderr.String()
			if code != 1 {
				t.Errorf("exit %d, want 1:\n%s", code, out)
			}
			for _, secret := range []string{password, token} {
				if strings.Contains(out, secret) {
					t.Errorf("the kubeconfig's credential is in the output:\n%s", out)
				}
			}
		})
	}
}

// TestRedactingWriter: the replacement catches each secret however it is
// embedded, longest first, and leaves other text alone.
func TestRedactingWriter(t *testing.T) {
	var b bytes.Buffer
	w := redactingWriter(&b, []string{"abcd", "abcdefgh", "", "xy"})
	if _, err := w.Write([]byte("1 abcdefgh 2 abcd 3 xy\n")); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "1 [redacted] 2 [redacted] 3 xy\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestRedactURL: what verify prints of a server URL has no user
// information, query or fragment.
func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://admin:pw@host:6443/prefix?token=t#f": "https://host:6443/prefix",
		"https://host:6443":                           "https://host:6443",
		"https://a:b@h:1:2":                           "(the kubeconfig's server URL, which does not parse)",
	} {
		if got := redactURL(in); got != want {
			t.Errorf("redactURL(%q) = %q, want %q", in, got, want)
		}
	}
}
