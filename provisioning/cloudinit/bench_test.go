package cloudinit_test

import (
	"testing"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/cloudinit"
	"github.com/nodeboot/nodeboot/provisioning/plantest"
)

// BenchmarkRenderDialects renders one Plan that both dialects accept (the
// k3s Plan) in CABPK's dialect and in the plain one, side by side:
//
//	go test -run XXX -bench RenderDialects -benchmem ./cloudinit/ (in provisioning/, the library module)
func BenchmarkRenderDialects(b *testing.B) {
	for _, d := range []struct {
		name string
		opts provisioning.Options
	}{
		{"cabpk", provisioning.Options{Version: cloudinit.VersionCABPK}},
		{"plain", provisioning.Options{Version: cloudinit.VersionPlain}},
	} {
		b.Run(d.name, func(b *testing.B) {
			r := &cloudinit.Renderer{}
			plan := plantest.K3s()
			if _, err := r.Render(plan, d.opts); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.Render(plan, d.opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
