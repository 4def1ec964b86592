package manifest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
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

// maxDocumentBytes bounds one YAML document, so hostile input cannot make the
// reader buffer without limit.
const maxDocumentBytes = 8 << 20

// Parse reads every document of r. Unknown kinds are ignored; a document that
// does not decode into its kind is an error naming the document and object.
func Parse(r io.Reader) (*Set, error) {
	s := &Set{Secrets: bootstrap.SecretMap{}}
	if err := Documents(r, s.add); err != nil {
		return nil, err
	}
	return s, nil
}

// Documents calls fn with every non-empty document of r, numbered from 1,
// within the per-document size limit. Errors fn returns are collected, one
// line each naming the document; reading stops at the first error of the
// stream itself. Other readers of the same input (the CLI's add-on objects)
// use it so every document is read, and bounded, the same way.
func Documents(r io.Reader, fn func(raw []byte) error) error {
	reader := utilyaml.NewYAMLReader(bufio.NewReaderSize(r, 64<<10))
	var errs []string
	for doc := 1; ; doc++ {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("document %d: %w", doc, err)
		}
		if len(raw) > maxDocumentBytes {
			return fmt.Errorf("document %d: larger than %d bytes", doc, maxDocumentBytes)
		}
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		if err := fn(raw); err != nil {
			errs = append(errs, fmt.Sprintf("document %d: %v", doc, err))
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "\n"))
	}
	return nil
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

func (s *Set) add(raw []byte) error {
	var tm TypeMeta
	if err := yaml.Unmarshal(raw, &tm); err != nil {
		return fmt.Errorf("not a Kubernetes object: %w", err)
	}
	ref := tm.Kind + " " + tm.Metadata.Namespace + "/" + tm.Metadata.Name
	if tm.Metadata.Namespace == "" {
		ref = tm.Kind + " " + tm.Metadata.Name
	}
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return fmt.Errorf("%s: %s", ref, cleanDecodeError(err))
	}
	// sigs.k8s.io/json names the field path of unknown and mistyped fields,
	// as the API server does.
	decode := func(into any) error {
		strict, err := sigsjson.UnmarshalStrict(js, into)
		if err != nil {
			return fmt.Errorf("%s: %s", ref, cleanDecodeError(err))
		}
		if len(strict) > 0 {
			msgs := make([]string, len(strict))
			for i, e := range strict {
				msgs[i] = e.Error()
			}
			return fmt.Errorf("%s: %s", ref, strings.Join(msgs, "; "))
		}
		return nil
	}
	switch tm.Kind {
	case "Cluster":
		o := &clusterv1.Cluster{}
		if err := decode(o); err != nil {
			return err
		}
		s.Clusters = append(s.Clusters, o)
	case "Machine":
		o := &clusterv1.Machine{}
		if err := decode(o); err != nil {
			return err
		}
		s.Machines = append(s.Machines, o)
	case "MachinePool":
		o := &clusterv1.MachinePool{}
		if err := decode(o); err != nil {
			return err
		}
		s.MachinePools = append(s.MachinePools, o)
	case "KubeadmConfig":
		o := &bootstrapv1.KubeadmConfig{}
		if err := decode(o); err != nil {
			return err
		}
		s.Configs = append(s.Configs, o)
	case "KubeadmConfigTemplate":
		o := &bootstrapv1.KubeadmConfigTemplate{}
		if err := decode(o); err != nil {
			return err
		}
		s.Templates = append(s.Templates, o)
	case "KubeadmControlPlane":
		o := &unstructured.Unstructured{}
		if err := json.Unmarshal(js, &o.Object); err != nil {
			return fmt.Errorf("%s: %s", ref, cleanDecodeError(err))
		}
		s.ControlPlanes = append(s.ControlPlanes, o)
	case "Secret":
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
