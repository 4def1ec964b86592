//go:build e2e

package e2e

import (
	"fmt"
	"sort"
	"testing"
	"time"
)

// BenchmarkAddonDelivery builds the same two-node cloud-config cluster
// with the same Flannel and NodeLocal DNSCache manifests, delivered by
// nodeboot's first-boot add-ons and by a ClusterResourceSet (Cluster API's
// own add-on path; the kubelets get NodeLocal DNSCache's clusterDNS from
// kubeletExtraArgs there), three clusters each, one at a time, and reports
// the medians: Cluster creation to both Nodes Ready, and to a Service name
// answering through NodeLocal DNSCache from a pod on the worker.
//
//	make e2e-bench
func BenchmarkAddonDelivery(b *testing.B) {
	const runs = 3
	for _, path := range []string{addonsFirstBoot, addonsCRS} {
		b.Run(path, func(b *testing.B) {
			var toReady, toDNS []float64
			for i := range runs {
				c := newCluster(b, clusterOpts{name: fmt.Sprintf("%s%d", path[:3], i), format: "cloud-config", addons: path, worker: true})
				ready := c.waitReady(b, 12*time.Minute, c.cp(), c.worker())
				last := ready[c.cp()]
				if ready[c.worker()].After(last) {
					last = ready[c.worker()]
				}
				c.addonsRunning(b, c.cp(), c.worker())
				dns := c.dnsAndPodNetwork(b, c.worker())
				toReady = append(toReady, last.Sub(c.created).Seconds())
				toDNS = append(toDNS, dns.Sub(c.created).Seconds())
				b.Logf("%s %d: Cluster to both Nodes Ready %.1fs, to DNS through NodeLocal DNSCache %.1fs", path, i, toReady[i], toDNS[i])
				// One cluster at a time: stop this one before the next.
				c.teardown()
			}
			b.ReportMetric(median(toReady), "s-to-ready")
			b.ReportMetric(median(toDNS), "s-to-dns")
			b.Logf("%s: to Ready %v, to DNS %v (s)", path, toReady, toDNS)
		})
	}
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	c := append([]float64(nil), v...)
	sort.Float64s(c)
	return c[len(c)/2]
}
