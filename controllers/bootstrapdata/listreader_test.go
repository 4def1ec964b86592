package bootstrapdata

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// countingReader counts the calls that reach the API server's stand-in.
type countingReader struct {
	client.WithWatch
	gets, lists atomic.Int64
	listErr     error
}

func newCounting(t *testing.T, objs ...client.Object) (*countingReader, *runtime.Scheme) {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := clusterv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c := &countingReader{}
	c.WithWatch = interceptor.NewClient(fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build(), interceptor.Funcs{
		Get: func(ctx context.Context, cl client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			c.gets.Add(1)
			return cl.Get(ctx, key, obj, opts...)
		},
		List: func(ctx context.Context, cl client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			c.lists.Add(1)
			if c.listErr != nil {
				return c.listErr
			}
			return cl.List(ctx, list, opts...)
		},
	})
	return c, s
}

func testSecret(ns, name string, labels map[string]string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}, Data: map[string][]byte{"k": []byte(name)}}
}

func TestListReaderServesFromOneList(t *testing.T) {
	live, s := newCounting(t, testSecret("a", "one", map[string]string{"x": "1"}), testSecret("a", "two", nil), testSecret("b", "three", nil))
	r := NewListReader(live, s, "a", 100)
	ctx := context.Background()
	for range 3 {
		got := &corev1.Secret{}
		if err := r.Get(ctx, client.ObjectKey{Namespace: "a", Name: "one"}, got); err != nil {
			t.Fatal(err)
		}
		if string(got.Data["k"]) != "one" {
			t.Fatalf("Get returned %q", got.Data["k"])
		}
		got.Data["k"] = []byte("changed") // callers own their copy
	}
	err := r.Get(ctx, client.ObjectKey{Namespace: "b", Name: "three"}, &corev1.Secret{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("an object outside the namespace: %v, want NotFound", err)
	}
	var list corev1.SecretList
	if err := r.List(ctx, &list, client.MatchingLabels{"x": "1"}); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "one" || string(list.Items[0].Data["k"]) != "one" {
		t.Fatalf("List with a selector: %+v", list.Items)
	}
	if live.gets.Load() != 0 || live.lists.Load() != 1 {
		t.Fatalf("%d GETs and %d lists reached the server, want 0 and 1", live.gets.Load(), live.lists.Load())
	}
}

func TestListReaderBounds(t *testing.T) {
	live, s := newCounting(t, testSecret("a", "one", nil), testSecret("a", "two", nil), testSecret("a", "three", nil))
	r := NewListReader(live, s, "", 2)
	err := r.Preload(context.Background(), &corev1.Secret{})
	if !errors.Is(err, ErrTooManyObjects) {
		t.Fatalf("3 objects with a bound of 2: %v, want ErrTooManyObjects", err)
	}
}

// TestListReaderBoundsSecretBytes: Secrets are listed in small pages and
// held up to MaxBytes; past that, nothing listed is held and every Get is a
// GET by name, so a namespace full of large Secrets costs no more memory
// than the bound.
func TestListReaderBoundsSecretBytes(t *testing.T) {
	var objs []client.Object
	for i := range 40 {
		s := testSecret("a", "s"+strconv.Itoa(i), nil)
		s.Data["blob"] = bytes.Repeat([]byte{'x'}, 100<<10)
		objs = append(objs, s)
	}
	live, s := newCounting(t, objs...)
	var limits []int64
	inner := live.WithWatch
	live.WithWatch = interceptor.NewClient(inner, interceptor.Funcs{
		List: func(ctx context.Context, cl client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			limits = append(limits, (&client.ListOptions{}).ApplyOptions(opts).Limit)
			return cl.List(ctx, list, opts...)
		},
	})
	r := NewListReader(live, s, "a", 1000)
	r.MaxBytes = 1 << 20
	ctx := context.Background()
	if err := r.Preload(ctx, &corev1.Secret{}); err != nil {
		t.Fatal(err)
	}
	k := r.kinds[corev1.SchemeGroupVersion.WithKind("Secret")]
	if len(k.items) != 0 || len(k.byKey) != 0 || !k.byName {
		t.Fatalf("4 MB of Secrets with a bound of 1 MiB: %d held, want none and reads by name", len(k.items))
	}
	gets := live.gets.Load()
	got := &corev1.Secret{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: "a", Name: "s7"}, got); err != nil || string(got.Data["k"]) != "s7" {
		t.Fatalf("Get by name: %v, %q", err, got.Data["k"])
	}
	if live.gets.Load() != gets+1 {
		t.Fatalf("Get past the bound did not read live")
	}
	if err := r.Get(ctx, client.ObjectKey{Namespace: "a", Name: "nope"}, got); !apierrors.IsNotFound(err) {
		t.Fatalf("missing Secret: %v, want NotFound", err)
	}
	if err := r.List(ctx, &corev1.SecretList{}); !errors.Is(err, ErrTooManyObjects) {
		t.Fatalf("List past the bound: %v, want ErrTooManyObjects", err)
	}
	for _, l := range limits {
		if l > 50 {
			t.Fatalf("a Secret page of %d, want at most 50", l)
		}
	}
}

func TestListReaderErrors(t *testing.T) {
	live, s := newCounting(t)
	live.listErr = apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "", errors.New("no"))
	r := NewListReader(live, s, "a", 10)
	if err := r.Preload(context.Background(), &corev1.Secret{}); !apierrors.IsForbidden(err) {
		t.Fatalf("forbidden list: %v, want a Forbidden error", err)
	}
	live.listErr = &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: clusterv1.GroupVersion.Group, Kind: "MachinePool"}}
	err := r.Get(context.Background(), client.ObjectKey{Namespace: "a", Name: "p"}, &clusterv1.MachinePool{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("a kind the server does not serve: %v, want NotFound", err)
	}
}
