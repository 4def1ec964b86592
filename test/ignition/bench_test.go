package ignition

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/internal/testenv"
	"github.com/nodeboot/nodeboot/provisioning"
)

// BenchmarkRenderIgnition renders the init control-plane vector (all
// features) with nodeboot's two dialects and with CABPK's pkg/ignition.
// The Plan is built once: only rendering is measured.
func BenchmarkRenderIgnition(b *testing.B) {
	dir := filepath.Join(testenv.VectorsDir(b), "ign-init-all-features-v1.35")
	res := build(b, dir)
	p, err := provisioning.Get(res.Format)
	require.NoError(b, err)
	v3 := res.Options
	v3.Version = "3.4.0"
	v3.AdditionalConfig = nil // the vector's additional config is a CLC, legacy-only.
	// The legacy dialect keeps the transpiled additionalConfig of the last
	// few distinct configs (every Machine of a MachineDeployment carries its
	// template's); -uncached gives each render a config of its own, with a
	// comment that changes its bytes but not what it says.
	uncached, n := res.Options, 0
	for _, c := range []struct {
		name string
		run  func() ([]byte, error)
	}{
		{"nodeboot-legacy", func() ([]byte, error) { out, err := p.Render(res.Plan, res.Options); return outData(out), err }},
		{"nodeboot-legacy-uncached", func() ([]byte, error) {
			n++
			uncached.AdditionalConfig = fmt.Appendf(append([]byte(nil), res.Options.AdditionalConfig...), "\n# %d\n", n)
			out, err := p.Render(res.Plan, uncached)
			return outData(out), err
		}},
		{"nodeboot-v3", func() ([]byte, error) { out, err := p.Render(res.Plan, v3); return outData(out), err }},
		{"cabpk", func() ([]byte, error) { return cabpkRender(res) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				data, err := c.run()
				if err != nil || len(data) == 0 {
					b.Fatalf("render: %v", err)
				}
			}
		})
	}
}

func outData(o *provisioning.Output) []byte {
	if o == nil {
		return nil
	}
	return o.Data
}
