package provisioning

import (
	"regexp"
	"strings"
)

// exitZero finds an "exit" or "exit 0" used as a command: a heuristic, good
// enough for a warning, which is all it feeds.
var exitZero = regexp.MustCompile(`(^|[;&|({}]|\bthen|\belse|\bdo|\s)exit(\s+0)?\s*($|[;&|)}#\n])`)

// WarnSharedShell is for dialects whose commands share one shell (CABPK's:
// cloud-init's runcmd lines, legacy Ignition's kubeadm.sh), where the Plan's
// meaning does not hold: there an "exit 0" in a pre or bootstrap command
// ends every later command, the bootstrap command and the sentinel
// included, and nothing reports it. It warns at each such command.
func WarnSharedShell(ps *Problems, p *Plan, dialect string) {
	if p == nil {
		return
	}
	for i := range p.Commands {
		c := &p.Commands[i]
		// The substring test first: the regexp costs a tenth of a CABPK
		// render, and almost no command says exit.
		if c.Phase == PhasePost || !strings.Contains(c.Script, "exit") || !exitZero.MatchString(c.Script) {
			continue
		}
		ps.Warnf(p.CommandPath(i), "exits with status 0: in the %s dialect the commands share one shell, so this skips every later command, the bootstrap command and the sentinel without an error; the Plan's meaning (each command in its own shell) holds only in the native dialects", dialect)
	}
}
