package scale_test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Flags both managers run with, identical so the comparison is of the
// code: the defaults both binaries share today, spelled out so a change of
// either default does not silently change the benchmark.
var sharedFlags = []string{
	"--kubeadmconfig-concurrency=100",
	"--clustercache-concurrency=100",
	"--kube-api-qps=100", "--kube-api-burst=200",
	"--clustercache-client-qps=20", "--clustercache-client-burst=30",
	// Tokens are refreshed on a clock (every TTL/3 until the node joins),
	// so with the default 15m a slower run writes more per config for
	// that reason alone; 3h keeps refreshes out of any run's window and
	// writes/config a cost per config.
	"--bootstrap-token-ttl=3h",
	"--sync-period=10m",
	"--feature-gates=MachinePool=true,KubeadmBootstrapFormatIgnition=true",
}

// BenchmarkManagerScale runs each provider's manager binary as its own
// process on a fresh API server and has it bootstrap a fleet: 50 initialized
// Clusters, each with one joining control-plane Machine and 100 worker
// Machines, plus a MachinePool — 5,051 KubeadmConfigs, a quarter of them
// legacy Ignition (every odd Cluster's control plane, every fourth worker),
// the rest cloud-config. The configs exist before the manager starts (as a
// MachineSet leaves them before creating the Machines); the clock runs
// from the first owner Machine created to the last config reporting
// dataSecretCreated. Tokens are written to the workload clusters (here the
// same API server, under the manager's user).
//
// After both runs, every config's data Secret nodeboot's manager wrote is
// compared byte for byte with the one CABPK's wrote for the same object
// (collectData, compareData): value, format, type, labels and owners. Each
// side's bootstrap token, the only per-run part, is replaced by a
// placeholder after checking it is the token that manager stored in the
// config and on the workload cluster; any other difference fails the
// benchmark. The log and the cabpk run's metrics state how many were
// compared per format (all of them: 3,777 cloud-config and 1,275 Ignition
// at full size with the probe).
//
// Reported per provider: configs/s; writes/config, every write request the
// manager's user made from the first Machine until the system is quiet
// again, counted from the API server's audit log; peak-RSS-MB, the
// process's VmHWM from /proc.
//
//	go test ./test/scale/ -run '^$' -bench ManagerScale -benchtime 1x -timeout 60m
//
// NODEBOOT_SCALE_CLUSTERS shrinks the fleet for a quick look (-short, as
// `make bench-smoke` runs it, means one Cluster of 10 workers: 13 configs
// with the probe, 11 cloud-config and 2 legacy Ignition);
// NODEBOOT_SCALE_PROFILES=DIR saves each manager's heap profile at the end
// of the run (DIR/<provider>-heap.pprof).
func BenchmarkManagerScale(b *testing.B) {
	clusters, workers := 50, 100
	if testing.Short() {
		clusters, workers = 1, 10
	}
	if v := os.Getenv("NODEBOOT_SCALE_CLUSTERS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 200 {
			b.Fatalf("NODEBOOT_SCALE_CLUSTERS=%q: want 1 to 200", v)
		}
		clusters = n
	}
	data := map[string]map[string]dataSecret{} // provider -> config -> data
	providers := []struct{ name, pkg string }{
		{"nodeboot", "./cmd/manager"},
		{"cabpk", "sigs.k8s.io/cluster-api/bootstrap/kubeadm"},
	}
	// CABPK's binary builds while nodeboot's run starts its API server and
	// manager; the run waits for the build before its clock starts.
	prebuild(providers[1].name+"-manager", providers[1].pkg)
	for _, p := range providers {
		b.Run(p.name, func(b *testing.B) {
			b.StopTimer()
			bin := binary(b, p.name+"-manager", p.pkg)
			for range b.N {
				data[p.name] = runScale(b, p.name, bin, clusters, workers)
			}
			// The second run compares: its log and metrics state the
			// sample, and a difference fails it.
			if len(data) == 2 {
				compareRuns(b, data["nodeboot"], data["cabpk"])
			}
		})
	}
	if len(data) < 2 {
		b.Logf("data not compared: only %v ran", slices.Collect(maps.Keys(data)))
	}
}

