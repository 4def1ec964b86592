package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	addonsv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
	"github.com/nodeboot/nodeboot/bootstrap"
	addonsctrl "github.com/nodeboot/nodeboot/controllers/addons"
	"github.com/nodeboot/nodeboot/controllers/bootstrapdata"
	nodereportctrl "github.com/nodeboot/nodeboot/controllers/nodereport"
	"github.com/nodeboot/nodeboot/internal/cabpkversion"
	"github.com/nodeboot/nodeboot/internal/tlsserve"
	"github.com/nodeboot/nodeboot/provisioning"
)

// Bounds of one verify run: objects held per kind, and parallel renders.
const (
	verifyMaxObjects = 200000
	verifyMaxWorkers = 64
)

type verifyFlags struct {
	kubeconfig, context, namespace, output string
	allNamespaces, unified, strict         bool
	workers                                int
	timeout                                time.Duration
	addons                                 addonsctrl.ExtensionOptions
	// The manager's node endpoints, which the data of some configs embeds.
	reportURL, reportCAFile, fetchCAFile string
	reportCA                             []byte
	// cabpkVersion demands the data of one CABPK version; versions are
	// those a Secret may match, in the order they are tried.
	cabpkVersion string
	versions     []cabpkversion.Version
}

func (f *verifyFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig of the management cluster (default: $KUBECONFIG or ~/.kube/config)")
	fs.StringVar(&f.context, "context", "", "kubeconfig context to use (default: the current context)")
	fs.StringVar(&f.namespace, "n", "", "namespace to verify (default: the context's namespace)")
	fs.StringVar(&f.namespace, "namespace", "", "same as -n")
	fs.BoolVar(&f.allNamespaces, "all-namespaces", false, "verify the KubeadmConfigs of every namespace")
	fs.BoolVar(&f.allNamespaces, "A", false, "same as --all-namespaces")
	fs.StringVar(&f.output, "o", "table", "output: table (one line per KubeadmConfig) or json")
	fs.BoolVar(&f.unified, "diff", false, "print a unified diff of the decoded data of every config that differs, with private keys, tokens and passwords redacted")
	fs.BoolVar(&f.strict, "strict", false, "render as a manager running with --strict does")
	fs.IntVar(&f.workers, "workers", runtime.GOMAXPROCS(0), "configs rendered in parallel (1 to 64)")
	fs.DurationVar(&f.timeout, "timeout", 10*time.Minute, "give up after this long")
	fs.IntVar(&f.addons.MaxBytes, "addons-max-bytes", 16384, "the manager's --addons-max-bytes")
	fs.BoolVar(&f.addons.Compress, "addons-compress", true, "the manager's --addons-compress")
	fs.StringVar(&f.addons.Fetch.URL, "addons-fetch-url", "", "the manager's --addons-fetch-url")
	fs.StringVar(&f.fetchCAFile, "addons-fetch-ca-file", "", "the CA bundle the manager gives nodes for --addons-fetch-url (its --addons-fetch-ca-file, or ca.crt of its certificate directory)")
	fs.StringVar(&f.reportURL, "bootstrap-report-url", "", "the manager's --bootstrap-report-url: configs whose data carries a reporter are rebuilt with their stored credential")
	fs.StringVar(&f.cabpkVersion, "cabpk-version", "", "accept only the data of this CABPK version ("+cabpkversion.Names()+"; v1.14 is v1.14.1 and later); by default data of any of them is identical")
	fs.StringVar(&f.reportCAFile, "bootstrap-report-ca-file", "", "the CA bundle the manager gives nodes for --bootstrap-report-url (its --bootstrap-report-ca-file, or ca.crt of its certificate directory)")
}

// maxCABundle bounds a CA bundle file: a few hundred certificates.
const maxCABundle = 1 << 20

