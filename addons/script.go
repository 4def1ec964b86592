package addons

import (
	_ "embed"
	"strings"
)

//go:embed apply.sh
var source string

// script is apply.sh as the node gets it: the comment lines, which only its
// maintainers read, are left out of the bootstrap data (the file has no
// here-documents, so no '#' line is data). The shebang stays.
var script = stripComments(source)

func stripComments(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i, line := range strings.SplitAfter(s, "\n") {
		if t := strings.TrimLeft(line, " \t"); i > 0 && strings.HasPrefix(t, "#") {
			continue
		}
		b.WriteString(line)
	}
	return b.String()
}

// Script returns the apply step (apply.sh without its comment lines). Its
// environment overrides exist for tests and unusual images:
// NODEBOOT_ADDONS_DIR (default: the script's directory),
// NODEBOOT_ADDONS_KUBECONFIG, NODEBOOT_ADDONS_TIMEOUT (seconds) and
// NODEBOOT_KUBECTL.
func Script() string { return script }
