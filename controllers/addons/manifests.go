package addons

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	addonsv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
)

// manifests reads a ConfigMap or Secret source: every data key, in key
// order, holds one or more YAML documents, each a Kubernetes object with
// apiVersion, kind and metadata.name (as for a ClusterResourceSet). The
// result joins the documents with "---" separators. Problems with a Secret's
// documents name the key and the document but never quote its content.
func (r *Resolver) manifests(ctx context.Context, a *addonsv1.FirstBootAddon) ([]byte, error) {
	src := a.Spec.Manifests
	mp := specPath.Child("manifests")
	key := client.ObjectKey{Namespace: a.Namespace, Name: src.Name}
	data := map[string][]byte{}
	var err error
	if src.Kind == addonsv1.ManifestsSecret {
		var s corev1.Secret
		if err = r.Client.Get(ctx, key, &s); err == nil {
			data = s.Data
		}
	} else {
		var cm corev1.ConfigMap
		if err = r.Client.Get(ctx, key, &cm); err == nil {
			for k, v := range cm.Data {
				data[k] = []byte(v)
			}
		}
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil, &SpecError{Object: objectRef(a), Reason: addonsv1.SourceNotFoundReason, NotFound: true,
			Errs: field.ErrorList{field.NotFound(mp.Child("name"), fmt.Sprintf("%s %s/%s", src.Kind, a.Namespace, src.Name))}}
	case err != nil:
		return nil, fmt.Errorf("%s: get %s %s: %w", objectRef(a), src.Kind, key, err)
	}
	ref := fmt.Sprintf("%s %s/%s", src.Kind, a.Namespace, src.Name)
	out, errs := joinManifests(ref, data, mp, src.Kind == addonsv1.ManifestsSecret)
	if len(errs) > 0 {
		return nil, &SpecError{Object: objectRef(a), Reason: addonsv1.MalformedManifestReason, Errs: errs}
	}
	return out, nil
}

// secretDetail replaces a parser's message for a Secret's documents: YAML
// and JSON parsers quote the text they choke on, which would copy the
// Secret's content into conditions, events and logs.
const secretDetail = "the parser's message is withheld because the source is a Secret"

// joinManifests checks and joins the documents of every key. With secret
// set, messages give the key, the document number and a generic reason only.
func joinManifests(ref string, data map[string][]byte, p *field.Path, secret bool) ([]byte, field.ErrorList) {
	var errs field.ErrorList
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out bytes.Buffer
	docs := 0
	for _, k := range keys {
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data[k])))
		for n := 1; ; n++ {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				errs = append(errs, field.Invalid(p, ref, fmt.Sprintf("%s data[%s] document %d: %s", ref, k, n,
					describe("cannot be split into YAML documents", err, secret))))
				break
			}
			if isBlank(doc) {
				continue
			}
			if reason, detail := checkObject(doc); reason != "" {
				errs = append(errs, field.Invalid(p, ref, fmt.Sprintf("%s data[%s] document %d: %s", ref, k, n,
					describe(reason, detail, secret))))
				continue
			}
			out.WriteString("---\n")
			out.Write(bytes.TrimRight(doc, "\n"))
			out.WriteString("\n")
			docs++
		}
	}
	if docs == 0 && len(errs) == 0 {
		errs = append(errs, field.Invalid(p, ref, ref+" holds no Kubernetes object"))
	}
	return out.Bytes(), errs
}

func isBlank(doc []byte) bool {
	for _, l := range bytes.Split(doc, []byte("\n")) {
		l = bytes.TrimSpace(l)
		if len(l) > 0 && l[0] != '#' && !bytes.Equal(l, []byte("---")) {
			return false
		}
	}
	return true
}

// describe is a problem's message: the reason, which never quotes the
// document, then the parser's detail, which may, unless the source is a
// Secret.
func describe(reason string, detail error, secret bool) string {
	switch {
	case detail == nil:
		return reason
	case secret:
		return reason + " (" + secretDetail + ")"
	default:
		return reason + ": " + detail.Error()
	}
}

// checkObject returns why doc is not a Kubernetes object, or "": a reason
// that never quotes the document and, when parsing failed, the parser's
// error, which may.
func checkObject(doc []byte) (string, error) {
	var u unstructured.Unstructured
	if err := yaml.Unmarshal(doc, &u.Object); err != nil {
		return "not YAML", err
	}
	switch {
	case u.Object == nil:
		return "not a YAML mapping", nil
	case u.GetAPIVersion() == "":
		return "apiVersion is missing", nil
	case u.GetKind() == "":
		return "kind is missing", nil
	case u.GetName() == "" && u.GetGenerateName() == "":
		return "metadata.name is missing", nil
	case u.GetGenerateName() != "" && u.GetName() == "":
		return "metadata.generateName cannot be applied idempotently; set metadata.name", nil
	}
	return "", nil
}