// loadEndpoints reads and checks the node endpoint flags as the manager
// does; a usage error is reported to stderr and returns false.
func (f *verifyFlags) loadEndpoints(stderr io.Writer) bool {
	type endpoint struct {
		url, caFile, what, urlFlag, caFlag string
		ca                                 *[]byte
	}
	for _, e := range []endpoint{
		{f.reportURL, f.reportCAFile, "bootstrap report", "--bootstrap-report-url", "--bootstrap-report-ca-file", &f.reportCA},
		{f.addons.Fetch.URL, f.fetchCAFile, "add-on fetch", "--addons-fetch-url", "--addons-fetch-ca-file", &f.addons.Fetch.CABundle},
	} {
		if e.url == "" {
			if e.caFile != "" {
				fmt.Fprintf(stderr, "nodeboot verify: %s needs %s\n", e.caFlag, e.urlFlag)
				return false
			}
			continue
		}
		if err := tlsserve.CheckNodeURL(e.url, e.what); err != nil {
			fmt.Fprintf(stderr, "nodeboot verify: %s: %v\n", e.urlFlag, err)
			return false
		}
		if e.caFile == "" {
			continue
		}
		ca, err := readBounded(e.caFile, maxCABundle, "1 MiB")
		if err == nil {
			err = tlsserve.CheckCABundle(ca, e.what)
		}
		if err != nil {
			fmt.Fprintf(stderr, "nodeboot verify: %s: %v\n", e.caFlag, err)
			return false
		}
		*e.ca = ca
	}
	return true
}

// verifyResult is the class of a config's outcome.
type verifyResult string

const (
	resultIdentical    verifyResult = "identical"
	resultDiffers      verifyResult = "differs"
	resultCannotRender verifyResult = "cannot render"
	resultSkipped      verifyResult = "skipped"
	resultError        verifyResult = "error"
)

