module example.com/olderpins

go 1.25.0

require (
	k8s.io/apimachinery v0.35.4
	k8s.io/client-go v0.35.4
	sigs.k8s.io/cluster-api v1.13.6
	sigs.k8s.io/controller-runtime v0.23.3
)
