package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/nodeboot/nodeboot/test/testenv"
)

// TestSwapDocYAML loads every YAML example of docs/swap-cabpk.md: the
// clusterctl provider override must name CABPK's provider and type.
func TestSwapDocYAML(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(testenv.ModuleRoot(), "docs", "swap-cabpk.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(raw), -1)
	if len(blocks) == 0 {
		t.Fatal("no YAML examples found")
	}
	for _, b := range blocks {
		var cfg struct {
			Providers []struct {
				Name string `json:"name"`
				Type string `json:"type"`
				URL  string `json:"url"`
			} `json:"providers"`
		}
		if err := yaml.UnmarshalStrict([]byte(dedent(b[1])), &cfg); err != nil {
			t.Fatalf("example does not load: %v\n%s", err, b[1])
		}
		if len(cfg.Providers) != 1 || cfg.Providers[0].Name != "kubeadm" || cfg.Providers[0].Type != "BootstrapProvider" || !strings.HasSuffix(cfg.Providers[0].URL, "/bootstrap-components.yaml") {
			t.Errorf("clusterctl override does not replace CABPK's provider: %+v", cfg.Providers)
		}
	}
}

func dedent(s string) string {
	lines := strings.Split(s, "\n")
	indent := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if n := len(l) - len(strings.TrimLeft(l, " ")); indent < 0 || n < indent {
			indent = n
		}
	}
	for i, l := range lines {
		if len(l) >= indent {
			lines[i] = l[indent:]
		}
	}
	return strings.Join(lines, "\n")
}
