package testenv

import (
	"context"
	"sync/atomic"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CountingReader counts the API reads made through it: the node endpoints'
// tests prove a stranger's request costs none.
type CountingReader struct {
	client.Reader
	Reads atomic.Int32
}

func (r *CountingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.Reads.Add(1)
	return r.Reader.Get(ctx, key, obj, opts...)
}

func (r *CountingReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	r.Reads.Add(1)
	return r.Reader.List(ctx, list, opts...)
}
