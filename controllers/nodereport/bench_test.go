package nodereport

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// BenchmarkReports: 2,000 reports from 500 configs (started, failed,
// a late started, succeeded; 400 from 100 with -short), 50 at a time,
// over TLS on loopback, against an in-memory API (the endpoint's own cost,
// not the API server's). Reports p99 latency and lost reports (configs not
// ending Succeeded).
//
//	go test ./controllers/nodereport/ -run '^$' -bench Reports -benchtime 1x
func BenchmarkReports(b *testing.B) {
	configs, workers := 500, 50
	if testing.Short() {
		configs = 100 // `make bench-smoke`
	}
	for range b.N {
		b.StopTimer()
		s := runtime.NewScheme()
		_ = corev1.AddToScheme(s)
		_ = bootstrapv1.AddToScheme(s)
		builder := fake.NewClientBuilder().WithScheme(s).WithStatusSubresource(&bootstrapv1.KubeadmConfig{})
		tokens := make([]string, configs)
		var secrets []*corev1.Secret
		for i := range configs {
			cfg := &bootstrapv1.KubeadmConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("c-%d", i), UID: types.UID(fmt.Sprintf("uid-%d", i))}}
			sec, err := NewCredentialSecret(cfg, "c")
			if err != nil {
				b.Fatal(err)
			}
			tokens[i] = string(sec.Data[CredentialKey])
			builder = builder.WithObjects(cfg, sec)
			secrets = append(secrets, sec)
		}
		c := builder.Build()
		srv := httptest.NewTLSServer(&Handler{Reader: c, Client: c, Credentials: testIndex(c, 0, secrets...)})
		cl := srv.Client()
		cl.Transport.(*http.Transport).MaxIdleConnsPerHost = workers
		bodies := []string{`{"phase":"started"}`, `{"phase":"failed","step":"kubeadm","exitCode":1,"log":"x"}`, `{"phase":"started"}`, `{"phase":"succeeded"}`}
		jobs := make(chan int)
		var mu sync.Mutex
		var lat []time.Duration
		errs := 0
		var wg sync.WaitGroup
		b.StartTimer()
		start := time.Now()
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range jobs {
					for _, body := range bodies {
						req, _ := http.NewRequest(http.MethodPost, srv.URL+Path+fmt.Sprintf("ns/c-%d", i), strings.NewReader(body))
						req.Header.Set("Authorization", "Bearer "+tokens[i])
						t0 := time.Now()
						resp, err := cl.Do(req)
						d := time.Since(t0)
						mu.Lock()
						lat = append(lat, d)
						if err != nil || resp.StatusCode >= 300 && resp.StatusCode != http.StatusOK {
							errs++
						}
						mu.Unlock()
						if err == nil {
							resp.Body.Close()
						}
					}
				}
			}()
		}
		for i := range configs {
			jobs <- i
		}
		close(jobs)
		wg.Wait()
		elapsed := time.Since(start)
		b.StopTimer()
		srv.Close()
		lost := 0
		for i := range configs {
			cfg := &bootstrapv1.KubeadmConfig{}
			if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: fmt.Sprintf("c-%d", i)}, cfg); err != nil ||
				conditions.Get(cfg, NodeBootstrappedCondition) == nil || conditions.Get(cfg, NodeBootstrappedCondition).Reason != SucceededReason {
				lost++
			}
		}
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "reports/s")
		b.ReportMetric(float64(lost), "lost")
		b.ReportMetric(float64(errs), "errors")
		if lost > 0 || errs > 0 {
			b.Fatalf("%d configs lost their report, %d requests failed", lost, errs)
		}
	}
}
