package testenv

import (
	"bufio"
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// CloudInitValidate runs ../shared/tools/cloudinit-validate once on all
// files and returns, per file, whether cloud-init's schema accepted it, and
// the tool's output.
func CloudInitValidate(t testing.TB, files []string) (map[string]bool, string) {
	t.Helper()
	tool := Tool(t, "cloudinit-validate")
	var out bytes.Buffer
	cmd := exec.Command(tool, files...)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && (!errors.As(err, &ee) || ee.ExitCode() != 1) {
		t.Fatalf("cloudinit-validate: %v\n%s", err, out.String())
	}
	res := map[string]bool{}
	sc := bufio.NewScanner(&out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		for _, f := range files {
			for verdict, ok := range map[string]bool{"OK ": true, "FAIL ": false} {
				if rest, found := strings.CutPrefix(line, verdict+f); found && (rest == "" || rest[0] == ':' || rest[0] == ' ') {
					res[f] = ok
				}
			}
		}
	}
	if len(res) != len(files) {
		t.Fatalf("cloudinit-validate named %d of %d files:\n%s", len(res), len(files), out.String())
	}
	return res, out.String()
}
