package legacy

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
	"github.com/nodeboot/nodeboot/provisioning/ignition"
	"github.com/nodeboot/nodeboot/provisioning/ignition/internal/testplan"
)

// The renderer skips Ignition 2.3's reflective validation and the
// transpiler for what it generates (convert.go). These tests keep the
// skipped machinery as the oracle, over testplan's generated corpus of
// Plans: the same verdict, and for what is valid the same bytes. The
// vectors are covered in test/ignition.

// TestLegacyConvertMatchesTranspiler: over the corpus, legacyIgnition and
// validateLegacy give what CABPK's transpiler gives for the same CLC: the
// same verdict and, where it converts, the same config.
func TestLegacyConvertMatchesTranspiler(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 23))
	valid, invalid := 0, 0
	for i := range testplan.CorpusSize {
		b := &legacyBuilder{plan: testplan.Corpus(r)}
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
	if valid < testplan.CorpusSize/4 || invalid < testplan.CorpusSize/20 {
		t.Fatalf("the corpus proves little: %d valid, %d invalid configs", valid, invalid)
	}
}

// FuzzDataURL: the legacy data: URL is the transpiler's escaping and
// decodes, as Ignition decodes it, to exactly the content (package
// ignition/v3 fuzzes its own).
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
		for _, u := range []string{legacy} {
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
		out, err := (&ignition.Renderer{}).Render(p, provisioning.Options{Version: provisioning.VersionCABPK, AdditionalConfig: []byte(config)})
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
