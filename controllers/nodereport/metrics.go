package nodereport

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Results a report is counted under in ReportsTotal.
const (
	ResultStarted      = "started"
	ResultSucceeded    = "succeeded"
	ResultFailed       = "failed"
	ResultUnchanged    = "unchanged"
	ResultUnauthorized = "unauthorized"
	ResultInvalid      = "invalid"
	ResultRateLimited  = "rate_limited"
	ResultError        = "error"
)

var (
	// ReportsTotal counts the reports the endpoint received, by what became
	// of them: a phase that changed the condition, or why nothing changed.
	ReportsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "nodeboot_bootstrap_reports_total",
		Help: "Bootstrap reports received from nodes, by result: started, succeeded or failed (the condition moved), unchanged (replayed, or after success), unauthorized, invalid, rate_limited, error.",
	}, []string{"result"})
	// BootstrapSeconds is the time from the data Secret to the node's
	// success report: how long Machines take to boot and join.
	BootstrapSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "nodeboot_bootstrap_duration_seconds",
		Help:    "Seconds from the bootstrap data Secret being created to the node reporting success.",
		Buckets: prometheus.ExponentialBuckets(15, 2, 10), // 15 s to about 2 h
	})
)

func init() {
	metrics.Registry.MustRegister(ReportsTotal, BootstrapSeconds)
	for _, r := range []string{ResultStarted, ResultSucceeded, ResultFailed, ResultUnchanged, ResultUnauthorized, ResultInvalid, ResultRateLimited, ResultError} {
		ReportsTotal.WithLabelValues(r)
	}
}
