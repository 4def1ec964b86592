// Package addons tests first-boot add-ons end to end: FirstBootAddon objects go
// through the KubeadmConfig extension and bootstrap.Build, the init node's
// bootstrap data is rendered by the real provisioners, and the apply step is
// taken out of the rendered bytes and run with kubectl against a real envtest
// kube-apiserver. It also holds the 16 KiB size test.
package addons
