package verify_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nodeboot/nodeboot/test/testenv"
)

// TestVerifyCABPKVersions: the data of a management cluster that ran CABPK
// v1.13 — each Ignition Secret rewritten to the bytes CABPK v1.13.6's own
// reconciler renders (../cabpk113) — is identical as CABPK v1.13's (or
// v1.14.0's, whose data is the same), and the summary says so; with
// --cabpk-version v1.13 it is v1.13's; with --cabpk-version v1.14 it differs.
// Cloud-config is the same in every version.
func TestVerifyCABPKVersions(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not building CABPK v1.13.6")
	}
	oracle := t.TempDir()
	cmd := exec.Command("go", "run", ".", testenv.VectorsDir(t), oracle)
	cmd.Dir = filepath.Join(testenv.ModuleRoot(), "test", "cabpk113")
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod -buildvcs=false", "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("CABPK v1.13.6 oracle: %v\n%s", err, b)
	}
	startCABPK(t)
	ro, _ := users(t)
	go buildBin()
	var refs []string // namespace/name, one namespace per vector
	ign := map[string]bool{}
	for _, dir := range append(testenv.Vectors(t, "ign-"), filepath.Join(testenv.VectorsDir(t), "cc-join-worker-minimal-v1.33")) {
		raw, err := os.ReadFile(filepath.Join(dir, "input.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		ns := newNamespace(t, "cabpk113")
		// The suite shares one API server, and TestVerify counts every
		// config in it: these leave with the test (their data was rewritten
		// to v1.13's bytes, which TestVerify's summary would count).
		t.Cleanup(func() {
			if err := k8s.DeleteAllOf(context.Background(), &bootstrapv1.KubeadmConfig{}, client.InNamespace(ns)); err != nil {
				t.Errorf("cleanup %s: %v", ns, err)
			}
		})
		name, err := applyInput(ns, raw)
		if err != nil {
			t.Fatal(err)
		}
		waitForData(t, 60*time.Second, ns)
		refs = append(refs, ns+"/"+name)
		if !strings.HasPrefix(filepath.Base(dir), "ign-") {
			continue
		}
		ign[ns+"/"+name] = true
		want, err := os.ReadFile(filepath.Join(oracle, filepath.Base(dir), "bootstrap-data"))
		if err != nil {
			t.Fatal(err)
		}
		s := &corev1.Secret{}
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
			t.Fatal(err)
		}
		s.Data["value"] = want
		if err := k8s.Update(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
	nodebootBin(t)
	type want struct {
		code         int
		row, summary string
	}
	for _, c := range []struct {
		args    []string
		ign, cc want
	}{
		{nil, want{0, "identical (CABPK v1.13 or v1.14.0)", "identical: 1/1 (CABPK v1.13 or v1.14.0: 1)"}, want{0, "identical", "identical: 1/1"}},
		{[]string{"--cabpk-version", "v1.13"}, want{0, "identical (CABPK v1.13)", "identical: 1/1 (CABPK v1.13: 1)"}, want{0, "identical (CABPK v1.13)", "identical: 1/1 (CABPK v1.13: 1)"}},
		{[]string{"--cabpk-version", "v1.14"}, want{1, "differs: line ", "identical: 0/1"}, want{0, "identical (CABPK v1.14)", "identical: 1/1 (CABPK v1.14: 1)"}},
	} {
		t.Run(strings.Join(append([]string{"flags"}, c.args...), " "), func(t *testing.T) {
			for _, ref := range refs {
				ns, name, _ := strings.Cut(ref, "/")
				w := c.cc
				if ign[ref] {
					w = c.ign
				}
				r := runVerify(t, ro, append([]string{"-n", ns}, c.args...)...)
				rows := r.rows(ns, name)
				if r.code != w.code || r.lastLine() != w.summary || len(rows) == 0 || !strings.HasPrefix(rows[0], w.row) {
					t.Errorf("%s: want exit %d, a row starting %q and summary %q:\n%s", ref, w.code, w.row, w.summary, r)
				}
			}
		})
	}
}
