package manifest

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/nodeboot/nodeboot/internal/crdvalidate"
)

// readKinds are the kinds Parse decodes, with the group and version it
// decodes them as ("" version: any version of the group).
var readKinds = map[string]schema.GroupVersion{
	"Cluster":               clusterv1.GroupVersion,
	"Machine":               clusterv1.GroupVersion,
	"MachinePool":           clusterv1.GroupVersion,
	"KubeadmConfig":         bootstrapv1.GroupVersion,
	"KubeadmConfigTemplate": bootstrapv1.GroupVersion,
	"KubeadmControlPlane":   {Group: "controlplane.cluster.x-k8s.io"},
	"Secret":                {Version: "v1"},
}

// ownKinds are kinds whose name no other API uses: in any other group or
// version they are an error, never a skip, so a KubeadmConfig is not lost
// to a wrong apiVersion.
var ownKinds = map[string]bool{"KubeadmConfig": true, "KubeadmConfigTemplate": true}

// classify says whether a document of kind in gv is read. It is an error
// for a kind nodeboot reads in an apiVersion it cannot decode (which would
// otherwise be decoded wrong or skipped), for a read kind spelt in another
// case, and for an unknown kind of the bootstrap group.
func classify(kind string, gv schema.GroupVersion) (bool, error) {
	if isList(kind) {
		return true, nil
	}
	want, known := readKinds[kind]
	if !known {
		for k := range readKinds {
			if strings.EqualFold(k, kind) {
				return false, errorf(ErrKind, "kind: must be spelt %s", k)
			}
		}
		if gv.Group == bootstrapv1.GroupVersion.Group {
			return false, errorf(ErrKind, "kind: not a kind of %s that nodeboot reads (KubeadmConfig, KubeadmConfigTemplate)", gv.Group)
		}
		return false, nil
	}
	switch {
	case gv.Group != want.Group && !ownKinds[kind]:
		return false, nil // another API's kind of the same name
	case gv.Group != want.Group || want.Version != "" && gv.Version != want.Version:
		return false, errorf(ErrKind, "apiVersion: nodeboot reads %s only as %s", kind, want.String())
	}
	return true, nil
}

// isList: kubectl prints several objects as a v1 List; the API server's
// typed lists (KubeadmConfigList) are read the same way.
func isList(kind string) bool {
	return kind == "List" || strings.HasSuffix(kind, "List") && len(kind) > len("List")
}

// addList reads the items of a List; items of a typed list may omit their
// apiVersion and kind, as the API server writes them.
func (s *Set) addList(tm TypeMeta, gv schema.GroupVersion, js []byte) error {
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(js, &list); err != nil {
		return errorf(ErrInvalid, "%s: items: %s", tm.ref(), cleanDecodeError(err))
	}
	var errs []string
	for i, item := range list.Items {
		var itm TypeMeta
		if err := json.Unmarshal(item, &itm); err != nil {
			errs = append(errs, fmt.Sprintf("items[%d]: %s", i, cleanDecodeError(err)))
			continue
		}
		if itm.Kind == "" && tm.Kind != "List" {
			itm.Kind, itm.APIVersion = strings.TrimSuffix(tm.Kind, "List"), gv.String()
			patched, err := withTypeMeta(item, itm)
			if err != nil {
				errs = append(errs, fmt.Sprintf("items[%d]: %s", i, cleanDecodeError(err)))
				continue
			}
			item = patched
		}
		if err := s.addObject(itm, func() ([]byte, error) { return item, nil }); err != nil {
			errs = append(errs, fmt.Sprintf("items[%d]: %v", i, err))
		}
	}
	if len(errs) > 0 {
		return errorf(ErrInvalid, "%s", strings.Join(errs, "\n"))
	}
	return nil
}

func withTypeMeta(item json.RawMessage, tm TypeMeta) (json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(item, &obj); err != nil {
		return nil, err
	}
	obj["apiVersion"], _ = json.Marshal(tm.APIVersion)
	obj["kind"], _ = json.Marshal(tm.Kind)
	return json.Marshal(obj)
}

// validateCRD refuses what the API server would, by the kind's CRD.
func validateCRD(ref, kind string, js []byte) error {
	v, err := crdvalidate.For(kind)
	if err != nil {
		return fmt.Errorf("%s: %w", ref, err)
	}
	var obj map[string]any
	if err := json.Unmarshal(js, &obj); err != nil {
		return errorf(ErrInvalid, "%s: %s", ref, cleanDecodeError(err))
	}
	if errs := v.Validate(obj); len(errs) > 0 {
		return errorf(ErrInvalid, "%s: %s (the CRD's validation, as kubectl apply)", ref, crdvalidate.Compact(errs))
	}
	return nil
}
