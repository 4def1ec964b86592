package ignition_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/ignition"
)

// TestAdditionalConfigBounded: an additional config over
// MaxAdditionalConfigBytes is refused at its field before it is parsed
// (8 MiB took 4.9 s and 847 MB as a Container Linux Config, 8.4 s and
// 3.8 GB as Ignition JSON); one at the bound is read.
func TestAdditionalConfigBounded(t *testing.T) {
	plan := func() *provisioning.Plan {
		return &provisioning.Plan{
			Files:    []provisioning.File{{Path: "/etc/x", Permissions: "0644", Content: "x\n"}},
			Commands: []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: "true"}},
		}
	}
	for _, c := range []struct{ version, head, filler, tail string }{
		{provisioning.VersionCABPK, "storage:\n  files:\n    - path: /etc/big\n      filesystem: root\n      mode: 0644\n      contents:\n        inline: ", "x", "\n"},
		{"3.4.0", `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/big","contents":{"source":"data:,`, "x", `"}}]}}`},
	} {
		t.Run(c.version, func(t *testing.T) {
			at := func(n int) []byte {
				return []byte(c.head + strings.Repeat(c.filler, n-len(c.head)-len(c.tail)) + c.tail)
			}
			path := provisioning.NewPath("spec", "ignition", "containerLinuxConfig", "additionalConfig")
			opts := provisioning.Options{Version: c.version, AdditionalConfig: at(provisioning.MaxAdditionalConfigBytes + 1), Origins: provisioning.OptionOrigins{AdditionalConfig: path}}
			_, err := (&ignition.Renderer{}).Render(plan(), opts)
			var ps provisioning.Problems
			require.True(t, errors.As(err, &ps), "%v", err)
			require.ErrorIs(t, err, provisioning.ErrInvalid)
			require.Len(t, ps.Errors(), 1, "%v", err)
			require.Equal(t, path.String(), ps.Errors()[0].Path.String())
			opts.AdditionalConfig = at(provisioning.MaxAdditionalConfigBytes)
			_, err = (&ignition.Renderer{}).Render(plan(), opts)
			require.NoError(t, err)
		})
	}
}
