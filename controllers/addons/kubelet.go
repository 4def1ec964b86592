package addons

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/nodeboot/nodeboot/addons/catalog"
	addonsv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
	"github.com/nodeboot/nodeboot/bootstrap"
	"github.com/nodeboot/nodeboot/provisioning"
)

// clusterDNSArg is the kubelet flag kubeadm passes through
// nodeRegistration.kubeletExtraArgs; it overrides the clusterDNS of the
// KubeletConfiguration kubeadm generates, on init and join alike.
const clusterDNSArg = "cluster-dns"

// dnsRequirement is a kubelet clusterDNS an add-on needs.
type dnsRequirement struct {
	ip     string
	origin bootstrap.ObjectRef
}

// kubeletClusterDNS returns the clusterDNS the selected add-ons need, or nil.
// carried reports whether an add-on reached the Cluster (carried.go); it is
// asked only about NodeLocal DNSCache add-ons.
func kubeletClusterDNS(selected []addonsv1.FirstBootAddon, cluster *clusterv1.Cluster, carried func(*addonsv1.FirstBootAddon) (bool, error)) (*dnsRequirement, error) {
	var req *dnsRequirement
	for i := range selected {
		a := &selected[i]
		b := a.Spec.Builtin
		if b == nil || b.Name != addonsv1.BuiltinNodeLocalDNS {
			continue
		}
		ok, err := carried(a)
		if err != nil {
			return nil, err
		}
		if !ok {
			// One the init node's data did not carry never runs on the
			// Cluster: pointing kubelets at its address would leave their
			// pods without DNS.
			continue
		}
		ip, err := catalog.KubeletClusterDNS(builtinParams(b, cluster))
		if err != nil {
			return nil, &SpecError{Object: objectRef(a), Reason: addonsv1.InvalidSpecReason, Errs: field.ErrorList{paramError(b, cluster, err)}}
		}
		if ip == "" {
			continue
		}
		if req != nil && req.ip != ip {
			return nil, &SpecError{Object: objectRef(a), Reason: addonsv1.InvalidSpecReason, Errs: field.ErrorList{field.Invalid(
				specPath.Child("builtin", "nodeLocalDNS", "localIP"), ip,
				fmt.Sprintf("conflicts with %s, which needs kubelet clusterDNS %s on the same Cluster", req.origin, req.ip))}}
		}
		req = &dnsRequirement{ip: ip, origin: objectRef(a)}
	}
	return req, nil
}

// setClusterDNS sets the kubelet's cluster-dns on the init and join
// configurations (a node uses one of them). A different value the user set
// is an error naming the field: NodeLocal DNSCache in IPVS mode does not work
// without it, and silently overriding the user is no better.
func setClusterDNS(config *bootstrapv1.KubeadmConfig, req *dnsRequirement) error {
	spec := &config.Spec
	for _, t := range []struct {
		path provisioning.Path
		args *[]bootstrapv1.Arg
	}{
		{provisioning.NewPath("spec", "initConfiguration", "nodeRegistration", "kubeletExtraArgs"), &spec.InitConfiguration.NodeRegistration.KubeletExtraArgs},
		{provisioning.NewPath("spec", "joinConfiguration", "nodeRegistration", "kubeletExtraArgs"), &spec.JoinConfiguration.NodeRegistration.KubeletExtraArgs},
	} {
		found := false
		for _, a := range *t.args {
			if a.Name != clusterDNSArg {
				continue
			}
			found = true
			if a.Value == nil || *a.Value != req.ip {
				got := "<nil>"
				if a.Value != nil {
					got = *a.Value
				}
				// Invalid input of the KubeadmConfig itself: the reconciler
				// names the field on its condition and does not retry.
				return reconcile.TerminalError(&bootstrap.InvalidError{Problems: []bootstrap.ObjectProblem{{
					Object: bootstrap.ObjectRef{Kind: "KubeadmConfig", Namespace: config.Namespace, Name: config.Name},
					Problem: provisioning.Problem{
						Path:     t.path.Key("name=" + clusterDNSArg),
						Message:  fmt.Sprintf("is %q but %s (NodeLocal DNSCache, IPVS mode) needs %q", got, req.origin, req.ip),
						Severity: provisioning.SeverityError,
					},
				}}})
			}
		}
		if !found {
			ip := req.ip
			*t.args = append(*t.args, bootstrapv1.Arg{Name: clusterDNSArg, Value: &ip})
		}
	}
	return nil
}

// createdAfterInit reports whether the add-on was created after the
// Cluster's control plane was initialized. It is the fallback of
// delivery.carried for Clusters whose init data has no AnnotationCarried and
// whose node recorded nothing of the add-on: too late by this rule means the
// first control-plane node's data, the only data that carries add-ons, was
// made without it. (The rule errs both ways: the data is built minutes
// before the condition turns True, and the condition's time is reset by
// `clusterctl move`; AnnotationCarried has neither problem.)
func createdAfterInit(a *addonsv1.FirstBootAddon, cluster *clusterv1.Cluster) bool {
	c := conditions.Get(cluster, clusterv1.ClusterControlPlaneInitializedCondition)
	return c != nil && c.Status == metav1.ConditionTrue && a.CreationTimestamp.After(c.LastTransitionTime.Time)
}
