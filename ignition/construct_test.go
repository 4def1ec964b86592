package ignition

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	clct "github.com/flatcar/container-linux-config-transpiler/config"
	"github.com/flatcar/ignition/config/validate"
	"github.com/vincent-petithory/dataurl"

	"github.com/nodeboot/nodeboot/provisioning"
)

// The renderers skip Ignition's reflective validation and the transpiler for
// what they generate (legacy_convert.go, v3_validate.go). These tests keep
// the skipped machinery as the oracle, over a generated corpus of Plans
// drawn from ordinary and hostile values: the same verdict, and for what is
// valid the same bytes.

// corpusSize Plans are drawn per test; the vectors are covered in
// test/ignition.
const corpusSize = 400

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

func corpusPlan(r *rand.Rand) *provisioning.Plan {
	p := &provisioning.Plan{
		Role:     pick(r, provisioning.RoleInit, provisioning.RoleJoinControlPlane, provisioning.RoleJoinWorker),
		Sentinel: pick(r, "/run/cluster-api/bootstrap-success.complete", ""),
	}
	paths := []string{"/etc/app.conf", "/etc/motd", "/opt/bin/x", "/etc/a//b", "/etc/x/", "relative", "/etc/systemd/system/var-lib-etcd.mount",
		"/etc/nodeboot/bootstrap.sh", "/etc/sudoers.d/ops", "/etc/ntp.conf", "/var/lib/etcd/x"}
	contents := []string{"x\n", "", "a: b #c\n", "  indented\n", "line\r\nbreak", "tab\there", "ünï\u2028code", "{{ .x }}", "#!/bin/sh\necho hi\n", "\x00bin", "aGVsbG8K"}
	for i, n := 0, r.IntN(6); i < n; i++ {
		f := provisioning.File{
			Path: pick(r, paths...), Content: pick(r, contents...), Origin: provisioning.NewPath("spec", "files").Index(i).WithFields(),
			Permissions: pick(r, "0644", "0600", "0755", "644", "07777", "017777", "0", ""),
			Owner:       pick(r, "", "root:root", "core", "1000:1000", "0:wheel", ":g", "a b:c"),
			Encoding:    pick(r, provisioning.EncodingNone, provisioning.EncodingNone, provisioning.EncodingBase64),
			Append:      pick(r, nil, ptrTo(true), ptrTo(false)),
		}
		if f.Encoding == provisioning.EncodingBase64 {
			f.Content = pick(r, "aGVsbG8K", "", "!!notbase64")
		}
		p.Files = append(p.Files, f)
	}
	p.Files = append(p.Files, provisioning.File{Path: pick(r, "/etc/kubeadm.yml", "/run/kubeadm/kubeadm.yaml"), Permissions: "0600", Content: "---\nkind: JoinConfiguration\n", BootstrapInput: true})
	for i, n := 0, r.IntN(3); i < n; i++ {
		p.Users = append(p.Users, provisioning.User{
			Name: pick(r, "ops", "core", "capi", "ops"), Gecos: pick(r, "", "Ops: on-call #2", "Admin"),
			Groups: pick(r, "", "wheel", "wheel, docker", "a, a"), Shell: pick(r, "", "/bin/bash"), HomeDir: pick(r, "", "/home/x"),
			Passwd: pick(r, "", "$6$x"), LockPassword: pick(r, nil, ptrTo(false), ptrTo(true)), PrimaryGroup: pick(r, "", "ops"),
			Sudo:              pick(r, "", "ALL=(ALL) NOPASSWD:ALL"),
			SSHAuthorizedKeys: pick(r, nil, []string{"ssh-ed25519 AAAA a"}, []string{"k", "k"}),
			Inactive:          pick(r, nil, ptrTo(false), ptrTo(true)),
			Origin:            provisioning.NewPath("spec", "users").Index(i),
		})
	}
	if r.IntN(3) == 0 {
		p.NTP = &provisioning.NTP{Enabled: pick(r, nil, ptrTo(true), ptrTo(false)), Servers: pick(r, nil, []string{"time1.example.com"}, []string{"a", "b"})}
	}
	if r.IntN(3) == 0 {
		d := &provisioning.DiskSetup{}
		for i, n := 0, r.IntN(3); i < n; i++ {
			d.Partitions = append(d.Partitions, provisioning.Partition{Device: pick(r, "/dev/sdb", "/dev/sdc", "sdb", "/dev/nvme0n1"),
				Layout: pick(r, nil, ptrTo(true), ptrTo(false)), Overwrite: pick(r, nil, ptrTo(true), ptrTo(false)), TableType: pick(r, "", "gpt")})
		}
		for i, n := 0, r.IntN(3); i < n; i++ {
			d.Filesystems = append(d.Filesystems, provisioning.Filesystem{Device: pick(r, "/dev/sdb1", "/dev/sdc", "sdd", "/dev/sdb1"),
				Filesystem: pick(r, "ext4", "xfs", "vfat", "btrfs", "swap", "zfs"), Label: pick(r, "etcd_disk", "data", "a_label_that_is_too_long_for_xfs", ""),
				Overwrite: pick(r, nil, ptrTo(true), ptrTo(false)), ExtraOpts: pick(r, nil, []string{"-E", "lazy_itable_init=1"})})
		}
		p.Disks = d
	}
	for i, n := 0, r.IntN(3); i < n; i++ {
		p.Mounts = append(p.Mounts, pick(r, provisioning.Mount{"etcd_disk", "/var/lib/etcd"}, provisioning.Mount{"data", "/var/lib/data", "defaults", "nofail"},
			provisioning.Mount{"LABEL=x", "/mnt/x", "ext4", "defaults", "0", "2"}, provisioning.Mount{"swap", "none", "swap"}))
	}
	if r.IntN(4) == 0 {
		p.BootCommands = []string{"echo boot"}
	}
	if r.IntN(10) < 6 {
		ordinary(p)
	}
	p.Commands = append(p.Commands, provisioning.Command{Phase: provisioning.PhasePre, Script: pick(r, "echo pre", "a: b", "multi\nline"), Origin: provisioning.NewPath("spec", "preKubeadmCommands").Index(0).WithFields()})
	p.Commands = append(p.Commands, provisioning.Command{Phase: provisioning.PhaseBootstrap, Script: "kubeadm join --config /etc/kubeadm.yml"})
	return p
}

