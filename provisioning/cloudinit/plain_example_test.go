package cloudinit_test

import (
	"bytes"
	"fmt"

	yaml "gopkg.in/yaml.v3"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/cloudinit"
)

// The plain dialect is for Plans that are not CABPK's: no jinja header, no
// placeholder file, and every value is data, so a sudo rule with ": " or a
// manifest with "{{ }}" reads back as written.
func ExampleVersionPlain() {
	enabled := true
	p := &provisioning.Plan{
		Files: []provisioning.File{{Path: "/var/lib/rancher/k3s/server/manifests/chart.yaml", Content: "image: {{ .Values.image }}\n"}},
		Users: []provisioning.User{{Name: "ops", Sudo: "ALL=(ALL) NOPASSWD: ALL"}},
		Units: []provisioning.Unit{{Name: "k3s.service", Enabled: &enabled, Contents: "[Service]\nExecStart=/usr/local/bin/k3s server\n"}},
	}
	out, err := (&cloudinit.Renderer{}).Render(p, provisioning.Options{Version: cloudinit.VersionPlain})
	if err != nil {
		fmt.Println(err)
		return
	}
	var doc struct {
		WriteFiles []struct{ Path, Content string } `yaml:"write_files"`
		Users      []struct{ Sudo string }
		RunCmd     []string `yaml:"runcmd"`
	}
	if err := yaml.Unmarshal(out.Data, &doc); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("header: %q\n", out.Data[:bytes.IndexByte(out.Data, '\n')+1])
	for _, f := range doc.WriteFiles {
		fmt.Printf("file %s: %q\n", f.Path, f.Content)
	}
	fmt.Println("sudo:", doc.Users[0].Sudo)
	fmt.Printf("runcmd: %q\n", doc.RunCmd)
	// Output:
	// header: "#cloud-config\n"
	// file /var/lib/rancher/k3s/server/manifests/chart.yaml: "image: {{ .Values.image }}\n"
	// file /etc/systemd/system/k3s.service: "[Service]\nExecStart=/usr/local/bin/k3s server\n"
	// sudo: ALL=(ALL) NOPASSWD: ALL
	// runcmd: ["set -e" "/bin/sh -e -c 'systemctl daemon-reload'" "/bin/sh -e -c 'systemctl enable k3s.service'" "/bin/sh -e -c 'systemctl restart k3s.service'"]
}
