// Command manager runs nodeboot's KubeadmConfig controller: a drop-in
// replacement for the manager of Cluster API's kubeadm bootstrap provider
// (CABPK). It reconciles the same resources, serves the same admission and
// conversion webhooks and takes CABPK's operational flags, so it can replace
// CABPK's Deployment on a management cluster (see docs/swap-cabpk.md).
//
// It also runs nodeboot's first-boot add-ons: FirstBootAddons selecting a
// Cluster are written onto its init control-plane node and applied there
// once (controllers/addons), and their status reports what each node did.
// Clusters no add-on selects get exactly CABPK's bootstrap data.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/logs"
	logsv1 "k8s.io/component-base/logs/api/v1"
	_ "k8s.io/component-base/logs/json/register"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/setup"
	bootstrapadmission "sigs.k8s.io/cluster-api/bootstrap/kubeadm/webhooks/admission"
	"sigs.k8s.io/cluster-api/controllers/crdmigrator"
	"sigs.k8s.io/cluster-api/controllers/remote"
	"sigs.k8s.io/cluster-api/feature"
	"sigs.k8s.io/cluster-api/util/apiwarnings"
	"sigs.k8s.io/cluster-api/util/flags"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	// Provisioners register themselves; the reconciler finds them by format.
	"github.com/nodeboot/nodeboot/controllers"
	addonsctrl "github.com/nodeboot/nodeboot/controllers/addons"
	"github.com/nodeboot/nodeboot/controllers/nodeauth"
	nodereportctrl "github.com/nodeboot/nodeboot/controllers/nodereport"
	_ "github.com/nodeboot/nodeboot/provisioning/cloudinit"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition"
	// Butane additional config for the native Ignition dialects.
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/butane"
	// Both Ignition dialects: CABPK's Ignition 2.3 and native Ignition v3.
	"github.com/nodeboot/nodeboot/internal/tlsserve"
	"github.com/nodeboot/nodeboot/internal/version"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/legacy"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/v3"
)

// controllerName is also the user agent; CABPK's own name is kept out so
// API server audit logs tell the two providers apart.
const controllerName = "nodeboot-kubeadm-bootstrap-manager"

// options are the command line flags. Names follow CABPK's manager where it
// has the flag; the controller-runtime/kubebuilder spellings
// --metrics-bind-address and --health-probe-bind-address are accepted too.
type options struct {
	leaderElect                 bool
	leaderElectionLeaseDuration time.Duration
	leaderElectionRenewDeadline time.Duration
	leaderElectionRetryPeriod   time.Duration
	leaderElectionID            string
	leaderElectionNamespace     string
	version                     bool
	watchNamespace              string
	watchFilter                 string
	syncPeriod                  time.Duration
	qps                         float32
	burst                       int
	clusterCacheQPS             float32
	clusterCacheBurst           int
	clusterCacheConcurrency     int
	kubeadmConfigConcurrency    int
	firstBootAddonConcurrency   int
	addonsMaxBytes              int
	addonsCompress              bool
	addonsFetchURL              string
	addonsFetchAddr             string
	addonsFetchCertDir          string
	addonsFetchCAFile           string
	addonsFetchCA               []byte
	reportURL                   string
	reportAddr                  string
	reportCertDir               string
	reportCAFile                string
	reportCA                    []byte
	tokenTTL                    time.Duration
	healthAddr                  string
	metricsAddr                 string
	profilerAddr                string
	webhookPort                 int
	webhookCertDir              string
	webhookCertName             string
	webhookKeyName              string
	skipCRDMigrationPhases      []string
	manager                     flags.ManagerOptions
	strict                      bool
	logs                        *logsv1.LoggingConfiguration
}

