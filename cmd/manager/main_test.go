package main

import (
	"testing"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/component-base/featuregate"
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
	// CABPK's: secure metrics on :8443.
	if o.manager.DiagnosticsAddress != ":8443" || o.manager.InsecureDiagnostics {
		t.Errorf("diagnostics defaults %q insecure=%t, want \":8443\" insecure=false", o.manager.DiagnosticsAddress, o.manager.InsecureDiagnostics)
	}
}

// TestCABPKFlags: the arguments of CABPK's Deployment (config/manager) and
// the kubebuilder spellings are accepted. The diagnostics flags get values
// other than their defaults, so the test tells parsed from defaulted.
func TestCABPKFlags(t *testing.T) {
	restoreFeatureGates(t)
	o := parse(t,
		"--leader-elect",
		"--diagnostics-address=127.0.0.1:8444",
		"--insecure-diagnostics=true",
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
	if o.manager.DiagnosticsAddress != "127.0.0.1:8444" {
		t.Errorf("--diagnostics-address: DiagnosticsAddress = %q, want 127.0.0.1:8444", o.manager.DiagnosticsAddress)
	}
	if !o.manager.InsecureDiagnostics {
		t.Errorf("--insecure-diagnostics=true: InsecureDiagnostics = false")
	}
	for _, f := range []featuregate.Feature{feature.MachinePool, feature.KubeadmBootstrapFormatIgnition, feature.PriorityQueue, feature.ReconcilerRateLimiting} {
		if !feature.Gates.Enabled(f) {
			t.Errorf("--feature-gates did not enable %s", f)
		}
	}
}

// restoreFeatureGates puts every known feature gate back to its current
// value when the test ends (setting only those that changed: setting a GA
// gate, even to its locked value, logs a warning): feature.Gates is global, and --feature-gates
// sets it for every later test of the package.
func restoreFeatureGates(t *testing.T) {
	t.Helper()
	saved := map[string]bool{}
	for f := range feature.MutableGates.GetAll() {
		saved[string(f)] = feature.Gates.Enabled(f)
	}
	t.Cleanup(func() {
		changed := map[string]bool{}
		for f, v := range saved {
			if feature.Gates.Enabled(featuregate.Feature(f)) != v {
				changed[f] = v
			}
		}
		if err := feature.MutableGates.SetFromMap(changed); err != nil {
			t.Errorf("restore feature gates %v: %v", changed, err)
		}
		for f, want := range saved {
			if got := feature.Gates.Enabled(featuregate.Feature(f)); got != want {
				t.Errorf("feature gate %s is %t after the test, want %t", f, got, want)
			}
		}
	})
}

// TestProvisionersLinked: the manager serves both formats CABPK serves.
func TestProvisionersLinked(t *testing.T) {
	for _, f := range []string{"cloud-config", "ignition"} {
		if _, err := provisioning.Get(f); err != nil {
			t.Errorf("format %s: %v", f, err)
		}
	}
}

// TestVersionFlag: --version is a flag of its own (main prints
// version.Get().Line and exits before anything else); the e2e and image
// tests run it on the built binary.
func TestVersionFlag(t *testing.T) {
	if parse(t).version {
		t.Error("--version on by default")
	}
	if o := parse(t, "--version", "--leader-elect-namespace=capi-system"); !o.version || o.leaderElectionNamespace != "capi-system" {
		t.Errorf("--version / --leader-elect-namespace not applied: %+v", o)
	}
}
