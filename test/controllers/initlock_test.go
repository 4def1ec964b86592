package controllers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestInitLock creates three control-plane KubeadmConfigs of one cluster at
// the same moment, 50 times (in waves of 5 clusters), restarting the manager
// at random points of every wave, and checks that each cluster got exactly
// one init configuration, for the machine holding the init lock.
func TestInitLock(t *testing.T) {
	const waves, perWave, machines = 10, 5, 3
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("NODEBOOT_TEST_SEED"); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("NODEBOOT_TEST_SEED=%q: %v", v, err)
		}
	}
	t.Logf("restart points from seed %d (set NODEBOOT_TEST_SEED=%d to replay them)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 42))
	initCmd := vectorRunCmd(t, "cc-init-minimal-v1.33")[0]
	stop := startManager(t, managerOptions{provider: nodeboot})
	ctx := context.Background()
	var all []string
	for w := range waves {
		var nss []string
		for range perWave {
			ns := newNamespace(t, "initlock")
			createCluster(t, ns, clusterOptions{certs: w%2 == 0}) // odd waves generate the CAs
			nss = append(nss, ns)
		}
		// Restart at one or two random points while the wave is in flight.
		restarts := make(chan struct{})
		go func() {
			defer close(restarts)
			for range 1 + rng.IntN(2) {
				time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond)
				stop()
				stop = startManager(t, managerOptions{provider: nodeboot})
			}
		}()
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, ns := range nss {
			for i := range machines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					createMachine(t, ns, fmt.Sprintf("cp-%d", i), controlPlane, testSpec(controlPlane, false))
				}()
			}
		}
		close(start)
		wg.Wait()
		<-restarts
		for _, ns := range nss {
			eventually(t, 60*time.Second, "an init configuration in "+ns, func() (bool, error) {
				n, err := initSecrets(ctx, ns, initCmd)
				return n > 0, err
			})
		}
		all = append(all, nss...)
	}
	// One more restart: every config is reconciled again from scratch, and
	// still nobody but the lock holder may initialize.
	stop()
	startManager(t, managerOptions{provider: nodeboot})
	time.Sleep(3 * time.Second)
	for _, ns := range all {
		n, err := initSecrets(ctx, ns, initCmd)
		if err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("%s: %d init configurations, want exactly 1", ns, n)
			continue
		}
		lock := &corev1.ConfigMap{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: clusterName + "-lock"}, lock); err != nil {
			t.Errorf("%s: init lock: %v", ns, err)
			continue
		}
		var holder struct {
			MachineName string `json:"machineName"`
		}
		if err := json.Unmarshal([]byte(lock.Data["lock-information"]), &holder); err != nil {
			t.Errorf("%s: init lock information %q: %v", ns, lock.Data["lock-information"], err)
			continue
		}
		for i := range machines {
			name := fmt.Sprintf("cp-%d", i)
			data, err := getSecret(ctx, ns, name)
			hasSecret := err == nil
			holds := holder.MachineName == name
			if hasSecret != holds {
				t.Errorf("%s: %s has data=%v but holds the lock=%v (held by %q)", ns, name, hasSecret, holds, holder.MachineName)
			}
			if hasSecret && holds {
				checkInitCA(ctx, t, ns, data)
			}
		}
	}
}

// checkInitCA fails unless the cluster CA certificate and key written by the
// init data are those of the cluster's CA Secret: a lost race that
// generated a second CA would boot a control plane nobody else trusts.
func checkInitCA(ctx context.Context, t *testing.T, ns string, data *corev1.Secret) {
	t.Helper()
	cc, err := decodeCloudConfig(data)
	if err != nil {
		t.Errorf("%s/%s: %v", ns, data.Name, err)
		return
	}
	ca, err := getSecret(ctx, ns, clusterName+"-ca")
	if err != nil {
		t.Errorf("%s: cluster CA Secret: %v", ns, err)
		return
	}
	for path, key := range map[string]string{"/etc/kubernetes/pki/ca.crt": "tls.crt", "/etc/kubernetes/pki/ca.key": "tls.key"} {
		i := slices.IndexFunc(cc.WriteFiles, func(f cloudFile) bool { return f.Path == path })
		switch {
		case len(ca.Data[key]) == 0:
			t.Errorf("%s: cluster CA Secret has no %s", ns, key)
		case i < 0:
			t.Errorf("%s/%s: init data writes no %s", ns, data.Name, path)
		case cc.WriteFiles[i].Encoding != "":
			t.Errorf("%s/%s: %s has encoding %s, want CABPK's plain content", ns, data.Name, path, cc.WriteFiles[i].Encoding)
		case cc.WriteFiles[i].Content != string(ca.Data[key]):
			// Not printed: key material.
			t.Errorf("%s/%s: %s differs from %s of Secret %s-ca", ns, data.Name, path, key, clusterName)
		}
	}
}

// initSecrets counts the bootstrap data Secrets in ns whose runcmd runs
// initCmd, CABPK's kubeadm init command.
func initSecrets(ctx context.Context, ns, initCmd string) (int, error) {
	list := &corev1.SecretList{}
	if err := k8s.List(ctx, list, client.InNamespace(ns)); err != nil {
		return 0, err
	}
	n := 0
	for i := range list.Items {
		s := &list.Items[i]
		if _, ok := s.Data["format"]; !ok {
			continue // certificates, not bootstrap data
		}
		cc, err := decodeCloudConfig(s)
		if err != nil {
			return 0, fmt.Errorf("%s/%s: %w", ns, s.Name, err)
		}
		if slices.Contains(cc.RunCmd, initCmd) {
			n++
		}
	}
	return n, nil
}
