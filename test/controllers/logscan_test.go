package controllers_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// leakPatterns match key material and bootstrap tokens in any form a log
// line could carry them: PEM, base64 of PEM, kubeadm's token syntax.
var leakPatterns = []*regexp.Regexp{
	regexp.MustCompile(`PRIVATE KEY`),
	regexp.MustCompile(`LS0tLS1CRUdJTi`), // base64 of "-----BEGIN"
	regexp.MustCompile(`\b[a-z0-9]{6}\.[a-z0-9]{16}\b`),
}

// findLeaks returns what of secrets, or of leakPatterns, appears in text.
func findLeaks(text string, secrets []string) []string {
	var out []string
	for _, p := range leakPatterns {
		if m := p.FindString(text); m != "" {
			out = append(out, fmt.Sprintf("pattern %s matched %q", p, m))
		}
	}
	for _, s := range secrets {
		if len(s) >= 6 && strings.Contains(text, s) {
			out = append(out, fmt.Sprintf("secret value of %d bytes found", len(s)))
		}
	}
	return out
}

// scanLogs checks everything logged during the run against the patterns and
// against every credential that exists in the API server at the end: the
// values of Secrets of every type, passwords in KubeadmConfigs, and what the
// scenarios registered with registerCredential.
func scanLogs(ctx context.Context) error {
	secrets := registeredCredentials()
	configs := &bootstrapv1.KubeadmConfigList{}
	if err := k8s.List(ctx, configs); err != nil {
		return err
	}
	for _, c := range configs.Items {
		for _, u := range c.Spec.Users {
			secrets = append(secrets, u.Passwd)
		}
		secrets = append(secrets, c.Spec.JoinConfiguration.Discovery.BootstrapToken.Token)
	}
	all := &corev1.SecretList{}
	if err := k8s.List(ctx, all); err != nil {
		return err
	}
	for i := range all.Items {
		secrets = append(secrets, secretCredentials(&all.Items[i])...)
	}
	text := logs.String()
	if len(text) == 0 {
		return fmt.Errorf("no log output was captured; the scan would prove nothing")
	}
	if leaks := findLeaks(text, secrets); len(leaks) > 0 {
		return fmt.Errorf("%d leaks in %d bytes of logs: %s", len(leaks), len(text), strings.Join(leaks, "; "))
	}
	fmt.Printf("log scan: %d bytes of logs, %d credentials checked, no leaks\n", len(text), len(secrets))
	return nil
}

// secretCredentials are the literal values of a Secret that must never be
// logged. Every type counts: Opaque, bootstrap tokens, and Cluster API's
// cluster.x-k8s.io/secret (CA keys, kubeconfigs, bootstrap data). Left out
// are only values that are public by design: certificates, and a bootstrap
// token's metadata (id, expiry, usages, groups, description) and a bootstrap
// data Secret's format, which the controllers name in logs on purpose.
func secretCredentials(s *corev1.Secret) []string {
	switch s.Type {
	case bootstrapapi.SecretTypeBootstrapToken:
		return []string{string(s.Data[bootstrapapi.BootstrapTokenSecretKey])}
	case corev1.SecretTypeServiceAccountToken:
		return []string{string(s.Data[corev1.ServiceAccountTokenKey])}
	}
	var out []string
	for k, v := range s.Data {
		switch {
		case k == corev1.TLSCertKey || k == corev1.ServiceAccountRootCAKey:
		case k == "format" && s.Type == clusterv1.ClusterSecretType:
		default:
			out = append(out, string(v))
		}
	}
	return out
}

// extraCredentials are values scenarios know to be secret beyond whole
// Secret values: a fragment of a value an error message could quote.
var extraCredentials struct {
	mu     sync.Mutex
	values []string
}

// registerCredential adds v to what the final log scan looks for.
func registerCredential(v string) {
	extraCredentials.mu.Lock()
	defer extraCredentials.mu.Unlock()
	extraCredentials.values = append(extraCredentials.values, v)
}

func registeredCredentials() []string {
	extraCredentials.mu.Lock()
	defer extraCredentials.mu.Unlock()
	return append([]string(nil), extraCredentials.values...)
}

// TestLogScanDetectsLeaks makes sure the final scan is not vacuous.
func TestLogScanDetectsLeaks(t *testing.T) {
	for name, text := range map[string]string{
		"pem":      "msg=\"x\" key=\"-----BEGIN EC PRIVATE KEY-----\"",
		"base64":   "data=LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQ==",
		"token":    "token=abcdef.0123456789abcdef",
		"password": "user passwd=hunter2-hunter2",
	} {
		if leaks := findLeaks(text, []string{"hunter2-hunter2"}); len(leaks) == 0 {
			t.Errorf("%s: leak not detected in %q", name, text)
		}
	}
	if leaks := findLeaks(`"KubeadmConfig"={"name":"worker-1","namespace":"ns-abc12"} reconcileID="0f1e2d3c-..."`, nil); len(leaks) != 0 {
		t.Errorf("false positive: %v", leaks)
	}
}
