package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	yaml3 "gopkg.in/yaml.v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/nodeboot/nodeboot/bootstrap"
)

// Set is every object read from one input.
type Set struct {
	Clusters      []*clusterv1.Cluster
	Machines      []*clusterv1.Machine
	MachinePools  []*clusterv1.MachinePool
	Configs       []*bootstrapv1.KubeadmConfig
	Templates     []*bootstrapv1.KubeadmConfigTemplate
	ControlPlanes []*unstructured.Unstructured
	Secrets       bootstrap.SecretMap
}

// Parse reads every document of r. A document must be a Kubernetes object
// (apiVersion and kind). Kinds nodeboot reads are decoded strictly and, for
// KubeadmConfig and KubeadmConfigTemplate, validated against their CRD as
// the API server would; a List (kubectl get -o yaml of several objects) is
// read item by item. A kind nodeboot reads in another apiVersion, or an
// unknown kind of the bootstrap.cluster.x-k8s.io group, is an error. Other
// kinds are skipped (the CLI's add-on reader takes FirstBootAddons and
// ConfigMaps). Every error names the document and object.
func Parse(r io.Reader) (*Set, error) {
	s := &Set{Secrets: bootstrap.SecretMap{}}
	if err := documents(r, s.addDocument); err != nil {
		return nil, err
	}
	return s, nil
}

// Documents calls fn with every document of r that is not blank, within the
// limits of limits.go, after checking its YAML: syntax, duplicate keys,
// alias expansion, node count. Errors fn returns are collected, one line
// each naming the document (errors.Join, so errors.Is sees each); reading
// stops at the first error of the stream itself. Other readers of the same
// input (the CLI's add-on objects) use it so every document is read, and
// bounded, the same way.
func Documents(r io.Reader, fn func(raw []byte) error) error {
	return documents(r, func(d *document) error { return fn(d.raw) })
}

func documents(r io.Reader, fn func(d *document) error) error {
	dr, err := newDocReader(r)
	if err != nil {
		return err
	}
	var errs []error
	for index := 1; ; index++ {
		raw, line, err := dr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("document %d: %w", index, err))
			break
		}
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		root, err := parseDocument(raw, line)
		if err != nil {
			if root != nil && root.Kind == yaml3.MappingNode {
				err = fmt.Errorf("%s: %w", nodeTypeMeta(root).ref(), err)
			}
			errs = append(errs, fmt.Errorf("document %d: %w", index, err))
			continue
		}
		if root == nil {
			continue
		}
		d := &document{index: index, line: line, raw: raw, mapping: root.Kind == yaml3.MappingNode}
		if d.mapping {
			d.tm = nodeTypeMeta(root)
		}
		if err := fn(d); err != nil {
			errs = append(errs, fmt.Errorf("document %d: %w", index, err))
		}
	}
	return errors.Join(errs...)
}

// TypeMeta is what every document is read for first: its kind and name.
type TypeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

// ref names the object in messages.
func (tm TypeMeta) ref() string {
	kind := tm.Kind
	if kind == "" {
		kind = "object"
	}
	if tm.Metadata.Namespace == "" {
		return kind + " " + tm.Metadata.Name
	}
	return kind + " " + tm.Metadata.Namespace + "/" + tm.Metadata.Name
}

// nodeTypeMeta reads the TypeMeta from the parsed document, so a document of
// a kind nobody reads is never converted or decoded.
func nodeTypeMeta(root *yaml3.Node) TypeMeta {
	var tm TypeMeta
	scalar := func(m *yaml3.Node, key string) string {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == key && m.Content[i+1].Kind == yaml3.ScalarNode {
				return m.Content[i+1].Value
			}
		}
		return ""
	}
	tm.APIVersion, tm.Kind = scalar(root, "apiVersion"), scalar(root, "kind")
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "metadata" && root.Content[i+1].Kind == yaml3.MappingNode {
			tm.Metadata.Name = scalar(root.Content[i+1], "name")
			tm.Metadata.Namespace = scalar(root.Content[i+1], "namespace")
		}
	}
	return tm
}

// checkBootstrapTokens refuses a malformed bootstrap token before the
// decode does: Cluster API's BootstrapTokenString quotes the whole token in
// its error, a credential in a terminal or a CI log. Each token at path (a
// list of objects) goes through BootstrapTokenString's own UnmarshalJSON,
// so what passes here is exactly what the decode accepts; the error names
// the field, never the value. Anything else malformed is the decode's.
func checkBootstrapTokens(ref string, js []byte, path ...string) error {
	raw := json.RawMessage(js)
	for _, field := range path {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return nil
		}
		if raw = m[field]; raw == nil {
			return nil
		}
	}
	var list []map[string]json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil
	}
	for i, item := range list {
		tok, ok := item["token"]
		if !ok {
			continue
		}
		if (&bootstrapv1.BootstrapTokenString{}).UnmarshalJSON(tok) != nil {
			return errorf(ErrInvalid, "%s: %s[%d].token: must be six and sixteen of [a-z0-9] joined by a dot (abcdef.0123456789abcdef); the value is not shown, it is a credential",
				ref, strings.Join(path, "."), i)
		}
	}
	return nil
}

