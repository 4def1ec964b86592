package main

import (
	"fmt"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	bootstrapv1beta1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta1"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonsv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
	"github.com/nodeboot/nodeboot/controllers"
	addonsctrl "github.com/nodeboot/nodeboot/controllers/addons"
	nodereportctrl "github.com/nodeboot/nodeboot/controllers/nodereport"
)

// Defaults of the add-on flags: EC2's 16 KiB raw user-data limit, and gzip
// where the format allows it, so an init node with a CNI and NodeLocal
// DNSCache fits.
const (
	defaultAddonsMaxBytes = 16384
	defaultAddonsCompress = true
)

// newScheme registers every API the manager reads or writes: core, CRDs (for
// the CRD migrator), Cluster API, the kubeadm bootstrap API in both served
// versions, and nodeboot's FirstBootAddon.
func newScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, clusterv1.AddToScheme,
		bootstrapv1beta1.AddToScheme, bootstrapv1.AddToScheme, addonsv1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	return scheme, nil
}

// clients are what the reconcilers read and write the management cluster
// and the workload clusters with.
type clients struct {
	// client is the manager's client: cached reads, except Secrets and
	// ConfigMaps, which are read live (setup.ManagerClientOptions).
	client              client.Client
	secretCachingClient client.Client
	apiReader           client.Reader
	clusterCache        workloads
}

// workloads gives clients for workload clusters to both reconcilers:
// workloadClients in the manager, Cluster API's ClusterCache in tests.
type workloads interface {
	controllers.WorkloadClients
	addonsctrl.WorkloadClusters
}

// reconcilers are the manager's controllers, built but not yet registered.
type reconcilers struct {
	kubeadmConfig  *controllers.Reconciler
	firstBootAddon *addonsctrl.FirstBootAddonReconciler
}

// newReconcilers links first-boot add-ons into the KubeadmConfig reconciler:
// the add-on Extension reads FirstBootAddons (and their ConfigMap or Secret
// sources) through the manager's client on every build, so a Cluster no
// add-on selects keeps CABPK's exact bytes. The FirstBootAddonReconciler
// reports per Cluster what the init node recorded, reading workload clusters
// through the same clients as the token reconcile.
func newReconcilers(c clients, o *options) reconcilers {
	ext := addonsctrl.NewExtension(c.client, addonsctrl.ExtensionOptions{
		MaxBytes: o.addonsMaxBytes,
		Compress: o.addonsCompress,
		Fetch:    addonsctrl.FetchOptions{URL: o.addonsFetchURL, CABundle: o.addonsFetchCA, Reader: c.apiReader},
		// Which add-ons a Cluster's init data carried is on its data
		// Secret, whose annotations the cache drops, or in the workload
		// cluster's record.
		APIReader: c.apiReader,
		Workloads: c.clusterCache,
	})
	// The reporter goes first: the add-on budget then counts its bytes, and
	// the fetch fallback is taken when they are what tips the data over.
	var exts []controllers.Extension
	if o.reportURL != "" {
		exts = append(exts, &nodereportctrl.Extension{URL: o.reportURL, CABundle: o.reportCA, Existing: c.apiReader})
	}
	exts = append(exts, ext)
	return reconcilers{
		kubeadmConfig: &controllers.Reconciler{
			Client:              c.client,
			SecretCachingClient: c.secretCachingClient,
			APIReader:           c.apiReader,
			ClusterCache:        c.clusterCache,
			WatchFilterValue:    o.watchFilter,
			TokenTTL:            o.tokenTTL,
			Strict:              o.strict,
			Extensions:          exts,
		},
		firstBootAddon: &addonsctrl.FirstBootAddonReconciler{
			Client:    c.client,
			APIReader: c.apiReader,
			Workloads: c.clusterCache,
		},
	}
}

// firstBootAddonCRD is the name of the FirstBootAddon CRD.
const firstBootAddonCRD = "firstbootaddons.addons.nodeboot.dev"

// addonsInstalled reports whether the API server serves FirstBootAddons.
// Only a missing kind is false; any other error (the API server cannot be
// reached) is returned.
func addonsInstalled(mapper meta.RESTMapper) (bool, error) {
	gvk := addonsv1.GroupVersion.WithKind("FirstBootAddon")
	_, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	switch {
	case err == nil:
		return true, nil
	case meta.IsNoMatchError(err):
		return false, nil
	default:
		return false, fmt.Errorf("look up the FirstBootAddon API: %w", err)
	}
}

// withoutAddons is r with first-boot add-ons off: no add-on extension on the
// KubeadmConfig reconciler (so it neither lists nor watches FirstBootAddons
// and, without bootstrap reports, renders exactly CABPK's data) and no
// FirstBootAddon controller.
func (r reconcilers) withoutAddons() reconcilers {
	r.kubeadmConfig.Extensions = slices.DeleteFunc(slices.Clone(r.kubeadmConfig.Extensions), func(e controllers.Extension) bool {
		_, addon := e.(*addonsctrl.Extension)
		return addon
	})
	r.firstBootAddon = nil
	return r
}
