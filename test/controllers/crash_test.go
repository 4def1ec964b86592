package controllers_test

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// TestCrashBetweenSecretAndStatus stops the manager right after it wrote a
// bootstrap data Secret and before it patched the config's status; a new
// manager must converge to exactly one Secret and a consistent status.
func TestCrashBetweenSecretAndStatus(t *testing.T) {
	for _, tc := range []struct {
		name string
		role role
		init bool
	}{
		{"init", controlPlane, false},
		{"join-worker", worker, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := newNamespace(t, "crash-"+tc.name)
			createCluster(t, ns, clusterOptions{initialized: tc.init, certs: true, kubeconfig: true})
			crashed := make(chan struct{})
			var once sync.Once
			wrap := func(c client.Client) client.Client {
				return interceptor.NewClient(c.(client.WithWatch), interceptor.Funcs{
					Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
						if err := c.Create(ctx, obj, opts...); err != nil {
							return err
						}
						if s, ok := obj.(*corev1.Secret); ok && s.Name == "m-0" {
							// The Secret is written; now the process "dies":
							// nothing after this reaches the API server.
							once.Do(func() { close(crashed) })
							<-ctx.Done()
							return ctx.Err()
						}
						return nil
					},
				})
			}
			stop := startManager(t, managerOptions{provider: nodeboot, namespaces: []string{ns}, wrap: wrap})
			createMachine(t, ns, "m-0", tc.role, testSpec(tc.role, tc.init))
			select {
			case <-crashed:
			case <-time.After(60 * time.Second):
				t.Fatal("the Secret was never written")
			}
			stop()
			ctx := context.Background()
			c, err := getConfig(ctx, ns, "m-0")
			if err != nil {
				t.Fatal(err)
			}
			if dataSecretCreated(c) {
				t.Fatal("status was patched although the manager stopped first; the crash was not simulated")
			}

			startManager(t, managerOptions{provider: nodeboot, namespaces: []string{ns}})
			eventually(t, 60*time.Second, "status to converge", func() (bool, error) {
				c, err := getConfig(ctx, ns, "m-0")
				return err == nil && dataSecretCreated(c) && c.Status.ObservedGeneration == c.Generation, err
			})
			list := &corev1.SecretList{}
			if err := k8s.List(ctx, list, client.InNamespace(ns)); err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, s := range list.Items {
				if _, ok := s.Data["format"]; ok && len(s.OwnerReferences) == 1 && s.OwnerReferences[0].Kind == "KubeadmConfig" {
					n++
				}
			}
			if n != 1 {
				t.Errorf("%d bootstrap data Secrets, want 1", n)
			}
			c, _ = getConfig(ctx, ns, "m-0")
			s, err := getSecret(ctx, ns, c.Status.DataSecretName)
			if err != nil {
				t.Fatal(err)
			}
			if tc.init {
				want := c.Spec.JoinConfiguration.Discovery.BootstrapToken.Token
				if got := joinToken(t, s); want == "" || got != want {
					t.Errorf("discovery.bootstrapToken.token of the Secret is %q, want the spec's %q", got, want)
				}
			}
		})
	}
}
