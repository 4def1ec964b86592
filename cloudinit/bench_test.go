package cloudinit_test

import (
	"testing"

	"github.com/nodeboot/nodeboot/cloudinit"
	"github.com/nodeboot/nodeboot/provisioning"
)

// BenchmarkRenderDialects renders one Plan that both dialects accept (the
// k3s Plan) in CABPK's dialect and in the plain one, side by side:
//
//	go test -run XXX -bench RenderDialects -benchmem ./cloudinit/
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
			plan := k3sPlan()
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
