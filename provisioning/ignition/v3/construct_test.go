package ignitionv3

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vincent-petithory/dataurl"

	"github.com/nodeboot/nodeboot/provisioning/ignition/internal/testplan"
)

// The renderer skips Ignition's parser and its reflective validation for
// what it generates (validate.go). These tests keep the skipped machinery
// as the oracle, over testplan's generated corpus of Plans: the same
// verdict, and for what is valid the same bytes. The vectors are covered in
// test/ignition.

// TestGeneratedPassesIgnition: over the corpus, in every native version,
// validateGenerated fails exactly where Ignition's parser rejects the
// serialised config, and the bytes written are what the parser's own types
// serialise to.
func TestGeneratedPassesIgnition(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 11))
	valid, invalid := 0, 0
	for i := range testplan.CorpusSize {
		p := testplan.Corpus(r)
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
	if valid < testplan.CorpusSize || invalid < testplan.CorpusSize/10 {
		t.Fatalf("the corpus proves little: %d valid, %d invalid configs", valid, invalid)
	}
}

// FuzzDataURL: the native data: URL decodes, as Ignition decodes it, to
// exactly the content (package ignition/legacy fuzzes its own).
func FuzzDataURL(f *testing.F) {
	var all strings.Builder
	for c := range 256 {
		all.WriteByte(byte(c))
	}
	for _, s := range []string{"", "x", "a b%20c", "#?[]{}|\\^`\"<>", "\r\n\t\x00\xff", "ünï\u2028", all.String(), "data:,x", ";base64,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, u := range []string{textURL(s)} {
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
