package bootstrap_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodeboot/nodeboot/bootstrap"
	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/test/testenv"
)

func bootstrapScript(t *testing.T, r *bootstrap.Result) string {
	t.Helper()
	for _, c := range r.Plan.Commands {
		if c.Phase == provisioning.PhaseBootstrap {
			return c.Script
		}
	}
	t.Fatal("no bootstrap command")
	return ""
}

// TestQuietInitToken: kubeadm init keeps CABPK's command (which prints the
// default bootstrap token) in CABPK's dialects, and gets
// --skip-token-print in nodeboot's own modes; joins never change.
func TestQuietInitToken(t *testing.T) {
	dir := testenv.VectorsDir(t)
	cabpk := testenv.BuildVector(t, filepath.Join(dir, "cc-init-minimal-v1.33"))
	if s := bootstrapScript(t, cabpk); strings.Contains(s, "--skip-token-print") || !strings.HasPrefix(s, "kubeadm init ") {
		t.Fatalf("CABPK's dialect: %q", s)
	}

	in := testenv.VectorInput(t, filepath.Join(dir, "ign-init-minimal-v1.33"))
	in.Config.Annotations = map[string]string{bootstrap.AnnotationIgnitionVersion: "3.4.0"}
	v3, err := bootstrap.Build(context.Background(), *in)
	if err != nil {
		t.Fatal(err)
	}
	s := bootstrapScript(t, v3)
	if !strings.HasPrefix(s, "kubeadm init --skip-token-print --config ") {
		t.Fatalf("Ignition v3 init: %q", s)
	}
	v3.QuietInitToken()
	if again := bootstrapScript(t, v3); again != s {
		t.Fatalf("not idempotent: %q then %q", s, again)
	}

	join := testenv.BuildVector(t, filepath.Join(dir, "cc-join-worker-minimal-v1.33"))
	before := bootstrapScript(t, join)
	join.QuietInitToken()
	if after := bootstrapScript(t, join); after != before {
		t.Fatalf("a join changed: %q then %q", before, after)
	}
	cabpk.QuietInitToken()
	if s := bootstrapScript(t, cabpk); !strings.HasPrefix(s, "kubeadm init --skip-token-print --config ") {
		t.Fatalf("an extension's call left %q", s)
	}
}
