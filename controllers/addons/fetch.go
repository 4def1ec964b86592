package addons

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nodeboot/nodeboot/addons"
	nodebootv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
	"github.com/nodeboot/nodeboot/bootstrap"
	"github.com/nodeboot/nodeboot/controllers/bootstrapdata"
	"github.com/nodeboot/nodeboot/internal/objname"
	"github.com/nodeboot/nodeboot/internal/tlsserve"
	"github.com/nodeboot/nodeboot/provisioning"
)

// FetchOptions enable the size fallback: when an init node's bootstrap data
// with its add-ons inline would exceed the budget, the manifests leave the
// data and the node's fetch step (package addons) gets them from the
// manager's fetch endpoint (fetchendpoint.go) right after kubeadm init,
// each pinned by its sha256 (apply.sh verifies every one before applying
// any) and with a credential valid for that KubeadmConfig only. The first
// boot stays verified; what it needs beyond the data is the management
// cluster being reachable, which is why it is a fallback.
type FetchOptions struct {
	// URL is where the nodes' fetch step reaches the fetch endpoint
	// (FetchServer, fetchendpoint.go): an https URL without query, e.g. a
	// LoadBalancer or Ingress in front of the manager's
	// --addons-fetch-bind-address. Empty disables the fallback.
	URL string
	// CABundle is the PEM CA nodes trust for URL instead of their system's;
	// empty trusts the system (an Ingress with a public certificate).
	CABundle []byte
	// Reader reads existing fetch Secrets (the KubeadmConfig reconciler
	// writes them, from bootstrap.Result.Secrets). It should be uncached (the
	// manager's API reader) so a filtered Secret cache never hides a
	// credential already handed to a node. ExtensionOptions.APIReader, when
	// set, is used instead.
	Reader client.Reader
}

// Enabled reports whether the fallback is configured.
func (o FetchOptions) Enabled() bool { return o.URL != "" }

// Validate checks the options as the manager's flags give them.
func (o FetchOptions) Validate() error {
	if o.URL == "" {
		return nil
	}
	if err := tlsserve.CheckNodeURL(o.URL, "add-on fetch"); err != nil {
		return err
	}
	return tlsserve.CheckCABundle(o.CABundle, "add-on fetch")
}

// Keys, type and path of the fetch Secret and endpoint.
const (
	// FetchSecretType marks a Secret holding fetchable add-on manifests.
	FetchSecretType corev1.SecretType = "nodeboot.dev/addons-fetch"
	// FetchTokenKey holds the config's credential; every other key is the
	// hex sha256 of the manifest it holds.
	FetchTokenKey = "token"
	// FetchPath prefixes the endpoint's paths:
	// FetchPath<namespace>/<KubeadmConfig>/<sha256>, with the credential in
	// an "Authorization: Bearer" header.
	FetchPath = "/nodeboot/v1/addons/"

	fetchSecretSuffix = ".nodeboot-addons"
	// maxFetchSecret keeps the manifests well inside a Secret's 1 MiB.
	maxFetchSecret = 900 << 10
)

// FetchSecretName is the name of the Secret holding the fetchable add-ons
// of a KubeadmConfig. Should another config's data Secret have that name,
// the type and owner checks refuse to read or replace it.
func FetchSecretName(config string) string {
	return objname.WithSuffix(config, fetchSecretSuffix)
}

