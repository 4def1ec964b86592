package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/nodeboot/nodeboot/internal/testenv"
)

// TestFetchFlags: --addons-fetch-url is off by default; when set it must be
// an https URL without credentials or query, and the CA nodes get is the
// certificate directory's ca.crt, an explicit --addons-fetch-ca-file, or
// none (system trust) when the directory has no ca.crt.
func TestFetchFlags(t *testing.T) {
	if o := parse(t); o.addonsFetchURL != "" || o.loadFetchCA() != nil || o.addonsFetchCA != nil {
		t.Fatalf("fetch fallback on by default: %+v", o)
	}
	certs := t.TempDir()
	ca := testenv.ServingCertificate(t, certs)
	o := parse(t, "--addons-fetch-url=https://nodeboot.example:9444", "--webhook-cert-dir="+certs)
	if err := o.loadFetchCA(); err != nil || !bytes.Equal(o.addonsFetchCA, ca) || o.addonsFetchCertDir != certs {
		t.Fatalf("default CA from the webhook certificate directory: err %v, dir %q, ca %d bytes", err, o.addonsFetchCertDir, len(o.addonsFetchCA))
	}
	o = parse(t, "--addons-fetch-url=https://nodeboot.example", "--addons-fetch-cert-dir="+t.TempDir())
	if err := o.loadFetchCA(); err != nil || o.addonsFetchCA != nil {
		t.Fatalf("no ca.crt means system trust: err %v, ca %d bytes", err, len(o.addonsFetchCA))
	}
	other := filepath.Join(t.TempDir(), "bundle.pem")
	if err := os.WriteFile(other, ca, 0o600); err != nil {
		t.Fatal(err)
	}
	o = parse(t, "--addons-fetch-url=https://nodeboot.example", "--addons-fetch-ca-file="+other)
	if err := o.loadFetchCA(); err != nil || !bytes.Equal(o.addonsFetchCA, ca) {
		t.Fatalf("explicit CA file: err %v", err)
	}
	for _, args := range [][]string{
		{"--addons-fetch-url=http://nodeboot.example"},
		{"--addons-fetch-url=https://user:pass@nodeboot.example"},
		{"--addons-fetch-url=https://nodeboot.example/?token=x"},
		{"--addons-fetch-url=https://"},
		{"--addons-fetch-url=https://nodeboot.example", "--addons-fetch-ca-file=" + filepath.Join(certs, "missing.pem")},
		{"--addons-fetch-url=https://nodeboot.example", "--addons-fetch-ca-file=" + filepath.Join(certs, "tls.key")},
	} {
		if err := parse(t, args...).loadFetchCA(); err == nil {
			t.Errorf("%v: accepted", args)
		} else if bytes.Contains([]byte(err.Error()), []byte("pass")) {
			t.Errorf("%v: error shows the credential: %v", args, err)
		}
	}
}