func (o *options) addFlags(fs *pflag.FlagSet) {
	logsv1.AddFlags(o.logs, fs)
	fs.BoolVar(&o.leaderElect, "leader-elect", false, "Enable leader election, so only one manager replica reconciles at a time.")
	fs.DurationVar(&o.leaderElectionLeaseDuration, "leader-elect-lease-duration", 15*time.Second, "Interval at which non-leader candidates wait to force acquire leadership.")
	fs.DurationVar(&o.leaderElectionRenewDeadline, "leader-elect-renew-deadline", 10*time.Second, "Duration the leader retries refreshing leadership before giving up.")
	fs.DurationVar(&o.leaderElectionRetryPeriod, "leader-elect-retry-period", 2*time.Second, "Duration between leader election attempts.")
	// CABPK's Lease name: during a swap the old and the new manager never
	// reconcile at the same time.
	fs.StringVar(&o.leaderElectionID, "leader-elect-id", "kubeadm-bootstrap-manager-leader-election-capi", "Name of the leader election Lease (CABPK's by default).")
	fs.StringVar(&o.leaderElectionNamespace, "leader-elect-namespace", "", "Namespace of the leader election Lease; the Pod's namespace (in-cluster) when empty.")
	fs.BoolVar(&o.version, "version", false, "Print the version, commit and Go version and exit.")
	fs.StringVar(&o.watchNamespace, "namespace", "", "Namespace to watch; all namespaces when empty.")
	fs.StringVar(&o.watchFilter, "watch-filter", "", fmt.Sprintf("Label value an object must carry under %s to be reconciled; all objects when empty.", clusterv1.WatchLabel))
	fs.DurationVar(&o.syncPeriod, "sync-period", 10*time.Minute, "Minimum interval at which watched resources are reconciled.")
	fs.Float32Var(&o.qps, "kube-api-qps", 100, "Maximum queries per second to the management cluster API server.")
	fs.IntVar(&o.burst, "kube-api-burst", 200, "Maximum burst of queries to the management cluster API server.")
	fs.Float32Var(&o.clusterCacheQPS, "clustercache-client-qps", 20, "Maximum queries per second to each workload cluster API server.")
	fs.IntVar(&o.clusterCacheBurst, "clustercache-client-burst", 30, "Maximum burst of queries to each workload cluster API server.")
	fs.IntVar(&o.clusterCacheConcurrency, "clustercache-concurrency", 100, "Accepted for CABPK compatibility: workload clusters are connected on first use, so there is nothing for it to bound.")
	fs.IntVar(&o.kubeadmConfigConcurrency, "kubeadmconfig-concurrency", 100, "Number of KubeadmConfigs to process simultaneously.")
	fs.IntVar(&o.firstBootAddonConcurrency, "firstbootaddon-concurrency", 10, "Number of FirstBootAddons to process simultaneously.")
	fs.IntVar(&o.addonsMaxBytes, "addons-max-bytes", defaultAddonsMaxBytes, "Size budget in bytes of bootstrap data that carries first-boot add-ons (16384 is EC2's user-data limit); larger data is an error on the KubeadmConfig, never truncated. 0 turns the budget off.")
	fs.BoolVar(&o.addonsCompress, "addons-compress", defaultAddonsCompress, "Compress bootstrap data that carries first-boot add-ons where the format allows it (gzip cloud-config, Ignition v3).")
	fs.StringVar(&o.addonsFetchURL, "addons-fetch-url", "", "https URL at which nodes reach this manager's add-on fetch endpoint (a Service, LoadBalancer or Ingress in front of --addons-fetch-bind-address). When set, an init node whose data with its add-ons inline exceeds the budget gets the manifests from there after kubeadm init, each pinned by sha256, instead of an ErrTooLarge error. Off when empty.")
	fs.StringVar(&o.addonsFetchAddr, "addons-fetch-bind-address", ":9444", "Address the add-on fetch endpoint (TLS) listens on when --addons-fetch-url is set.")
	fs.StringVar(&o.addonsFetchCertDir, "addons-fetch-cert-dir", "", "Directory with the fetch endpoint's tls.crt and tls.key; --webhook-cert-dir when empty.")
	fs.StringVar(&o.addonsFetchCAFile, "addons-fetch-ca-file", "", "PEM CA bundle nodes trust for --addons-fetch-url; ca.crt of the certificate directory when empty and present there, otherwise the node's system trust.")
	fs.StringVar(&o.reportURL, "bootstrap-report-url", "", "https URL at which nodes reach this manager's bootstrap report endpoint (a Service, LoadBalancer or Ingress in front of --bootstrap-report-bind-address). When set, new bootstrap data carries a reporter that tells the KubeadmConfig's NodeBootstrapped condition when the node started, succeeded, or which step failed. Off when empty: the data stays CABPK's.")
	fs.StringVar(&o.reportAddr, "bootstrap-report-bind-address", ":9445", "Address the bootstrap report endpoint (TLS) listens on when --bootstrap-report-url is set.")
	fs.StringVar(&o.reportCertDir, "bootstrap-report-cert-dir", "", "Directory with the report endpoint's tls.crt and tls.key; --webhook-cert-dir when empty.")
	fs.StringVar(&o.reportCAFile, "bootstrap-report-ca-file", "", "PEM CA bundle nodes trust for --bootstrap-report-url; ca.crt of the certificate directory when empty and present there, otherwise the node's system trust.")
	fs.BoolVar(&o.strict, "strict", false, "Refuse bootstrap data with render warnings (hazards CABPK renders) for every KubeadmConfig, naming the field on its conditions; the annotation nodeboot.dev/strict: \"false\" opts one config out, \"true\" opts one in.")
	fs.DurationVar(&o.tokenTTL, "bootstrap-token-ttl", controllers.DefaultTokenTTL, "How long a bootstrap token is valid; it is refreshed until the node joined.")
	fs.StringVar(&o.healthAddr, "health-addr", ":9440", "Address the health and readiness probes bind to.")
	fs.StringVar(&o.healthAddr, "health-probe-bind-address", ":9440", "Alias of --health-addr.")
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", "", "Address the metrics endpoint binds to; overrides --diagnostics-address when set.")
	fs.StringVar(&o.profilerAddr, "profiler-address", "", "Address to expose the pprof profiler on (e.g. localhost:6060); off when empty.")
	fs.IntVar(&o.webhookPort, "webhook-port", 9443, "Port of the admission and conversion webhook server; 0 turns webhooks off.")
	fs.StringVar(&o.webhookCertDir, "webhook-cert-dir", "/tmp/k8s-webhook-server/serving-certs/", "Directory with the webhook serving certificate.")
	fs.StringVar(&o.webhookCertName, "webhook-cert-name", "tls.crt", "Webhook certificate file name.")
	fs.StringVar(&o.webhookKeyName, "webhook-key-name", "tls.key", "Webhook key file name.")
	fs.StringSliceVar(&o.skipCRDMigrationPhases, "skip-crd-migration-phases", nil, "CRD migration phases to skip: StorageVersionMigration, CleanupManagedFields.")
	flags.AddManagerOptions(fs, &o.manager)
	feature.MutableGates.AddFlag(fs)
}

