package controllers_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
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
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 42))
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
				n, err := initSecrets(ctx, ns)
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
		n, err := initSecrets(ctx, ns)
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
		holder := lock.Data["lock-information"]
		for i := range machines {
			name := fmt.Sprintf("cp-%d", i)
			_, err := getSecret(ctx, ns, name)
			hasSecret := err == nil
			holds := strings.Contains(holder, `"`+name+`"`)
			if hasSecret != holds {
				t.Errorf("%s: %s has data=%v but holds the lock=%v (%s)", ns, name, hasSecret, holds, holder)
			}
		}
	}
}

// initSecrets counts the bootstrap data Secrets in ns that run kubeadm init.
func initSecrets(ctx context.Context, ns string) (int, error) {
	list := &corev1.SecretList{}
	if err := k8s.List(ctx, list, client.InNamespace(ns)); err != nil {
		return 0, err
	}
	n := 0
	for _, s := range list.Items {
		if strings.Contains(string(s.Data["value"]), "kubeadm init") {
			n++
		}
	}
	return n, nil
}
