package provisioning

import (
	"encoding/json"
	"testing"
)

func TestPathString(t *testing.T) {
	addon := ObjectRef{Kind: "FirstBootAddon", Namespace: "ns", Name: "a"}
	for _, tc := range []struct {
		name string
		p    Path
		want string
	}{
		{"zero", Path{}, ""},
		{"one field", NewPath("role"), "role"},
		{"fields", NewPath("spec", "diskSetup", "partitions"), "spec.diskSetup.partitions"},
		{"index and field", NewPath("spec", "files").Index(2).Field("content"), "spec.files[2].content"},
		{"nested indexes", NewPath("mounts").Index(0).Index(4), "mounts[0][4]"},
		{"map key with dots and slashes", NewPath("metadata", "annotations").Key("nodeboot.dev/strict"), "metadata.annotations[nodeboot.dev/strict]"},
		{"index first", Path{}.Index(3), "[3]"},
		{"object only", Path{}.In(addon), "FirstBootAddon ns/a"},
		{"in an object", NewPath("manifest").In(addon), "FirstBootAddon ns/a.manifest"},
		{"object without namespace", NewPath("spec").In(ObjectRef{Kind: "Cluster", Name: "c"}), "Cluster c.spec"},
		{"joined", NewPath("spec").Join(NewPath("files").Index(1)), "spec.files[1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestPathIsImmutable(t *testing.T) {
	files := NewPath("spec", "files")
	a, b := files.Index(0), files.Index(1)
	aPath := a.Field("path")
	if files.String() != "spec.files" || a.String() != "spec.files[0]" || b.String() != "spec.files[1]" || aPath.String() != "spec.files[0].path" {
		t.Fatalf("extending a path changed another: %s %s %s %s", files, a, b, aPath)
	}
	if got := aPath.Parent(); !got.Equal(a) {
		t.Errorf("Parent() = %s, want %s", got, a)
	}
	if got := (Path{}).Parent(); !got.IsZero() {
		t.Errorf("parent of the empty path = %s", got)
	}
}

func TestPathEqualAndPrefix(t *testing.T) {
	addon := ObjectRef{Kind: "FirstBootAddon", Namespace: "ns", Name: "a"}
	p := NewPath("spec", "files").Index(2).Field("content")
	for _, tc := range []struct {
		name        string
		a, b        Path
		equal, pref bool
	}{
		{"same elements built apart", p, NewPath("spec").Field("files").Index(2).Field("content"), true, true},
		{"prefix", p, NewPath("spec", "files").Index(2), false, true},
		{"other index", p, NewPath("spec", "files").Index(3), false, false},
		{"field is not index", NewPath("a").Index(0), NewPath("a").Key("0"), false, false},
		{"field name is not a prefix of a longer name", NewPath("spec", "filesystems"), NewPath("spec", "files"), false, false},
		{"other object", NewPath("name").In(addon), NewPath("name"), false, false},
		{"same object", NewPath("name").In(addon), Path{}.In(addon).Field("name"), true, true},
		{"empty prefix", p, Path{}, false, true},
		{"longer is no prefix", NewPath("spec"), p, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.a.Equal(tc.b); got != tc.equal {
				t.Errorf("Equal = %v, want %v", got, tc.equal)
			}
			if got := tc.a.HasPrefix(tc.b); got != tc.pref {
				t.Errorf("HasPrefix = %v, want %v", got, tc.pref)
			}
		})
	}
	rest, ok := p.TrimPrefix(NewPath("spec", "files"))
	if !ok || rest.String() != "[2].content" || rest.Len() != 2 {
		t.Errorf("TrimPrefix = %s, %v", rest, ok)
	}
	if _, ok := p.TrimPrefix(NewPath("status")); ok {
		t.Error("TrimPrefix of a path without the prefix succeeded")
	}
	field, ok := NewPath("manifest").In(addon).TrimPrefix(Path{}.In(addon))
	if !ok || field.String() != "manifest" || !field.Object().IsZero() {
		t.Errorf("TrimPrefix of an object path = %s, %v", field, ok)
	}
}

func TestPathElements(t *testing.T) {
	p := NewPath("metadata", "annotations").Key("k").Field("x").Index(7)
	want := []PathElement{
		{Kind: FieldElement, Name: "metadata"}, {Kind: FieldElement, Name: "annotations"},
		{Kind: KeyElement, Name: "k"}, {Kind: FieldElement, Name: "x"}, {Kind: IndexElement, Index: 7},
	}
	got := p.Elements()
	if len(got) != len(want) || p.Len() != len(want) {
		t.Fatalf("Elements() = %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("element %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if p.Last() != want[len(want)-1] {
		t.Errorf("Last() = %+v", p.Last())
	}
}

func TestPathMarshalsAsText(t *testing.T) {
	b, err := json.Marshal(struct{ Path Path }{NewPath("spec", "files").Index(0)})
	if err != nil || string(b) != `{"Path":"spec.files[0]"}` {
		t.Fatalf("got %s, %v", b, err)
	}
}

func TestFieldPath(t *testing.T) {
	origin := NewPath("spec", "files").Index(4)
	plan := NewPath("files").Index(1)
	for _, tc := range []struct {
		name   string
		origin Path
		field  string
		want   string
	}{
		{"origin with the plan's fields", origin.WithFields(), "path", "spec.files[4].path"},
		{"origin is exact", origin, "path", "spec.files[4]"},
		{"a field origin is exact", NewPath("spec", "serverConfig"), "permissions", "spec.serverConfig"},
		{"an object origin has fields", Path{}.In(ObjectRef{Kind: "FirstBootAddon", Name: "a"}), "manifest", "FirstBootAddon a.manifest"},
		{"plan path without origin", Path{}, "path", "files[1].path"},
		{"element itself", origin, "", "spec.files[4]"},
	} {
		if got := FieldPath(tc.origin, plan, tc.field).String(); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestSectionPath(t *testing.T) {
	var nilPlan *Plan
	with := &Plan{Origins: Origins{Mounts: NewPath("spec", "mounts"), Partitions: NewPath("spec", "diskSetup", "partitions")}}
	for _, tc := range []struct {
		name string
		p    *Plan
		s    Section
		want string
	}{
		{"nil plan", nilPlan, SectionNTP, "ntp"},
		{"default partitions", &Plan{}, SectionPartitions, "disks.partitions"},
		{"default filesystems", &Plan{}, SectionFilesystems, "disks.filesystems"},
		{"default boot commands", &Plan{}, SectionBootCommands, "bootCommands"},
		{"default sentinel", &Plan{}, SectionSentinel, "sentinel"},
		{"origin mounts", with, SectionMounts, "spec.mounts"},
		{"origin partitions", with, SectionPartitions, "spec.diskSetup.partitions"},
		{"unset origin keeps the plan's", with, SectionFilesystems, "disks.filesystems"},
	} {
		if got := tc.p.SectionPath(tc.s).String(); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
	p := &Plan{Files: []File{{Origin: NewPath("spec", "files").Index(9).WithFields()}, {}}, Users: []User{{}}, Commands: []Command{{}}}
	if got := p.FilePath(0).String() + " " + p.FilePath(1).String() + " " + p.UserPath(0).String() + " " + p.CommandPath(0).String(); got != "spec.files[9] files[1] users[0] commands[0]" {
		t.Errorf("element paths: %s", got)
	}
}

func TestOptionPaths(t *testing.T) {
	var o Options
	if o.VersionPath().String() != "options.version" || o.AdditionalConfigPath().String() != "additionalConfig" {
		t.Errorf("defaults: %s %s", o.VersionPath(), o.AdditionalConfigPath())
	}
	o.Origins = OptionOrigins{Version: NewPath("metadata", "annotations").Key("v"), AdditionalConfig: NewPath("spec", "extra")}
	if o.VersionPath().String() != "metadata.annotations[v]" || o.AdditionalConfigPath().String() != "spec.extra" {
		t.Errorf("origins: %s %s", o.VersionPath(), o.AdditionalConfigPath())
	}
}
