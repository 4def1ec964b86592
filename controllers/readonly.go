package controllers

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ErrReadOnly is what every write through a Rebuilder's client returns: a
// rebuild that tried to write would be a bug, never a change to the cluster.
var ErrReadOnly = errors.New("read-only: rebuilding bootstrap data never writes")

// readOnlyClient is a client.Client over a client.Reader whose writes fail,
// so the reconciler's build code can run unchanged without being able to
// change anything.
type readOnlyClient struct {
	client.Reader
}

var _ client.Client = readOnlyClient{}

func (readOnlyClient) Apply(context.Context, runtime.ApplyConfiguration, ...client.ApplyOption) error {
	return ErrReadOnly
}
func (readOnlyClient) Create(context.Context, client.Object, ...client.CreateOption) error {
	return ErrReadOnly
}
func (readOnlyClient) Delete(context.Context, client.Object, ...client.DeleteOption) error {
	return ErrReadOnly
}
func (readOnlyClient) Update(context.Context, client.Object, ...client.UpdateOption) error {
	return ErrReadOnly
}
func (readOnlyClient) Patch(context.Context, client.Object, client.Patch, ...client.PatchOption) error {
	return ErrReadOnly
}
func (readOnlyClient) DeleteAllOf(context.Context, client.Object, ...client.DeleteAllOfOption) error {
	return ErrReadOnly
}
func (readOnlyClient) Status() client.SubResourceWriter { return readOnlySubResource{} }
func (readOnlyClient) SubResource(string) client.SubResourceClient {
	return readOnlySubResource{}
}
func (readOnlyClient) Scheme() *runtime.Scheme     { return runtime.NewScheme() }
func (readOnlyClient) RESTMapper() meta.RESTMapper { return meta.MultiRESTMapper{} }
func (readOnlyClient) GroupVersionKindFor(runtime.Object) (schema.GroupVersionKind, error) {
	return schema.GroupVersionKind{}, ErrReadOnly
}
func (readOnlyClient) IsObjectNamespaced(runtime.Object) (bool, error) { return false, ErrReadOnly }

type readOnlySubResource struct{}

func (readOnlySubResource) Get(context.Context, client.Object, client.Object, ...client.SubResourceGetOption) error {
	return ErrReadOnly
}
func (readOnlySubResource) Create(context.Context, client.Object, client.Object, ...client.SubResourceCreateOption) error {
	return ErrReadOnly
}
func (readOnlySubResource) Update(context.Context, client.Object, ...client.SubResourceUpdateOption) error {
	return ErrReadOnly
}
func (readOnlySubResource) Patch(context.Context, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
	return ErrReadOnly
}
func (readOnlySubResource) Apply(context.Context, runtime.ApplyConfiguration, ...client.SubResourceApplyOption) error {
	return ErrReadOnly
}
