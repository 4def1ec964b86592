package legacy

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"reflect"
	"testing"
	"testing/quick"

	ign23 "github.com/flatcar/ignition/config/v2_3"
	ign23types "github.com/flatcar/ignition/config/v2_3/types"
)

// TestLegacyJSONMatchesEncoding: legacyJSON writes what json.Marshal writes,
// for random values of every field of the Ignition 2.3 types, and for the
// configs of the corpus.
func TestLegacyJSONMatchesEncoding(t *testing.T) {
	r := rand.New(rand.NewSource(14))
	typ := reflect.TypeFor[ign23types.Config]()
	lists := 0
	for i := range 200 {
		v0, ok := quick.Value(typ, r)
		if !ok {
			t.Fatal("quick cannot generate a config")
		}
		// quick spends its size budget on the first fields it meets, so
		// every list of a section gets a value of its own.
		v := reflect.New(typ).Elem()
		v.Set(v0)
		for _, section := range []reflect.Value{v.FieldByName("Storage"), v.FieldByName("Passwd"), v.FieldByName("Systemd"), v.FieldByName("Networkd")} {
			for f := range section.NumField() {
				section.Field(f).Set(randomList(r, section.Field(f).Type()))
			}
		}
		cfg := v.Interface().(ign23types.Config)
		lists += len(cfg.Storage.Disks) + len(cfg.Storage.Files) + len(cfg.Storage.Filesystems) + len(cfg.Storage.Raid)
		want, err := json.Marshal(&cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := legacyJSON(&cfg); !bytes.Equal(got, want) {
			t.Fatalf("config %d:\n got %s\nwant %s", i, got, want)
		}
	}
	if lists < 1000 {
		t.Fatalf("the generated configs hold %d disks, files, filesystems and arrays: too few to prove much", lists)
	}
	// An empty config: every struct present, every list absent.
	var empty ign23types.Config
	want, _ := json.Marshal(&empty)
	if got := legacyJSON(&empty); !bytes.Equal(got, want) {
		t.Fatalf("empty config:\n got %s\nwant %s", got, want)
	}
	// Empty, non-nil lists and a nil list without omitempty.
	odd := ign23types.Config{Storage: ign23types.Storage{Raid: []ign23types.Raid{{}, {Devices: []ign23types.Device{}}}, Files: []ign23types.File{}}}
	want, _ = json.Marshal(&odd)
	if got := legacyJSON(&odd); !bytes.Equal(got, want) {
		t.Fatalf("odd config:\n got %s\nwant %s", got, want)
	}
}

// randomList is a list of up to four random elements: quick divides its
// size budget among a struct's fields, so elements drawn one by one get
// their optional fields set, where a whole list drawn at once leaves them nil.
func randomList(r *rand.Rand, typ reflect.Type) reflect.Value {
	n := r.Intn(5)
	l := reflect.MakeSlice(typ, 0, n)
	for range n {
		e, ok := quick.Value(typ.Elem(), r)
		if !ok {
			panic("quick cannot generate " + typ.Elem().String())
		}
		l = reflect.Append(l, e)
	}
	if n == 0 && r.Intn(2) == 0 {
		return reflect.Zero(typ)
	}
	return l
}

// FuzzLegacyJSONString: strings are escaped as json.Marshal escapes them.
func FuzzLegacyJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "<a href=\"x\">&amp;</a>", "\\\b\f\n\r\t\x00\x1f\x7f", "\xff\xfeinvalid\xc3", "ünï\u2028\u2029code", "data:,%23!%2Fbin"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}

// TestAppendLegacyMatchesIgnition: appendLegacy is Ignition's own
// ign23.Append, over random pairs of configs.
func TestAppendLegacyMatchesIgnition(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	typ := reflect.TypeFor[ign23types.Config]()
	for i := range 200 {
		a, _ := quick.Value(typ, r)
		b, _ := quick.Value(typ, r)
		oldCfg, user := a.Interface().(ign23types.Config), b.Interface().(ign23types.Config)
		for _, v := range []reflect.Value{reflect.ValueOf(&oldCfg).Elem(), reflect.ValueOf(&user).Elem()} {
			for _, name := range []string{"Files", "Disks", "Raid"} {
				v.FieldByName("Storage").FieldByName(name).Set(randomList(r, v.FieldByName("Storage").FieldByName(name).Type()))
			}
		}
		// quick leaves these pointers nil; each is set, unset or both.
		oldCfg.Ignition.Version, user.Ignition.Version = "2.3.0", "2.2.0"
		oldCfg.Ignition.Timeouts = ign23types.Timeouts{HTTPResponseHeaders: ptrTo(1), HTTPTotal: ptrTo(2)}
		user.Ignition.Timeouts = ign23types.Timeouts{HTTPTotal: ptrTo(3)}
		if i%2 == 0 {
			user.Ignition.Timeouts = ign23types.Timeouts{HTTPResponseHeaders: ptrTo(4)}
		}
		user.Ignition.Config.Replace = &ign23types.ConfigReference{Source: "data:,x"}
		want := ign23.Append(oldCfg, user)
		if got := appendLegacy(&oldCfg, &user); !reflect.DeepEqual(got, want) {
			t.Fatalf("pair %d:\n got %+v\nwant %+v", i, got, want)
		}
	}
}
