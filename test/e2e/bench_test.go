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
// kubeletExtraArgs there), three clusters each, one at a time and
// alternating, so a change in the machine's load falls on both paths alike.
// It reports the medians: Cluster creation to both Nodes Ready, and to a
// Service name answering through NodeLocal DNSCache from a pod on the
// worker.
//
//	make e2e-bench
func BenchmarkAddonDelivery(b *testing.B) {
	const runs = 3
	paths := []string{addonsFirstBoot, addonsCRS}
	toReady, toDNS := map[string][]float64{}, map[string][]float64{}
	for i := range runs {
		for _, path := range paths {
			c := newCluster(b, clusterOpts{name: fmt.Sprintf("%s%d", path[:3], i), format: "cloud-config", addons: path, worker: true})
			ready := c.waitReady(b, 12*time.Minute, c.cp(), c.worker())
			last := ready[c.cp()]
			if ready[c.worker()].After(last) {
				last = ready[c.worker()]
			}
			c.addonsRunning(b, c.cp(), c.worker())
			dns := c.dnsAndPodNetwork(b, c.worker())
			r, d := last.Sub(c.created).Seconds(), dns.Sub(c.created).Seconds()
			toReady[path] = append(toReady[path], r)
			toDNS[path] = append(toDNS[path], d)
			b.Logf("%s %d: Cluster to both Nodes Ready %.1fs, to DNS through NodeLocal DNSCache %.1fs", path, i, r, d)
			// One cluster at a time: stop this one before the next.
			c.teardown()
		}
	}
	for _, path := range paths {
		b.ReportMetric(median(toReady[path]), path+"-s-to-ready")
		b.ReportMetric(median(toDNS[path]), path+"-s-to-dns")
		b.Logf("%s: to Ready %v, to DNS %v (s)", path, toReady[path], toDNS[path])
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
