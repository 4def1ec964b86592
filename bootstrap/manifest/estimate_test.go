package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// parsedNodes is how many nodes yaml.v3 builds for raw (document node
// included), or -1 when it refuses raw.
func parsedNodes(raw []byte) int {
	var n yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(raw)).Decode(&n); err != nil {
		return -1
	}
	count := 0
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		count++
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&n)
	return count
}

// estimateFragments are the pieces random documents are made of: every
// kind of node start, quoting, block scalars at awkward indentations,
// comments, flow collections, and text that looks like indicators but is
// not.
var estimateFragments = []string{
	"a: b\n", "a:\n", "- x\n", "-\n", "- - - x\n", "? \n", "?\n", ": \n", ": v\n", "? k\n: v\n",
	"  ", "    ", "\t", "\n", "# c: [1,2]\n", "a: b # c, d\n",
	"k: [1, 2, [3, {a: b, c}], ]\n", "k: {a, b, c: , : d}\n", "[a: b, c]\n", "{\"a\":\"b\",\"c\":[1,2]}\n",
	"k: \"q: [1, 2, {\"\n", "k: \"multi\n  line, [x]\"\n", "k: 'it''s [1,2]'\n", "k: \"esc \\\" [1,2]\"\n",
	"k: |\n  - a\n  - [1,2]\n", "k: >-\n    a: b\n\n    [1, 2]\n", "- |\n x: [1,2]\n", "- a: |\n  b: [1, 2, 3]\n", "- a: |\n   c: [1,2]\n",
	"k: |2\n    x: [1]\n", "|\n a, b\n", "k: &a [1, 2]\n", "r: *a\n", "t: !!str [1]\n", "k: !t &b\n  - 1\n",
	"p: say \"hi, [x\" there\n", "p: a - b: c\n", "p: x#y, [z]\n", "u: http://h:1/p?q=[1]\n", "[\n1,\n2\n]\n", "{a:\n 1}\n",
	"- \"q\"\n", "- 'q'\n", "- [1, [2, [3]]]\n", "k: [\"a, b\", 'c, d']\n", "k: [a:b, c]\n", "- ? a\n  : b\n",
}

// TestEstimateNeverLow: for random documents yaml.v3 accepts, the estimate
// is never below the nodes yaml.v3 builds (the document node and the root
// aside), and for every reference input it is within three times them
// (about 2.2: a "key: value" line counts a possible collection and a
// possible empty value besides its two scalars).
func TestEstimateNeverLow(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	accepted := 0
	for range 200000 {
		var b strings.Builder
		for range 1 + r.IntN(6) {
			b.WriteString(estimateFragments[r.IntN(len(estimateFragments))])
		}
		raw := []byte(b.String())
		n := parsedNodes(raw)
		if n < 0 {
			continue
		}
		accepted++
		if est := estimateNodes(raw, 1<<30); n > est+2 {
			t.Fatalf("estimate %d, yaml.v3 built %d nodes for:\n%s", est, n, raw)
		}
	}
	if accepted < 10000 {
		t.Fatalf("only %d of the random documents parse; the test proves little", accepted)
	}
	paths, _ := filepath.Glob("/work/shared/cabpk-vectors/*/input.yaml")
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		err = Documents(bytes.NewReader(raw), func(doc []byte) error {
			n, est := parsedNodes(doc), estimateNodes(doc, 1<<30)
			if n > est+2 || est > 3*n {
				return fmt.Errorf("estimate %d for %d nodes", est, n)
			}
			return nil
		})
		if err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// TestDenseDocumentRefusedBeforeParsing: the densest documents under
// MaxDocumentBytes (a flow sequence of one-digit items, a block sequence
// of them, empty keys) are refused before yaml.v3 builds anything: a few
// MB allocated, not the hundreds a tree of millions of nodes takes.
func TestDenseDocumentRefusedBeforeParsing(t *testing.T) {
	for name, doc := range map[string]string{
		"flow sequence":  "x: [" + strings.Repeat("0,", 4<<20-8) + "0]\n",
		"block sequence": "x:\n" + strings.Repeat("- 0\n", 2<<20-8),
		"empty keys":     strings.Repeat("?\n", 4<<20-8),
	} {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			err := Documents(strings.NewReader(doc), func([]byte) error { return nil })
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "YAML nodes (MaxDocumentNodes)") {
				t.Fatalf("%v, want the node bound", err)
			}
			if mb := (after.TotalAlloc - before.TotalAlloc) >> 20; mb > 64 {
				t.Fatalf("%d MB allocated to refuse a %d MB document", mb, len(doc)>>20)
			}
		})
	}
}
