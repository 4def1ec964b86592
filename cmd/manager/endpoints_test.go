package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	nodereportctrl "github.com/nodeboot/nodeboot/controllers/nodereport"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// TestNodeEndpointFlags: the add-on fetch and bootstrap report endpoints
// are off by default; when on, their URL must be https without credentials
// or query, and the CA nodes get is the certificate directory's ca.crt, an
// explicit CA file, or none (system trust) when the directory has no ca.crt.
func TestNodeEndpointFlags(t *testing.T) {
	for _, ep := range []struct {
		name, url, certDir, caFile string
		load                       func(*options) error
		state                      func(*options) (url, dir string, ca []byte)
	}{
		{"fetch", "--addons-fetch-url", "--addons-fetch-cert-dir", "--addons-fetch-ca-file", (*options).loadFetchCA,
			func(o *options) (string, string, []byte) {
				return o.addonsFetchURL, o.addonsFetchCertDir, o.addonsFetchCA
			}},
		{"report", "--bootstrap-report-url", "--bootstrap-report-cert-dir", "--bootstrap-report-ca-file", (*options).loadReportCA,
			func(o *options) (string, string, []byte) { return o.reportURL, o.reportCertDir, o.reportCA }},
	} {
		t.Run(ep.name, func(t *testing.T) {
			o := parse(t)
			if u, _, ca := ep.state(o); u != "" || ep.load(o) != nil || ca != nil {
				t.Fatalf("on by default: %+v", o)
			}
			certs := t.TempDir()
			ca := testenv.ServingCertificate(t, certs)
			o = parse(t, ep.url+"=https://nodeboot.example:9444", "--webhook-cert-dir="+certs)
			if err := ep.load(o); err != nil {
				t.Fatal(err)
			}
			if _, dir, got := ep.state(o); !bytes.Equal(got, ca) || dir != certs {
				t.Fatalf("default CA from the webhook certificate directory: dir %q, ca %d bytes", dir, len(got))
			}
			o = parse(t, ep.url+"=https://nodeboot.example", ep.certDir+"="+t.TempDir())
			if _, _, got := ep.state(o); ep.load(o) != nil || got != nil {
				t.Fatalf("no ca.crt means system trust: ca %d bytes", len(got))
			}
			other := filepath.Join(t.TempDir(), "bundle.pem")
			if err := os.WriteFile(other, ca, 0o600); err != nil {
				t.Fatal(err)
			}
			o = parse(t, ep.url+"=https://nodeboot.example", ep.caFile+"="+other)
			if err := ep.load(o); err != nil {
				t.Fatalf("explicit CA file: %v", err)
			}
			if _, _, got := ep.state(o); !bytes.Equal(got, ca) {
				t.Fatal("explicit CA file not read")
			}
			for _, args := range [][]string{
				{ep.url + "=http://nodeboot.example"},
				{ep.url + "=https://user:pass@nodeboot.example"},
				{ep.url + "=https://nodeboot.example/?token=x"},
				{ep.url + "=https://"},
				{ep.url + "=https://nodeboot.example", ep.caFile + "=" + filepath.Join(certs, "missing.pem")},
				{ep.url + "=https://nodeboot.example", ep.caFile + "=" + filepath.Join(certs, "tls.key")},
			} {
				if err := ep.load(parse(t, args...)); err == nil {
					t.Errorf("%v: accepted", args)
				} else if bytes.Contains([]byte(err.Error()), []byte("pass")) {
					t.Errorf("%v: error shows the credential: %v", args, err)
				}
			}
		})
	}
}

// TestReportExtension: with --bootstrap-report-url the KubeadmConfig
// reconciler gets the reporter extension, ahead of the add-on extension (so
// the add-on size budget counts the reporter's bytes), and keeps it when
// the FirstBootAddon CRD is missing; without it there is none.
func TestReportExtension(t *testing.T) {
	c := clients{}
	if exts := newReconcilers(c, parse(t)).kubeadmConfig.Extensions; len(exts) != 1 {
		t.Fatalf("reporting off: %d extensions, want only the add-on one", len(exts))
	}
	certs := t.TempDir()
	ca := testenv.ServingCertificate(t, certs)
	o := parse(t, "--bootstrap-report-url=https://nodeboot.example", "--bootstrap-report-cert-dir="+certs)
	if err := o.loadReportCA(); err != nil {
		t.Fatal(err)
	}
	r := newReconcilers(c, o)
	exts := r.kubeadmConfig.Extensions
	if len(exts) != 2 {
		t.Fatalf("reporting on: %d extensions, want the reporter and the add-ons", len(exts))
	}
	ext, ok := exts[0].(*nodereportctrl.Extension)
	if !ok || ext.URL != "https://nodeboot.example" || !bytes.Equal(ext.CABundle, ca) {
		t.Fatalf("first extension is %T %+v, want the reporter with the flag's URL and the CA", exts[0], exts[0])
	}
	if exts := r.withoutAddons().kubeadmConfig.Extensions; len(exts) != 1 || exts[0] != ext {
		t.Fatalf("without the add-on CRD: %v, want the reporter alone", exts)
	}
}
