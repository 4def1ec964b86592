package controllers_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// TestVectors applies every reference vector's input to the API server and
// checks that the controller writes exactly the reference bytes and format.
// One manager serves all vectors, each in a namespace of its own.
func TestVectors(t *testing.T) {
	startManager(t, managerOptions{provider: nodeboot})
	dirs := testenv.Vectors(t, "")
	type vector struct{ dir, ns, config string }
	var vs []vector
	for _, dir := range dirs {
		if !strings.HasPrefix(filepath.Base(dir), "cc-") && !strings.HasPrefix(filepath.Base(dir), "ign-") {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, "input.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		ns := newNamespace(t, "vector")
		vs = append(vs, vector{dir: dir, ns: ns, config: applyInput(t, ns, raw)})
	}
	for _, v := range vs {
		t.Run(filepath.Base(v.dir), func(t *testing.T) {
			wantData, err := os.ReadFile(filepath.Join(v.dir, "bootstrap-data"))
			if err != nil {
				t.Fatal(err)
			}
			wantFormat, err := os.ReadFile(filepath.Join(v.dir, "format"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := provisioning.Get(string(wantFormat)); err != nil {
				t.Fatalf("the %q provisioner is not linked into this test binary: %v", wantFormat, err)
			}
			ctx := context.Background()
			eventually(t, 60*time.Second, "the bootstrap data Secret", func() (bool, error) {
				_, err := getSecret(ctx, v.ns, v.config)
				if apierrors.IsNotFound(err) {
					return false, err
				}
				return err == nil, err
			})
			s, err := getSecret(ctx, v.ns, v.config)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(s.Data["format"]); got != string(wantFormat) {
				t.Errorf("format = %q, want %q", got, wantFormat)
			}
			if got := string(s.Data["value"]); got != string(wantData) {
				t.Errorf("value differs from the reference:\n--- got\n%s\n--- want\n%s", got, wantData)
			}
		})
	}
}
