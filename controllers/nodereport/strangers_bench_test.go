package nodereport

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/nodeboot/nodeboot/addons"
	addonsctrl "github.com/nodeboot/nodeboot/controllers/addons"
	"github.com/nodeboot/nodeboot/internal/tlsserve"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// Stranger load: how many, from how many source addresses.
const (
	strangerSources = 100
	legitNodes      = 200
	legitWorkers    = 40
)

// strangers is how many strangers there are: 10,000, or 1,000 with -short
// (`make bench-smoke`), which the child process is run with too.
func strangers() int {
	if testing.Short() {
		return 1000
	}
	return 10000
}

// throttledReader is the manager's API reader as the endpoints share it
// with the reconcilers: client-go's client-side limit (--kube-api-qps 100,
// --kube-api-burst 200) in front of the API server.
type throttledReader struct {
	client.Reader
	limit *rate.Limiter
}

func (r *throttledReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := r.limit.Wait(ctx); err != nil {
		return err
	}
	return r.Reader.Get(ctx, key, obj, opts...)
}

// BenchmarkStrangers: 10,000 strangers (1,000 with -short) from 100
// addresses against the real TLS servers of both node endpoints on
// loopback (half hold connections open mid-handshake, half send forged
// credentials as fast as the server lets them), while 200 nodes, each from its own address, report started,
// fetch two add-on manifests and report succeeded. The strangers run in a
// child process, so the memory figures are the server's. Reports the p99
// latency and success rate of the nodes' requests, and the server's
// resident memory growth at the peak and after the strangers left.
//
//	go test ./controllers/nodereport/ -run '^$' -bench Strangers -benchtime 1x
func BenchmarkStrangers(b *testing.B) {
	raiseFileLimit(b)
	for range b.N {
		runStrangers(b)
	}
}

func runStrangers(b *testing.B) {
	b.Helper()
	b.StopTimer()
	s := runtime.NewScheme()
	_ = corev1.AddToScheme(s)
	_ = bootstrapv1.AddToScheme(s)
	builder := fake.NewClientBuilder().WithScheme(s).WithStatusSubresource(&bootstrapv1.KubeadmConfig{})
	manifests := [][]byte{[]byte("# cni\n" + strings.Repeat("x", 64<<10)), []byte("# dns\n" + strings.Repeat("y", 16<<10))}
	var creds, fetches []*corev1.Secret
	tokens := make([]string, legitNodes)
	for i := range legitNodes {
		cfg := &bootstrapv1.KubeadmConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("c-%d", i), UID: types.UID(fmt.Sprintf("uid-%d", i))}}
		sec, err := NewCredentialSecret(cfg, "c")
		if err != nil {
			b.Fatal(err)
		}
		tokens[i] = string(sec.Data[CredentialKey])
		fetch := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: addonsctrl.FetchSecretName(cfg.Name), OwnerReferences: sec.OwnerReferences},
			Type:       addonsctrl.FetchSecretType,
			Data:       map[string][]byte{addonsctrl.FetchTokenKey: sec.Data[CredentialKey]},
		}
		for _, m := range manifests {
			fetch.Data[addons.Digest(m)] = m
		}
		builder = builder.WithObjects(cfg, sec, fetch)
		creds, fetches = append(creds, sec), append(fetches, fetch)
	}
	c := builder.Build()
	api := &throttledReader{Reader: c, limit: rate.NewLimiter(100, 200)}
	reportIdx, fetchIdx := NewCredentialIndex(c), addonsctrl.NewFetchIndex(c)
	for i := range creds {
		reportIdx.Add(creds[i])
		fetchIdx.Add(fetches[i])
	}
	reportIdx.MarkSynced()
	fetchIdx.MarkSynced()
	reportH := &Handler{Credentials: reportIdx, Reader: api, Client: c, Rate: 100, Burst: 100}
	fetchH := &addonsctrl.FetchHandler{Credentials: fetchIdx, Reader: api}

	dir := b.TempDir()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(testenv.ServingCertificate(b, dir))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	serve := func(name string, h http.Handler, max int64) string {
		ready := make(chan net.Addr, 1)
		go func() {
			_ = (&tlsserve.Server{Name: name, Addr: "127.0.0.1:0", CertDir: dir, Handler: h, MaxRequestBytes: max, Ready: ready}).Start(ctx)
		}()
		return (<-ready).String()
	}
	reportAddr, fetchAddr := serve("bootstrap report", reportH, MaxBody+1), serve("add-on fetch", fetchH, 4<<10)
	time.Sleep(200 * time.Millisecond)
	base := rssBytes()

	child := exec.Command(os.Args[0], "-test.run=^TestStrangerLoad$", "-test.count=1", "-test.short="+strconv.FormatBool(testing.Short()))
	child.Env = append(os.Environ(), "NODEBOOT_STRANGERS="+reportAddr+","+fetchAddr)
	child.Stdout, child.Stderr = os.Stdout, os.Stderr
	stdin, err := child.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := child.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	var peak atomic.Int64
	sampling := make(chan struct{})
	go func() {
		for {
			select {
			case <-sampling:
				return
			case <-time.After(200 * time.Millisecond):
				if r := rssBytes(); r > peak.Load() {
					peak.Store(r)
				}
			}
		}
	}()
	// Let the strangers open their connections first (a tenth of them
	// with -short).
	if testing.Short() {
		time.Sleep(2 * time.Second)
	} else {
		time.Sleep(8 * time.Second)
	}

	b.StartTimer()
	var mu sync.Mutex
	var lat []time.Duration
	ok, total := 0, 0
	do := func(source int, req *http.Request) {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 2+byte(source/250), 1+byte(source%250))}, Timeout: 30 * time.Second}
		cl := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true,
			TLSClientConfig: &tls.Config{RootCAs: pool}}}
		t0 := time.Now()
		resp, err := cl.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
		mu.Lock()
		defer mu.Unlock()
		lat = append(lat, time.Since(t0))
		total++
		if err == nil && resp.StatusCode < 300 {
			ok++
		}
	}
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range legitWorkers {
		wg.Go(func() {
			for i := range jobs {
				cfg := fmt.Sprintf("ns/c-%d", i)
				for _, step := range []string{`{"phase":"started"}`, "fetch0", "fetch1", `{"phase":"succeeded"}`} {
					var req *http.Request
					if m, ok := strings.CutPrefix(step, "fetch"); ok {
						n, _ := strconv.Atoi(m)
						req, _ = http.NewRequest(http.MethodGet, "https://"+fetchAddr+addonsctrl.FetchPath+cfg+"/"+addons.Digest(manifests[n]), nil)
					} else {
						req, _ = http.NewRequest(http.MethodPost, "https://"+reportAddr+Path+cfg, strings.NewReader(step))
					}
					req.Header.Set("Authorization", "Bearer "+tokens[i])
					do(i, req)
				}
			}
		})
	}
	for i := range legitNodes {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	b.StopTimer()
	_ = stdin.Close()
	_ = child.Process.Kill()
	_ = child.Wait()
	time.Sleep(12 * time.Second) // idle and handshake timeouts pass
	after := rssBytes()
	close(sampling)

	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)*99/100].Milliseconds()), "p99-ms")
	b.ReportMetric(100*float64(ok)/float64(total), "success-%")
	b.ReportMetric(float64(max(peak.Load(), base)-base)/(1<<20), "peak-growth-MiB")
	b.ReportMetric(float64(after-base)/(1<<20), "after-growth-MiB")
}

