package nodereport

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodebootv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
)

// poolEnv adds a MachinePool's config, "pool", to a fresh env.
func poolEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t)
	cfg := &bootstrapv1.KubeadmConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pool", UID: "uid-pool",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachinePool", Name: "pool", UID: "uid-mp"}}}}
	require.NoError(t, e.c.Create(context.Background(), cfg))
	sec, err := NewCredentialSecret(cfg, "c1")
	require.NoError(t, err)
	require.NoError(t, e.c.Create(context.Background(), sec))
	e.h.Credentials.Add(sec)
	e.tokens["pool"] = string(sec.Data[CredentialKey])
	return e
}

func (e *env) instances(t *testing.T, config string) (instances, string) {
	t.Helper()
	c := &bootstrapv1.KubeadmConfig{}
	require.NoError(t, e.c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: config}, c))
	raw := c.Annotations[nodebootv1.BootstrapReportsAnnotation]
	in := instances{}
	require.NoError(t, json.Unmarshal([]byte(raw), &in))
	return in, raw
}

// TestInstancesBounded: a pool that saw many more instances than
// MaxInstances keeps MaxInstances, forgets succeeded ones first (the
// failure stays in the condition), and its annotation stays small.
func TestInstancesBounded(t *testing.T) {
	e := poolEnv(t)
	now := time.Unix(1000, 0)
	e.h.Now = func() time.Time { now = now.Add(time.Second); return now }
	e.h.Rate, e.h.Burst = 1000, 1000
	e.h.Recorder = nil // more Events than the fake recorder buffers
	node := func(i int) string { return fmt.Sprintf("pool-%03d-%s", i, strings.Repeat("x", 200)) }
	require.Equal(t, http.StatusAccepted, e.post("pool", e.tokens["pool"], `{"node":"`+node(0)+`",`+failed[1:]))
	for i := 1; i <= MaxInstances+50; i++ {
		require.Equal(t, http.StatusAccepted, e.post("pool", e.tokens["pool"], `{"node":"`+node(i)+`","phase":"succeeded"}`))
	}
	in, raw := e.instances(t, "pool")
	require.Len(t, in, MaxInstances)
	require.Equal(t, FailedReason, in[node(0)].Result, "the failure is kept")
	require.NotContains(t, in, node(1), "the oldest success is forgotten first")
	require.Contains(t, in, node(MaxInstances+50))
	require.Less(t, len(raw), 48<<10, "annotation size")
	c := e.condition(t, "pool")
	require.Equal(t, FailedReason, c.Reason)
	require.True(t, strings.HasPrefix(c.Message, fmt.Sprintf("%d/%d succeeded, 1 failed: %s: preKubeadmCommands[2] exited 127", MaxInstances-1, MaxInstances, node(0))), c.Message)
	require.LessOrEqual(t, len(c.Message), maxMessage)
	require.NotContains(t, raw, secretMarker)
}

// TestInstanceNames: a node name is a DNS subdomain of at most 253
// characters; anything else is refused before any write.
func TestInstanceNames(t *testing.T) {
	e := poolEnv(t)
	for _, tc := range []struct {
		name, node string
		code       int
	}{
		{"lower-case host name", "ip-10-0-0-1.ec2.internal", http.StatusAccepted},
		{"253 characters", strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 61), http.StatusAccepted},
		{"254 characters", strings.Repeat("a", 254), http.StatusBadRequest},
		{"upper case", "Node-1", http.StatusBadRequest},
		{"slash", "a/b", http.StatusBadRequest},
		{"quote", `a"b`, http.StatusBadRequest},
		{"control character", "a\\u001bb", http.StatusBadRequest},
		{"trailing dot", "a.", http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"node":"` + strings.ReplaceAll(tc.node, `"`, `\"`) + `","phase":"started"}`
			require.Equal(t, tc.code, e.post("pool", e.tokens["pool"], body))
		})
	}
	in, _ := e.instances(t, "pool")
	require.Len(t, in, 2)
	require.Equal(t, http.StatusBadRequest, e.post("pool", e.tokens["pool"], `{"phase":"started"}`), "a pool's report names its node")
	// A Machine's config takes a node name and keeps one condition.
	require.Equal(t, http.StatusAccepted, e.post("w-0", e.tokens["w-0"], `{"node":"w-0","phase":"succeeded"}`))
	require.Equal(t, "the node bootstrapped", e.condition(t, "w-0").Message)
}

// TestInstancesAnnotationEdited: an annotation an operator broke or filled
// with nonsense never refuses a report; bad entries are dropped.
func TestInstancesAnnotationEdited(t *testing.T) {
	for _, raw := range []string{`not json`, `{"Bad Name":{"result":"Succeeded"}}`, `{"ok":{"result":"Exploded"}}`, `[]`} {
		cfg := &bootstrapv1.KubeadmConfig{ObjectMeta: metav1.ObjectMeta{UID: types.UID("u"), Annotations: map[string]string{nodebootv1.BootstrapReportsAnnotation: raw}}}
		require.Empty(t, readInstances(cfg), raw)
	}
}
