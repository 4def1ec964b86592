package addons

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/provisioning"
)

func initPlan() *provisioning.Plan {
	return &provisioning.Plan{
		Role:  provisioning.RoleInit,
		Files: []provisioning.File{{Path: "/run/kubeadm/kubeadm.yaml", Content: "x"}},
		Commands: []provisioning.Command{
			{Phase: provisioning.PhasePre, Script: "pre"},
			{Phase: provisioning.PhaseBootstrap, Script: "kubeadm init"},
			{Phase: provisioning.PhasePost, Script: "user post"},
		},
	}
}

const sumB = "d35e3d7b5a2c4d4dd2b2b7a3d8bbaa3f09d6fbd6b2ea0f5c0c61e13b7a1a1e3a"

func TestContribute(t *testing.T) {
	list := []Addon{
		{Name: "b", Version: "v1", Order: 10, URL: "https://example.invalid/b.yaml", SHA256: sumB, Origin: addonOrigin("b")},
		{Name: "a", Order: 10, Manifest: []byte("kind: A\n"), Origin: addonOrigin("a")},
		{Name: "cni", Version: "v0.26.7", Order: 0, Manifest: []byte("kind: C\n")},
	}
	p := initPlan()
	require.NoError(t, Contribute(p, list, Options{}))
	index := "cni\tv0.26.7\t" + Digest([]byte("kind: C\n")) + "\t000-cni.yaml\t-\n" +
		"a\t-\t" + Digest([]byte("kind: A\n")) + "\t010-a.yaml\t-\n" +
		"b\tv1\t" + sumB + "\t010-b.yaml\thttps://example.invalid/b.yaml\n"
	want := initPlan()
	want.Files = append(want.Files,
		provisioning.File{Path: "/etc/kubernetes/addons/000-cni.yaml", Owner: "root:root", Permissions: "0600", Content: "kind: C\n"},
		provisioning.File{Path: "/etc/kubernetes/addons/010-a.yaml", Owner: "root:root", Permissions: "0600", Content: "kind: A\n", Origin: addonOrigin("a")},
		provisioning.File{Path: "/etc/kubernetes/addons/addons.list", Owner: "root:root", Permissions: "0600", Content: index},
		provisioning.File{Path: "/etc/kubernetes/addons/apply.sh", Owner: "root:root", Permissions: "0700", Content: Script()},
	)
	want.Commands = []provisioning.Command{
		want.Commands[0], want.Commands[1],
		{Phase: provisioning.PhasePost, Script: "/bin/sh /etc/kubernetes/addons/apply.sh " + Digest([]byte(index))},
		want.Commands[2],
	}
	if d := cmp.Diff(want, p); d != "" {
		t.Fatalf("plan (-want +got):\n%s", d)
	}
	require.Empty(t, p.Validate().Errors())
}

func TestContributeOptions(t *testing.T) {
	p := &provisioning.Plan{Role: provisioning.RoleInit}
	require.NoError(t, Contribute(p, []Addon{{Name: "a", Manifest: []byte("x")}}, Options{Dir: "/opt/addons", Kubeconfig: "/etc/k.conf", Timeout: 90 * time.Second}))
	require.Len(t, p.Commands, 1)
	require.Regexp(t, `^NODEBOOT_ADDONS_KUBECONFIG=/etc/k.conf NODEBOOT_ADDONS_TIMEOUT=90 /bin/sh /opt/addons/apply.sh [0-9a-f]{64}$`, p.Commands[0].Script)
	require.Equal(t, "/opt/addons/000-a.yaml", p.Files[0].Path)
}

func TestContributeLeavesJoinsAndEmptyListsAlone(t *testing.T) {
	for _, role := range []provisioning.Role{provisioning.RoleJoinControlPlane, provisioning.RoleJoinWorker} {
		p := initPlan()
		p.Role = role
		want := initPlan()
		want.Role = role
		require.NoError(t, Contribute(p, []Addon{{Name: "a", Manifest: []byte("x")}}, Options{}))
		require.Equal(t, want, p)
	}
	p := initPlan()
	require.NoError(t, Contribute(p, nil, Options{}))
	require.Equal(t, initPlan(), p)
}

func TestValidateNamesTheField(t *testing.T) {
	cases := []struct {
		name  string
		addon Addon
		opts  Options
		path  string
	}{
		{"bad name", Addon{Name: "Bad_Name", Manifest: []byte("x")}, Options{}, "addons[0].name"},
		{"no source", Addon{Name: "a", Origin: addonOrigin("a")}, Options{}, "FirstBootAddon ns/a.manifest"},
		{"two sources", Addon{Name: "a", Manifest: []byte("x"), URL: "https://h/x", SHA256: sumB}, Options{}, "addons[0].url"},
		{"url without sha256", Addon{Name: "a", URL: "https://h/x"}, Options{}, "addons[0].sha256"},
		{"url with quote", Addon{Name: "a", URL: "https://h/x'; rm -rf /", SHA256: sumB}, Options{}, "addons[0].url"},
		{"ftp url", Addon{Name: "a", URL: "ftp://h/x", SHA256: sumB}, Options{}, "addons[0].url"},
		{"bad sha256", Addon{Name: "a", URL: "https://h/x", SHA256: "ABC"}, Options{}, "addons[0].sha256"},
		{"sha256 disagrees with manifest", Addon{Name: "a", Manifest: []byte("x"), SHA256: sumB}, Options{}, "addons[0].sha256"},
		{"bad version", Addon{Name: "a", Version: "1 2", Manifest: []byte("x")}, Options{}, "addons[0].version"},
		{"order", Addon{Name: "a", Order: 1000, Manifest: []byte("x")}, Options{}, "addons[0].order"},
		{"dir", Addon{Name: "a", Manifest: []byte("x")}, Options{Dir: "etc/addons"}, "options.dir"},
		{"kubeconfig", Addon{Name: "a", Manifest: []byte("x")}, Options{Kubeconfig: "/a b"}, "options.kubeconfig"},
		{"timeout", Addon{Name: "a", Manifest: []byte("x")}, Options{Timeout: time.Millisecond}, "options.timeout"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := initPlan()
			err := Contribute(p, []Addon{c.addon}, c.opts)
			require.ErrorIs(t, err, ErrInvalidAddon)
			var ps provisioning.Problems
			require.True(t, errors.As(err, &ps))
			require.Equal(t, c.path, ps[0].Path.String(), ps.Error())
			require.Equal(t, initPlan(), p, "the plan must be unchanged")
		})
	}
	t.Run("a rejected url is quoted without its credentials", func(t *testing.T) {
		ps := Validate([]Addon{{Name: "a", URL: "https://u:s3cr3t@h/x y.yaml?sig=s3cr3t", SHA256: sumB}})
		require.Len(t, ps, 1)
		require.Equal(t, `must be an http or https URL without blanks or quotes, got "https://h/x y.yaml"`, ps[0].Message)
	})
	t.Run("duplicate", func(t *testing.T) {
		ps := Validate([]Addon{{Name: "a", Manifest: []byte("x")}, {Name: "a", Manifest: []byte("y")}})
		require.Len(t, ps, 1)
		require.Equal(t, "addons[1].name", ps[0].Path.String())
	})
}

func addonOrigin(name string) provisioning.Path {
	return provisioning.Path{}.In(provisioning.ObjectRef{Kind: "FirstBootAddon", Namespace: "ns", Name: name})
}