// verifyRow is the outcome for one KubeadmConfig.
type verifyRow struct {
	Namespace string       `json:"namespace"`
	Name      string       `json:"name"`
	Result    verifyResult `json:"result"`
	// CABPKVersions are the CABPK versions whose data an identical Secret
	// holds, when that is not (only) what nodeboot renders or a version
	// was demanded: data of v1.13 and v1.14.0 is the same.
	CABPKVersions []string `json:"cabpkVersions,omitempty"`
	// Details are the lines after the result: the first differing line, the
	// field-path errors, why it was skipped.
	Details  []string `json:"details,omitempty"`
	Diff     string   `json:"diff,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

type verifySummary struct {
	Identical    int `json:"identical"`
	Compared     int `json:"compared"`
	Differs      int `json:"differs"`
	CannotRender int `json:"cannotRender"`
	Errors       int `json:"errors"`
	Skipped      int `json:"skipped"`
	// CABPKVersions counts the identical rows that name CABPK versions,
	// by their label ("v1.13 or v1.14.0").
	CABPKVersions map[string]int `json:"cabpkVersions,omitempty"`
}

func (s verifySummary) ok() bool { return s.Differs+s.CannotRender+s.Errors == 0 }

func (s verifySummary) String() string {
	out := fmt.Sprintf("identical: %d/%d", s.Identical, s.Compared)
	if len(s.CABPKVersions) > 0 {
		labels := make([]string, 0, len(s.CABPKVersions))
		for l := range s.CABPKVersions {
			labels = append(labels, l)
		}
		sort.Strings(labels)
		for i, l := range labels {
			labels[i] = fmt.Sprintf("CABPK %s: %d", l, s.CABPKVersions[l])
		}
		out += " (" + strings.Join(labels, ", ") + ")"
	}
	if s.Skipped > 0 {
		out += fmt.Sprintf(", skipped: %d", s.Skipped)
	}
	return out
}

// verify rebuilds, from a live management cluster, every KubeadmConfig that
// has bootstrap data, with the controller's own build code, and compares it
// with the stored Secret. It only reads: list calls, one per kind.
func verify(args []string, stdout, stderr io.Writer) int {
	var f verifyFlags
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f.add(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "nodeboot verify: unexpected argument %q\n", fs.Arg(0))
		return 2
	case f.output != "table" && f.output != "json":
		fmt.Fprintf(stderr, "nodeboot verify: -o must be table or json\n")
		return 2
	case f.allNamespaces && f.namespace != "":
		fmt.Fprintf(stderr, "nodeboot verify: -n and --all-namespaces exclude each other\n")
		return 2
	case f.workers < 1 || f.workers > verifyMaxWorkers:
		fmt.Fprintf(stderr, "nodeboot verify: --workers must be between 1 and %d\n", verifyMaxWorkers)
		return 2
	case f.addons.MaxBytes < 0:
		fmt.Fprintf(stderr, "nodeboot verify: --addons-max-bytes must not be negative\n")
		return 2
	case f.timeout <= 0:
		fmt.Fprintf(stderr, "nodeboot verify: --timeout must be positive\n")
		return 2
	case !f.loadEndpoints(stderr):
		return 2
	}
	f.versions = cabpkversion.All
	if f.cabpkVersion != "" {
		v, err := cabpkversion.Lookup(f.cabpkVersion)
		if err != nil {
			fmt.Fprintf(stderr, "nodeboot verify: --cabpk-version: %v\n", err)
			return 2
		}
		f.versions = []cabpkversion.Version{v}
	}
	cfg, ns, secrets, err := restConfig(f)
	// Nothing verify prints may carry a credential of the kubeconfig: the
	// messages are built not to, and every byte written goes through this
	// replacement as well, for messages of libraries that echo a URL.
	stdout, stderr = redactingWriter(stdout, secrets), redactingWriter(stderr, secrets)
	// client-go and controller-runtime log through klog: to the same
	// replacement, not straight to the process's standard error.
	klog.LogToStderr(false)
	klog.SetOutput(stderr)
	ctrllog.SetLogger(klog.NewKlogr())
	if err != nil {
		fmt.Fprintf(stderr, "nodeboot verify: kubeconfig: %v\n", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), f.timeout)
	defer cancel()
	rows, sum, err := verifyCluster(ctx, cfg, ns, f, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "nodeboot verify: %s\n", describeAccessError(err, redactURL(cfg.Host)))
		return 1
	}
	if f.output == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			Items   []verifyRow   `json:"items"`
			Summary verifySummary `json:"summary"`
		}{rows, sum}); err != nil {
			fmt.Fprintf(stderr, "nodeboot verify: %v\n", err)
			return 1
		}
	} else {
		for _, r := range rows {
			ref := "KubeadmConfig " + r.Namespace + "/" + r.Name
			for _, w := range r.Warnings {
				fmt.Fprintln(stderr, w)
			}
			if len(r.Details) == 0 {
				fmt.Fprintf(stdout, "%s: %s\n", ref, r.label())
			}
			for _, d := range r.Details {
				fmt.Fprintf(stdout, "%s: %s\n", ref, d)
			}
			fmt.Fprint(stdout, r.Diff)
		}
		fmt.Fprintln(stdout, sum)
	}
	if !sum.ok() {
		return 1
	}
	return 0
}

// restConfig loads the kubeconfig as kubectl does; ns is the namespace to
// verify, "" for all; secrets are the kubeconfig's credentials, as far as
// it could be read.
func restConfig(f verifyFlags) (cfg *rest.Config, ns string, secrets []string, err error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if f.kubeconfig != "" {
		rules.ExplicitPath = f.kubeconfig
	}
	if raw, err := rules.Load(); err == nil {
		secrets = kubeconfigSecrets(raw)
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: f.context})
	if cfg, err = cc.ClientConfig(); err != nil {
		return nil, "", secrets, err
	}
	secrets = append(secrets, restConfigSecrets(cfg)...)
	// One slow response must not hold the run; lists are paged.
	cfg.Timeout = time.Minute
	cfg.QPS, cfg.Burst = 50, 100
	if f.allNamespaces {
		return cfg, "", secrets, nil
	}
	ns = f.namespace
	if ns == "" {
		if ns, _, err = cc.Namespace(); err != nil {
			return nil, "", secrets, err
		}
	}
	return cfg, ns, secrets, nil
}

func verifyScheme() (*kruntime.Scheme, error) {
	s := kruntime.NewScheme()
	for _, add := range []func(*kruntime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, clusterv1.AddToScheme, bootstrapv1.AddToScheme, addonsv1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// verifyCluster reads the cluster and verifies every config; an error is a
// failure to read at all (no access, unreachable), not a config's outcome.
func verifyCluster(ctx context.Context, cfg *rest.Config, ns string, f verifyFlags, stderr io.Writer) ([]verifyRow, verifySummary, error) {
	var sum verifySummary
	scheme, err := verifyScheme()
	if err != nil {
		return nil, sum, err
	}
	live, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, sum, err
	}
	reader := bootstrapdata.NewListReader(live, scheme, ns, verifyMaxObjects)
	// The kinds every config needs are listed before any work, so missing
	// access is one clear line instead of one per config.
	if err := reader.Preload(ctx, &bootstrapv1.KubeadmConfig{}, &clusterv1.Cluster{}, &clusterv1.Machine{},
		&clusterv1.MachinePool{}, &corev1.Secret{}, &bootstrapv1.KubeadmConfigTemplate{}); err != nil {
		return nil, sum, err
	}
	rb := &bootstrapdata.Rebuilder{Reader: reader, Strict: f.strict}
	if f.reportURL != "" {
		rb.Reporter = &nodereportctrl.Extension{URL: f.reportURL, CABundle: f.reportCA, Stored: reader}
	}
	// The fetch fallback reuses each config's stored token; its Reader
	// must be the snapshot too, never a client that could write.
	f.addons.Fetch.Reader = reader
	// As the manager: the add-on extension only when the API is served.
	gvk := addonsv1.GroupVersion.WithKind("FirstBootAddon")
	if _, err := live.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
		if err := reader.Preload(ctx, &addonsv1.FirstBootAddon{}); err != nil {
			return nil, sum, err
		}
		rb.Extensions = []bootstrapdata.Extension{addonsctrl.NewExtension(reader, f.addons)}
	} else if !meta.IsNoMatchError(err) {
		return nil, sum, fmt.Errorf("look up the FirstBootAddon API: %w", err)
	}
	var list bootstrapv1.KubeadmConfigList
	if err := reader.List(ctx, &list); err != nil {
		return nil, sum, err
	}
	configs := list.Items
	sort.Slice(configs, func(i, j int) bool {
		if configs[i].Namespace != configs[j].Namespace {
			return configs[i].Namespace < configs[j].Namespace
		}
		return configs[i].Name < configs[j].Name
	})
	scope := "namespace " + ns
	if ns == "" {
		scope = "all namespaces"
	}
	fmt.Fprintf(stderr, "nodeboot verify: %d KubeadmConfigs in %s\n", len(configs), scope)

	rows := make([]verifyRow, len(configs))
	next := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done, step := 0, max(len(configs)/10, 1)
	for range min(f.workers, max(len(configs), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				rows[i] = verifyOne(ctx, rb, reader, &configs[i], f.unified, f.versions)
				mu.Lock()
				done++
				if done%step == 0 || done == len(configs) {
					fmt.Fprintf(stderr, "nodeboot verify: %d/%d rendered\n", done, len(configs))
				}
				mu.Unlock()
			}
		}()
	}
	for i := range configs {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, sum, fmt.Errorf("gave up after --timeout: %w", err)
	}
	for _, r := range rows {
		switch r.Result {
		case resultIdentical:
			sum.Identical++
			if len(r.CABPKVersions) > 0 {
				if sum.CABPKVersions == nil {
					sum.CABPKVersions = map[string]int{}
				}
				sum.CABPKVersions[versionLabel(r.CABPKVersions)]++
			}
		case resultDiffers:
			sum.Differs++
		case resultCannotRender:
			sum.CannotRender++
		case resultSkipped:
			sum.Skipped++
		default:
			sum.Errors++
		}
	}
	sum.Compared = len(rows) - sum.Skipped
	return rows, sum, nil
}

// label is how a row's result is printed: "identical (CABPK v1.13)".
func (r verifyRow) label() string {
	if r.Result == resultIdentical && len(r.CABPKVersions) > 0 {
		return string(r.Result) + " (CABPK " + versionLabel(r.CABPKVersions) + ")"
	}
	return string(r.Result)
}

func versionLabel(names []string) string { return strings.Join(names, " or ") }

// compareVersions compares stored data with what each of versions renders
// for the objects nodeboot rendered out for, in order. It returns the
// versions that match: only the first when that is the one nodeboot renders
// (cloud-config of every version is the same), and nil when none does, with
// the difference from the first version's data.
func compareVersions(ref, secretName string, stored []byte, storedFormat string, out *provisioning.Output, unified bool, versions []cabpkversion.Version, secret map[string]bool) (dataComparison, []cabpkversion.Version) {
	if m := cabpkversion.Match(stored, storedFormat, out.Data, out.Format, versions); len(m) > 0 {
		if m[0].Name == cabpkversion.Current.Name {
			m = m[:1]
		}
		return dataComparison{identical: true, agree: -1}, m
	}
	want, rerr := versions[0].Render(out.Format, out.Data)
	if rerr != nil {
		// Not shaped as CABPK renders: show the difference from our own.
		want = out.Data
	}
	c := compareData(ref, secretName, stored, storedFormat, want, out.Format, unified, secret)
	if c.identical {
		// nodeboot's own data, and another version was demanded.
		c.identical = false
		c.details = []string{fmt.Sprintf("differs: %s holds the data of CABPK %s, not of CABPK %s", secretName, cabpkversion.Current.Name, versions[0].Name)}
		if rerr != nil {
			c.details = []string{"differs: " + rerr.Error()}
		}
	} else if other := cabpkversion.Match(stored, storedFormat, out.Data, out.Format, cabpkversion.All); len(other) > 0 && len(versions) == 1 {
		// A known version, just not the demanded one: say which.
		c.details = append(c.details, fmt.Sprintf("differs: %s holds the data of CABPK %s, not of CABPK %s", secretName, versionLabel(versionNames(other, nil)), versions[0].Name))
	}
	return c, nil
}

// versionNames names the versions an identical Secret matched, unless it is
// nodeboot's own data and no version was demanded (tried is all of them).
func versionNames(matched, tried []cabpkversion.Version) []string {
	if len(tried) > 1 && len(matched) > 0 && matched[0].Name == cabpkversion.Current.Name {
		return nil
	}
	var names []string
	for _, v := range matched {
		names = append(names, v.Name)
	}
	return names
}

// verifyOne rebuilds one config and compares it with its Secret, as data of
// any of versions.
func verifyOne(ctx context.Context, rb *bootstrapdata.Rebuilder, reader client.Reader, cfg *bootstrapv1.KubeadmConfig, unified bool, versions []cabpkversion.Version) verifyRow {
	row := verifyRow{Namespace: cfg.Namespace, Name: cfg.Name}
	ref := configRef(cfg)
	fail := func(result verifyResult, lines ...string) verifyRow {
		row.Result = result
		for _, l := range lines {
			row.Details = append(row.Details, string(result)+": "+l)
		}
		return row
	}
	built, err := rb.Rebuild(ctx, cfg, bootstrapdata.RebuildOptions{})
	switch {
	case errors.Is(err, bootstrapdata.ErrSkipped):
		row.Result, row.Details = resultSkipped, []string{err.Error()}
		return row
	case errors.Is(err, bootstrapdata.ErrReporter):
		return fail(resultError, "its data carries a bootstrap reporter: run verify with the manager's --bootstrap-report-url and --bootstrap-report-ca-file to rebuild it")
	}
	s := &corev1.Secret{}
	if gerr := reader.Get(ctx, client.ObjectKey{Namespace: cfg.Namespace, Name: cfg.Status.DataSecretName}, s); gerr != nil {
		if apierrors.IsNotFound(gerr) {
			return fail(resultError, fmt.Sprintf("status.dataSecretName: Secret %s/%s not found", cfg.Namespace, cfg.Status.DataSecretName))
		}
		return fail(resultError, gerr.Error())
	}
	stored, storedFormat, serr := bootstrapData(s)
	if serr != nil {
		return fail(resultError, serr.Error())
	}
	secretName := "Secret " + s.Namespace + "/" + s.Name
	var c dataComparison
	var matched []cabpkversion.Version
	var out *provisioning.Output
	if err == nil {
		out = built.Output
		c, matched = compareVersions(ref, secretName, stored, storedFormat, out, unified, versions, secretFiles(cfg))
	}
	if (err != nil || !c.identical) && built != nil && built.MayBeInit {
		// Rendered before the control plane was initialized, CABPK's data
		// is an init's: compare with that too and keep the closer one.
		asInit, ierr := rb.Rebuild(ctx, cfg, bootstrapdata.RebuildOptions{AsInit: true})
		switch {
		case ierr == nil:
			ci, mi := compareVersions(ref, secretName, stored, storedFormat, asInit.Output, unified, versions, secretFiles(cfg))
			if err != nil || ci.identical || ci.agree > c.agree {
				c, matched, out, err = ci, mi, asInit.Output, nil
			}
		case errors.Is(err, bootstrap.ErrNoBootstrapToken):
			// An init has no token: the init's own problem is the one to show.
			err = ierr
		}
	}
	if err != nil {
		return fail(resultCannotRender, problemLines(withRef(ref, err))...)
	}
	row.Warnings = warningLines(ref, out.Warnings)
	if c.identical {
		row.Result, row.CABPKVersions = resultIdentical, versionNames(matched, versions)
		return row
	}
	row.Result, row.Details, row.Diff = resultDiffers, c.details, c.unified
	return row
}

// describeAccessError turns a failure to read the cluster into one line
// that says what to do; API errors name the resource and user, never data.
func describeAccessError(err error, host string) string {
	switch {
	case apierrors.IsForbidden(err):
		return err.Error() + " (bind the ClusterRole in config/rbac/verify-role.yaml)"
	case apierrors.IsUnauthorized(err):
		return err.Error() + " (the kubeconfig's credentials were refused)"
	case errors.Is(err, context.DeadlineExceeded):
		return err.Error()
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return err.Error()
	}
	return fmt.Sprintf("cannot reach the API server at %s: %v", host, err)
}