func main() {
	o := &options{logs: logs.NewOptions()}
	fs := pflag.CommandLine
	o.addFlags(fs)
	fs.SetNormalizeFunc(cliflag.WordSepNormalizeFunc)
	// --kubeconfig comes from controller-runtime's flag set.
	fs.AddGoFlagSet(flag.CommandLine)
	if err := fs.Set("v", "2"); err != nil {
		fmt.Fprintf(os.Stderr, "set default log level: %v\n", err)
		os.Exit(1)
	}
	pflag.Parse()
	if o.version {
		fmt.Println(version.Get().Line("manager"))
		return
	}
	if err := logsv1.ValidateAndApply(o.logs, nil); err != nil {
		fmt.Fprintf(os.Stderr, "invalid logging flags: %v\n", err)
		os.Exit(1)
	}
	ctrl.SetLogger(klog.Background())
	log := ctrl.Log.WithName("setup")
	// Memory defaults (memory.go); GOGC and GOMEMLIMIT override them.
	if gc, limit := setMemoryDefaults(); gc >= 0 || limit >= 0 {
		log.Info("Go runtime memory defaults applied", "gcPercent", gc, "memoryLimitBytes", limit)
	}
	if err := run(ctrl.SetupSignalHandler(), o); err != nil {
		log.Error(err, "Manager stopped with an error")
		os.Exit(1)
	}
}

