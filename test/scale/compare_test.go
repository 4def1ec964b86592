package scale_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// tokenPlaceholder replaces a config's bootstrap token in its data. The
// token is the one per-run part of a join config's data: each manager
// generates its own. Everything else must be the same byte for byte.
const tokenPlaceholder = "<bootstrap-token>"

// dataSecret is a bootstrap data Secret as one manager wrote it, its
// bootstrap token replaced by tokenPlaceholder.
type dataSecret struct {
	typ    corev1.SecretType
	labels map[string]string
	// owners are the owner references without their UIDs, which differ
	// between the two API servers.
	owners []string
	data   map[string][]byte
}

// format is the Secret's format key: how samples are counted.
func (d dataSecret) format() string { return string(d.data["format"]) }

// collectData reads the data Secret of every KubeadmConfig in ns that
// reports one, and normalises its bootstrap token from what the manager
// itself stored: the token in the config's spec (where CABPK and nodeboot
// both record it) must be the one the manager created on the workload
// cluster (a kube-system bootstrap token Secret on the API server that
// stands in for every workload cluster here), and only that string is
// replaced. A config whose data carries a token other than its stored one
// keeps it, and differs.
func collectData(ctx context.Context, k8s client.Client, ns string) (map[string]dataSecret, error) {
	configs := &bootstrapv1.KubeadmConfigList{}
	if err := k8s.List(ctx, configs, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	secrets := &corev1.SecretList{}
	if err := k8s.List(ctx, secrets, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	byName := map[string]*corev1.Secret{}
	for i := range secrets.Items {
		byName[secrets.Items[i].Name] = &secrets.Items[i]
	}
	tokens := &corev1.SecretList{}
	if err := k8s.List(ctx, tokens, client.InNamespace("kube-system")); err != nil {
		return nil, err
	}
	stored := map[string]string{} // token id -> token secret
	for _, s := range tokens.Items {
		if s.Type == bootstrapapi.SecretTypeBootstrapToken {
			stored[string(s.Data[bootstrapapi.BootstrapTokenIDKey])] = string(s.Data[bootstrapapi.BootstrapTokenSecretKey])
		}
	}
	out := map[string]dataSecret{}
	for i := range configs.Items {
		c := &configs.Items[i]
		if !dataSecretCreated(c) {
			continue
		}
		s := byName[c.Status.DataSecretName]
		if s == nil {
			return nil, fmt.Errorf("KubeadmConfig %s: data Secret %s not found", c.Name, c.Status.DataSecretName)
		}
		d, err := normalise(s, c.Spec.JoinConfiguration.Discovery.BootstrapToken.Token, stored)
		if err != nil {
			return nil, fmt.Errorf("KubeadmConfig %s: %w", c.Name, err)
		}
		out[c.Name] = d
	}
	return out, nil
}

// normalise turns a data Secret into a dataSecret, its config's token
// (from the config's spec) replaced after checking that it is a token the
// manager stored on the workload cluster (stored: token id to secret).
func normalise(s *corev1.Secret, token string, stored map[string]string) (dataSecret, error) {
	if token == "" {
		return dataSecret{}, errors.New("no bootstrap token in its spec (every config here joins)")
	}
	parts := bootstraputil.BootstrapTokenRegexp.FindStringSubmatch(token)
	if len(parts) != 3 {
		return dataSecret{}, errors.New("the token in its spec is not of kubeadm's form")
	}
	if secret, ok := stored[parts[1]]; !ok || secret != parts[2] {
		return dataSecret{}, errors.New("the token in its spec is not one the manager created on the workload cluster")
	}
	d := dataSecret{typ: s.Type, labels: s.Labels, data: map[string][]byte{}}
	for _, o := range s.OwnerReferences {
		d.owners = append(d.owners, fmt.Sprintf("%s %s/%s controller=%v", o.APIVersion, o.Kind, o.Name, o.Controller != nil && *o.Controller))
	}
	for k, v := range s.Data {
		d.data[k] = bytes.ReplaceAll(v, []byte(token), []byte(tokenPlaceholder))
	}
	return d, nil
}

// compareData compares nodeboot's data Secrets with CABPK's, config by
// config. It returns how many were compared per format and one line per
// difference.
func compareData(nodeboot, cabpk map[string]dataSecret) (perFormat map[string]int, diffs []string) {
	perFormat = map[string]int{}
	names := slices.Sorted(maps.Keys(cabpk))
	for n := range nodeboot {
		if _, ok := cabpk[n]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: nodeboot wrote data, CABPK did not", n))
		}
	}
	for _, n := range names {
		want := cabpk[n]
		got, ok := nodeboot[n]
		if !ok {
			diffs = append(diffs, fmt.Sprintf("%s: CABPK wrote data, nodeboot did not", n))
			continue
		}
		perFormat[want.format()]++
		if got.typ != want.typ {
			diffs = append(diffs, fmt.Sprintf("%s: Secret type %q, CABPK's %q", n, got.typ, want.typ))
		}
		if !maps.Equal(got.labels, want.labels) {
			diffs = append(diffs, fmt.Sprintf("%s: labels %v, CABPK's %v", n, got.labels, want.labels))
		}
		if !slices.Equal(got.owners, want.owners) {
			diffs = append(diffs, fmt.Sprintf("%s: owners %v, CABPK's %v", n, got.owners, want.owners))
		}
		keys := slices.Sorted(maps.Keys(want.data))
		if gk := slices.Sorted(maps.Keys(got.data)); !slices.Equal(gk, keys) {
			diffs = append(diffs, fmt.Sprintf("%s: data keys %v, CABPK's %v", n, gk, keys))
		}
		for _, k := range keys {
			if !bytes.Equal(got.data[k], want.data[k]) {
				diffs = append(diffs, fmt.Sprintf("%s: %s differs (%s)", n, k, firstDifference(got.data[k], want.data[k])))
			}
		}
	}
	return perFormat, diffs
}

// firstDifference locates the first differing byte of got and want and
// shows a little of each around it (the fleet's data holds only the
// vectors' test certificates and the token placeholder).
func firstDifference(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	line := 1 + bytes.Count(want[:i], []byte("\n"))
	excerpt := func(b []byte) string {
		from, to := max(0, i-30), min(len(b), i+30)
		return strings.ToValidUTF8(string(b[from:to]), "?")
	}
	return fmt.Sprintf("byte %d, line %d: %q, CABPK's %q; %d bytes, CABPK's %d", i, line, excerpt(got), excerpt(want), len(got), len(want))
}
