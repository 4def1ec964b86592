package main

import (
	"fmt"
	"strings"

	"github.com/nodeboot/nodeboot/provisioning"
)

// Node is what a k3s provider knows about the node it bootstraps.
type Node struct {
	// Server is true for the first server, false for an agent.
	Server bool
	// ServerURL is the server's supervisor address, https://host:6443.
	ServerURL string
	// Token joins agents to the server. It is a secret: the Plan writes it
	// to a 0600 file and no message names it.
	Token string
	// K3sURL is where the k3s binary is downloaded from when the image
	// has none; K3sSHA256, when set, is checked before it is installed.
	K3sURL, K3sSHA256 string
	// InstallCommand replaces the download, for an air-gapped image that
	// brings k3s its own way (or a test's stand-in). It must leave the
	// binary at /usr/local/bin/k3s.
	InstallCommand string
	// SSHKey, when set, is the public key of an "ops" account with sudo.
	SSHKey string
}

const (
	configDir = "/etc/rancher/k3s"
	tokenFile = configDir + "/token"
	// manifestsDir is where a k3s server picks up manifests, HelmChart
	// resources included, and applies them.
	manifestsDir = "/var/lib/rancher/k3s/server/manifests"
	binary       = "/usr/local/bin/k3s"
	// Sentinel is where the node records that k3s started, as Cluster API
	// bootstrap providers do.
	Sentinel = "/run/cluster-api/bootstrap-success.complete"
)

// unit is k3s's own systemd unit, as its installer writes it, less the
// installer's environment file. The binary is installed by a command of
// the Plan, so the unit is enabled and started by the bootstrap command,
// not by the provisioner (which would start it before the binary exists).
const unit = `[Unit]
Description=Lightweight Kubernetes
Documentation=https://k3s.io
Wants=network-online.target
After=network-online.target

[Service]
Type=%s
KillMode=process
Delegate=yes
LimitNOFILE=1048576
LimitNPROC=infinity
LimitCORE=infinity
TasksMax=infinity
TimeoutStartSec=0
Restart=always
RestartSec=5s
ExecStartPre=-/sbin/modprobe br_netfilter
ExecStartPre=-/sbin/modprobe overlay
ExecStart=/usr/local/bin/k3s %s

[Install]
WantedBy=multi-user.target
`

// helmChart deploys a chart through k3s's Helm controller. Its values
// are a Helm template: the "{{ }}" must reach the node as written, which
// CABPK's jinja-headed cloud-config would not guarantee.
const helmChart = `apiVersion: helm.cattle.io/v1
kind: HelmChart
metadata:
  name: podinfo
  namespace: kube-system
spec:
  repo: https://stefanprodan.github.io/podinfo
  chart: podinfo
  version: 6.7.1
  targetNamespace: podinfo
  createNamespace: true
  valuesContent: |-
    podAnnotations:
      release: "{{ .Release.Name }}-{{ .Release.Revision }}"
    ui:
      message: "bootstrapped by nodeboot"
`

// Plan is the node's first boot.
func Plan(n Node) *provisioning.Plan {
	mode, service, role := "exec", "k3s-agent.service", "agent"
	config := fmt.Sprintf("server: %s\ntoken-file: %s\nnode-label:\n  - nodeboot.example/role=agent\n", n.ServerURL, tokenFile)
	if n.Server {
		mode, service, role = "notify", "k3s.service", "server"
		config = fmt.Sprintf("cluster-init: true\ntoken-file: %s\nwrite-kubeconfig-mode: \"0600\"\ntls-san:\n  - %s\nnode-label:\n  - nodeboot.example/role=server\n",
			tokenFile, strings.TrimSuffix(strings.TrimPrefix(n.ServerURL, "https://"), ":6443"))
	}
	p := &provisioning.Plan{
		Role: provisioning.RoleJoinWorker,
		Files: []provisioning.File{
			{Path: configDir + "/config.yaml", Permissions: "0600", Owner: "root:root", Content: config},
			{Path: tokenFile, Permissions: "0600", Owner: "root:root", Content: n.Token + "\n"},
		},
		Units: []provisioning.Unit{{
			Name:     service,
			Contents: fmt.Sprintf(unit, mode, role),
			DropIns: []provisioning.DropIn{{
				Name:     "10-nodeboot.conf",
				Contents: "[Service]\nEnvironment=K3S_CONFIG_FILE=" + configDir + "/config.yaml\n",
			}},
		}},
		Commands: []provisioning.Command{
			{Phase: provisioning.PhasePre, Script: install(n)},
			{Phase: provisioning.PhaseBootstrap, Script: "systemctl enable --now " + service},
		},
		Sentinel: Sentinel,
	}
	if n.Server {
		p.Role = provisioning.RoleInit
		p.Files = append(p.Files, provisioning.File{Path: manifestsDir + "/podinfo.yaml", Permissions: "0600", Content: helmChart})
		p.Commands = append(p.Commands,
			provisioning.Command{Phase: provisioning.PhasePost, Script: "mkdir -p /root/.kube && ln -sf /etc/rancher/k3s/k3s.yaml /root/.kube/config"},
			provisioning.Command{Phase: provisioning.PhasePost, Script: "k3s kubectl wait --for=condition=Ready nodes --all --timeout=5m"},
		)
	}
	if n.SSHKey != "" {
		p.Users = []provisioning.User{{Name: "ops", Groups: "adm", Shell: "/bin/bash", Sudo: "ALL=(ALL) NOPASSWD: ALL", SSHAuthorizedKeys: []string{n.SSHKey}}}
	}
	return p
}

// install downloads k3s unless the image has it. A real provider pins the
// checksum; the example checks it when given one.
func install(n Node) string {
	if n.InstallCommand != "" {
		return "if [ ! -x " + binary + " ]; then\n" + n.InstallCommand + "\nfi"
	}
	get := "curl -sfL --retry 5 -o " + binary + ".download " + shellQuote(n.K3sURL)
	if n.K3sSHA256 != "" {
		get += " && echo " + shellQuote(n.K3sSHA256+"  "+binary+".download") + " | sha256sum -c -"
	}
	return "if [ ! -x " + binary + " ]; then\n  " + get + "\n  chmod 0755 " + binary + ".download\n  mv " + binary + ".download " + binary + "\nfi"
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
