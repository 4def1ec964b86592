package verify_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
)

// benchConfigs is the size of the benchmark's management cluster; -short
// (`make bench-smoke`) shrinks it to 10, still workers and pools in both
// formats, to check that the benchmark works.
var benchConfigs = 1000

// BenchmarkVerify verifies 1,000 configs (workers and MachinePools, both
// formats) whose data CABPK wrote, as the read-only user, and reports
// configs verified per second: one run is one `nodeboot verify -n NS`
// process (kubeconfig load, list calls, parallel renders, comparison).
// CABPK is stopped before timing, so only verify uses the API server.
func BenchmarkVerify(b *testing.B) {
	if testing.Short() {
		benchConfigs = 10
	}
	ns, ro := benchCluster(b)
	want := fmt.Sprintf("identical: %d/%d", benchConfigs, benchConfigs)
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		r := runVerify(b, ro, "-n", ns)
		if r.code != 0 || r.lastLine() != want {
			b.Fatalf("want %s:\n%s", want, r)
		}
	}
	b.ReportMetric(float64(benchConfigs*b.N)/time.Since(start).Seconds(), "configs/s")
}

// benchNS holds the benchmark's configs; the testing package calls a
// benchmark more than once, the setup runs once.
var benchNS, benchUser string

func benchCluster(b *testing.B) (ns, kubeconfig string) {
	b.Helper()
	if benchNS != "" {
		return benchNS, benchUser
	}
	stop := startCABPK(b)
	ro, _ := users(b)
	go buildBin()
	g := &gen{r: rand.New(rand.NewPCG(7, 0x5eed))}
	ns = newNamespace(b, "bench")
	c := createCluster(b, ns, "cluster", vectorCerts(b))
	setInitialized(b, c, true)
	formats := []bootstrapv1.Format{bootstrapv1.CloudConfig, bootstrapv1.Ignition}
	var creates []func() error
	for i := range benchConfigs {
		name := fmt.Sprintf("m-%04d", i)
		spec, secrets := g.spec(name, formats[i%2])
		// Workers get a token in the spec, as the vectors have, so CABPK
		// creates fewer. Not pools: CABPK replaces a pool's token that has
		// no Secret in the workload cluster, data included.
		own := ownWorker
		if i%5 == 4 {
			own = ownPool
		} else {
			spec.JoinConfiguration.Discovery.BootstrapToken.Token = fmt.Sprintf("%06d.0123456789abcdef", i)
		}
		version := g.pick(versions...)
		creates = append(creates, func() error { return createConfig(ns, "cluster", name, own, version, spec, secrets) })
	}
	parallel(b, creates)
	waitForData(b, 10*time.Minute, ns)
	stop()
	nodebootBin(b)
	benchNS, benchUser = ns, ro
	return ns, ro
}
