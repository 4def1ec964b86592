// Command rke2 is an RKE2 bootstrap provider's first boot in miniature,
// written as a provider author in another module would write it: nodeboot's
// public library API only (provisioning and the cloudinit, ignition and
// script provisioners). It builds the Plan of an RKE2 server and of an
// agent — /etc/rancher/rke2/config.yaml and registries.yaml, RKE2's
// installer run by a pre command at first boot, the rke2-server or
// rke2-agent unit enabled with a drop-in although its binary only arrives
// from that installer, an admin account with sudo whose name has a dot
// (jane.doe), NTP and the Cluster API sentinel — and renders each in every
// format.
//
// A format that cannot carry an element of the Plan refuses it with
// provisioning.ErrUnsupported at that element's field, and the command
// says so instead of writing a node that would differ: the script, for
// one, configures no time client, so the Plans (which ask for NTP) are
// written as cloud-config and Ignition only.
//
//	go run . -out ./out -server https://192.0.2.10:9345
//
// writes server.cloud-config, server.ign and the same for the agent;
// -plans prints the Plans as JSON instead, for a provisioner of one's own
// or a conformance run (test/conformance runs them through every format
// with the real tools).
package main
