package addons

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps the layering of DESIGN.md: addons knows provisioning and
// its own catalog only; the catalog knows the standard library only.
func TestImports(t *testing.T) {
	const mod = "github.com/nodeboot/nodeboot/"
	allowed := map[string][]string{
		".":       {mod + "provisioning", mod + "addons/catalog"},
		"catalog": {},
	}
	for dir, extra := range allowed {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go files in %s: %v", dir, err)
		}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if !strings.Contains(strings.SplitN(p, "/", 2)[0], ".") {
					continue // standard library
				}
				ok := false
				for _, a := range extra {
					ok = ok || p == a
				}
				if !ok {
					t.Errorf("%s imports %s; allowed beyond the standard library: %v", file, p, extra)
				}
			}
		}
	}
	if _, err := os.Stat("apply.sh"); err != nil {
		t.Fatal(err)
	}
}
