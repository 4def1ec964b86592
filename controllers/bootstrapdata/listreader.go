package bootstrapdata

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// listPageSize is how many objects one list call asks for: large enough
// that a management cluster is read in a few calls, small enough that no
// single response is huge.
const listPageSize = 500

// bulkyPageSize is the page of kinds whose objects may each be up to 1 MiB
// (Secrets, ConfigMaps), so one response stays within a few tens of MiB.
const bulkyPageSize = 50

// DefaultMaxListedBytes is ListReader.MaxBytes when it is zero.
const DefaultMaxListedBytes = 64 << 20

// ListReader is a client.Reader that reads each kind once, with paged list
// calls, and answers every Get and List of that kind from what it listed.
// Rebuilding thousands of configs then costs a handful of list calls
// instead of several GETs per config, and every config sees the same
// snapshot. A kind is listed on first use, or up front with Preload; a kind
// the API server does not serve reads as empty, as a missing object would.
//
// Secrets and ConfigMaps can hold gigabytes in one namespace, most of it
// nothing a rebuild reads: they are listed in small pages and held up to
// MaxBytes in all. Past that the listed objects are dropped and the kind is
// read by name from the live reader (a GET per Get, nothing held), so
// memory stays bounded whatever the namespace holds.
type ListReader struct {
	// MaxBytes bounds the bytes (protobuf size) of the Secrets and
	// ConfigMaps held; 0 means DefaultMaxListedBytes.
	MaxBytes int64

	live      client.Reader
	scheme    *runtime.Scheme
	namespace string
	max       int

	mu    sync.Mutex
	kinds map[schema.GroupVersionKind]*listedKind
}

type listedKind struct {
	mu     sync.Mutex
	loaded bool
	err    error
	byKey  map[client.ObjectKey]runtime.Object
	items  []runtime.Object
	// byName: the kind was larger than MaxBytes; Get reads live.
	byName bool
}

// NewListReader reads through live. namespace limits namespaced kinds to
// one namespace ("" reads all); max bounds the objects held per kind.
func NewListReader(live client.Reader, scheme *runtime.Scheme, namespace string, max int) *ListReader {
	return &ListReader{live: live, scheme: scheme, namespace: namespace, max: max, kinds: map[schema.GroupVersionKind]*listedKind{}}
}

var _ client.Reader = (*ListReader)(nil)

// Preload lists the kinds of objs now, so access errors (RBAC, an
// unreachable API server) surface before any work starts.
func (r *ListReader) Preload(ctx context.Context, objs ...client.Object) error {
	for _, o := range objs {
		gvk, err := apiutil.GVKForObject(o, r.scheme)
		if err != nil {
			return err
		}
		if _, err := r.load(ctx, gvk, o); err != nil {
			return err
		}
	}
	return nil
}

// Get implements client.Reader from the listed objects.
func (r *ListReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	gvk, err := apiutil.GVKForObject(obj, r.scheme)
	if err != nil {
		return err
	}
	k, err := r.load(ctx, gvk, obj)
	if err != nil {
		return err
	}
	if k.byName {
		return r.live.Get(ctx, key, obj)
	}
	found, ok := k.byKey[key]
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: strings.ToLower(gvk.Kind)}, key.Name)
	}
	return copyInto(obj, found, gvk)
}

// List implements client.Reader from the listed objects; namespace and label
// selector are honoured, other options ignored.
func (r *ListReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	gvk, err := apiutil.GVKForObject(list, r.scheme)
	if err != nil {
		return err
	}
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	var item client.Object
	switch list.(type) {
	case *unstructured.UnstructuredList:
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		item = u
	case *metav1.PartialObjectMetadataList:
		p := &metav1.PartialObjectMetadata{}
		p.SetGroupVersionKind(gvk)
		item = p
	default:
		o, err := r.scheme.New(gvk)
		if err != nil {
			return err
		}
		var ok bool
		if item, ok = o.(client.Object); !ok {
			return fmt.Errorf("%s is not an object kind", gvk)
		}
	}
	k, err := r.load(ctx, gvk, item)
	if err != nil {
		return err
	}
	if k.byName {
		return fmt.Errorf("list %s: %w: more than %d bytes, read by name only", resourceName(gvk, r.namespace), ErrTooManyObjects, r.maxBytes())
	}
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	var out []runtime.Object
	for _, o := range k.items {
		m, err := meta.Accessor(o)
		if err != nil {
			return err
		}
		if lo.Namespace != "" && m.GetNamespace() != lo.Namespace {
			continue
		}
		if lo.LabelSelector != nil && !lo.LabelSelector.Matches(labels.Set(m.GetLabels())) {
			continue
		}
		out = append(out, o.DeepCopyObject())
	}
	return meta.SetList(list, out)
}