// Diagnostics (metrics) are authorized through the API server.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create
// The CRD migrator keeps stored objects at the storage version.
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions;customresourcedefinitions/status,verbs=update;patch,resourceNames=kubeadmconfigs.bootstrap.cluster.x-k8s.io;kubeadmconfigtemplates.bootstrap.cluster.x-k8s.io
// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io,resources=kubeadmconfigtemplates,verbs=get;list;watch;patch;update

func run(ctx context.Context, o *options) error {
	log := ctrl.Log.WithName("setup")
	if o.tokenTTL <= 0 {
		return errors.New("--bootstrap-token-ttl must be positive")
	}
	if o.addonsMaxBytes < 0 {
		return errors.New("--addons-max-bytes must not be negative")
	}
	if err := o.loadFetchCA(); err != nil {
		return err
	}
	if err := o.loadReportCA(); err != nil {
		return err
	}
	scheme, err := newScheme()
	if err != nil {
		return fmt.Errorf("build scheme: %w", err)
	}
	if o.metricsAddr != "" {
		o.manager.DiagnosticsAddress = o.metricsAddr
	}
	tlsOptions, metricsOptions, err := flags.GetManagerOptions(o.manager)
	if err != nil {
		return fmt.Errorf("invalid flags: %w", err)
	}

	restConfig, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("load kubeconfig: %w", err)
	}
	restConfig.QPS, restConfig.Burst = o.qps, o.burst
	restConfig.UserAgent = remote.DefaultClusterAPIUserAgent(controllerName)
	restConfig.WarningHandler = apiwarnings.DefaultHandler(klog.Background().WithName("API Server Warning"))

	mgrOptions := ctrl.Options{
		Scheme: scheme,
		Controller: config.Controller{
			UsePriorityQueue: ptr.To(feature.Gates.Enabled(feature.PriorityQueue)),
			CacheSyncTimeout: 5 * time.Minute,
		},
		LeaderElection:          o.leaderElect,
		LeaderElectionID:        o.leaderElectionID,
		LeaderElectionNamespace: o.leaderElectionNamespace,
		// The process exits when the manager stops, so the Lease is released
		// on SIGTERM and a standby replica takes over at once rather than
		// after --leader-elect-lease-duration (CAPI's managers do the same).
		LeaderElectionReleaseOnCancel: true,
		LeaderElectionResourceLock:    resourcelock.LeasesResourceLock,
		LeaseDuration:                 &o.leaderElectionLeaseDuration,
		RenewDeadline:                 &o.leaderElectionRenewDeadline,
		RetryPeriod:                   &o.leaderElectionRetryPeriod,
		HealthProbeBindAddress:        o.healthAddr,
		PprofBindAddress:              o.profilerAddr,
		Metrics:                       *metricsOptions,
		Cache:                         controllers.ManagerCacheOptions(scheme, controllerName, o.watchNamespace, o.syncPeriod),
		Client:                        setup.ManagerClientOptions(),
	}
	if o.webhookPort != 0 {
		mgrOptions.WebhookServer = webhook.NewServer(webhook.Options{
			Port: o.webhookPort, CertDir: o.webhookCertDir, CertName: o.webhookCertName, KeyName: o.webhookKeyName, TLSOpts: tlsOptions,
		})
	}
	mgr, err := ctrl.NewManager(restConfig, mgrOptions)
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}
	if err := setupChecks(mgr, o.webhookPort != 0); err != nil {
		return err
	}
	if o.webhookPort != 0 {
		if err := (&bootstrapadmission.KubeadmConfig{}).SetupWebhookWithManager(mgr); err != nil {
			return fmt.Errorf("set up KubeadmConfig webhook: %w", err)
		}
		if err := (&bootstrapadmission.KubeadmConfigTemplate{}).SetupWebhookWithManager(mgr); err != nil {
			return fmt.Errorf("set up KubeadmConfigTemplate webhook: %w", err)
		}
	}
	if err := setupReconcilers(ctx, mgr, o); err != nil {
		return err
	}
	if err := addNodeEndpoints(mgr, o); err != nil {
		return err
	}
	v := version.Get()
	log.Info("Starting manager", "formats", registeredFormats(), "version", v.Version, "commit", v.Commit, "goVersion", v.GoVersion)
	return mgr.Start(ctx)
}

