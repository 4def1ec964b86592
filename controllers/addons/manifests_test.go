package addons

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonsv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
	"github.com/nodeboot/nodeboot/bootstrap"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// TestSecretContentIsNeverReported: a malformed document in a Secret is
// reported by key, document number and a generic reason; the Secret's
// content appears in no error, condition or status, whichever way it
// breaks the parser. The same document in a ConfigMap keeps the parser's
// message, which for some of these quotes the content: that is what the
// Secret case withholds.
func TestSecretContentIsNeverReported(t *testing.T) {
	const secret = "hunter2hunter2"
	const first = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ok\n---\n"
	const withheld = "(the parser's message is withheld because the source is a Secret)"
	cases := []struct {
		name, doc string
		// reason is the Secret's message after "document 2: ".
		reason string
		// configMap is the ConfigMap's message after "document 2: ".
		configMap string
	}{
		{"sequence as a map key", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ndata:\n  ? [" + secret + "]\n",
			"not YAML " + withheld,
			`not YAML: error converting YAML to JSON: yaml: invalid map key: []interface {}{"` + secret + `"}`},
		{"mapping as a map key", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ndata:\n  ? {password: " + secret + "}\n",
			"not YAML " + withheld,
			`not YAML: error converting YAML to JSON: yaml: invalid map key: map[interface {}]interface {}{"password":"` + secret + `"}`},
		{"unclosed flow sequence", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  password: [" + secret + "\n",
			"not YAML " + withheld,
			"not YAML: error converting YAML to JSON: yaml: line 6: did not find expected ',' or ']'"},
		{"unknown escape", "apiVersion: v1\nkind: Secret\nstringData: {\"password\": \"" + secret + "\\q\"}\n",
			"not YAML " + withheld,
			"not YAML: error converting YAML to JSON: yaml: line 3: found unknown escape character"},
		{"scalar document", secret + "\n",
			"not YAML " + withheld,
			"not YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal string into Go value of type map[string]interface {}"},
		{"kind missing", "apiVersion: " + secret + "\nmetadata:\n  name: s\n", "kind is missing", "kind is missing"},
	}
	cluster := vectorInput(t, testenv.Vectors(t, "cc-init-minimal")[0])
	labelCluster(cluster)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := map[string]string{"a.yaml": first + c.doc}
			for _, kind := range []addonsv1.ManifestKind{addonsv1.ManifestsSecret, addonsv1.ManifestsConfigMap} {
				var src client.Object = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: "default"}, Data: data}
				want := "spec.manifests: Invalid value: \"ConfigMap default/creds\": ConfigMap default/creds data[a.yaml] document 2: " + c.configMap
				if kind == addonsv1.ManifestsSecret {
					src = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: "default"}, Data: map[string][]byte{"a.yaml": []byte(data["a.yaml"])}}
					want = "spec.manifests: Invalid value: \"Secret default/creds\": Secret default/creds data[a.yaml] document 2: " + c.reason
				}
				a := addon("creds", addonsv1.FirstBootAddonSpec{Manifests: &addonsv1.ManifestsSource{Kind: kind, Name: "creds"}})

				// The FirstBootAddon's own status.
				r := &FirstBootAddonReconciler{Client: fakeClient(t, src, a)}
				got, _ := reconcileOne(t, r, "creds")
				cond := meta.FindStatusCondition(got.Status.Conditions, addonsv1.SourceValidCondition)
				require.NotNil(t, cond, kind)
				require.Equal(t, addonsv1.MalformedManifestReason, cond.Reason, kind)
				require.Equal(t, want, cond.Message, kind)

				// The KubeadmConfig's condition, through the extension.
				_, err := buildWith(t, NewExtension(fakeClient(t, src, a), ExtensionOptions{}), vectorInputCopy(cluster))
				require.Error(t, err, kind)
				var invalid *bootstrap.InvalidError
				require.True(t, errors.As(err, &invalid), "%s: %v", kind, err)
				require.Len(t, invalid.Problems, 1, kind)

				if kind != addonsv1.ManifestsSecret {
					continue
				}
				status, jerr := json.Marshal(got.Status)
				require.NoError(t, jerr)
				problems, jerr := json.Marshal(invalid.Problems)
				require.NoError(t, jerr)
				for what, text := range map[string]string{
					"status": string(status), "error": err.Error(), "problems": string(problems), "invalid": invalid.Error(),
				} {
					require.NotContains(t, text, secret, "the Secret's content leaked into the %s", what)
				}
			}
		})
	}
}
