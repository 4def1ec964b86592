package provisioning

import "testing"

func TestWarnSharedShell(t *testing.T) {
	for script, want := range map[string]bool{
		"exit 0":                       true,
		"exit":                         true,
		"test -f /x && exit 0":         true,
		"if [ -f /x ]; then exit; fi":  true,
		"echo a\nexit\n":               true,
		"exit 1":                       false,
		"echo exit 0 > /tmp/words":     false,
		"kubeadm join --config /x.yml": false,
		"./exit.sh":                    false,
	} {
		p := &Plan{Commands: []Command{{Phase: PhasePre, Script: script}, {Phase: PhasePost, Script: script}}}
		var ps Problems
		WarnSharedShell(&ps, p, "test")
		if got := len(ps) == 1; got != want {
			t.Errorf("%q: warned %v (%v), want %v", script, got, ps, want)
		}
		if len(ps) == 1 && (ps[0].Severity != SeverityWarning || ps[0].Path.String() != "commands[0]") {
			t.Errorf("%q: %v, want one warning at commands[0]", script, ps[0])
		}
	}
}
