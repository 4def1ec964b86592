package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestContainerMemoryLimit: a cgroup's limit is read in bytes; "max", v1's
// "unlimited" number, garbage and no file at all are no limit.
func TestContainerMemoryLimit(t *testing.T) {
	dir := t.TempDir()
	write := func(name, v string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name  string
		files []string
		want  int64
	}{
		{"v2 limit", []string{write("v2", "268435456\n")}, 268435456},
		{"v2 max", []string{write("v2max", "max\n")}, 0},
		{"v1 unlimited", []string{filepath.Join(dir, "absent"), write("v1", "9223372036854771712\n")}, 0},
		{"v1 limit after a missing v2 file", []string{filepath.Join(dir, "absent"), write("v1l", "104857600")}, 104857600},
		{"none", []string{filepath.Join(dir, "absent")}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := containerMemoryLimit(c.files); got != c.want {
				t.Errorf("got %d, want %d", got, c.want)
			}
		})
	}
}
