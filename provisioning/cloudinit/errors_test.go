package cloudinit_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/cloudinit"
	"github.com/nodeboot/nodeboot/provisioning/conformance"
)

func workerPlan() *provisioning.Plan {
	return &provisioning.Plan{
		Role:     provisioning.RoleJoinWorker,
		Files:    []provisioning.File{{Path: "/etc/app.conf", Permissions: "0644", Content: "app\n", Origin: provisioning.NewPath("spec", "files").Index(0).WithFields()}},
		Commands: []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: "kubeadm join"}},
		Sentinel: "/run/cluster-api/bootstrap-success.complete",
	}
}

// TestErrorClasses: every error class of Render and Check matches
// provisioning.ErrInvalid or ErrUnsupported, the package's own sentinel
// where there is one, and still unwraps to Problems naming the field.
func TestErrorClasses(t *testing.T) {
	for _, dialect := range []string{"", cloudinit.VersionPlain} {
		for _, tc := range []struct {
			name            string
			plan            func() *provisioning.Plan
			opts            provisioning.Options
			invalid, unsupp bool
			also            error
			path            string // "" when the error is not Problems
		}{
			{name: "nil plan", plan: func() *provisioning.Plan { return nil }, invalid: true, also: provisioning.ErrNilPlan},
			{name: "empty file path", plan: func() *provisioning.Plan { p := workerPlan(); p.Files[0].Path = ""; return p }, invalid: true, path: "spec.files[0].path"},
			{name: "two bootstrap commands", plan: func() *provisioning.Plan {
				p := workerPlan()
				p.Commands = append(p.Commands, p.Commands[0])
				return p
			}, invalid: true, path: "commands[1]"},
			{name: "sentinel without bootstrap command", plan: func() *provisioning.Plan { p := workerPlan(); p.Commands = nil; return p }, invalid: true, path: "sentinel"},
			{name: "additional config", plan: workerPlan, opts: provisioning.Options{Version: provisioning.VersionCABPK, AdditionalConfig: []byte("x: 1\n")}, unsupp: true, path: "additionalConfig"},
			{name: "over budget", plan: workerPlan, opts: provisioning.Options{Version: provisioning.VersionCABPK, MaxBytes: 10}, invalid: true, also: provisioning.ErrTooLarge},
		} {
			t.Run(dialect+"/"+tc.name, func(t *testing.T) {
				opts := tc.opts
				opts.Version = dialect
				r := &cloudinit.Renderer{}
				out, err := r.Render(tc.plan(), opts)
				if err == nil {
					t.Fatalf("rendered %d bytes", len(out.Data))
				}
				require.NoError(t, conformance.Classes(err, tc.invalid, tc.unsupp, tc.also))
				var ps provisioning.Problems
				if tc.path == "" {
					return
				}
				if !errors.As(err, &ps) || ps[0].Path.String() != tc.path {
					t.Fatalf("errors.As(*Problems) = %v, want a problem at %s", ps, tc.path)
				}
				if check := r.Check(tc.plan(), opts).Err(); check == nil {
					t.Fatal("Check found nothing that Render refused")
				} else {
					require.NoError(t, conformance.Classes(check, tc.invalid, tc.unsupp, tc.also))
				}
			})
		}
	}
}

func TestUnknownVersion(t *testing.T) {
	r := &cloudinit.Renderer{}
	_, err := r.Render(workerPlan(), provisioning.Options{Version: "2"})
	require.NoError(t, conformance.Classes(err, false, true, cloudinit.ErrUnknownVersion))
	require.NoError(t, conformance.Classes(r.Check(workerPlan(), provisioning.Options{Version: "2"}).Err(), false, true, cloudinit.ErrUnknownVersion))
	var ps provisioning.Problems
	if !errors.As(err, &ps) || ps[0].Path.String() != "options.version" {
		t.Fatalf("got %v", err)
	}
	opts := provisioning.Options{Version: "2", Origins: provisioning.OptionOrigins{Version: provisioning.NewPath("metadata", "annotations").Key("v")}}
	if _, err := r.Render(workerPlan(), opts); err == nil || !errors.As(err, &ps) || ps[0].Path.String() != "metadata.annotations[v]" {
		t.Fatalf("an option's origin is not used: %v", err)
	}
}

func TestCompressedOutput(t *testing.T) {
	for _, dialect := range []string{"", cloudinit.VersionPlain} {
		r := &cloudinit.Renderer{}
		plain, err := r.Render(workerPlan(), provisioning.Options{Version: dialect})
		if err != nil {
			t.Fatal(err)
		}
		zipped, err := r.Render(workerPlan(), provisioning.Options{Version: dialect, Compress: true})
		if err != nil {
			t.Fatal(err)
		}
		if plain.Compressed || !zipped.Compressed || !bytes.HasPrefix(zipped.Data, []byte{0x1f, 0x8b}) {
			t.Errorf("%q: Compressed = %v/%v, gzip magic %v", dialect, plain.Compressed, zipped.Compressed, bytes.HasPrefix(zipped.Data, []byte{0x1f, 0x8b}))
		}
		if zipped.Sizes[provisioning.SizeUncompressed] != len(plain.Data) || zipped.Sizes[provisioning.SizeTotal] != len(zipped.Data) {
			t.Errorf("%q: sizes %v, want uncompressed %d and total %d", dialect, zipped.Sizes, len(plain.Data), len(zipped.Data))
		}
	}
}

func TestNilPlanCheck(t *testing.T) {
	for _, dialect := range []string{"", cloudinit.VersionPlain} {
		ps := (&cloudinit.Renderer{}).Check(nil, provisioning.Options{Version: dialect})
		require.NoError(t, conformance.Classes(ps.Err(), true, false, provisioning.ErrNilPlan))
	}
}
