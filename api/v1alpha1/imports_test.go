package v1alpha1

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportsOnlyAPIMachinery keeps the API package free of dependencies other
// projects would have to take on: the standard library, apimachinery and this
// package's own module path under api/ only.
func TestImportsOnlyAPIMachinery(t *testing.T) {
	dir := filepath.Join("..")
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !allowedImport(p) {
				t.Errorf("%s imports %s: api/ may import only the standard library, k8s.io/apimachinery and itself", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func allowedImport(p string) bool {
	first := strings.SplitN(p, "/", 2)[0]
	switch {
	case !strings.Contains(first, "."):
		return true // standard library
	case p == "k8s.io/apimachinery" || strings.HasPrefix(p, "k8s.io/apimachinery/"):
		return true
	case strings.HasPrefix(p, "github.com/nodeboot/nodeboot/api/"):
		return true
	}
	return false
}

func TestAllowedImport(t *testing.T) {
	for p, want := range map[string]bool{
		"fmt":                                      true,
		"k8s.io/apimachinery/pkg/apis/meta/v1":     true,
		"github.com/nodeboot/nodeboot/api/v1":      true,
		"k8s.io/api/core/v1":                       false,
		"sigs.k8s.io/controller-runtime":           false,
		"github.com/nodeboot/nodeboot/addons":      false,
		"k8s.io/apimachinery-extra/pkg":            false,
		"sigs.k8s.io/cluster-api/api/core/v1beta2": false,
	} {
		if got := allowedImport(p); got != want {
			t.Errorf("allowedImport(%q) = %v, want %v", p, got, want)
		}
	}
}
