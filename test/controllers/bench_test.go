package controllers_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
)

// writeCounter counts API write requests of a manager, to the management
// cluster and to workload clusters (bootstrap tokens).
type writeCounter struct {
	n      atomic.Int64
	mu     sync.Mutex
	byVerb map[string]int
}

func (w *writeCounter) add(verb string, o client.Object) {
	w.n.Add(1)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byVerb == nil {
		w.byVerb = map[string]int{}
	}
	w.byVerb[fmt.Sprintf("%s %T", verb, o)]++
}

func (w *writeCounter) breakdown() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return fmt.Sprint(w.byVerb)
}

func (w *writeCounter) wrap(c client.Client) client.Client {
	return interceptor.NewClient(c.(client.WithWatch), interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.CreateOption) error {
			w.add("create", o)
			return c.Create(ctx, o, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.UpdateOption) error {
			w.add("update", o)
			return c.Update(ctx, o, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, o client.Object, p client.Patch, opts ...client.PatchOption) error {
			w.add("patch", o)
			return c.Patch(ctx, o, p, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.DeleteOption) error {
			w.add("delete", o)
			return c.Delete(ctx, o, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, o client.Object, opts ...client.SubResourceUpdateOption) error {
			w.add(sub+"-update", o)
			return c.SubResource(sub).Update(ctx, o, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, o client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			w.add(sub+"-patch", o)
			return c.SubResource(sub).Patch(ctx, o, p, opts...)
		},
	})
}

// wrapRemote counts writes of workload-cluster clients (which are not
// necessarily WithWatch).
func (w *writeCounter) wrapRemote(c client.Client) client.Client {
	return &countingClient{Client: c, w: w}
}

type countingClient struct {
	client.Client
	w *writeCounter
}

func (c *countingClient) Create(ctx context.Context, o client.Object, opts ...client.CreateOption) error {
	c.w.add("remote-create", o)
	return c.Client.Create(ctx, o, opts...)
}

func (c *countingClient) Update(ctx context.Context, o client.Object, opts ...client.UpdateOption) error {
	c.w.add("remote-update", o)
	return c.Client.Update(ctx, o, opts...)
}

// BenchmarkThroughput: 500 worker KubeadmConfigs (with Machines) of one
// initialized cluster, reconciled until all report dataSecretCreated, by
// CABPK's reconciler and by nodeboot's with the same settings (concurrency
// 10, client QPS 100/burst 200, tokens created in the workload cluster).
// Reports configs/s and API write requests per config, counted until the
// system is quiet again. Run once: go test -bench . -benchtime 1x -run '^$'
// (-short, as `make bench-smoke` runs it, reconciles 20 configs).
func BenchmarkThroughput(b *testing.B) {
	configs := 500
	if testing.Short() {
		configs = 20
	}
	for _, p := range []provider{oracle, nodeboot} {
		b.Run(string(p), func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				ns := newNamespace(b, "bench-"+string(p))
				createCluster(b, ns, clusterOptions{initialized: true, certs: true, kubeconfig: true})
				// The configs exist first; their Machines appear only once
				// the manager is running and connected to the workload
				// cluster (a probe config got its data), as when a
				// MachineDeployment scales up by 500 on a running system.
				for i := range configs {
					name := fmt.Sprintf("worker-%03d", i)
					createConfig(b, ns, name, "Machine", types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", i)), testSpec(worker, true))
				}
				var writes writeCounter
				stop := startManager(b, managerOptions{provider: p, namespaces: []string{ns}, wrap: writes.wrap, wrapRemote: writes.wrapRemote})
				createMachine(b, ns, "probe", worker, testSpec(worker, true))
				ctx := context.Background()
				eventually(b, 60*time.Second, "the probe config", func() (bool, error) {
					c, err := getConfig(ctx, ns, "probe")
					return err == nil && dataSecretCreated(c), err
				})
				time.Sleep(time.Second)
				writes = writeCounter{}

				b.StartTimer()
				start := time.Now()
				var wg sync.WaitGroup
				work := make(chan int)
				for range 16 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := range work {
							createOwnerMachine(b, ns, fmt.Sprintf("worker-%03d", i))
						}
					}()
				}
				for i := range configs {
					work <- i
				}
				close(work)
				wg.Wait()
				created := time.Since(start)
				for {
					list := &bootstrapv1.KubeadmConfigList{}
					if err := k8s.List(ctx, list, client.InNamespace(ns)); err != nil {
						b.Fatal(err)
					}
					done := 0
					for i := range list.Items {
						if dataSecretCreated(&list.Items[i]) {
							done++
						}
					}
					if done == configs+1 {
						break
					}
					if time.Since(start) > 10*time.Minute {
						b.Fatalf("%d of %d configs done after 10m", done, configs)
					}
					time.Sleep(100 * time.Millisecond)
				}
				elapsed := time.Since(start)
				b.StopTimer()
				atDone := writes.n.Load()
				// Let follow-up reconciles (observedGeneration, token checks) settle.
				for last := int64(-1); last != writes.n.Load(); {
					last = writes.n.Load()
					time.Sleep(3 * time.Second)
				}
				stop()
				b.Logf("%s: %d Machines created in %s, all data in %s; writes: %s", p, configs, created.Round(time.Millisecond), elapsed.Round(time.Millisecond), writes.breakdown())
				b.ReportMetric(float64(configs)/elapsed.Seconds(), "configs/s")
				b.ReportMetric(float64(atDone)/float64(configs), "writes/config@done")
				b.ReportMetric(float64(writes.n.Load())/float64(configs), "writes/config")
			}
		})
	}
}
