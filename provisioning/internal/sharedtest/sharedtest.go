// Package sharedtest finds, for the library's own tests, the directory
// beside the repository that holds CABPK's reference vectors and the real
// tools: ../shared, or $NODEBOOT_SHARED. The root module's test/testenv
// finds it for nodeboot's suites; the library is a module of its own and
// cannot import that package. A missing directory fails the test, never
// skips it: a compatibility check that did not run proves nothing.
package sharedtest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Dir is the shared directory.
func Dir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("NODEBOOT_SHARED")
	if dir == "" {
		// This file is provisioning/internal/sharedtest/sharedtest.go.
		_, file, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "shared")
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("shared directory with vectors and tools not found (set NODEBOOT_SHARED): %v", err)
	}
	return dir
}
