package cloudinit

import "testing"

func TestJinjaHazard(t *testing.T) {
	tests := []struct {
		in     string
		hazard bool
	}{
		{"plain text", false},
		{"name: '{{ ds.meta_data.local_hostname }}'", false},
		{"{{ v1.local_hostname }} and {{ ds.meta_data.instance_id | lower }}", false},
		{"{{merged_cfg.foo}}", false},
		{"{{ .controlPlane.version }}", true},
		{"{{ local_hostname }}", true},
		{"{{ ds.meta_data.local_hostname + 1 }}", true},
		{"{% if x %}y{% endif %}", true},
		{"{# comment #}", true},
		{"unterminated {{ ds.meta_data", true},
		{"json {\"a\": {\"b\": 1}}", false},
		{"{ {single braces} }", false},
		{"docker ps --format '{{.ID}}'", true},
	}
	for _, tt := range tests {
		if got := jinjaHazard(tt.in) != ""; got != tt.hazard {
			t.Errorf("jinjaHazard(%q) = %v, want %v", tt.in, got, tt.hazard)
		}
	}
}

func TestYAMLKind(t *testing.T) {
	tests := map[string]string{
		"0": "number", "2": "number", "-1": "number", "1.5": "number", "1e3": "string", "1.0e+3": "number", "2026-12-01": "timestamp", "0x1F": "number", ".inf": "number",
		"true": "boolean", "No": "boolean", "on": "boolean", "~": "null", "null": "null", "": "null",
		"defaults,nofail": "string", "/var/lib/etcd": "string", "LABEL=x": "string", "ext4": "string", "1.2.3": "string", "e5": "string",
	}
	for in, want := range tests {
		if got := yamlKind(in); got != want {
			t.Errorf("yamlKind(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestPlainSafe(t *testing.T) {
	safe := []string{"kubeadm join --config /a.yaml --v 5 && echo success > /run/x", "a:b", "x#y"}
	unsafe := []string{"", " lead", "trail ", "- dash", "a: b", "a #c", "'q", "*alias", "key:", "multi\nline", "{x}"}
	for _, s := range safe {
		if !plainSafe(s) {
			t.Errorf("plainSafe(%q) = false", s)
		}
	}
	for _, s := range unsafe {
		if plainSafe(s) {
			t.Errorf("plainSafe(%q) = true", s)
		}
	}
}
