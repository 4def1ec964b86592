// Package differential renders thousands of generated KubeadmConfigs with
// nodeboot and with Cluster API v1.14.2's own kubeadm bootstrap reconciler (a
// test oracle, imported from the cluster-api module) and requires identical
// bytes, for cloud-config and for legacy Ignition. The generators draw from
// what CABPK accepts (its CRD as the API server checks it, and its webhook):
// Windows and relative paths, every YAML-special character in every string
// CABPK writes, nil and false pointers, joins with and without a preset
// bootstrap token. The vectors prove a few hand-picked cases; this proves the
// spread. Every corrected cloud-config also goes through cloud-init's schema.
package differential

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clienttesting "k8s.io/client-go/testing"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"k8s.io/component-base/featuregate"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/locking"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/reconcilers/kubeadmconfig"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/webhooks/admission"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	"sigs.k8s.io/cluster-api/feature"
	"sigs.k8s.io/cluster-api/util/secret"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/nodeboot/nodeboot/bootstrap"
	"github.com/nodeboot/nodeboot/provisioning"
	_ "github.com/nodeboot/nodeboot/provisioning/cloudinit"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/legacy"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/v3"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// Scenarios is how many accepted KubeadmConfigs each differential compares.
const Scenarios = 1000

var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1.AddToScheme, bootstrapv1.AddToScheme, apiextensionsv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}()

var codecs = serializer.NewCodecFactory(scheme)

// enableGates turns on what the generated configs need: MachinePool owners,
// and Ignition (so the webhook accepts format: ignition).
func enableGates(t *testing.T) {
	t.Helper()
	require.NoError(t, feature.Gates.(featuregate.MutableFeatureGate).Set("MachinePool=true,"+string(feature.KubeadmBootstrapFormatIgnition)+"=true"))
}

// exclusions counts generated configs CABPK's side refuses, by reason.
type exclusions struct {
	mu     sync.Mutex
	byWhy  map[string]int
	total  int
	sample map[string]string
}

// indexRE strips list indices and map keys from field paths, so reasons
// group by field.
var indexRE = regexp.MustCompile(`\[[^\]]*\]`)

func (e *exclusions) add(name, source string, errs field.ErrorList) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.byWhy == nil {
		e.byWhy, e.sample = map[string]int{}, map[string]string{}
	}
	e.total++
	seen := map[string]bool{}
	for _, err := range errs {
		why := fmt.Sprintf("%s: %s %s", source, indexRE.ReplaceAllString(err.Field, "[]"), err.Type)
		if !seen[why] {
			seen[why] = true
			e.byWhy[why]++
			if _, ok := e.sample[why]; !ok {
				e.sample[why] = name
			}
		}
	}
}

func (e *exclusions) log(t *testing.T, generated int) {
	t.Helper()
	var whys []string
	for w := range e.byWhy {
		whys = append(whys, w)
	}
	sort.Strings(whys)
	var b strings.Builder
	fmt.Fprintf(&b, "%d generated, %d excluded (refused by CABPK's CRD or webhook), %d compared", generated, e.total, generated-e.total)
	for _, w := range whys {
		fmt.Fprintf(&b, "\n  %4d  %s (first: %s)", e.byWhy[w], w, e.sample[w])
	}
	t.Log(b.String())
}

// draw generates scenarios until n pass CABPK's CRD and webhook, counting
// the ones that do not.
func draw(t *testing.T, n int, seed uint64, format bootstrapv1.Format, fill func(*gen, *scenario)) ([]*scenario, *exclusions) {
	t.Helper()
	v, err := loadCRDValidator()
	require.NoError(t, err)
	g := &gen{r: rand.New(rand.NewPCG(seed, 1))}
	ex := &exclusions{}
	var out []*scenario
	for i := 0; len(out) < n; i++ {
		s := g.scenario(i, format)
		fill(g, s)
		if errs := v.validate(s.config); len(errs) > 0 {
			ex.add(s.name, "crd", errs)
			continue
		}
		if errs := admission.Validate(&s.config.Spec, false, field.NewPath("spec")); len(errs) > 0 {
			ex.add(s.name, "webhook", errs)
			continue
		}
		out = append(out, s)
	}
	ex.log(t, n+ex.total)
	return out, ex
}

