package ignition_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/ignition"
)

// fakeDialect renders one warning, so the Renderer's Strict handling shows.
type fakeDialect struct{}

func (fakeDialect) Check(*provisioning.Plan, provisioning.Options) provisioning.Problems {
	var ps provisioning.Problems
	ps.Warnf(provisioning.NewPath("fake"), "a warning")
	return ps
}

func (d fakeDialect) Render(p *provisioning.Plan, opts provisioning.Options) (*provisioning.Output, error) {
	return &provisioning.Output{Data: []byte("fake"), Format: ignition.Format, Warnings: d.Check(p, opts).Warnings()}, nil
}

// TestRegisterDialect: a registered dialect renders its version through
// the Renderer, which applies Strict; a second registration of a version,
// an empty version and a nil Dialect panic.
func TestRegisterDialect(t *testing.T) {
	ignition.RegisterDialect("0.0.0-test", fakeDialect{})
	r := &ignition.Renderer{}
	out, err := r.Render(basePlan(), provisioning.Options{Version: "0.0.0-test"})
	require.NoError(t, err)
	require.Equal(t, "fake", string(out.Data))
	require.Len(t, out.Warnings, 1)
	_, err = r.Render(basePlan(), provisioning.Options{Version: "0.0.0-test", Strict: true})
	require.Error(t, err)
	require.Empty(t, r.Check(basePlan(), provisioning.Options{Version: "0.0.0-test"}).Errors())
	require.Len(t, r.Check(basePlan(), provisioning.Options{Version: "0.0.0-test", Strict: true}).Errors(), 1)

	require.Panics(t, func() { ignition.RegisterDialect("0.0.0-test", fakeDialect{}) })
	require.Panics(t, func() { ignition.RegisterDialect("3.4.0", fakeDialect{}) }) // ignition/v3's
	require.Panics(t, func() { ignition.RegisterDialect(ignition.VersionCABPK, fakeDialect{}) })
	require.Panics(t, func() { ignition.RegisterDialect("", fakeDialect{}) })
	require.Panics(t, func() { ignition.RegisterDialect("0.0.1-test", nil) })
}

// TestUnregisteredVersion: a version nobody registered is one
// ErrUnknownVersion problem at options.version, from Check and Render.
func TestUnregisteredVersion(t *testing.T) {
	r := &ignition.Renderer{}
	opts := provisioning.Options{Version: "2.2.0"}
	_, err := r.Render(basePlan(), opts)
	var ps provisioning.Problems
	require.True(t, errors.As(err, &ps), "%v", err)
	require.Len(t, ps.Errors(), 1)
	require.Equal(t, opts.VersionPath().String(), ps.Errors()[0].Path.String())
	require.ErrorIs(t, err, ignition.ErrUnknownVersion)
	require.ErrorIs(t, err, provisioning.ErrUnsupported)
	errs := r.Check(basePlan(), opts).Errors()
	require.Len(t, errs, 1)
	require.ErrorIs(t, errs.Err(), ignition.ErrUnknownVersion)
}