// fetchFallback moves the inline add-ons of an over-budget init Plan to the
// fetch endpoint. It is called after the add-ons were contributed inline;
// restore undoes that. It leaves the Plan alone when the data fits, when
// the fallback is off or when the data cannot be rendered at all (the
// caller's render reports why).
func (e *Extension) fetchFallback(ctx context.Context, cluster *clusterv1.Cluster, config *bootstrapv1.KubeadmConfig,
	result *bootstrap.Result, list []addons.Addon, restore func()) error {
	fo := e.opts.Fetch
	budget := result.Options.MaxBytes
	if !fo.Enabled() || budget <= 0 {
		return nil
	}
	unbounded := *result
	unbounded.Options.MaxBytes = 0
	out, err := unbounded.Render()
	if err != nil || len(out.Data) <= budget {
		return nil
	}
	inlineBytes := len(out.Data)

	existing := &corev1.Secret{}
	key := client.ObjectKey{Namespace: config.Namespace, Name: FetchSecretName(config.Name)}
	token := ""
	switch err := e.apiReader().Get(ctx, key, existing); {
	case err == nil:
		if !bootstrapdata.ConfigMayTake(config, existing, FetchSecretType) {
			return &bootstrapdata.SecretConflictError{Namespace: key.Namespace, Name: key.Name}
		}
		// A leftover's credential is not this config's: a new one is minted.
		if ownedBy(existing, config) {
			token = string(existing.Data[FetchTokenKey])
		}
	case apierrors.IsNotFound(err):
	default:
		return fmt.Errorf("read add-on fetch Secret %s: %w", key, err)
	}
	if len(token) < 32 {
		if token, err = newToken(); err != nil {
			return err
		}
	}

	data := map[string][]byte{FetchTokenKey: []byte(token)}
	total := 0
	remote := make([]addons.Addon, len(list))
	var names []string
	for i, a := range list {
		remote[i] = a
		if len(a.Manifest) == 0 {
			continue
		}
		sum := addons.Digest(a.Manifest)
		data[sum] = a.Manifest
		total += len(a.Manifest)
		remote[i].Manifest, remote[i].SHA256, remote[i].CABundle = nil, sum, fo.CABundle
		// The credential travels in a header, never in the URL (logs,
		// command lines).
		remote[i].URL = strings.TrimSuffix(fo.URL, "/") + FetchPath + config.Namespace + "/" + config.Name + "/" + sum
		remote[i].Credential = token
		names = append(names, a.Name)
	}
	if len(names) == 0 || total > maxFetchSecret {
		return nil
	}
	restore()
	if err := addons.Contribute(result.Plan, remote, e.opts.Addons); err != nil {
		return fmt.Errorf("KubeadmConfig %s/%s: add-ons to fetch: %w", config.Namespace, config.Name, err)
	}
	result.Secrets = append(result.Secrets, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:      key.Name,
			Namespace: key.Namespace,
			Labels:    map[string]string{clusterv1.ClusterNameLabel: cluster.Name},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: bootstrapv1.GroupVersion.String(), Kind: "KubeadmConfig",
				Name: config.Name, UID: config.UID, Controller: ptr.To(true),
			}},
		},
		Type: FetchSecretType,
		Data: data,
	})
	slices.Sort(names)
	result.Conditions = append(result.Conditions, metav1.Condition{
		Type:   nodebootv1.AddonsFetchedCondition,
		Status: metav1.ConditionTrue,
		Reason: nodebootv1.OverBudgetReason,
		Message: fmt.Sprintf("with its add-ons inline the bootstrap data is %d bytes, over the budget of %d; "+
			"the node fetches %s from %s after kubeadm init, each pinned by sha256",
			inlineBytes, budget, strings.Join(names, ", "), addons.RedactURL(fo.URL)),
	})
	return nil
}

// ownedBy reports whether the config controls s (Kind, name and UID).
func ownedBy(s *corev1.Secret, config *bootstrapv1.KubeadmConfig) bool {
	return bootstrapdata.ConfigControls(config, s)
}

// newToken is a credential for one config: 256 random bits, URL-safe.
func newToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("add-on fetch credential: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// planSnapshot records what addons.Contribute changes in a Plan (it appends
// files and inserts one command), so the inline contribution can be undone.
func planSnapshot(p *provisioning.Plan) (restore func()) {
	files, cmds := len(p.Files), slices.Clone(p.Commands)
	return func() { p.Files, p.Commands = p.Files[:files], cmds }
}
