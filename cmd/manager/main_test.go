package main

import (
	"testing"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/component-base/logs"
	cabpk "sigs.k8s.io/cluster-api/bootstrap/kubeadm/reconcilers/kubeadmconfig"
	"sigs.k8s.io/cluster-api/feature"

	"github.com/nodeboot/nodeboot/controllers"
	"github.com/nodeboot/nodeboot/provisioning"
)

func parse(t *testing.T, args ...string) *options {
	t.Helper()
	o := &options{logs: logs.NewOptions()}
	fs := pflag.NewFlagSet("manager", pflag.ContinueOnError)
	o.addFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return o
}

func TestFlagDefaults(t *testing.T) {
	o := parse(t)
	if o.tokenTTL != cabpk.DefaultTokenTTL || controllers.DefaultTokenTTL != cabpk.DefaultTokenTTL {
		t.Errorf("--bootstrap-token-ttl default %s, want CABPK's 15m", o.tokenTTL)
	}
	if o.leaderElect || o.watchFilter != "" || o.kubeadmConfigConcurrency != 100 || o.healthAddr != ":9440" {
		t.Errorf("unexpected defaults: %+v", o)
	}
}

// TestCABPKFlags: the arguments of CABPK's Deployment (config/manager) and
// the kubebuilder spellings are accepted.
func TestCABPKFlags(t *testing.T) {
	o := parse(t,
		"--leader-elect",
		"--diagnostics-address=:8443",
		"--insecure-diagnostics=false",
		"--feature-gates=MachinePool=true,KubeadmBootstrapFormatIgnition=true,PriorityQueue=true,ReconcilerRateLimiting=true",
		"--bootstrap-token-ttl=5m",
		"--watch-filter=team-a",
		"--kubeadmconfig-concurrency=7",
		"--metrics-bind-address=:8080",
		"--health-probe-bind-address=:9441",
		"--v=4",
	)
	if !o.leaderElect || o.tokenTTL != 5*time.Minute || o.watchFilter != "team-a" || o.kubeadmConfigConcurrency != 7 || o.metricsAddr != ":8080" || o.healthAddr != ":9441" {
		t.Errorf("flags not applied: %+v", o)
	}
	if !feature.Gates.Enabled(feature.KubeadmBootstrapFormatIgnition) {
		t.Errorf("--feature-gates did not enable KubeadmBootstrapFormatIgnition")
	}
}

// TestProvisionersLinked: the manager serves both formats CABPK serves.
func TestProvisionersLinked(t *testing.T) {
	for _, f := range []string{"cloud-config", "ignition"} {
		if _, err := provisioning.Get(f); err != nil {
			t.Errorf("format %s: %v", f, err)
		}
	}
}
