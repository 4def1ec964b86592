package nodereport

import (
	"regexp"
	"strings"

	"github.com/nodeboot/nodeboot/internal/redact"
)

// Redact removes what looks like a key, token or password from node output
// (internal/redact's classes, the ones the node's reporter applies before
// it sends) and keeps its last MaxLogLines lines that are not blank. The
// node redacts first; this is the second line of defence, for reporters
// that did not, before the text reaches an Event or a condition. Control
// characters stay; redact.Printable escapes them.
func Redact(log string) string {
	// Colours go first, as on the node: "pass\x1b[1mword=" is a password.
	lines := redact.Lines(ansiEscape.ReplaceAllString(strings.ToValidUTF8(log, "?"), ""))
	if len(lines) > MaxLogLines {
		lines = lines[len(lines)-MaxLogLines:]
	}
	return strings.Join(lines, "\n")
}

// eventLog is a log as a failed report's Event shows it.
func eventLog(log string) string { return redact.Printable(Redact(log), true) }

// lastLine is the last line of a log that says what went wrong, escaped
// by redact.Printable: blank lines, terminal colours and kubeadm's closing
// hint ("To see the stack trace of this error execute with --v=5 or
// higher", printed after every error) are skipped, so a failed kubeadm
// reports its error, not the hint (found on a real node by test/e2e).
func lastLine(log string) string {
	lines := strings.Split(log, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(ansiEscape.ReplaceAllString(lines[i], ""))
		if l == "" || strings.HasPrefix(l, kubeadmStackTraceHint) {
			continue
		}
		return redact.Printable(l, false)
	}
	return ""
}

// kubeadmStackTraceHint starts the line kubeadm prints after every error.
const kubeadmStackTraceHint = "To see the stack trace of this error execute with --v="

// ansiEscape is a terminal control sequence (kubeadm's preflight colours its
// output when it thinks it writes to a terminal).
var ansiEscape = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]`)