// ordinary turns the values that collide or break a config into ordinary
// ones, so that the corpus holds enough valid configs to compare bytes.
func ordinary(p *provisioning.Plan) {
	for i := range p.Files {
		if f := &p.Files[i]; !f.BootstrapInput {
			f.Path, f.Permissions = fmt.Sprintf("/etc/app/%d.conf", i), "0644"
		}
	}
	for i := range p.Users {
		u := &p.Users[i]
		u.Name, u.Groups, u.SSHAuthorizedKeys = fmt.Sprintf("user%d", i), "wheel", []string{"ssh-ed25519 AAAA a"}
	}
	if d := p.Disks; d != nil {
		for i := range d.Partitions {
			d.Partitions[i].Device = fmt.Sprintf("/dev/vd%c", 'b'+i)
		}
		for i := range d.Filesystems {
			d.Filesystems[i].Device, d.Filesystems[i].Filesystem, d.Filesystems[i].Label = fmt.Sprintf("/dev/vd%c1", 'b'+i), "ext4", fmt.Sprintf("fs%d", i)
		}
	}
	p.Mounts = nil
}

// TestGeneratedPassesIgnition: over the corpus, in every native version,
// validateGenerated fails exactly where Ignition's parser rejects the
// serialised config, and the bytes written are what the parser's own types
// serialise to.
func TestGeneratedPassesIgnition(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 11))
	valid, invalid := 0, 0
	for i := range corpusSize {
		p := corpusPlan(r)
		for di := range dialects {
			d := &dialects[di]
			b := &v3Builder{plan: p}
			b.build()
			if b.ps.Err() != nil {
				continue
			}
			b.cfg.Ignition.Version = d.version
			ours := validateGenerated(&b.cfg)
			raw, err := marshalJSON(b.cfg)
			if err != nil {
				t.Fatal(err)
			}
			parsed, rep, err := d.parseCompatible(raw)
			rejected := err != nil || rep.IsFatal()
			if ours.IsFatal() != rejected {
				t.Fatalf("plan %d, %s: validateGenerated fatal=%v (%s), Ignition's parser fatal=%v (%v %s)", i, d.version, ours.IsFatal(), ours.String(), rejected, err, rep.String())
			}
			if rejected {
				invalid++
				continue
			}
			valid++
			want, err := marshalJSON(parsed)
			if err != nil {
				t.Fatal(err)
			}
			got, sizes, err := marshalSections(&b.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("plan %d, %s: bytes differ from Ignition's types:\n got %s\nwant %s", i, d.version, got, want)
			}
			var sections map[string]json.RawMessage
			if err := json.Unmarshal(got, &sections); err != nil {
				t.Fatal(err)
			}
			for k, v := range sections {
				if sizes[k] != len(v) {
					t.Fatalf("plan %d: size of %s is %d, section is %d bytes", i, k, sizes[k], len(v))
				}
			}
		}
	}
	t.Logf("valid %d, rejected by both %d", valid, invalid)
	if valid < corpusSize || invalid < corpusSize/10 {
		t.Fatalf("the corpus proves little: %d valid, %d invalid configs", valid, invalid)
	}
}

