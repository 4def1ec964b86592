package testenv

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
)

// cloudInitLoadScript drives cloud-init's own Python modules over many
// documents in one process: the jinja renderer `cloud-init devel render`
// uses, then validate_cloudconfig_file, the function `cloud-init schema -c`
// calls, then cloud-init's YAML loader. The shell tool in ../shared/tools
// starts cloud-init twice per file (about 0.6 s each); generated suites
// validate thousands of documents, which only a single process can afford.
// TestBatchSchemaAgreesWithTool keeps the two in agreement.
//
//go:embed cloudinit_load.py
var cloudInitLoadScript string

// CloudInitResult is cloud-init's verdict on one document.
type CloudInitResult struct {
	// Valid is true when the document passed cloud-init's schema.
	Valid bool `json:"valid"`
	// Error is cloud-init's message when it did not (YAML, jinja or schema).
	Error string `json:"error"`
	// SchemaPaths are the keys cloud-init's schema rejected, dotted as
	// cloud-init names them ("mounts.1", "fs_setup.0.partition").
	SchemaPaths []string `json:"schema_paths"`
	// Data is the document as cloud-init reads it after jinja rendering,
	// JSON-encoded (values that JSON lacks, such as dates, become strings);
	// nil when it could not be read.
	Data any `json:"data"`
}

// CloudInitLoad renders, validates and reads every document with cloud-init
// (Debian's package, as .ci/run installs it). Like Tool, -short skips the
// caller; a missing cloud-init fails it.
func CloudInitLoad(t testing.TB, docs [][]byte) []CloudInitResult {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: not running cloud-init")
	}
	const python = "/usr/bin/python3"
	if _, err := os.Stat("/usr/bin/cloud-init"); err != nil {
		t.Fatalf("cloud-init is not installed (.ci/run installs Debian's package): %v", err)
	}
	dir := t.TempDir()
	paths := make([]string, len(docs))
	for i, d := range docs {
		paths[i] = filepath.Join(dir, "doc-"+strconv.Itoa(i))
		if err := os.WriteFile(paths[i], d, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	script := filepath.Join(dir, "load.py")
	if err := os.WriteFile(script, []byte(cloudInitLoadScript), 0o600); err != nil {
		t.Fatal(err)
	}
	// One process per core: validation is CPU-bound Python.
	chunks := max(1, min(runtime.NumCPU(), len(paths)/50))
	parts := make([][]CloudInitResult, chunks)
	errs := make([]error, chunks)
	var wg sync.WaitGroup
	for c := range chunks {
		lo, hi := c*len(paths)/chunks, (c+1)*len(paths)/chunks
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(python, append([]string{script}, paths[lo:hi]...)...)
			cmd.Stderr = io.Discard
			out, err := cmd.Output()
			if err == nil {
				err = json.Unmarshal(out, &parts[c])
			}
			if err == nil && len(parts[c]) != hi-lo {
				err = fmt.Errorf("%d results for %d documents", len(parts[c]), hi-lo)
			}
			errs[c] = err
		}()
	}
	wg.Wait()
	var res []CloudInitResult
	for c := range chunks {
		if errs[c] != nil {
			t.Fatalf("cloud-init loader: %v", errs[c])
		}
		res = append(res, parts[c]...)
	}
	return res
}