func (s *Set) addDocument(d *document) error {
	if !d.mapping {
		return errorf(ErrNotObject, "not a Kubernetes object: a mapping with apiVersion and kind is expected")
	}
	return s.addObject(d.tm, func() ([]byte, error) { return yaml.YAMLToJSON(d.raw) })
}

// addObject reads one object; toJSON is called only for kinds that are read.
func (s *Set) addObject(tm TypeMeta, toJSON func() ([]byte, error)) error {
	ref := tm.ref()
	if tm.APIVersion == "" || tm.Kind == "" {
		return errorf(ErrNotObject, "%s: not a Kubernetes object: apiVersion and kind are required", ref)
	}
	gv, err := schema.ParseGroupVersion(tm.APIVersion)
	if err != nil {
		return errorf(ErrNotObject, "%s: apiVersion: not GROUP/VERSION", ref)
	}
	read, err := classify(tm.Kind, gv)
	if err != nil {
		return fmt.Errorf("%s: %w", ref, err)
	}
	if !read {
		return nil
	}
	js, err := toJSON()
	if err != nil {
		return errorf(ErrInvalid, "%s: %s", ref, cleanDecodeError(err))
	}
	// sigs.k8s.io/json names the field path of unknown and mistyped fields,
	// as the API server does.
	decode := func(into any) error {
		strict, err := sigsjson.UnmarshalStrict(js, into)
		if err != nil {
			return errorf(ErrInvalid, "%s: %s", ref, cleanDecodeError(err))
		}
		if len(strict) > 0 {
			msgs := make([]string, len(strict))
			for i, e := range strict {
				msgs[i] = e.Error()
			}
			return errorf(ErrInvalid, "%s: %s", ref, strings.Join(msgs, "; "))
		}
		return nil
	}
	switch {
	case isList(tm.Kind):
		return s.addList(tm, gv, js)
	case tm.Kind == "Cluster":
		o := &clusterv1.Cluster{}
		if err := decode(o); err != nil {
			return err
		}
		s.Clusters = append(s.Clusters, o)
	case tm.Kind == "Machine":
		o := &clusterv1.Machine{}
		if err := decode(o); err != nil {
			return err
		}
		s.Machines = append(s.Machines, o)
	case tm.Kind == "MachinePool":
		o := &clusterv1.MachinePool{}
		if err := decode(o); err != nil {
			return err
		}
		s.MachinePools = append(s.MachinePools, o)
	case tm.Kind == "KubeadmConfig":
		o := &bootstrapv1.KubeadmConfig{}
		if err := checkBootstrapTokens(ref, js, "spec", "initConfiguration", "bootstrapTokens"); err != nil {
			return err
		}
		if err := decode(o); err != nil {
			return err
		}
		if err := validateCRD(ref, tm.Kind, js); err != nil {
			return err
		}
		s.Configs = append(s.Configs, o)
	case tm.Kind == "KubeadmConfigTemplate":
		o := &bootstrapv1.KubeadmConfigTemplate{}
		if err := checkBootstrapTokens(ref, js, "spec", "template", "spec", "initConfiguration", "bootstrapTokens"); err != nil {
			return err
		}
		if err := decode(o); err != nil {
			return err
		}
		if err := validateCRD(ref, tm.Kind, js); err != nil {
			return err
		}
		s.Templates = append(s.Templates, o)
	case tm.Kind == "KubeadmControlPlane":
		o := &unstructured.Unstructured{}
		if err := json.Unmarshal(js, &o.Object); err != nil {
			return errorf(ErrInvalid, "%s: %s", ref, cleanDecodeError(err))
		}
		s.ControlPlanes = append(s.ControlPlanes, o)
	case tm.Kind == "Secret":
		o := &corev1.Secret{}
		if err := decode(o); err != nil {
			return err
		}
		data := map[string][]byte{}
		for k, v := range o.Data {
			data[k] = v
		}
		for k, v := range o.StringData {
			data[k] = []byte(v)
		}
		s.Secrets[namespaceOrDefault(o.Namespace)+"/"+o.Name] = data
	}
	return nil
}

func cleanDecodeError(err error) string {
	msg := err.Error()
	for _, p := range []string{"error unmarshaling JSON: while decoding JSON: ", "error converting YAML to JSON: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	return msg
}

func namespaceOrDefault(ns string) string {
	if ns == "" {
		return "default"
	}
	return ns
}
