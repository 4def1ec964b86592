package main

import (
	"fmt"
	"strings"

	"github.com/nodeboot/nodeboot/provisioning"
)

// Node is what an RKE2 provider knows about the node it bootstraps.
type Node struct {
	// Server is true for the first server, false for an agent.
	Server bool
	// ServerURL is the first server's supervisor address,
	// https://host:9345, which agents join.
	ServerURL string
	// Token joins agents to the server. It is a secret: the Plan writes it
	// only into the 0600 config file, and no message names it.
	Token string
	// Version is the RKE2 release the installer installs.
	Version string
	// InstallCommand replaces the download of RKE2's installer, for an
	// air-gapped image that brings its own (or a test's stand-in). It must
	// leave the binary at /usr/local/bin/rke2.
	InstallCommand string
	// Mirror is the registry mirror for docker.io, written to
	// registries.yaml; empty pulls from docker.io.
	Mirror string
	// Admin, when set, is an account with passwordless sudo and SSHKey.
	Admin, SSHKey string
	// NTPServers are the time servers; the node's clock must be right
	// before RKE2 issues its certificates.
	NTPServers []string
}

const (
	configDir = "/etc/rancher/rke2"
	binary    = "/usr/local/bin/rke2"
	// Sentinel is where the node records that RKE2 started, as Cluster API
	// bootstrap providers do.
	Sentinel = "/run/cluster-api/bootstrap-success.complete"
)

// unit is RKE2's own unit (bundle/lib/systemd/system/rke2-*.service in
// the RKE2 repository) less its cleanup hooks. The Plan enables it although
// the installer, a pre command, brings the binary: the Plan's meaning is
// that enabled units start after the pre commands.
const unit = `[Unit]
Description=Rancher Kubernetes Engine v2 (%[1]s)
Documentation=https://github.com/rancher/rke2#readme
Wants=network-online.target
After=network-online.target
Conflicts=%[2]s

[Install]
WantedBy=multi-user.target

[Service]
Type=notify
EnvironmentFile=-/etc/default/%%N
EnvironmentFile=-/etc/sysconfig/%%N
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
ExecStart=/usr/local/bin/rke2 %[1]s
`

// dropIn orders RKE2 after the clock is synchronised: certificates issued
// by a node whose clock is off are refused by the others.
const dropIn = "[Unit]\nWants=time-sync.target\nAfter=time-sync.target\n"

// Plan is the node's first boot.
func Plan(n Node) *provisioning.Plan {
	role, other := "agent", "rke2-server.service"
	config := fmt.Sprintf("server: %s\ntoken: %s\nnode-label:\n  - nodeboot.example/role=agent\n", yamlQuote(n.ServerURL), yamlQuote(n.Token))
	if n.Server {
		role, other = "server", "rke2-agent.service"
		host := strings.TrimPrefix(n.ServerURL, "https://")
		if i := strings.LastIndexByte(host, ':'); i > 0 {
			host = host[:i]
		}
		config = fmt.Sprintf("token: %s\nwrite-kubeconfig-mode: \"0600\"\ntls-san:\n  - %s\nnode-label:\n  - nodeboot.example/role=server\n", yamlQuote(n.Token), yamlQuote(host))
	}
	service := "rke2-" + role + ".service"
	registries := "mirrors: {}\n"
	if n.Mirror != "" {
		registries = "mirrors:\n  docker.io:\n    endpoint:\n      - " + yamlQuote(n.Mirror) + "\n"
	}
	enabled := true
	p := &provisioning.Plan{
		Role: provisioning.RoleJoinWorker,
		Files: []provisioning.File{
			{Path: configDir + "/config.yaml", Permissions: "0600", Owner: "root:root", Content: config},
			{Path: configDir + "/registries.yaml", Permissions: "0600", Owner: "root:root", Content: registries},
		},
		Units: []provisioning.Unit{{
			Name:     service,
			Contents: fmt.Sprintf(unit, role, other),
			Enabled:  &enabled,
			DropIns:  []provisioning.DropIn{{Name: "10-time-sync.conf", Contents: dropIn}},
		}},
		Commands: []provisioning.Command{
			{Phase: provisioning.PhasePre, Script: install(n, role)},
			// The unit is Type=notify: its start, which the Plan makes
			// after the pre commands, returns once RKE2 is up.
			{Phase: provisioning.PhaseBootstrap, Script: "systemctl is-active --quiet " + service},
		},
		Sentinel: Sentinel,
	}
	if len(n.NTPServers) > 0 {
		p.NTP = &provisioning.NTP{Enabled: &enabled, Servers: n.NTPServers}
	}
	if n.Server {
		p.Role = provisioning.RoleInit
		p.Commands = append(p.Commands, provisioning.Command{
			Phase:  provisioning.PhasePost,
			Script: "mkdir -p /root/.kube\nln -sf " + configDir + "/rke2.yaml /root/.kube/config",
		})
	}
	if n.Admin != "" {
		u := provisioning.User{Name: n.Admin, Groups: "rke2-admin", Shell: "/bin/sh", Sudo: "ALL=(ALL) NOPASSWD:ALL"}
		if n.SSHKey != "" {
			u.SSHAuthorizedKeys = []string{n.SSHKey}
		}
		p.Users = []provisioning.User{u}
	}
	return p
}

// install runs RKE2's installer (the tarball method, which puts the binary
// at /usr/local/bin/rke2) unless the image has RKE2. It downloads the
// installer to a file first: "curl | sh" would run an empty script, and
// succeed, when the download fails.
func install(n Node, role string) string {
	cmd := n.InstallCommand
	if cmd == "" {
		cmd = "curl -sfL --retry 5 -o /var/tmp/rke2-install.sh https://get.rke2.io\n" +
			"INSTALL_RKE2_METHOD=tar INSTALL_RKE2_TYPE=" + role + " INSTALL_RKE2_VERSION=" + shellQuote(n.Version) + " sh /var/tmp/rke2-install.sh\n" +
			"rm -f /var/tmp/rke2-install.sh"
	}
	return "if [ ! -x " + binary + " ]; then\n" + cmd + "\nfi\n" + binary + " --version"
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// yamlQuote is a YAML double-quoted scalar (JSON's escaping is YAML's).
func yamlQuote(s string) string { return fmt.Sprintf("%q", s) }