func objects(t testing.TB, s *scenario, certs secret.Certificates) []client.Object {
	t.Helper()
	key := client.ObjectKey{Namespace: s.cluster.Namespace, Name: s.cluster.Name}
	objs := []client.Object{s.cluster.DeepCopy(), s.config.DeepCopy()}
	if s.machine != nil {
		objs = append(objs, s.machine.DeepCopy())
	}
	if s.machinePool != nil {
		objs = append(objs, s.machinePool.DeepCopy())
	}
	for _, c := range certs {
		sec := c.AsSecret(key, metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: "none", UID: "1"})
		sec.OwnerReferences = nil
		objs = append(objs, sec)
	}
	if s.externalEtcd {
		for _, name := range []string{secret.Name(key.Name, secret.EtcdCA), secret.Name(key.Name, secret.APIServerEtcdClient)} {
			found := false
			for _, o := range objs {
				if o.GetName() == name {
					o.(*corev1.Secret).Data = externalCert(name)
					found = true
				}
			}
			if !found {
				objs = append(objs, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: key.Namespace},
					Data: externalCert(name)})
			}
		}
	}
	for _, sec := range s.secrets {
		objs = append(objs, sec.DeepCopy())
	}
	if s.kcpVersion != "" {
		kcp := &unstructured.Unstructured{}
		kcp.SetAPIVersion("controlplane.cluster.x-k8s.io/v1beta2")
		kcp.SetKind("KubeadmControlPlane")
		kcp.SetNamespace(key.Namespace)
		kcp.SetName(s.cluster.Spec.ControlPlaneRef.Name)
		require.NoError(t, unstructured.SetNestedField(kcp.Object, s.kcpVersion, "spec", "version"))
		crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{
			Name:   "kubeadmcontrolplanes.controlplane.cluster.x-k8s.io",
			Labels: map[string]string{"cluster.x-k8s.io/v1beta2": "v1beta2"}}}
		objs = append(objs, kcp, crd)
	}
	return objs
}

// cabpkResult is what CABPK's reconciler made of a scenario.
type cabpkResult struct {
	data   []byte
	format string
	// token is the bootstrap token the KubeadmConfig carries afterwards: the
	// preset one, or the one CABPK created in the workload cluster and wrote
	// back into the spec.
	token string
	err   error
	// refusal places err on spec fields (cabpkMessages).
	refusal refusal
}

// cabpk runs Cluster API's own reconciler on the objects, with a separate
// fake workload cluster behind its ClusterCache for the bootstrap tokens it
// creates, and returns the bootstrap Secret.
func cabpk(t testing.TB, s *scenario, objs []client.Object) cabpkResult {
	t.Helper()
	// A plain object tracker: the default field-managed one rebuilds a REST
	// mapper of the whole scheme on every write, which is most of the time a
	// reconcile takes. CABPK patches with merge patches, which both apply alike.
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjectTracker(clienttesting.NewObjectTracker(scheme, codecs.UniversalDecoder())).
		WithObjects(objs...).WithStatusSubresource(&bootstrapv1.KubeadmConfig{}, &clusterv1.Cluster{}).Build()
	workload := fake.NewClientBuilder().WithScheme(scheme).WithObjectTracker(clienttesting.NewObjectTracker(scheme, codecs.UniversalDecoder())).Build()
	r := &kubeadmconfig.Reconciler{
		Client: c, SecretCachingClient: c, APIReader: c,
		ClusterCache:    clustercache.NewFakeClusterCache(workload, client.ObjectKeyFromObject(s.cluster)),
		KubeadmInitLock: locking.NewControlPlaneInitMutex(c),
		TokenTTL:        15 * time.Minute,
	}
	ctx := ctrl.LoggerInto(context.Background(), ctrl.Log.WithName("cabpk"))
	key := client.ObjectKeyFromObject(s.config)
	res := cabpkResult{}
	out := &corev1.Secret{}
	// The first pass only records the Paused condition and requeues.
	for pass := 0; ; pass++ {
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil {
			res.err = err
			break
		}
		err := c.Get(ctx, key, out)
		if err == nil {
			res.data, res.format = out.Data["value"], string(out.Data["format"])
			break
		}
		if pass == 2 {
			res.err = fmt.Errorf("no bootstrap secret after %d passes: %w", pass+1, err)
			break
		}
	}
	if res.err != nil {
		res.refusal = cabpkRefusal(s, res.err)
	}
	after := &bootstrapv1.KubeadmConfig{}
	require.NoError(t, c.Get(ctx, key, after))
	res.token = after.Spec.JoinConfiguration.Discovery.BootstrapToken.Token
	if res.token != "" && res.token != s.config.Spec.JoinConfiguration.Discovery.BootstrapToken.Token {
		// CABPK created it: its Secret must be in the workload cluster.
		tokens := &corev1.SecretList{}
		require.NoError(t, workload.List(ctx, tokens, client.InNamespace(metav1.NamespaceSystem)))
		require.Len(t, tokens.Items, 1, "CABPK wrote a token into the spec but not one token Secret into the workload cluster")
		require.Equal(t, bootstrapapi.SecretTypeBootstrapToken, tokens.Items[0].Type)
		require.Equal(t, res.token[:6], string(tokens.Items[0].Data[bootstrapapi.BootstrapTokenIDKey]))
	}
	return res
}