// TestLegacyConvertMatchesTranspiler: over the corpus, legacyIgnition and
// validateLegacy give what CABPK's transpiler gives for the same CLC: the
// same verdict and, where it converts, the same config.
func TestLegacyConvertMatchesTranspiler(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 23))
	valid, invalid := 0, 0
	for i := range corpusSize {
		b := &legacyBuilder{plan: corpusPlan(r)}
		b.build()
		rep := validate.ValidateWithoutSource(reflect.ValueOf(b.cfg))
		want, conv := clct.Convert(b.cfg, "", nil)
		rep.Merge(conv)
		got := legacyIgnition(&b.cfg)
		ours := validateLegacy(&b.cfg, &got)
		if (len(ours.Entries) > 0) != (len(rep.Entries) > 0) {
			t.Fatalf("plan %d: validateLegacy found %q, the transpiler %q", i, ours.String(), rep.String())
		}
		if len(rep.Entries) > 0 {
			invalid++
			continue
		}
		valid++
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("plan %d: converted config differs from the transpiler's:\n got %+v\nwant %+v", i, got, want)
		}
		gj, _ := json.Marshal(&got)
		wj, _ := json.Marshal(&want)
		if !bytes.Equal(gj, wj) {
			t.Fatalf("plan %d: bytes differ:\n got %s\nwant %s", i, gj, wj)
		}
	}
	t.Logf("valid %d, refused by both %d", valid, invalid)
	if valid < corpusSize/4 || invalid < corpusSize/20 {
		t.Fatalf("the corpus proves little: %d valid, %d invalid configs", valid, invalid)
	}
}

// FuzzDataURL: both dialects' data: URLs decode, as Ignition decodes them,
// to exactly the content, and the legacy one is the transpiler's escaping.
func FuzzDataURL(f *testing.F) {
	var all strings.Builder
	for c := range 256 {
		all.WriteByte(byte(c))
	}
	for _, s := range []string{"", "x", "a b%20c", "#?[]{}|\\^`\"<>", "\r\n\t\x00\xff", "ünï\u2028", all.String(), "data:,x", ";base64,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		legacy := legacyDataURL(s)
		if want := "data:," + dataurl.EscapeString(s); legacy != want {
			t.Fatalf("legacyDataURL(%q) = %q, the transpiler writes %q", s, legacy, want)
		}
		for _, u := range []string{legacy, textURL(s)} {
			d, err := dataurl.DecodeString(u)
			if err != nil {
				t.Fatalf("%q does not decode: %v", u, err)
			}
			if string(d.Data) != s {
				t.Fatalf("%q decodes to %q, want %q", u, d.Data, s)
			}
		}
	})
}

// TestLegacyAdditionalConfigCache: a remembered additional config renders
// the bytes a fresh transpilation does, is not changed by the renders that
// share it, and the cache stays bounded.
func TestLegacyAdditionalConfigCache(t *testing.T) {
	p := &provisioning.Plan{
		Role: provisioning.RoleJoinWorker,
		Files: []provisioning.File{
			{Path: "/etc/app.conf", Permissions: "0644", Content: "app\n", Origin: provisioning.NewPath("spec", "files").Index(0).WithFields()},
			{Path: legacyInputPath, Permissions: "0600", Content: "---\nkind: JoinConfiguration\n", BootstrapInput: true},
		},
		Commands: []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: "kubeadm join --config /etc/kubeadm.yml"}},
	}
	clc := "storage:\n  files:\n  - path: /etc/extra\n    filesystem: root\n    mode: 0644\n    contents:\n      inline: extra\n"
	render := func(config string) []byte {
		out, err := (&Renderer{}).Render(p, provisioning.Options{Version: provisioning.VersionCABPK, AdditionalConfig: []byte(config)})
		if err != nil {
			t.Fatal(err)
		}
		return out.Data
	}
	first := render(clc)
	for i := range clcCacheSize + 8 {
		// Distinct bytes, the same config: each is a fresh transpilation.
		if got := render(fmt.Sprintf("%s# %d\n", clc, i)); !bytes.Equal(got, first) {
			t.Fatalf("render %d differs:\n%s\n%s", i, got, first)
		}
		if got := render(clc); !bytes.Equal(got, first) {
			t.Fatalf("remembered render %d differs:\n%s\n%s", i, got, first)
		}
	}
	clcCache.Lock()
	n := len(clcCache.entries)
	clcCache.Unlock()
	if n > clcCacheSize {
		t.Fatalf("cache holds %d entries, bound %d", n, clcCacheSize)
	}
}