// TestStrangerLoad is BenchmarkStrangers' child process: the strangers.
// Without NODEBOOT_STRANGERS it is skipped.
func TestStrangerLoad(t *testing.T) {
	addrs := strings.Split(os.Getenv("NODEBOOT_STRANGERS"), ",")
	if len(addrs) != 2 {
		t.Skip("run by BenchmarkStrangers")
	}
	raiseFileLimit(t)
	forged := "Bearer " + strings.Repeat("f", 43)
	for i := range strangers() {
		src := &net.TCPAddr{IP: net.IPv4(127, 0, 1, 1+byte(i%strangerSources))}
		addr := addrs[i/2%2]
		if i%2 == 0 {
			go slowloris(src, addr)
			continue
		}
		go func() {
			d := &net.Dialer{LocalAddr: src, Timeout: 10 * time.Second}
			cl := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, MaxConnsPerHost: 1,
				TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // a stranger does not care
			target := "https://" + addr + Path + fmt.Sprintf("ns/c-%d", i%legitNodes)
			if addr == addrs[1] {
				target = "https://" + addr + addonsctrl.FetchPath + fmt.Sprintf("ns/c-%d/", i%legitNodes) + strings.Repeat("0", 64)
			}
			for {
				req, _ := http.NewRequest(http.MethodPost, target, strings.NewReader(`{"phase":"failed","step":"kubeadm","exitCode":1}`))
				if addr == addrs[1] {
					req, _ = http.NewRequest(http.MethodGet, target, nil)
				}
				req.Header.Set("Authorization", forged)
				resp, err := cl.Do(req)
				if err != nil {
					time.Sleep(100 * time.Millisecond)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			}
		}()
	}
	// Until the benchmark closes stdin.
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
}

// slowloris holds a connection open mid-handshake, again and again.
func slowloris(src *net.TCPAddr, addr string) {
	d := &net.Dialer{LocalAddr: src, Timeout: 10 * time.Second}
	for {
		c, err := d.Dial("tcp", addr)
		if err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		_, _ = c.Write([]byte{0x16, 0x03})
		_, _ = io.Copy(io.Discard, c)
		_ = c.Close()
		time.Sleep(100 * time.Millisecond)
	}
}

func raiseFileLimit(t testing.TB) {
	t.Helper()
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		t.Fatal(err)
	}
	if need := uint64(strangers() + 2000); l.Max < need {
		t.Skipf("RLIMIT_NOFILE hard limit %d is below %d", l.Max, need)
	}
	l.Cur = l.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		t.Fatal(err)
	}
}

// rssBytes is the process's resident memory.
func rssBytes() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
