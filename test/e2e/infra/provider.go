package infra

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"time"

	ign24 "github.com/flatcar/ignition/config/v2_4"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/nodeboot/nodeboot/internal/third_party/flatcar/v24tov31"
	"github.com/nodeboot/nodeboot/test/e2e/lab"
)

// ProviderIDPrefix starts every provider ID this provider sets.
const ProviderIDPrefix = "e2e://"

// Provider reconciles E2EClusters and E2EMachines.
type Provider struct {
	Client client.Client
	Lab    *lab.Lab
	// IgnitionApply is ../shared/tools/ignition-apply.
	IgnitionApply string
	// WorkerAddressFrom is the first host number workers get.
	WorkerAddressFrom int

	mu       sync.Mutex
	machines map[types.NamespacedName]*Machine
	clients  map[types.NamespacedName]client.Client
}

// Machine is what the provider did for one E2EMachine.
type Machine struct {
	Name    types.NamespacedName
	Node    *lab.Node
	Address netip.Addr
	// Format is the data Secret's format, and Dialect "legacy" for
	// Ignition 2.x data (translated to 3.1 as Flatcar does) or the spec
	// version for Ignition 3.x.
	Format, Dialect string
	// DataCreated is the data Secret's creation; Booted when the node
	// container started.
	DataCreated, Booted time.Time
	// DataBytes is the size of the data Secret's value, as delivered.
	DataBytes     int
	BootErr       error
	providerIDSet bool
}

// Machine returns what the provider did for an E2EMachine, or nil.
func (p *Provider) Machine(key types.NamespacedName) *Machine {
	p.mu.Lock()
	defer p.mu.Unlock()
	if m := p.machines[key]; m != nil {
		c := *m
		return &c
	}
	return nil
}

// Stop stops the nodes of every machine of one namespace.
func (p *Provider) Stop(namespace string) {
	p.mu.Lock()
	var nodes []*lab.Node
	for k, m := range p.machines {
		if k.Namespace == namespace && m.Node != nil {
			nodes = append(nodes, m.Node)
			p.Lab.Release(m.Address)
		}
	}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Go(func() { _ = n.Stop() })
	}
	wg.Wait()
}

// SetupWithManager registers both controllers.
func (p *Provider) SetupWithManager(mgr ctrl.Manager) error {
	p.machines = map[types.NamespacedName]*Machine{}
	p.clients = map[types.NamespacedName]client.Client{}
	cl := &unstructured.Unstructured{}
	cl.SetGroupVersionKind(ClusterGVK)
	if err := ctrl.NewControllerManagedBy(mgr).Named("e2ecluster").For(cl).Complete(ctrlFunc(p.reconcileCluster)); err != nil {
		return err
	}
	m := &unstructured.Unstructured{}
	m.SetGroupVersionKind(MachineGVK)
	return ctrl.NewControllerManagedBy(mgr).Named("e2emachine").For(m).
		WithOptions(controller.Options{MaxConcurrentReconciles: 6}).
		Complete(ctrlFunc(p.reconcileMachine))
}

type ctrlFunc func(context.Context, ctrl.Request) (ctrl.Result, error)

func (f ctrlFunc) Reconcile(ctx context.Context, r ctrl.Request) (ctrl.Result, error) {
	return f(ctx, r)
}

// reconcileCluster: the control-plane endpoint is the test's choice, so the
// infrastructure is there as soon as the object is.
func (p *Provider) reconcileCluster(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(ClusterGVK)
	if err := p.Client.Get(ctx, req.NamespacedName, u); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	host, _, _ := unstructured.NestedString(u.Object, "spec", "controlPlaneEndpoint", "host")
	if host == "" {
		return ctrl.Result{}, fmt.Errorf("E2ECluster %s: spec.controlPlaneEndpoint.host is empty", req.NamespacedName)
	}
	if ok, _, _ := unstructured.NestedBool(u.Object, "status", "initialization", "provisioned"); ok {
		return ctrl.Result{}, nil
	}
	patch := client.MergeFrom(u.DeepCopy())
	_ = unstructured.SetNestedField(u.Object, true, "status", "initialization", "provisioned")
	_ = unstructured.SetNestedField(u.Object, true, "status", "ready")
	return ctrl.Result{}, p.Client.Status().Patch(ctx, u, patch)
}