// load lists a kind once; concurrent callers of the same kind wait for it.
func (r *ListReader) load(ctx context.Context, gvk schema.GroupVersionKind, example client.Object) (*listedKind, error) {
	r.mu.Lock()
	k, ok := r.kinds[gvk]
	if !ok {
		k = &listedKind{}
		r.kinds[gvk] = k
	}
	r.mu.Unlock()
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.loaded {
		k.err = r.list(ctx, gvk, example, k)
		// A cancelled or timed-out context is not the kind's fault: the
		// next caller, with its own context, tries again.
		k.loaded = k.err == nil || ctx.Err() == nil
	}
	return k, k.err
}

func (r *ListReader) list(ctx context.Context, gvk schema.GroupVersionKind, example client.Object, k *listedKind) error {
	listGVK := gvk.GroupVersion().WithKind(gvk.Kind + "List")
	var newList func() (client.ObjectList, error)
	switch example.(type) {
	case *unstructured.Unstructured:
		newList = func() (client.ObjectList, error) {
			l := &unstructured.UnstructuredList{}
			l.SetGroupVersionKind(listGVK)
			return l, nil
		}
	case *metav1.PartialObjectMetadata:
		newList = func() (client.ObjectList, error) {
			l := &metav1.PartialObjectMetadataList{}
			l.SetGroupVersionKind(listGVK)
			return l, nil
		}
	default:
		newList = func() (client.ObjectList, error) {
			o, err := r.scheme.New(listGVK)
			if err != nil {
				return nil, err
			}
			l, ok := o.(client.ObjectList)
			if !ok {
				return nil, fmt.Errorf("%s is not a list kind", listGVK)
			}
			return l, nil
		}
	}
	k.byKey = map[client.ObjectKey]runtime.Object{}
	k.items, k.byName = nil, false
	bulky := bulkyKind(gvk)
	pageSize, held := int64(listPageSize), int64(0)
	if bulky {
		pageSize = bulkyPageSize
	}
	opts := []client.ListOption{client.Limit(pageSize)}
	if r.namespace != "" && !clusterScoped(gvk) {
		opts = append(opts, client.InNamespace(r.namespace))
	}
	cont := ""
	for {
		l, err := newList()
		if err != nil {
			return err
		}
		if err := r.live.List(ctx, l, append(opts, client.Continue(cont))...); err != nil {
			if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("list %s: %w", resourceName(gvk, r.namespace), err)
		}
		items, err := meta.ExtractList(l)
		if err != nil {
			return err
		}
		for _, o := range items {
			m, err := meta.Accessor(o)
			if err != nil {
				return err
			}
			if len(k.items) == r.max {
				return fmt.Errorf("list %s: %w: more than %d", resourceName(gvk, r.namespace), ErrTooManyObjects, r.max)
			}
			k.byKey[client.ObjectKey{Namespace: m.GetNamespace(), Name: m.GetName()}] = o
			k.items = append(k.items, o)
			if sized, ok := o.(interface{ Size() int }); ok && bulky {
				held += int64(sized.Size())
			}
		}
		if held > r.maxBytes() {
			// Let go of the list, and of the rest of it unread.
			k.byKey, k.items, k.byName = nil, nil, true
			return nil
		}
		if cont = l.GetContinue(); cont == "" {
			return nil
		}
	}
}

func (r *ListReader) maxBytes() int64 {
	if r.MaxBytes > 0 {
		return r.MaxBytes
	}
	return DefaultMaxListedBytes
}

// bulkyKind names the kinds whose objects may be large.
func bulkyKind(gvk schema.GroupVersionKind) bool {
	return gvk.Group == "" && (gvk.Kind == "Secret" || gvk.Kind == "ConfigMap")
}

// clusterScoped names the cluster-scoped kinds a rebuild reads.
func clusterScoped(gvk schema.GroupVersionKind) bool {
	return gvk.Group == "apiextensions.k8s.io" && gvk.Kind == "CustomResourceDefinition"
}

func resourceName(gvk schema.GroupVersionKind, namespace string) string {
	s := gvk.Kind + "s"
	if gvk.Group != "" {
		s += "." + gvk.Group
	}
	if namespace != "" && !clusterScoped(gvk) {
		s += " in namespace " + namespace
	}
	return s
}

// copyInto sets *dst to a deep copy of src (same Go type), keeping the
// kind dst asked for when the listed item does not carry one.
func copyInto(dst client.Object, src runtime.Object, gvk schema.GroupVersionKind) error {
	c := src.DeepCopyObject()
	dv, cv := reflect.ValueOf(dst), reflect.ValueOf(c)
	if dv.Kind() != reflect.Pointer || cv.Type() != dv.Type() {
		return fmt.Errorf("cannot read %s into %T", gvk, dst)
	}
	dv.Elem().Set(cv.Elem())
	if dst.GetObjectKind().GroupVersionKind().Empty() {
		dst.GetObjectKind().SetGroupVersionKind(gvk)
	}
	return nil
}