// nodeboot builds and renders the scenario as nodeboot's controller does: a
// join by bootstrap token without one gets the token first (here: the one
// CABPK created, so the bytes can match), then the build.
func nodeboot(s *scenario, objs []client.Object, token string, annotations map[string]string) (*bootstrap.Result, []byte, error) {
	secrets := bootstrap.SecretMap{}
	for _, o := range objs {
		if sec, ok := o.(*corev1.Secret); ok {
			secrets[sec.Namespace+"/"+sec.Name] = sec.Data
		}
	}
	cfg := s.config.DeepCopy()
	if bt := &cfg.Spec.JoinConfiguration.Discovery.BootstrapToken; bt.Token == "" && token != "" && !cfg.Spec.JoinConfiguration.Discovery.File.IsDefined() {
		bt.Token = token
	}
	for k, v := range annotations {
		if cfg.Annotations == nil {
			cfg.Annotations = map[string]string{}
		}
		cfg.Annotations[k] = v
	}
	in := bootstrap.Input{Config: cfg, Cluster: s.cluster, Machine: s.machine, MachinePool: s.machinePool,
		Secrets: secrets, ControlPlaneVersion: s.kcpVersion}
	res, err := bootstrap.Build(context.Background(), in)
	if err != nil {
		return nil, nil, err
	}
	out, err := res.Render()
	if err != nil {
		return res, nil, err
	}
	if out.Format != string(bootstrapFormat(s)) {
		return res, nil, fmt.Errorf("nodeboot rendered format %q", out.Format)
	}
	return res, out.Data, nil
}

func bootstrapFormat(s *scenario) bootstrapv1.Format {
	if s.config.Spec.Format == "" {
		return bootstrapv1.CloudConfig
	}
	return s.config.Spec.Format
}

// judge compares the two sides (classify): "" when the case passes (the
// same bytes, or refused by both at the same field), else what went wrong.
func judge(want cabpkResult, got []byte, gotErr error, format bootstrapv1.Format) string {
	_, d := classify(want, got, gotErr, format)
	return d
}

// compare returns "" when want and got are identical, otherwise the first
// differing line of each (quoted, so invisible characters show) and where.
func compare(want, got []byte) string {
	if bytes.Equal(want, got) {
		return ""
	}
	wl, gl := bytes.SplitAfter(want, []byte("\n")), bytes.SplitAfter(got, []byte("\n"))
	for i := 0; ; i++ {
		var w, g []byte
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if !bytes.Equal(w, g) || i >= len(wl) && i >= len(gl) {
			col := 0
			for col < len(w) && col < len(g) && w[col] == g[col] {
				col++
			}
			// Long lines (Ignition is one line of JSON) are cut to the
			// bytes around the difference.
			if len(w) > 200 || len(g) > 200 {
				w, g = window(w, col), window(g, col)
			}
			return fmt.Sprintf("bytes differ (CABPK %d bytes, nodeboot %d) at line %d, byte %d of the line:\n  cabpk:    %q\n  nodeboot: %q",
				len(want), len(got), i+1, col+1, w, g)
		}
	}
}

// window is b[at-80:at+80], clipped, with "…" where it was cut.
func window(b []byte, at int) []byte {
	from, to := max(at-80, 0), min(at+80, len(b))
	out := append([]byte{}, b[from:to]...)
	if from > 0 {
		out = append([]byte("…"), out...)
	}
	if to < len(b) {
		out = append(out, "…"...)
	}
	return out
}