// addNodeEndpoints adds the add-on fetch and bootstrap report servers that
// are on, each with its credential index: an informer of its own on the
// credential Secrets, so a request without a config's credential costs no
// API call (controllers/nodeauth). KubeadmConfigs are read from the
// manager's cache; only an authenticated request reads the API server.
func addNodeEndpoints(mgr ctrl.Manager, o *options) error {
	index := func(x *nodeauth.Index) *nodeauth.Index {
		x.RESTConfig, x.Scheme, x.Namespace = mgr.GetConfig(), mgr.GetScheme(), o.watchNamespace
		return x
	}
	if o.addonsFetchURL != "" {
		idx := index(addonsctrl.NewFetchIndex(mgr.GetCache()))
		h := &addonsctrl.FetchHandler{Credentials: idx, Reader: mgr.GetAPIReader()}
		if err := mgr.Add(idx); err != nil {
			return fmt.Errorf("add the add-on fetch credential index: %w", err)
		}
		if err := mgr.Add(&addonsctrl.FetchServer{Addr: o.addonsFetchAddr, CertDir: o.addonsFetchCertDir, Handler: h}); err != nil {
			return fmt.Errorf("add the add-on fetch server: %w", err)
		}
	}
	if o.reportURL != "" {
		idx := index(nodereportctrl.NewCredentialIndex(mgr.GetCache()))
		h := &nodereportctrl.Handler{Credentials: idx, Reader: mgr.GetAPIReader(), Client: mgr.GetClient(), Recorder: mgr.GetEventRecorderFor(controllerName)}
		if err := mgr.Add(idx); err != nil {
			return fmt.Errorf("add the bootstrap report credential index: %w", err)
		}
		if err := mgr.Add(&nodereportctrl.Server{Addr: o.reportAddr, CertDir: o.reportCertDir, Handler: h}); err != nil {
			return fmt.Errorf("add the bootstrap report server: %w", err)
		}
	}
	return nil
}

