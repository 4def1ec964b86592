package tlsserve

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// RefusedTotal counts connections and requests refused by Limits, by
// endpoint and reason: connections (MaxConns), source_connections,
// source_rate, global_rate.
var RefusedTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "nodeboot_node_endpoint_refused_total",
	Help: "Connections and requests the node-facing endpoints refused before authentication, by endpoint and reason: connections, source_connections, source_rate, global_rate.",
}, []string{"endpoint", "reason"})

func init() {
	metrics.Registry.MustRegister(RefusedTotal)
}
