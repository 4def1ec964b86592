package scale_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestWatchFilterShards runs two nodeboot manager binaries on one API
// server, --watch-filter=shard-a and --watch-filter=shard-b, each with its
// own leader-election Lease (the documented way to shard), over five
// Clusters in one namespace: two labelled cluster.x-k8s.io/watch-filter:
// shard-a, two shard-b, one unlabelled. Every config of a shard gets its data
// from that shard's manager alone — told apart by the API server's audit
// log, each manager authenticating as its own user — and nobody writes
// anything of the unlabelled Cluster's, as with CABPK's --watch-filter.
func TestWatchFilterShards(t *testing.T) {
	shards := []string{"shard-a", "shard-b"}
	s := startAPIServer(t, shards...)
	_, workload := s.user(t, "workload")
	shardOf := func(i int) string {
		if i < 4 {
			return shards[i/2]
		}
		return ""
	}
	f := fleet{ns: "shards", clusters: 5, workers: 2, workload: workload, labels: func(i int) map[string]string {
		if v := shardOf(i); v != "" {
			return map[string]string{clusterv1.WatchLabel: v}
		}
		return nil
	}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const leaseNS = "nodeboot-system"
	if err := s.k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: leaseNS}}); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	bin := nodebootBinary(t)
	t.Logf("manager built in %s", time.Since(begin).Round(time.Millisecond))
	certDir := servingCert(t, s.dir)
	for _, shard := range shards {
		kubeconfig, _ := s.user(t, shard)
		m := startProcess(t, shard, bin, kubeconfig, certDir,
			"--watch-filter="+shard,
			"--leader-elect", "--leader-elect-namespace="+leaseNS, "--leader-elect-id=nodeboot-"+shard,
			"--leader-elect-lease-duration=6s", "--leader-elect-renew-deadline=4s", "--leader-elect-retry-period=1s")
		defer m.stop(t)
		m.waitReady(t)
	}

	t.Logf("both managers ready after %s", time.Since(begin).Round(time.Millisecond))
	f.createClusters(t, s.k8s)
	prog := watchProgress(ctx, s.k8s, f.ns)
	var want, unfiltered []string
	for i, m := range f.machines() {
		if err := f.createConfig(ctx, s.k8s, m, i); err != nil {
			t.Fatal(err)
		}
		if err := f.createOwner(ctx, s.k8s, m); err != nil {
			t.Fatal(err)
		}
		if shardOf(m.cluster) != "" {
			want = append(want, m.name)
		} else {
			unfiltered = append(unfiltered, m.name)
		}
	}
	if _, missing := prog.waitFor(want, 2*time.Minute); missing > 0 {
		t.Fatalf("%d of %d configs of the two shards have no data after 2m", missing, len(want))
	}
	t.Logf("%d configs of the shards bootstrapped %s after the build began", len(want), time.Since(begin).Round(time.Millisecond))
	// Both managers have long handled every event by now; a few more
	// seconds give a wrongly filtering one time to touch the unlabelled
	// Cluster's configs.
	time.Sleep(5 * time.Second)
	for _, n := range unfiltered {
		c := &bootstrapv1.KubeadmConfig{}
		if err := s.k8s.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: n}, c); err != nil {
			t.Fatal(err)
		}
		if dataSecretCreated(c) || len(c.Status.Conditions) > 0 || len(c.Finalizers) > 0 {
			t.Errorf("KubeadmConfig %s of the unlabelled Cluster was reconciled (status %+v)", n, c.Status)
		}
	}

	events, _ := s.writes(t, 0)
	statusBy := map[string][]string{} // config -> users that patched its status
	for _, e := range events {
		if e.ObjectRef.Namespace != f.ns {
			continue
		}
		cluster := strings.SplitN(e.ObjectRef.Name, "-", 2)[0]
		owner := ""
		for i := range f.clusters {
			if f.clusterName(i) == cluster {
				owner = shardOf(i)
			}
		}
		if owner != e.User.Username {
			t.Errorf("%s wrote %s %s/%s of Cluster %s (shard %q)", e.User.Username, e.Verb, e.ObjectRef.Resource, e.ObjectRef.Name, cluster, owner)
		}
		if e.ObjectRef.Resource == "kubeadmconfigs" && e.ObjectRef.Subresource == "status" {
			statusBy[e.ObjectRef.Name] = append(statusBy[e.ObjectRef.Name], e.User.Username)
		}
	}
	for _, n := range want {
		if len(statusBy[n]) == 0 {
			t.Errorf("no status write of KubeadmConfig %s in the audit log", n)
		}
	}
	if t.Failed() {
		t.Logf("writes: %v", byUser(events))
	}
}
