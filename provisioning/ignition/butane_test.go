package ignition_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/ignition"
)

// TestButaneNotLinked: this package's tests do not import ignition/butane,
// so Butane additional config meets a program without its translator. It is
// one typed error at the field path, from Check and Render alike, never a
// panic; Ignition JSON still renders.
func TestButaneNotLinked(t *testing.T) {
	r := &ignition.Renderer{}
	for _, version := range []string{"", "3.3.0", "3.4.0", "3.5.0"} {
		opts := provisioning.Options{Version: version, AdditionalConfig: []byte("variant: flatcar\nversion: 1.1.0\n")}
		_, err := r.Render(basePlan(), opts)
		require.ErrorIs(t, err, ignition.ErrButaneNotLinked, "version %q", version)
		require.ErrorIs(t, err, provisioning.ErrUnsupported)
		var ps provisioning.Problems
		require.True(t, errors.As(err, &ps), "%v", err)
		require.Len(t, ps, 1, "%v", ps)
		require.Equal(t, "additionalConfig", ps[0].Path.String())
		require.Contains(t, ps[0].Message, "github.com/nodeboot/nodeboot/provisioning/ignition/butane")
		require.Equal(t, err.Error(), r.Check(basePlan(), opts).Err().Error(), "Check reports what Render refuses")

		opts.AdditionalConfig = []byte(`{"ignition":{"version":"3.3.0"}}`)
		_, err = r.Render(basePlan(), opts)
		require.NoError(t, err, "version %q", version)
	}
	t.Run("field path of the caller", func(t *testing.T) {
		at := provisioning.NewPath("spec", "ignition", "containerLinuxConfig", "additionalConfig")
		_, err := r.Render(basePlan(), provisioning.Options{AdditionalConfig: []byte("variant: fcos\nversion: 1.5.0\n"), Origins: provisioning.OptionOrigins{AdditionalConfig: at}})
		var ps provisioning.Problems
		require.True(t, errors.As(err, &ps), "%v", err)
		require.Equal(t, at.String(), ps[0].Path.String())
	})
}