func (p *Provider) reconcileMachine(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(MachineGVK)
	if err := p.Client.Get(ctx, req.NamespacedName, u); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	machine, err := p.owner(ctx, u)
	if err != nil || machine == nil {
		return ctrl.Result{RequeueAfter: time.Second}, err
	}
	p.mu.Lock()
	m := p.machines[req.NamespacedName]
	p.mu.Unlock()
	if m == nil {
		if machine.Spec.Bootstrap.DataSecretName == nil {
			return ctrl.Result{RequeueAfter: time.Second}, nil
		}
		m, err = p.boot(ctx, u, machine)
		if err != nil {
			return ctrl.Result{}, err
		}
	}
	if m.BootErr != nil {
		return ctrl.Result{}, nil
	}
	if err := p.report(ctx, u, m); err != nil {
		return ctrl.Result{}, err
	}
	if !m.providerIDSet {
		done, err := p.setNodeProviderID(ctx, machine, m)
		if err != nil || !done {
			return ctrl.Result{RequeueAfter: 2 * time.Second}, nil
		}
		p.mu.Lock()
		m.providerIDSet = true
		p.mu.Unlock()
	}
	return ctrl.Result{}, nil
}

func (p *Provider) owner(ctx context.Context, u *unstructured.Unstructured) (*clusterv1.Machine, error) {
	for _, ref := range u.GetOwnerReferences() {
		if ref.Kind == "Machine" && strings.HasPrefix(ref.APIVersion, clusterv1.GroupVersion.Group+"/") {
			m := &clusterv1.Machine{}
			err := p.Client.Get(ctx, types.NamespacedName{Namespace: u.GetNamespace(), Name: ref.Name}, m)
			if apierrors.IsNotFound(err) {
				return nil, nil
			}
			return m, err
		}
	}
	return nil, nil
}

// boot reads the data Secret and starts the node from it.
func (p *Provider) boot(ctx context.Context, u *unstructured.Unstructured, machine *clusterv1.Machine) (*Machine, error) {
	key := types.NamespacedName{Namespace: u.GetNamespace(), Name: u.GetName()}
	secret := &corev1.Secret{}
	if err := p.Client.Get(ctx, types.NamespacedName{Namespace: machine.Namespace, Name: *machine.Spec.Bootstrap.DataSecretName}, secret); err != nil {
		return nil, err
	}
	m := &Machine{Name: key, Format: string(secret.Data["format"]), DataCreated: secret.CreationTimestamp.Time, DataBytes: len(secret.Data["value"])}
	spec := lab.Spec{Name: machine.Name, ControlPlane: isControlPlane(machine), IgnitionApply: p.IgnitionApply}
	var err error
	if addr, _, _ := unstructured.NestedString(u.Object, "spec", "address"); addr != "" {
		m.Address, err = netip.ParseAddr(addr)
	} else {
		m.Address, err = p.Lab.Allocate(p.WorkerAddressFrom)
	}
	if err != nil {
		return nil, fmt.Errorf("E2EMachine %s: address: %w", key, err)
	}
	spec.IP = m.Address
	value := secret.Data["value"]
	switch m.Format {
	case "cloud-config":
		spec.UserData = value
		m.Dialect = "cloud-config"
	case "ignition":
		var head struct {
			Ignition struct{ Version string } `json:"ignition"`
		}
		if err := json.Unmarshal(value, &head); err != nil {
			return nil, fmt.Errorf("data Secret %s: not Ignition JSON: %w", secret.Name, err)
		}
		m.Dialect = head.Ignition.Version
		spec.Ignition = value
		if strings.HasPrefix(head.Ignition.Version, "2.") {
			m.Dialect = "legacy " + head.Ignition.Version
			if spec.Ignition, err = TranslateLegacy(value); err != nil {
				return nil, fmt.Errorf("data Secret %s: %w", secret.Name, err)
			}
		}
	default:
		return nil, fmt.Errorf("data Secret %s: format %q", secret.Name, m.Format)
	}
	node, err := p.Lab.Boot(ctx, spec)
	m.Node, m.BootErr, m.Booted = node, err, time.Now()
	p.mu.Lock()
	p.machines[key] = m
	p.mu.Unlock()
	if err != nil {
		return m, fmt.Errorf("boot %s: %w", key, err)
	}
	return m, nil
}

