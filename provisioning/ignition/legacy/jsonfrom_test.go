package legacy

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"

	ign23types "github.com/flatcar/ignition/config/v2_3/types"
)

// TestDataURLIsJSONSafe: json.Marshal writes every byte legacyDataURL can
// write as it is, so legacyJSONFrom may copy those sources unescaped, and
// legacyJSONFrom writes json.Marshal's bytes for configs whose first files
// have such sources and whose later ones have anything.
func TestDataURLIsJSONSafe(t *testing.T) {
	var all []byte
	for c := range 256 {
		all = append(all, byte(c))
	}
	u := legacyDataURL(string(all))
	want, _ := json.Marshal(u)
	if got := append(append([]byte{'"'}, u...), '"'); !bytes.Equal(got, want) {
		t.Fatalf("json.Marshal escapes part of a data: URL:\n got %s\nwant %s", got, want)
	}
	r := rand.New(rand.NewPCG(5, 6))
	text := func() string {
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return string(b)
	}
	for range 300 {
		var cfg ign23types.Config
		n := r.IntN(4)
		for i := range n + r.IntN(3) {
			f := ign23types.File{Node: ign23types.Node{Filesystem: "root", Path: text()}}
			if i < n {
				f.Contents.Source = legacyDataURL(text())
			} else {
				f.Contents.Source = text() // the user's: any string
			}
			cfg.Storage.Files = append(cfg.Storage.Files, f)
		}
		want, err := json.Marshal(&cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := legacyJSONFrom(&cfg, n); !bytes.Equal(got, want) {
			t.Fatalf("legacyJSONFrom(%d):\n got %s\nwant %s", n, got, want)
		}
	}
}
