// Command nodebootoracle renders reference vectors with Cluster API
// v1.13.6's kubeadm bootstrap provider (CABPK): its own KubeadmConfig
// reconciler, run against a controller-runtime fake client, as nodeboot's
// differential harness runs v1.14.2's. nodeboot's tests compare what it
// writes with what verify's CABPK version table derives from v1.14.2's bytes.
//
// Usage: nodebootoracle VECTORS-DIR OUT-DIR
//
// For every VECTORS-DIR/<name>/input.yaml it writes OUT-DIR/<name>/bootstrap-data
// and OUT-DIR/<name>/format, or OUT-DIR/<name>/unsupported with the reason
// when v1.13's API cannot hold the input (a field v1.13 does not have: a
// v1.13 management cluster cannot store such an object, so there is nothing
// to compare).
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/component-base/featuregate"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/log"
	sigsyaml "sigs.k8s.io/yaml"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	cabpk "sigs.k8s.io/cluster-api/bootstrap/kubeadm/internal/controllers"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/internal/locking"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	"sigs.k8s.io/cluster-api/feature"
)

// errUnsupported: the input has something v1.13's API does not.
var errUnsupported = errors.New("not representable in CABPK v1.13")

// maxInput bounds one input.yaml.
const maxInput = 4 << 20

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: nodebootoracle VECTORS-DIR OUT-DIR")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "nodebootoracle:", err)
		os.Exit(1)
	}
}

func run(vectors, out string) error {
	log.SetLogger(logr.Discard()) // the reconciler's logs are not the output
	if err := feature.Gates.(featuregate.MutableFeatureGate).Set("MachinePool=true," + string(feature.KubeadmBootstrapFormatIgnition) + "=true"); err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1.AddToScheme, bootstrapv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return err
		}
	}
	entries, err := os.ReadDir(vectors)
	if err != nil {
		return err
	}
	names := []string{}
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(vectors, e.Name(), "input.yaml")); err == nil {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return fmt.Errorf("%s: no vectors", vectors)
	}
	for _, name := range names {
		dir := filepath.Join(out, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		data, format, err := render(scheme, filepath.Join(vectors, name, "input.yaml"))
		switch {
		case errors.Is(err, errUnsupported):
			if err := os.WriteFile(filepath.Join(dir, "unsupported"), []byte(err.Error()+"\n"), 0o644); err != nil {
				return err
			}
			continue
		case err != nil:
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, "bootstrap-data"), data, 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "format"), []byte(format), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// render runs CABPK v1.13.6's reconciler on the objects of one input.yaml
// and returns the bootstrap Secret's value and format.
func render(scheme *runtime.Scheme, file string) ([]byte, string, error) {
	objs, config, err := decode(scheme, file)
	if err != nil {
		return nil, "", err
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithStatusSubresource(&bootstrapv1.KubeadmConfig{}, &clusterv1.Cluster{}).Build()
	// Joins in the vectors carry their token: nothing is written here.
	workload := fake.NewClientBuilder().WithScheme(scheme).Build()
	var cluster client.ObjectKey
	for _, o := range objs {
		if _, ok := o.(*clusterv1.Cluster); ok {
			cluster = client.ObjectKeyFromObject(o)
		}
	}
	r := &cabpk.KubeadmConfigReconciler{
		Client: c, SecretCachingClient: c,
		ClusterCache:    clustercache.NewFakeClusterCache(workload, cluster),
		KubeadmInitLock: locking.NewControlPlaneInitMutex(c),
		TokenTTL:        15 * time.Minute,
	}
	ctx := context.Background()
	key := client.ObjectKeyFromObject(config)
	// The first pass only records the Paused condition and requeues.
	for pass := 0; pass < 3; pass++ {
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil {
			return nil, "", fmt.Errorf("reconcile: %w", err)
		}
		s := &corev1.Secret{}
		if err := c.Get(ctx, key, s); err == nil {
			return s.Data["value"], string(s.Data["format"]), nil
		}
	}
	return nil, "", errors.New("no bootstrap data Secret after 3 passes")
}

// decode reads every object of file the v1.13 reconciler can read, strictly:
// a field v1.13's types do not have is errUnsupported. Kinds outside its
// scheme (a KubeadmControlPlane, read only by v1.14's reconciler) are left out.
func decode(scheme *runtime.Scheme, file string) ([]client.Object, *bootstrapv1.KubeadmConfig, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxInput+1))
	if err != nil {
		return nil, nil, err
	}
	if len(raw) > maxInput {
		return nil, nil, fmt.Errorf("%s: larger than %d bytes", file, maxInput)
	}
	var objs []client.Object
	var config *bootstrapv1.KubeadmConfig
	d := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	for {
		var doc runtime.RawExtension
		if err := d.Decode(&doc); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", file, err)
		}
		if len(bytes.TrimSpace(doc.Raw)) == 0 {
			continue
		}
		var tm struct{ APIVersion, Kind string }
		if err := sigsyaml.Unmarshal(doc.Raw, &tm); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", file, err)
		}
		gvk := schema.FromAPIVersionAndKind(tm.APIVersion, tm.Kind)
		if !scheme.Recognizes(gvk) {
			continue
		}
		o, err := scheme.New(gvk)
		if err != nil {
			return nil, nil, err
		}
		if err := sigsyaml.UnmarshalStrict(doc.Raw, o); err != nil {
			return nil, nil, fmt.Errorf("%w: %s %s", errUnsupported, gvk.Kind, err)
		}
		obj := o.(client.Object)
		obj.GetObjectKind().SetGroupVersionKind(gvk)
		objs = append(objs, obj)
		if kc, ok := obj.(*bootstrapv1.KubeadmConfig); ok {
			if config != nil {
				return nil, nil, fmt.Errorf("%s: more than one KubeadmConfig", file)
			}
			config = kc
		}
	}
	if config == nil {
		return nil, nil, fmt.Errorf("%s: no KubeadmConfig", file)
	}
	return objs, config, nil
}
