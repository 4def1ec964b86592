// Command olderpins is a bootstrap provider as a k3s or RKE2 provider's
// author keeps one: its own Cluster API, controller-runtime and client-go
// pins (those Cluster API v1.13.6 resolves). nodeboot.go adds nodeboot's
// library to turn its Plan into what a node boots with; test/library tidies
// the module without that file and with it, and checks that adding the
// library moves none of the provider's pins.
package main

import (
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// render is set by nodeboot.go, when the provider has the library.
var render func(clusterName string) error

func main() {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		fail(err)
	}
	if err := clusterv1.AddToScheme(scheme); err != nil {
		fail(err)
	}
	cluster := &clusterv1.Cluster{}
	cluster.Name = "older-pins"
	// The provider's client (a fake one: the program runs without a
	// cluster) and Cluster API's types, at the provider's pins.
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(cluster).Build()
	if c.Scheme() != scheme {
		fail(fmt.Errorf("client has another scheme"))
	}
	if render == nil {
		fmt.Println("no nodeboot")
		return
	}
	if err := render(cluster.Name); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
