package verify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nodeboot/nodeboot/test/testenv"
)

// Generated fleet: 4 Clusters of 60 configs each, half cloud-config and
// half Ignition, every role.
const (
	genClusters   = 4
	genPerCluster = 60
)

// TestVerify: CABPK writes the data of every reference vector and of a
// generated fleet; nodeboot verify, run as a user bound only to
// verify-role.yaml, finds all of it identical, and reports what was changed
// behind its back, each bad input with a line of its own.
func TestVerify(t *testing.T) {
	start := time.Now()
	startCABPK(t)
	ro, none := users(t)
	ctx := context.Background()
	go buildBin() // while CABPK renders
	t.Logf("envtest and CABPK up after %s", time.Since(start).Round(time.Millisecond))

	vectorNS := map[string]string{}
	var mu sync.Mutex
	var applies []func() error
	for _, dir := range testenv.Vectors(t, "") {
		base := filepath.Base(dir)
		if !strings.HasPrefix(base, "cc-") && !strings.HasPrefix(base, "ign-") {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, "input.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		ns := newNamespace(t, "vector")
		applies = append(applies, func() error {
			name, err := applyInput(ns, raw)
			mu.Lock()
			vectorNS[ns] = name
			mu.Unlock()
			return err
		})
	}
	parallel(t, applies)
	genNS := fleet(t, "gen", genClusters, genPerCluster, 1)
	for ns := range vectorNS {
		waitForData(t, 60*time.Second, ns)
	}
	t.Logf("CABPK wrote every Secret after %s", time.Since(start).Round(time.Millisecond))
	nodebootBin(t)
	total := len(vectorNS) + genClusters*genPerCluster

	t.Run("all identical", func(t *testing.T) {
		r := runVerify(t, ro, "--all-namespaces")
		if r.code != 0 {
			t.Fatalf("want exit 0:\n%s", r)
		}
		for ns, name := range vectorNS {
			if rows := r.rows(ns, name); len(rows) != 1 || rows[0] != "identical" {
				t.Errorf("vector %s/%s: %q, want identical", ns, name, rows)
			}
		}
		if want := fmt.Sprintf("identical: %d/%d", total, total); r.lastLine() != want {
			t.Errorf("summary %q, want %q\n%s", r.lastLine(), want, r)
		}
		if n := strings.Count(r.stdout, ": identical\n"); n != total {
			t.Errorf("%d identical rows, want %d", n, total)
		}
		if !strings.Contains(r.stderr, fmt.Sprintf("%d/%d rendered", total, total)) {
			t.Errorf("no progress on stderr:\n%s", r.stderr)
		}
	})

	t.Run("token refreshed by CABPK", func(t *testing.T) {
		ns := genNS[0]
		cfg := &bootstrapv1.KubeadmConfig{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "m-001"}, cfg); err != nil {
			t.Fatal(err)
		}
		token := cfg.Spec.JoinConfiguration.Discovery.BootstrapToken.Token
		id, _, _ := strings.Cut(token, ".")
		// CABPK created the token with an expiry of creation + TTL; a later
		// expiry is its refresh.
		deadline := time.Now().Add(2 * tokenTTL)
		for {
			s := &corev1.Secret{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: metav1.NamespaceSystem, Name: bootstraputil.BootstrapTokenSecretName(id)}, s); err != nil {
				t.Fatal(err)
			}
			exp, err := time.Parse(time.RFC3339, string(s.Data[bootstrapapi.BootstrapTokenExpirationKey]))
			if err != nil {
				t.Fatal(err)
			}
			if exp.After(s.CreationTimestamp.Add(tokenTTL + time.Second)) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("CABPK did not refresh the token of %s/m-001", ns)
			}
			time.Sleep(time.Second)
		}
		r := runVerify(t, ro, "-n", ns)
		if r.code != 0 || r.lastLine() != fmt.Sprintf("identical: %d/%d", genPerCluster, genPerCluster) {
			t.Fatalf("after the refresh:\n%s", r)
		}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(cfg), cfg); err != nil {
			t.Fatal(err)
		}
		if cfg.Spec.JoinConfiguration.Discovery.BootstrapToken.Token != token {
			t.Fatalf("the token in the spec changed: this is a rotation, not a refresh")
		}
	})

	t.Run("json", func(t *testing.T) {
		r := runVerify(t, ro, "-n", genNS[1], "-o", "json")
		var out struct {
			Items []struct {
				Namespace, Name, Result string
			} `json:"items"`
			Summary struct {
				Identical, Compared, Differs, CannotRender, Errors, Skipped int
			} `json:"summary"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, r)
		}
		if r.code != 0 || len(out.Items) != genPerCluster || out.Summary.Identical != genPerCluster || out.Summary.Compared != genPerCluster {
			t.Fatalf("want %d identical items:\n%s", genPerCluster, r)
		}
		for _, it := range out.Items {
			if it.Namespace != genNS[1] || it.Result != "identical" {
				t.Errorf("item %+v", it)
			}
		}
	})

	t.Run("one byte changed", func(t *testing.T) {
		ns := genNS[2]
		changed := map[string]string{} // config -> expected detail prefix
		for _, format := range []bootstrapv1.Format{bootstrapv1.CloudConfig, bootstrapv1.Ignition} {
			name := firstOfFormat(t, ns, format)
			s := &corev1.Secret{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
				t.Fatal(err)
			}
			value := s.Data["value"]
			at := len(value) / 2
			for at < len(value) && (value[at] < 'a' || value[at] > 'y') {
				at++
			}
			if at == len(value) {
				t.Fatalf("no letter to change in the second half of %s", name)
			}
			value[at]++ // a letter for a letter: still YAML, still JSON
			s.Data["value"] = value
			if err := k8s.Update(ctx, s); err != nil {
				t.Fatal(err)
			}
			want := "differs: line "
			if format == bootstrapv1.CloudConfig {
				want += fmt.Sprintf("%d: Secret %s/%s has ", bytes.Count(value[:at], []byte("\n"))+1, ns, name)
			}
			changed[name] = want
		}
		r := runVerify(t, ro, "-n", ns, "--diff")
		if r.code != 1 {
			t.Fatalf("want exit 1:\n%s", r)
		}
		for name, want := range changed {
			rows := r.rows(ns, name)
			if len(rows) != 1 || !strings.HasPrefix(rows[0], want) {
				t.Errorf("%s: %q, want a row starting %q", name, rows, want)
			}
		}
		if want := fmt.Sprintf("identical: %d/%d", genPerCluster-2, genPerCluster); r.lastLine() != want {
			t.Errorf("summary %q, want %q", r.lastLine(), want)
		}
		if strings.Count(r.stdout, "--- Secret "+ns+"/") != 2 {
			t.Errorf("want a unified diff per changed config:\n%s", r.stdout)
		}
	})

	t.Run("bad input", func(t *testing.T) {
		ns := genNS[3]
		// The owner deleted (no garbage collector runs in envtest, so the
		// config and its Secret stay, as during a stuck deletion).
		if err := k8s.Delete(ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m-001"}}); err != nil {
			t.Fatal(err)
		}
		// status.dataSecretName naming a Secret that is not bootstrap data.
		c := &bootstrapv1.KubeadmConfig{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "m-002"}, c); err != nil {
			t.Fatal(err)
		}
		c.Status.DataSecretName = "cluster-ca"
		if err := k8s.Status().Update(ctx, c); err != nil {
			t.Fatal(err)
		}
		// Paused.
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "m-003"}, c); err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(c.DeepCopy())
		c.Annotations = map[string]string{clusterv1.PausedAnnotation: ""}
		if err := k8s.Patch(ctx, c, patch); err != nil {
			t.Fatal(err)
		}
		r := runVerify(t, ro, "-n", ns)
		if r.code != 1 {
			t.Fatalf("want exit 1:\n%s", r)
		}
		want := map[string]string{
			"m-001": "skipped: owner gone: Machine " + ns + "/m-001 not found",
			"m-002": "error: Secret " + ns + "/cluster-ca: data.value: not found: not bootstrap data",
			"m-003": "skipped: paused",
		}
		for name, w := range want {
			if rows := r.rows(ns, name); len(rows) != 1 || !strings.HasPrefix(rows[0], w) {
				t.Errorf("%s: %q, want a row starting %q", name, rows, w)
			}
		}
		if w := fmt.Sprintf("identical: %d/%d, skipped: 2", genPerCluster-3, genPerCluster-2); r.lastLine() != w {
			t.Errorf("summary %q, want %q", r.lastLine(), w)
		}

		// The cluster CA deleted: nothing can be rebuilt, each row names it.
		if err := k8s.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cluster-ca"}}); err != nil {
			t.Fatal(err)
		}
		r = runVerify(t, ro, "-n", ns)
		if r.code != 1 {
			t.Fatalf("want exit 1:\n%s", r)
		}
		for _, name := range configNames(t, ns) {
			if want[name] != "" {
				continue
			}
			rows := r.rows(ns, name)
			if len(rows) == 0 || !strings.HasPrefix(rows[0], "cannot render: Secret "+ns+"/cluster-ca: ") {
				t.Errorf("%s: %q, want cannot render naming Secret %s/cluster-ca", name, rows, ns)
			}
		}
		if w := fmt.Sprintf("identical: 0/%d, skipped: 2", genPerCluster-2); r.lastLine() != w {
			t.Errorf("summary %q, want %q", r.lastLine(), w)
		}
	})

	t.Run("without the role", func(t *testing.T) {
		r := runVerify(t, none, "--all-namespaces")
		if r.code != 1 || r.stdout != "" {
			t.Fatalf("want exit 1 and no rows:\n%s", r)
		}
		if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "forbidden") || !strings.Contains(lines[0], "verify-role.yaml") {
			t.Fatalf("want one line saying forbidden and naming the role:\n%s", r)
		}
	})

	t.Run("unreachable API server", func(t *testing.T) {
		kc := filepath.Join(t.TempDir(), "kubeconfig")
		if err := os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: not-a-real-token}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: default}}]
current-context: x
`), 0o600); err != nil {
			t.Fatal(err)
		}
		r := runVerify(t, kc)
		if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "cannot reach the API server at https://127.0.0.1:1") {
			t.Fatalf("want one line saying the API server cannot be reached:\n%s", r)
		}
		if strings.Contains(r.stderr, "not-a-real-token") {
			t.Fatalf("the credential is in the output:\n%s", r.stderr)
		}
	})
}

func firstOfFormat(t *testing.T, ns string, format bootstrapv1.Format) string {
	t.Helper()
	var list bootstrapv1.KubeadmConfigList
	if err := k8s.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, c := range list.Items {
		if c.Spec.Format == format && strings.HasPrefix(c.Name, "m-") {
			return c.Name
		}
	}
	t.Fatalf("no %s config in %s", format, ns)
	return ""
}

func configNames(t *testing.T, ns string) []string {
	t.Helper()
	var list bootstrapv1.KubeadmConfigList
	if err := k8s.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range list.Items {
		out = append(out, c.Name)
	}
	return out
}
