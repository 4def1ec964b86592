// Command k3s is a second bootstrap provider in miniature: it builds the
// first-boot Plan of a k3s server and of a k3s agent with nodeboot's public
// library API only (provisioning and the cloudinit, ignition and script
// provisioners) and renders each in every format: plain cloud-config,
// Ignition 3.4 and a shell script.
//
// It is its own Go module on purpose. A provider author imports nodeboot
// from outside; a separate module proves that doing so pulls in nothing
// kubeadm-, Cluster-API- or Kubernetes-client-shaped (a test checks the
// module's build list), and that the public API is enough.
//
//	go run . -out ./out -server https://192.0.2.10:6443
//
// writes server.cloud-config, server.ign, server.sh and the same for the
// agent; -plans prints the Plans as JSON instead (test/conformance runs
// them through every format with the real tools).
package main
