package ignition_test

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"io"
	"strings"
	"testing"

	v34 "github.com/coreos/ignition/v2/config/v3_4"
	v35 "github.com/coreos/ignition/v2/config/v3_5"
	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/ignition"
)

func render(t *testing.T, p *provisioning.Plan, opts provisioning.Options) *provisioning.Output {
	t.Helper()
	out, err := (&ignition.Renderer{}).Render(p, opts)
	require.NoError(t, err)
	return out
}

func TestV3SizeWrapping(t *testing.T) {
	p := basePlan()
	p.Files[0].Content = strings.Repeat("compressible line\n", 2000)
	plain := render(t, p, provisioning.Options{Version: "3.4.0"})

	for name, opts := range map[string]provisioning.Options{
		"compress option":         {Version: "3.4.0", Compress: true},
		"fallback above MaxBytes": {Version: "3.4.0", MaxBytes: len(plain.Data) - 1},
	} {
		t.Run(name, func(t *testing.T) {
			out := render(t, p, opts)
			require.Equal(t, len(plain.Data), out.Sizes["uncompressed"])
			require.Equal(t, len(out.Data), out.Sizes["total"])
			require.Less(t, len(out.Data), len(plain.Data))
			outer, _, err := v34.Parse(out.Data)
			require.NoError(t, err)
			replace := outer.Ignition.Config.Replace
			require.Equal(t, "gzip", *replace.Compression)
			z, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(*replace.Source, "data:;base64,"))
			require.NoError(t, err)
			zr, err := gzip.NewReader(bytes.NewReader(z))
			require.NoError(t, err)
			inner, err := io.ReadAll(zr)
			require.NoError(t, err)
			require.Equal(t, plain.Data, inner)
			// Inline data: gzip's CRC-32 checks it; no hash to spend bytes on.
			require.Nil(t, replace.Verification.Hash)
		})
	}
	t.Run("over budget even wrapped", func(t *testing.T) {
		_, err := (&ignition.Renderer{}).Render(p, provisioning.Options{Version: "3.4.0", MaxBytes: 100})
		require.True(t, errors.Is(err, provisioning.ErrTooLarge), "%v", err)
	})
	t.Run("legacy over budget", func(t *testing.T) {
		_, err := (&ignition.Renderer{}).Render(p, provisioning.Options{Version: provisioning.VersionCABPK, MaxBytes: 100})
		require.True(t, errors.Is(err, provisioning.ErrTooLarge), "%v", err)
	})
}

// TestV3AdditionalConfig covers Ignition JSON and what is refused before
// any Butane translation; Butane itself is tested in ignition/butane, which
// this package's tests do not link (TestButaneNotLinked).
func TestV3AdditionalConfig(t *testing.T) {
	for _, c := range []struct {
		name, config, version string
		strict                bool
		wantErr, wantWarnings bool
		wantFile              string
	}{
		{name: "ignition json older version", config: `{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/j","contents":{"source":"data:,j"}}]}}`, version: "3.5.0", wantFile: "/etc/j"},
		{name: "ignition json newer than target", config: `{"ignition":{"version":"3.5.0"}}`, version: "3.3.0", wantErr: true},
		{name: "unsupported variant", config: "variant: openshift\nversion: 4.14.0\n", version: "3.4.0", wantErr: true},
		{name: "experimental", config: "variant: flatcar\nversion: 1.2.0-experimental\n", version: "3.5.0", wantErr: true},
		{name: "container linux config", config: "storage:\n  files: []\n", version: "3.4.0", wantErr: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := provisioning.Options{Version: c.version, AdditionalConfig: []byte(c.config), Strict: c.strict}
			out, err := (&ignition.Renderer{}).Render(basePlan(), opts)
			if c.wantErr {
				var ps provisioning.Problems
				require.True(t, errors.As(err, &ps), "%v", err)
				require.Equal(t, "additionalConfig", ps[0].Path.String())
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.wantWarnings, len(out.Warnings) > 0, "%v", out.Warnings)
			cfg, _, err := v35.ParseCompatibleVersion(out.Data)
			require.NoError(t, err)
			var paths []string
			for _, f := range cfg.Storage.Files {
				paths = append(paths, f.Path)
			}
			require.Contains(t, paths, c.wantFile)
			require.Contains(t, paths, "/etc/app.conf")
		})
	}
}

func TestUnknownVersion(t *testing.T) {
	_, err := (&ignition.Renderer{}).Render(basePlan(), provisioning.Options{Version: "3.1.0"})
	var ps provisioning.Problems
	require.True(t, errors.As(err, &ps))
	require.Equal(t, "options.version", ps[0].Path.String())
}
