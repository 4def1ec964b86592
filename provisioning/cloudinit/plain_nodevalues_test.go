package cloudinit

import (
	"errors"
	"strings"
	"testing"

	"github.com/nodeboot/nodeboot/provisioning"
)

// TestPlainLiteralJinja: the plain dialect writes every byte as it is, so
// CABPK's way of asking for a per-node value would reach the node as text:
// it is refused at the field, while other "{{ }}" stays data.
func TestPlainLiteralJinja(t *testing.T) {
	for _, c := range []struct {
		name    string
		file    provisioning.File
		command string
		at      string
	}{
		{name: "file", file: provisioning.File{Path: "/etc/k", Content: "name: {{ ds.meta_data.local_hostname }}\n"}, at: "files[0].content"},
		{name: "v1 key", file: provisioning.File{Path: "/etc/k", Content: "id: {{- v1.instance_id }}\n"}, at: "files[0].content"},
		{name: "command", command: "kubeadm join --node-name {{ ds.meta_data.hostname }}", at: "commands[0].script"},
		{name: "other braces", file: provisioning.File{Path: "/etc/k", Content: "{{ .Values.x }} {{ not-a-template }}\n"}},
		{name: "base64", file: provisioning.File{Path: "/etc/k", Encoding: provisioning.EncodingBase64, Content: "e3sgZHMubWV0YV9kYXRhLnggfX0K"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &provisioning.Plan{Commands: []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: "true"}}}
			if c.file.Path != "" {
				p.Files = []provisioning.File{c.file}
			}
			if c.command != "" {
				p.Commands[0].Script = c.command
			}
			_, err := (&Renderer{}).Render(p, provisioning.Options{})
			if c.at == "" {
				if err != nil {
					t.Fatalf("want no error, got %v", err)
				}
				return
			}
			var ps provisioning.Problems
			if !errors.As(err, &ps) || len(ps) != 1 || ps[0].Path.String() != c.at || !strings.Contains(ps[0].Message, "Template") {
				t.Fatalf("want one problem at %s naming Template, got %v", c.at, err)
			}
		})
	}
}
