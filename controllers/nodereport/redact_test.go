package nodereport

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
)

// TestRedactCorpus: the manager's Redact catches every case of the corpus
// the node's redact() is held to (internal/redact/testdata/corpus.json).
func TestRedactCorpus(t *testing.T) {
	b, err := os.ReadFile("../../internal/redact/testdata/corpus.json")
	require.NoError(t, err)
	var cs []struct {
		Name          string
		In            string
		Secrets, Keep []string
	}
	require.NoError(t, json.Unmarshal(b, &cs))
	require.GreaterOrEqual(t, len(cs), 40)
	leaking := 0
	for _, c := range cs {
		out := Redact(c.In)
		var leaks []string
		for _, s := range c.Secrets {
			if strings.Contains(out, s) {
				leaks = append(leaks, s)
			}
		}
		if len(leaks) > 0 {
			leaking++
			t.Errorf("%s: leaks %q:\n%s", c.Name, leaks, out)
		}
		for _, k := range c.Keep {
			if !strings.Contains(out, k) {
				t.Errorf("%s: lost %q:\n%s", c.Name, k, out)
			}
		}
	}
	if leaking > 0 {
		t.Errorf("%d of %d cases leak", leaking, len(cs))
	}
}

// failedWith is a failed report carrying log.
func failedWith(t *testing.T, log string) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"phase": "failed", "step": "kubeadm", "exitCode": 1, "log": log})
	require.NoError(t, err)
	return string(b)
}

// seen is what a failed report left where people read it: the
// NodeBootstrapped and Ready messages and the Event.
func (e *env) seen(t *testing.T, config string) (condition, ready, event string) {
	t.Helper()
	c := e.condition(t, config)
	require.NotNil(t, c)
	r := e.conditionOf(t, config, bootstrapv1.KubeadmConfigReadyCondition)
	require.NotNil(t, r)
	select {
	case event = <-e.events.Events:
	default:
		t.Fatal("no Event")
	}
	return c.Message, r.Message, event
}

// TestReportTextEscaped: control characters (ESC, OSC, CR, NUL, C1) and
// bidi controls in a node's output reach neither a condition nor an Event
// as they are: each shows as a visible escape.
func TestReportTextEscaped(t *testing.T) {
	e := newEnv(t)
	log := "\x1b[0;32mpreflight\x1b[0m ok\n" +
		"\x1b]0;owned\x07title \x1b]8;;https://evil.example/\x1b\\link\x1b]8;;\x1b\\\n" +
		"progress 10%\r100%\x00 done\u0085\u009b31m\n" +
		"error: file \u202eexe.txt\u202c and \u2066x\u2069 \u200e\u200f\u061c not found\n"
	require.Equal(t, http.StatusAccepted, e.post("cp-0", e.tokens["cp-0"], failedWith(t, log)))
	cond, ready, event := e.seen(t, "cp-0")
	for what, s := range map[string]string{"condition": cond, "Ready": ready, "Event": event} {
		for _, r := range s {
			if r != '\n' && (unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Bidi_Control, r)) {
				t.Errorf("%s message carries %U: %q", what, r, s)
			}
		}
	}
	require.Equal(t, `kubeadm exited 1: error: file \u202eexe.txt\u202c and \u2066x\u2069 \u200e\u200f\u061c not found`, cond)
	require.Contains(t, ready, `\u202eexe.txt`)
	for _, want := range []string{"preflight ok", `\x1b]0;owned\x07title`, `progress 10%\r100%\x00 done\x85\x9b31m`, `\u202eexe.txt`} {
		require.Contains(t, event, want)
	}
}

// TestReportReasonAfterBlankLines: the failure's reason is the last line
// that is not blank, however many blank lines follow it.
func TestReportReasonAfterBlankLines(t *testing.T) {
	e := newEnv(t)
	log := "pulling images\nerror: the reason\n" + strings.Repeat("  \n", 40) + strings.Repeat("\t\r\n", 20) + strings.Repeat("\n", 20)
	require.Equal(t, http.StatusAccepted, e.post("cp-0", e.tokens["cp-0"], failedWith(t, log)))
	cond, ready, event := e.seen(t, "cp-0")
	require.Equal(t, "kubeadm exited 1: error: the reason", cond)
	require.Contains(t, ready, "error: the reason")
	require.Contains(t, event, "pulling images\nerror: the reason")
	require.Less(t, len(Redact(log)), 40, "blank lines are dropped: %q", Redact(log))
}

// TestReportKubeconfigKey: a kubeconfig's client key, the last line of a
// failed step's output, reaches no condition, Ready message or Event.
func TestReportKubeconfigKey(t *testing.T) {
	const key = "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVBd0o"
	e := newEnv(t)
	log := "cat /etc/kubernetes/admin.conf\nusers:\n- name: kubernetes-admin\n  user:\n" +
		"    client-certificate-data: LS0tLS1CRUdJTiBDRVJU\n    client-key-data: " + key + "\n"
	require.Equal(t, http.StatusAccepted, e.post("cp-0", e.tokens["cp-0"], failedWith(t, log)))
	cond, ready, event := e.seen(t, "cp-0")
	for what, s := range map[string]string{"condition": cond, "Ready": ready, "Event": event} {
		require.NotContains(t, s, key[:16], what)
	}
	require.Equal(t, "kubeadm exited 1: client-key-data: [redacted]", cond)
}
