package scale_test

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// progress follows the KubeadmConfigs of a namespace with one list and a
// watch (re-listed when the watch ends), so the test learns the moment each
// reports dataSecretCreated without listing thousands of objects in a loop.
type progress struct {
	mu   sync.Mutex
	done map[string]time.Time
	cond *sync.Cond
}

func watchProgress(ctx context.Context, k8s client.WithWatch, ns string) *progress {
	p := &progress{done: map[string]time.Time{}}
	p.cond = sync.NewCond(&p.mu)
	go func() {
		for ctx.Err() == nil {
			list := &bootstrapv1.KubeadmConfigList{}
			if err := k8s.List(ctx, list, client.InNamespace(ns)); err != nil {
				time.Sleep(time.Second)
				continue
			}
			for i := range list.Items {
				p.observe(&list.Items[i])
			}
			w, err := k8s.Watch(ctx, &bootstrapv1.KubeadmConfigList{}, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
			if err != nil {
				time.Sleep(time.Second)
				continue
			}
			for ev := range w.ResultChan() {
				if ev.Type == watch.Added || ev.Type == watch.Modified {
					if c, ok := ev.Object.(*bootstrapv1.KubeadmConfig); ok {
						p.observe(c)
					}
				}
			}
			w.Stop()
		}
	}()
	return p
}

func (p *progress) observe(c *bootstrapv1.KubeadmConfig) {
	if !dataSecretCreated(c) {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.done[c.Name]; !ok {
		p.done[c.Name] = time.Now()
		p.cond.Broadcast()
	}
}

// count is how many configs have their data.
func (p *progress) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.done)
}

// has reports whether the named config has its data.
func (p *progress) has(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.done[name]
	return ok
}

// waitFor waits until every named config has its data or the timeout
// passes; it returns the time the last one got it and how many are missing.
func (p *progress) waitFor(names []string, timeout time.Duration) (last time.Time, missing int) {
	deadline := time.Now().Add(timeout)
	t := time.AfterFunc(timeout, func() {
		p.mu.Lock()
		p.cond.Broadcast()
		p.mu.Unlock()
	})
	defer t.Stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		missing = 0
		last = time.Time{}
		for _, n := range names {
			at, ok := p.done[n]
			if !ok {
				missing++
			} else if at.After(last) {
				last = at
			}
		}
		if missing == 0 || time.Now().After(deadline) {
			return last, missing
		}
		p.cond.Wait()
	}
}
