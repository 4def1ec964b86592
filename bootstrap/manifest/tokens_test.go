package manifest

import (
	"errors"
	"strings"
	"testing"
)

// TestMalformedBootstrapTokenNotShown: Cluster API's own decode error for a
// malformed bootstrap token quotes the token; Parse names the field instead
// and never prints the value, in a KubeadmConfig and a template alike, and
// accepts what that decode accepts.
func TestMalformedBootstrapTokenNotShown(t *testing.T) {
	config := func(token string) string {
		return "apiVersion: bootstrap.cluster.x-k8s.io/v1beta2\nkind: KubeadmConfig\nmetadata:\n  name: k\n  namespace: default\n" +
			"spec:\n  initConfiguration:\n    bootstrapTokens:\n    - token: " + token + "\n"
	}
	template := func(token string) string {
		return "apiVersion: bootstrap.cluster.x-k8s.io/v1beta2\nkind: KubeadmConfigTemplate\nmetadata:\n  name: t\n  namespace: default\n" +
			"spec:\n  template:\n    spec:\n      initConfiguration:\n        bootstrapTokens:\n        - token: abcdef.0123456789abcdef\n        - token: " + token + "\n"
	}
	for _, tc := range []struct {
		doc, path, secret string
	}{
		{config("abcdef.0123456789abcdefSECRETX"), "spec.initConfiguration.bootstrapTokens[0].token", "0123456789abcdefSECRETX"},
		{config("ABCDEF.0123456789ABCDEF"), "spec.initConfiguration.bootstrapTokens[0].token", "0123456789ABCDEF"},
		{config(`'"abcdef.0123456789abcdef'`), "spec.initConfiguration.bootstrapTokens[0].token", ""},
		{config(`""`), "spec.initConfiguration.bootstrapTokens[0].token", ""},
		{config("null"), "spec.initConfiguration.bootstrapTokens[0].token", ""},
		{template("q8xz1v.k2n4b6m8p0r2t4v6X"), "spec.template.spec.initConfiguration.bootstrapTokens[1].token", "k2n4b6m8p0r2t4v6X"},
	} {
		_, err := Parse(strings.NewReader(tc.doc))
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", tc.path, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.path) || tc.secret != "" && strings.Contains(err.Error(), tc.secret) {
			t.Errorf("want the field %s and no token in: %v", tc.path, err)
		}
	}
	for _, ok := range []string{config("abcdef.0123456789abcdef"), config("'a1b2c3.0123456789abcdef'"), template("abcdef.0123456789abcdef")} {
		if _, err := Parse(strings.NewReader(ok)); err != nil {
			t.Errorf("refused what Cluster API's decode accepts: %v\n%s", err, ok)
		}
	}
}