// TranslateLegacy turns CABPK's Ignition 2.3 into 3.1 with Flatcar's own
// translator (v24tov31), as a Flatcar release that speaks only Ignition 3
// does at first boot.
func TranslateLegacy(data []byte) ([]byte, error) {
	cfg, rpt, err := ign24.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("Ignition 2.x: %w: %s", err, rpt.String())
	}
	v31, err := v24tov31.Translate(cfg, map[string]string{})
	if err != nil {
		return nil, fmt.Errorf("Flatcar's v24tov31: %w", err)
	}
	return json.Marshal(v31)
}

func isControlPlane(m *clusterv1.Machine) bool {
	_, ok := m.Labels[clusterv1.MachineControlPlaneLabel]
	return ok
}

// report sets what Cluster API reads from an InfraMachine (contract v1beta2).
func (p *Provider) report(ctx context.Context, u *unstructured.Unstructured, m *Machine) error {
	id := ProviderIDPrefix + u.GetNamespace() + "/" + u.GetName()
	if cur, _, _ := unstructured.NestedString(u.Object, "spec", "providerID"); cur != id {
		patch := client.MergeFrom(u.DeepCopy())
		_ = unstructured.SetNestedField(u.Object, id, "spec", "providerID")
		if err := p.Client.Patch(ctx, u, patch); err != nil {
			return err
		}
	}
	if ok, _, _ := unstructured.NestedBool(u.Object, "status", "initialization", "provisioned"); ok {
		return nil
	}
	patch := client.MergeFrom(u.DeepCopy())
	_ = unstructured.SetNestedField(u.Object, true, "status", "initialization", "provisioned")
	_ = unstructured.SetNestedField(u.Object, true, "status", "ready")
	_ = unstructured.SetNestedSlice(u.Object, []any{
		map[string]any{"type": "InternalIP", "address": m.Address.String()},
		map[string]any{"type": "Hostname", "address": m.Name.Name},
	}, "status", "addresses")
	return p.Client.Status().Patch(ctx, u, patch)
}

// setNodeProviderID sets the Node's spec.providerID in the workload
// cluster, as CAPD does, once the node registered.
func (p *Provider) setNodeProviderID(ctx context.Context, machine *clusterv1.Machine, m *Machine) (bool, error) {
	c, err := p.Workload(ctx, types.NamespacedName{Namespace: machine.Namespace, Name: machine.Spec.ClusterName})
	if err != nil {
		return false, err
	}
	node := &corev1.Node{}
	if err := c.Get(ctx, types.NamespacedName{Name: machine.Name}, node); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	id := ProviderIDPrefix + m.Name.Namespace + "/" + m.Name.Name
	if node.Spec.ProviderID == id {
		return true, nil
	}
	if node.Spec.ProviderID != "" {
		return false, fmt.Errorf("node %s has provider ID %q, want %q", node.Name, node.Spec.ProviderID, id)
	}
	patch := client.MergeFrom(node.DeepCopy())
	node.Spec.ProviderID = id
	return true, c.Patch(ctx, node, patch)
}

// Workload is a client of a workload cluster, from the kubeconfig Secret
// Cluster API writes for it.
func (p *Provider) Workload(ctx context.Context, cluster types.NamespacedName) (client.Client, error) {
	p.mu.Lock()
	c := p.clients[cluster]
	p.mu.Unlock()
	if c != nil {
		return c, nil
	}
	cfg, err := WorkloadConfig(ctx, p.Client, cluster)
	if err != nil {
		return nil, err
	}
	c, err = client.New(cfg, client.Options{})
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.clients[cluster] = c
	p.mu.Unlock()
	return c, nil
}

// WorkloadKubeconfig is the kubeconfig Cluster API keeps for a cluster.
func WorkloadKubeconfig(ctx context.Context, c client.Client, cluster types.NamespacedName) ([]byte, error) {
	s := &corev1.Secret{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: cluster.Namespace, Name: cluster.Name + "-kubeconfig"}, s); err != nil {
		return nil, err
	}
	if len(s.Data["value"]) == 0 {
		return nil, fmt.Errorf("Secret %s-kubeconfig has no value", cluster.Name)
	}
	return s.Data["value"], nil
}

// WorkloadConfig is a REST config for a workload cluster.
func WorkloadConfig(ctx context.Context, c client.Client, cluster types.NamespacedName) (*rest.Config, error) {
	kc, err := WorkloadKubeconfig(ctx, c, cluster)
	if err != nil {
		return nil, err
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kc)
	if err != nil {
		return nil, err
	}
	cfg.Timeout = 15 * time.Second
	return cfg, nil
}
