package ignition

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/test/testenv"
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
	// nodeboot-legacy renders, every time, a config never seen before:
	// the renderers remember the transpiled additionalConfig of the last
	// few distinct configs and the systemd units that passed validation
	// (every Machine of a MachineDeployment carries its template's), and a
	// real reconcile of a new template's first config misses both. So each
	// render gets an additionalConfig of its own (a comment changes its
	// bytes, not what it says) and mount points of its own (new mount
	// units). nodeboot-legacy-repeated renders the same config again, as
	// the second Machine of a template does.
	fresh, freshPlan, n := res.Options, *res.Plan, 0
	freshPlan.Mounts = make([]provisioning.Mount, len(res.Plan.Mounts))
	require.NotEmpty(b, res.Plan.Mounts, "the vector must have mounts, or nodeboot-legacy reuses validated units")
	renew := func() int {
		n++
		for i, m := range res.Plan.Mounts {
			m = append(provisioning.Mount(nil), m...)
			m[1] = fmt.Sprintf("%s%d", m[1], n)
			freshPlan.Mounts[i] = m
		}
		return n
	}
	for _, c := range []struct {
		name string
		run  func() ([]byte, error)
	}{
		{"nodeboot-legacy", func() ([]byte, error) {
			fresh.AdditionalConfig = fmt.Appendf(append([]byte(nil), res.Options.AdditionalConfig...), "\n# %d\n", renew())
			out, err := p.Render(&freshPlan, fresh)
			return outData(out), err
		}},
		{"nodeboot-legacy-repeated", func() ([]byte, error) { out, err := p.Render(res.Plan, res.Options); return outData(out), err }},
		// v3 has no additionalConfig here; its mount units are new each time.
		{"nodeboot-v3", func() ([]byte, error) { renew(); out, err := p.Render(&freshPlan, v3); return outData(out), err }},
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