// compareRuns fails b on any difference between nodeboot's and CABPK's data
// Secrets and reports how many of each format were compared.
func compareRuns(b *testing.B, nodeboot, cabpk map[string]dataSecret) {
	b.Helper()
	counts, diffs := compareData(nodeboot, cabpk)
	b.Logf("data Secrets compared byte for byte with CABPK's: %d (per format %v)", len(cabpk), counts)
	for _, f := range slices.Sorted(maps.Keys(counts)) {
		b.ReportMetric(float64(counts[f]), f+"-compared")
	}
	for i, d := range diffs {
		if i == 20 {
			b.Errorf("... and %d more", len(diffs)-i)
			break
		}
		b.Error(d)
	}
	if len(diffs) > 0 {
		b.Fatalf("%d differences between nodeboot's and CABPK's data", len(diffs))
	}
	for _, f := range []string{"cloud-config", "ignition"} {
		if counts[f] == 0 {
			b.Fatalf("no %s data compared: the fleet lost a format", f)
		}
	}
}

// runScale runs one manager over the fleet and returns the data Secrets it
// wrote, normalised for comparison (collectData).
func runScale(b *testing.B, provider, bin string, clusters, workers int) map[string]dataSecret {
	b.Helper()
	const user = "scale-manager"
	s := startAPIServer(b, user)
	kubeconfig, userCfg := s.user(b, user)
	f := fleet{ns: "scale", clusters: clusters, workers: workers, ignition: true, workload: userCfg}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	f.createClusters(b, s.k8s)
	ms := f.machines()
	idx := make([]int, len(ms))
	for i := range idx {
		idx[i] = i
	}
	parallel(b, 16, idx, func(i int) error { return f.createConfig(ctx, s.k8s, ms[i], i) })
	prog := watchProgress(ctx, s.k8s, f.ns)

	args := sharedFlags
	profiles := os.Getenv("NODEBOOT_SCALE_PROFILES")
	pprofAddr := ""
	if profiles != "" {
		pprofAddr = freeAddr(b)
		args = append(append([]string{}, args...), "--profiler-address="+pprofAddr)
	}
	m := startProcess(b, provider, bin, kubeconfig, servingCert(b, s.dir), args...)
	rss := sampleRSS(ctx, m)
	m.waitReady(b)
	rss.phase("probe")
	// A probe config gets its data first: the caches are synced and the
	// workload cluster connected before the clock starts.
	probe := machine{cluster: 0, name: f.clusterName(0) + "-probe"}
	if err := f.createConfig(ctx, s.k8s, probe, len(ms)); err != nil {
		b.Fatal(err)
	}
	if err := f.createOwner(ctx, s.k8s, probe); err != nil {
		b.Fatal(err)
	}
	if _, missing := prog.waitFor([]string{probe.name}, 3*time.Minute); missing > 0 {
		b.Fatalf("%s: the probe config got no data in 3m", provider)
	}
	if n := prog.count(); n != 1 {
		b.Fatalf("%s: %d configs have data before their owners exist", provider, n)
	}
	time.Sleep(time.Second)
	_, from := s.writes(b, 0)
	reqBefore := m.requests()

	names := make([]string, len(ms))
	for i, mm := range ms {
		names[i] = mm.name
	}
	waitBuilds()
	rss.phase("machines")
	b.StartTimer()
	start := time.Now()
	parallel(b, 16, ms, func(mm machine) error { return f.createOwner(ctx, s.k8s, mm) })
	created := time.Since(start)
	last, missing := prog.waitFor(names, 30*time.Minute)
	b.StopTimer()
	if missing > 0 {
		b.Fatalf("%s: %d of %d configs without data after 30m", provider, missing, len(ms))
	}
	elapsed := last.Sub(start)
	rss.phase("settle")
	atDone, _ := s.writes(b, from)

	// Follow-up reconciles (status after the Secret, token checks) count
	// too: wait until the manager has written nothing for 5 seconds.
	var events []auditEvent
	for prev, quiet := -1, time.Now().Add(2*time.Minute); time.Now().Before(quiet); {
		events, _ = s.writes(b, from)
		if len(events) == prev {
			break
		}
		prev = len(events)
		time.Sleep(5 * time.Second)
	}
	if profiles != "" {
		saveProfile(b, "http://"+pprofAddr+"/debug/pprof/heap", filepath.Join(profiles, provider+"-heap.pprof"))
		// The text form ends with runtime.MemStats: what of the RSS is
		// heap in use, idle or released, stacks and runtime metadata.
		saveProfile(b, "http://"+pprofAddr+"/debug/pprof/heap?debug=1", filepath.Join(profiles, provider+"-heap.txt"))
	}
	reqs := m.requests()
	if reqs == nil {
		reqs = map[string]float64{}
	}
	for k, v := range reqBefore {
		reqs[k] -= v
	}
	peak := m.peakRSSMB(b)
	anon, _ := m.status("RssAnon:")
	file, _ := m.status("RssFile:")
	m.stop(b)
	n := byUser(events)[user]
	if n != len(events) {
		b.Fatalf("audit log has writes of other users: %v", byUser(events))
	}
	b.Logf("%s: %d configs (%d Clusters); owners created in %s, all data %s after the first; peak RSS %.0f MiB (highest sampled per phase: %s; at the end %.0f anonymous, %.0f file-backed); writes at done %d, settled %d: %s; client requests by method: %v",
		provider, len(ms), clusters, created.Round(time.Millisecond), elapsed.Round(time.Millisecond), peak, rss, anon, file, len(atDone), n, breakdown(events), reqs)
	b.ReportMetric(float64(len(ms))/elapsed.Seconds(), "configs/s")
	b.ReportMetric(float64(n)/float64(len(ms)), "writes/config")
	b.ReportMetric(peak, "peak-RSS-MB")
	data, err := collectData(ctx, s.k8s, f.ns)
	if err != nil {
		b.Fatalf("%s: %v", provider, err)
	}
	if len(data) != len(ms)+1 {
		b.Fatalf("%s: %d data Secrets for %d configs", provider, len(data), len(ms)+1)
	}
	return data
}