func setupChecks(mgr ctrl.Manager, webhooks bool) error {
	check := healthz.Ping
	if webhooks {
		check = mgr.GetWebhookServer().StartedChecker()
	}
	if err := mgr.AddReadyzCheck("ready", check); err != nil {
		return fmt.Errorf("add readiness check: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthy", check); err != nil {
		return fmt.Errorf("add health check: %w", err)
	}
	return nil
}

func setupReconcilers(ctx context.Context, mgr ctrl.Manager, o *options) error {
	secretCachingClient, err := setup.CreateSecretCachingClient(mgr)
	if err != nil {
		return fmt.Errorf("create secret caching client: %w", err)
	}
	// Workload clusters are reached through workloadClients (workloads.go),
	// not Cluster API's ClusterCache: the reconcilers only touch token
	// Secrets and one ConfigMap there. --clustercache-concurrency is kept
	// for CABPK's flag set and has nothing left to bound.
	clusterCache := newWorkloadClients(secretCachingClient, mgr.GetScheme(), remote.DefaultClusterAPIUserAgent(controllerName), o.clusterCacheQPS, o.clusterCacheBurst)
	skip := make([]crdmigrator.Phase, 0, len(o.skipCRDMigrationPhases))
	for _, p := range o.skipCRDMigrationPhases {
		skip = append(skip, crdmigrator.Phase(p))
	}
	if err := (&crdmigrator.CRDMigrator{
		Client:                 mgr.GetClient(),
		APIReader:              mgr.GetAPIReader(),
		SkipCRDMigrationPhases: skip,
		Config: map[client.Object]crdmigrator.ByObjectConfig{
			&bootstrapv1.KubeadmConfig{}:         {UseCache: false, UseStatusForStorageVersionMigration: true},
			&bootstrapv1.KubeadmConfigTemplate{}: {UseCache: false},
		},
	}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: 1}); err != nil {
		return fmt.Errorf("set up CRD migrator: %w", err)
	}
	r := newReconcilers(clients{
		client:              mgr.GetClient(),
		secretCachingClient: secretCachingClient,
		apiReader:           mgr.GetAPIReader(),
		clusterCache:        clusterCache,
	}, o)
	installed, err := addonsInstalled(mgr.GetRESTMapper())
	if err != nil {
		return err
	}
	if !installed {
		// Said once, here: without the CRD every KubeadmConfig would
		// otherwise fail on listing FirstBootAddons, and the FirstBootAddon
		// controller would stop the manager when its cache never syncs.
		ctrl.Log.WithName("setup").Error(nil, "The FirstBootAddon CRD is not installed: first-boot add-ons are off and KubeadmConfigs are reconciled without them; apply the release's bootstrap-components.yaml (it carries the CRD) and restart the manager to turn them on",
			"crd", firstBootAddonCRD)
		r = r.withoutAddons()
	}
	if err := r.kubeadmConfig.SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: o.kubeadmConfigConcurrency}); err != nil {
		return fmt.Errorf("set up KubeadmConfig controller: %w", err)
	}
	if r.firstBootAddon != nil {
		if err := r.firstBootAddon.SetupWithManager(mgr, controller.Options{MaxConcurrentReconciles: o.firstBootAddonConcurrency}); err != nil {
			return fmt.Errorf("set up FirstBootAddon controller: %w", err)
		}
	}
	return nil
}

// loadFetchCA settles the fetch endpoint's certificate directory and reads
// the CA bundle nodes are given for it.
func (o *options) loadFetchCA() error {
	if o.addonsFetchURL == "" {
		return nil
	}
	ca, err := o.nodeEndpointCA(&o.addonsFetchCertDir, o.addonsFetchCAFile, "--addons-fetch-ca-file")
	if err != nil {
		return err
	}
	o.addonsFetchCA = ca
	return addonsctrl.FetchOptions{URL: o.addonsFetchURL, CABundle: o.addonsFetchCA}.Validate()
}

// loadReportCA does the same for the bootstrap report endpoint.
func (o *options) loadReportCA() error {
	if o.reportURL == "" {
		return nil
	}
	ca, err := o.nodeEndpointCA(&o.reportCertDir, o.reportCAFile, "--bootstrap-report-ca-file")
	if err != nil {
		return err
	}
	o.reportCA = ca
	if err := tlsserve.CheckNodeURL(o.reportURL, "bootstrap report"); err != nil {
		return err
	}
	return tlsserve.CheckCABundle(ca, "bootstrap report")
}

// nodeEndpointCA defaults an endpoint's certificate directory to the
// webhook's and reads the CA bundle nodes verify it with: the named file,
// else the directory's ca.crt when there is one (cert-manager writes it),
// else none (the node's system trust).
func (o *options) nodeEndpointCA(certDir *string, caFile, flag string) ([]byte, error) {
	if *certDir == "" {
		*certDir = o.webhookCertDir
	}
	file, explicit := caFile, caFile != ""
	if !explicit {
		file = filepath.Join(*certDir, "ca.crt")
	}
	ca, err := os.ReadFile(file) //nolint:gosec // G304: the operator's own flag names the file
	switch {
	case err == nil:
		return ca, nil
	case explicit || !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	return nil, nil
}