// failures collects the cases that failed, for one summary by class at the
// end (values and numbers masked, so a class names what kind of field
// differs, with its first case).
type failures struct {
	mu      sync.Mutex
	byClass map[string][]string
}

var (
	quotedRE = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	numberRE = regexp.MustCompile(`[0-9]+`)
)

func (f *failures) add(name, what string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.byClass == nil {
		f.byClass = map[string][]string{}
	}
	lines := strings.Split(what, "\n")
	class := lines[0]
	if len(lines) > 1 && !strings.HasPrefix(class, "bytes differ") {
		class += " " + strings.TrimSpace(lines[1])
	}
	class = strings.ReplaceAll(class, "KubeadmConfig default/"+name+": ", "")
	class = numberRE.ReplaceAllString(quotedRE.ReplaceAllString(class, `"…"`), "N")
	if len(class) > 220 {
		class = class[:220] + "…"
	}
	f.byClass[class] = append(f.byClass[class], name)
}

func (f *failures) log(t *testing.T, what string, compared int) {
	t.Helper()
	var classes []string
	n := 0
	for c, names := range f.byClass {
		sort.Strings(names)
		n += len(names)
		classes = append(classes, fmt.Sprintf("%4d  %s (first: %s)", len(names), c, names[0]))
	}
	sort.Strings(classes)
	msg := fmt.Sprintf("%s: %d compared, %d failed", what, compared, n)
	if len(classes) > 0 {
		msg += "\n  " + strings.Join(classes, "\n  ")
	}
	t.Log(msg)
}

// doc is a rendered document for cloud-init's schema.
type doc struct {
	name string
	data []byte
	// warned are the paths of the warnings corrections left (hazards they
	// cannot fix).
	warned []string
}

func TestCloudConfigMatchesCABPK(t *testing.T) {
	t.Parallel()
	enableGates(t)
	certs := secret.NewCertificatesForInitialControlPlane(nil)
	require.NoError(t, certs.Generate())
	scenarios, _ := draw(t, Scenarios, 20261130, bootstrapv1.CloudConfig, (*gen).spec)
	seen := map[role]int{}
	tokens := 0
	for _, s := range scenarios {
		seen[s.role]++
		if s.role != roleInit && !s.config.Spec.JoinConfiguration.Discovery.File.IsDefined() && s.config.Spec.JoinConfiguration.Discovery.BootstrapToken.Token == "" {
			tokens++
		}
	}
	for r := roleInit; r <= roleMachinePool; r++ {
		require.GreaterOrEqual(t, seen[r], Scenarios/5, "too few %s scenarios", r)
	}
	require.GreaterOrEqual(t, tokens, Scenarios/10, "too few joins without a preset token")

	var mu sync.Mutex
	var corrected []doc
	fails := &failures{}
	counts := &tally{}
	cabpkErrors := map[string]int{}
	t.Run("cases", func(t *testing.T) {
		for i, s := range scenarios {
			t.Run(s.name, func(t *testing.T) {
				t.Parallel()
				objs := objects(t, s, certs)
				want := cabpk(t, s, objs)
				if want.err != nil {
					mu.Lock()
					cabpkErrors[errorClass(want.err)]++
					mu.Unlock()
				}
				_, got, gotErr := nodeboot(s, objs, want.token, nil)
				o, d := classify(want, got, gotErr, bootstrapv1.CloudConfig)
				counts.add(s.name, o, want.err == nil)
				if d != "" {
					fails.add(s.name, d)
					t.Error(d)
				}
				if gotErr != nil {
					return
				}
				// The same config with corrections on: by the annotation, or
				// by the option on the built Result.
				var out *provisioning.Output
				var err error
				if i%2 == 0 {
					var res *bootstrap.Result
					if res, _, err = nodeboot(s, objs, want.token, map[string]string{bootstrap.AnnotationCloudInitCorrections: "true"}); err == nil {
						out, err = res.Render()
					}
				} else {
					var res *bootstrap.Result
					res, _, err = nodeboot(s, objs, want.token, nil)
					if err == nil {
						res.Options.Corrections = true
						out, err = res.Render()
					}
				}
				if err != nil {
					// Corrections refuse only what no YAML can carry (invalid
					// UTF-8 from a Secret); CABPK's bytes then carry a warning.
					res, _, _ := nodeboot(s, objs, want.token, nil)
					if plain, perr := res.Render(); perr != nil || len(plain.Warnings) == 0 {
						fails.add(s.name+"/corrected", "corrected render fails without a warning on the default output: "+err.Error())
						t.Errorf("with corrections nodeboot errors: %v", err)
					}
					return
				}
				mu.Lock()
				var warned []string
				for _, w := range out.Warnings {
					warned = append(warned, w.Path.String())
				}
				corrected = append(corrected, doc{s.name, out.Data, warned})
				mu.Unlock()
			})
		}
	})
	fails.log(t, "cloud-config", len(scenarios))
	logClasses(t, "CABPK's reconciler errored (nodeboot must too, at the same field)", cabpkErrors)
	counts.log(t, "cloud-config")
	counts.require(t, "cloud-config", 90)

	t.Run("corrected-schema", func(t *testing.T) {
		sort.Slice(corrected, func(i, j int) bool { return corrected[i].name < corrected[j].name })
		docs := make([][]byte, len(corrected))
		for i, d := range corrected {
			docs[i] = d.data
		}
		start := time.Now()
		results := testenv.CloudInitLoad(t, docs)
		t.Logf("cloud-init read %d corrected documents in %v", len(docs), time.Since(start).Round(time.Millisecond))
		invalid := &failures{}
		unfixable := 0
		for i, r := range results {
			if len(corrected[i].warned) > 0 {
				unfixable++
			}
			// What corrections cannot fix stays a warning, and cloud-init's
			// schema may reject exactly that (see the README's table):
			// every key it rejects must be one nodeboot still warns about.
			if !r.Valid && len(r.SchemaPaths) > 0 && unwarned(r.SchemaPaths, corrected[i].warned) == "" {
				continue
			}
			if !r.Valid {
				invalid.add(corrected[i].name, r.Error)
				t.Errorf("%s: corrected cloud-config fails cloud-init: %s", corrected[i].name, firstLine(r.Error))
			}
		}
		invalid.log(t, "corrected documents through cloud-init", len(results))
		t.Logf("%d corrected documents keep a warning corrections cannot fix; cloud-init's schema may reject only the keys those warnings name", unfixable)
	})
}