func saveProfile(tb testing.TB, url, path string) {
	tb.Helper()
	resp, err := (&http.Client{Timeout: time.Minute}).Get(url)
	if err != nil {
		tb.Logf("profile %s: %v", url, err)
		return
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err == nil {
		err = os.WriteFile(path, raw, 0o644)
	}
	if err != nil {
		tb.Logf("profile %s: %v", path, err)
		return
	}
	tb.Log(fmt.Sprintf("profile: %s", path))
}

// rssSampler records the highest VmRSS seen per phase of a run, to tell
// where the peak comes from (start-up and cache sync, or the reconciles).
type rssSampler struct {
	mu    sync.Mutex
	cur   string
	order []string
	max   map[string]float64
}

func sampleRSS(ctx context.Context, p *process) *rssSampler {
	s := &rssSampler{cur: "start", order: []string{"start"}, max: map[string]float64{}}
	go func() {
		for ctx.Err() == nil {
			if v, err := p.status("VmRSS:"); err == nil {
				s.mu.Lock()
				s.max[s.cur] = max(s.max[s.cur], v)
				s.mu.Unlock()
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	return s
}

func (s *rssSampler) phase(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cur = name
	s.order = append(s.order, name)
}

func (s *rssSampler) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var parts []string
	for _, n := range s.order {
		parts = append(parts, fmt.Sprintf("%s %.0f", n, s.max[n]))
	}
	return strings.Join(parts, ", ")
}
