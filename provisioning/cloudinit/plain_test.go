package cloudinit_test

import (
	"bytes"
	"compress/gzip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/cloudinit"
	"github.com/nodeboot/nodeboot/provisioning/plantest"
)

var plainOpts = provisioning.Options{Version: cloudinit.VersionPlain}

// TestPlainRefuses: what the plain dialect cannot carry is an error naming
// the field, matching provisioning.ErrInvalid or ErrUnsupported, and never
// quoting the value.
func TestPlainRefuses(t *testing.T) {
	const secret = "s3cr3t-value"
	tests := []struct {
		name   string
		plan   *provisioning.Plan
		opts   provisioning.Options
		path   string
		target error
	}{
		{"nil plan", nil, plainOpts, "", provisioning.ErrInvalid},
		{"sudo on two lines", &provisioning.Plan{Users: []provisioning.User{{Name: "ops", Sudo: "ALL=(ALL) ALL\n" + secret}}}, plainOpts, "users[0].sudo", provisioning.ErrInvalid},
		{"mount field with a blank", &provisioning.Plan{Mounts: []provisioning.Mount{{"/dev/vdb", "/mnt/" + secret + " x"}}}, plainOpts, "mounts[0][1]", provisioning.ErrInvalid},
		{"additional config", &provisioning.Plan{}, provisioning.Options{Version: cloudinit.VersionPlain, AdditionalConfig: []byte(secret)}, "additionalConfig", provisioning.ErrUnsupported},
		{"hazard is an error", &provisioning.Plan{Files: []provisioning.File{{Path: "/etc/a/../" + secret}}}, plainOpts, "files[0].path", provisioning.ErrInvalid},
		{"bad unit", &provisioning.Plan{Units: []provisioning.Unit{{Name: secret, Contents: "x"}}}, plainOpts, "units[0].name", provisioning.ErrInvalid},
		{"unknown version", &provisioning.Plan{}, provisioning.Options{Version: "plain2"}, "options.version", cloudinit.ErrUnknownVersion},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &cloudinit.Renderer{}
			_, err := r.Render(tc.plan, tc.opts)
			require.Error(t, err)
			require.ErrorIs(t, err, tc.target)
			require.NotContains(t, err.Error(), secret)
			var ps provisioning.Problems
			require.ErrorAs(t, err, &ps)
			found := false
			for _, p := range ps.Errors() {
				found = found || p.Path.String() == tc.path
			}
			require.True(t, found, "no error at %q in %v", tc.path, err)
			require.NotEmpty(t, r.Check(tc.plan, tc.opts).Errors(), "Check agrees with Render")
		})
	}
}

// TestPlainCompressAndBudget: Compress gzips the document and says so;
// MaxBytes is a budget.
func TestPlainCompressAndBudget(t *testing.T) {
	r := &cloudinit.Renderer{}
	plain, err := r.Render(plantest.K3s(), plainOpts)
	require.NoError(t, err)
	require.False(t, plain.Compressed)
	require.Equal(t, len(plain.Data), plain.Sizes[provisioning.SizeTotal])
	require.Positive(t, plain.Sizes[provisioning.SizeWriteFiles])
	require.Positive(t, plain.Sizes[provisioning.SizeCommands])
	opts := plainOpts
	opts.Compress = true
	z, err := r.Render(plantest.K3s(), opts)
	require.NoError(t, err)
	require.True(t, z.Compressed)
	zr, err := gzip.NewReader(bytes.NewReader(z.Data))
	require.NoError(t, err)
	var inflated bytes.Buffer
	_, err = inflated.ReadFrom(zr)
	require.NoError(t, err)
	require.Equal(t, plain.Data, inflated.Bytes())
	require.Equal(t, len(plain.Data), z.Sizes[provisioning.SizeUncompressed])
	opts = plainOpts
	opts.MaxBytes = len(plain.Data) - 1
	_, err = r.Render(plantest.K3s(), opts)
	require.ErrorIs(t, err, provisioning.ErrTooLarge)
}

// TestPlainEmittedAsYAMLv3: the plain dialect writes each table Plan's
// document without yaml.v3 where it can (the k3s Plan, which
// BenchmarkRenderDialects times, among them), and those bytes are
// yaml.v3's own.
func TestPlainEmittedAsYAMLv3(t *testing.T) {
	emitted := 0
	for name, p := range plantest.Plans() {
		got, want, ok, err := cloudinit.PlainEmitted(p)
		require.NoError(t, err, name)
		if ok {
			emitted++
			require.Equal(t, string(want), string(got), name)
		}
		if name == "k3s" {
			require.True(t, ok, "the k3s Plan is left to yaml.v3")
		}
	}
	t.Logf("%d of %d Plans written without yaml.v3", emitted, len(plantest.Plans()))
}