// logClasses logs counts by class.
func logClasses(t *testing.T, what string, byClass map[string]int) {
	t.Helper()
	var classes []string
	n := 0
	for c, k := range byClass {
		n += k
		classes = append(classes, fmt.Sprintf("%4d  %s", k, c))
	}
	sort.Strings(classes)
	t.Logf("%s: %d\n  %s", what, n, strings.Join(classes, "\n  "))
}

func firstLine(s string) string {
	if len(s) > 600 {
		s = s[:600] + "..."
	}
	return s
}

// externalCert is what an operator stores for external etcd: the etcd CA has
// no key; the API server's client certificate has one.
func externalCert(name string) map[string][]byte {
	d := map[string][]byte{"tls.crt": []byte("external-crt-" + name + "\n")}
	if !bytes.Contains([]byte(name), []byte("-etcd")) || bytes.Contains([]byte(name), []byte("client")) {
		d["tls.key"] = []byte("external-key-" + name + "\n")
	}
	return d
}

// schemaArea maps the first keys of a cloud-init schema path to the spec
// field nodeboot names in warnings about it.
var schemaArea = []struct{ cloud, spec string }{
	{"mounts.", "spec.mounts["},
	{"fs_setup.", "spec.diskSetup.filesystems["},
	{"disk_setup", "spec.diskSetup.partitions"},
	{"ntp.servers", "spec.ntp.servers"},
	{"users.", "spec.users["},
	{"write_files.", "spec.files["},
}

// unwarned returns the first schema path no warning covers, or "". A path
// such as "mounts.1" is covered by a warning under spec.mounts[1].
func unwarned(schemaPaths, warned []string) string {
	for _, p := range schemaPaths {
		covered := false
		for _, a := range schemaArea {
			rest, ok := strings.CutPrefix(p, a.cloud)
			if !ok {
				continue
			}
			want := a.spec
			if strings.HasSuffix(a.cloud, ".") {
				idx, _, _ := strings.Cut(rest, ".")
				want += idx + "]"
			}
			for _, w := range warned {
				if strings.HasPrefix(w, want) {
					covered = true
				}
			}
		}
		if !covered {
			return p
		}
	}
	return ""
}
