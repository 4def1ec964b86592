package nodereport

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

const secretMarker = "s3cr3t-marker-never-shown"

// env is a fake API with two configs and their credentials.
type env struct {
	h      *Handler
	c      client.Client
	events *record.FakeRecorder
	tokens map[string]string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	s := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(s))
	require.NoError(t, bootstrapv1.AddToScheme(s))
	b := fake.NewClientBuilder().WithScheme(s).WithStatusSubresource(&bootstrapv1.KubeadmConfig{})
	e := &env{tokens: map[string]string{}}
	var secrets []*corev1.Secret
	for _, name := range []string{"cp-0", "w-0"} {
		cfg := &bootstrapv1.KubeadmConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)}}
		// What the reconciler left: data and certificates out, Ready.
		for _, typ := range []string{bootstrapv1.KubeadmConfigDataSecretAvailableCondition, bootstrapv1.KubeadmConfigCertificatesAvailableCondition, bootstrapv1.KubeadmConfigReadyCondition} {
			conditions.Set(cfg, metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: "Ready",
				LastTransitionTime: metav1.NewTime(time.Now().Add(-90 * time.Second))})
		}
		sec, err := NewCredentialSecret(cfg, "c1")
		require.NoError(t, err)
		e.tokens[name] = string(sec.Data[CredentialKey])
		b = b.WithObjects(cfg, sec)
		secrets = append(secrets, sec)
	}
	e.c = b.Build()
	e.events = record.NewFakeRecorder(100)
	e.h = &Handler{Reader: e.c, Client: e.c, Recorder: e.events, Credentials: testIndex(e.c, time.Millisecond, secrets...)}
	return e
}

func (e *env) post(config, token, body string) int {
	r := httptest.NewRequest(http.MethodPost, Path+"ns/"+config, strings.NewReader(body))
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, r)
	return w.Code
}

func (e *env) condition(t *testing.T, config string) *metav1.Condition {
	t.Helper()
	return e.conditionOf(t, config, NodeBootstrappedCondition)
}

func (e *env) conditionOf(t *testing.T, config, typ string) *metav1.Condition {
	t.Helper()
	c := &bootstrapv1.KubeadmConfig{}
	require.NoError(t, e.c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: config}, c))
	return conditions.Get(c, typ)
}

const failed = `{"phase":"failed","step":"preKubeadmCommands[2]","exitCode":127,"log":"token: ` + secretMarker + `\nkubeadm: command not found\n"}`

// TestReports: a node's reports move its config's NodeBootstrapped
// condition forward only with that config's credential; a failure names the
// step and exit code with a redacted log; success is final.
func TestReports(t *testing.T) {
	e := newEnv(t)
	count := func(result string) float64 { return testutil.ToFloat64(ReportsTotal.WithLabelValues(result)) }
	durations := func() (uint64, float64) {
		var m dto.Metric
		require.NoError(t, BootstrapSeconds.Write(&m))
		return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
	}
	started, failedN, unchanged := count(ResultStarted), count(ResultFailed), count(ResultUnchanged)
	successes, seconds := durations()
	require.Equal(t, http.StatusAccepted, e.post("cp-0", e.tokens["cp-0"], `{"phase":"started"}`))
	require.Equal(t, RunningReason, e.condition(t, "cp-0").Reason)
	require.Equal(t, metav1.ConditionTrue, e.conditionOf(t, "cp-0", bootstrapv1.KubeadmConfigReadyCondition).Status, "a booting node leaves Ready alone")
	require.Equal(t, http.StatusOK, e.post("cp-0", e.tokens["cp-0"], `{"phase":"started"}`), "a replay changes nothing")

	require.Equal(t, http.StatusAccepted, e.post("cp-0", e.tokens["cp-0"], failed))
	c := e.condition(t, "cp-0")
	require.Equal(t, FailedReason, c.Reason)
	require.Equal(t, metav1.ConditionFalse, c.Status)
	require.Equal(t, "preKubeadmCommands[2] exited 127: kubeadm: command not found", c.Message)
	ready := e.conditionOf(t, "cp-0", bootstrapv1.KubeadmConfigReadyCondition)
	require.Equal(t, metav1.ConditionFalse, ready.Status, "a failed boot makes Ready False, which the Machine mirrors")
	require.Contains(t, ready.Message, "preKubeadmCommands[2] exited 127")
	ev := <-e.events.Events
	require.Contains(t, ev, "BootstrapFailed")
	require.Contains(t, ev, "kubeadm: command not found")
	require.NotContains(t, ev, secretMarker)
	require.Equal(t, http.StatusOK, e.post("cp-0", e.tokens["cp-0"], `{"phase":"started"}`), "a late started does not hide a failure")
	require.Equal(t, FailedReason, e.condition(t, "cp-0").Reason)

	require.Equal(t, http.StatusAccepted, e.post("cp-0", e.tokens["cp-0"], `{"phase":"succeeded"}`))
	require.Equal(t, metav1.ConditionTrue, e.condition(t, "cp-0").Status)
	require.Equal(t, metav1.ConditionTrue, e.conditionOf(t, "cp-0", bootstrapv1.KubeadmConfigReadyCondition).Status, "success after a failure is Ready again")
	require.Equal(t, http.StatusOK, e.post("cp-0", e.tokens["cp-0"], failed), "after success nothing changes")
	require.Equal(t, SucceededReason, e.condition(t, "cp-0").Reason)
	require.Equal(t, started+1, count(ResultStarted))
	require.Equal(t, failedN+1, count(ResultFailed))
	require.Equal(t, unchanged+3, count(ResultUnchanged))
	n, sum := durations()
	require.Equal(t, successes+1, n, "one success observed")
	require.InDelta(t, 90, sum-seconds, 30, "from the data Secret (90 s ago) to the success report")
	require.Nil(t, e.condition(t, "w-0"), "another config is untouched")
}

// TestReportsRefused: forged, missing and other configs' credentials get
// 401, malformed and oversized bodies 400 and 413, and none changes a
// condition.
func TestReportsRefused(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name, config, token, body string
		code                      int
	}{
		{"no credential", "cp-0", "", `{"phase":"started"}`, http.StatusUnauthorized},
		{"forged", "cp-0", strings.Repeat("x", 43), `{"phase":"started"}`, http.StatusUnauthorized},
		{"another config's", "cp-0", e.tokens["w-0"], `{"phase":"started"}`, http.StatusUnauthorized},
		{"prefix of the credential", "cp-0", e.tokens["cp-0"][:10], `{"phase":"started"}`, http.StatusUnauthorized},
		{"no such config", "cp-9", e.tokens["cp-0"], `{"phase":"started"}`, http.StatusUnauthorized},
		{"not JSON", "cp-0", e.tokens["cp-0"], `phase: started`, http.StatusBadRequest},
		{"two objects", "cp-0", e.tokens["cp-0"], `{"phase":"started"}{"phase":"succeeded"}`, http.StatusBadRequest},
		{"unknown field", "cp-0", e.tokens["cp-0"], `{"phase":"started","extra":1}`, http.StatusBadRequest},
		{"unknown phase", "cp-0", e.tokens["cp-0"], `{"phase":"done"}`, http.StatusBadRequest},
		{"failed without step", "cp-0", e.tokens["cp-0"], `{"phase":"failed","exitCode":1}`, http.StatusBadRequest},
		{"bad step", "cp-0", e.tokens["cp-0"], `{"phase":"failed","step":"rm -rf /","exitCode":1}`, http.StatusBadRequest},
		{"exit code out of range", "cp-0", e.tokens["cp-0"], `{"phase":"failed","step":"kubeadm","exitCode":300}`, http.StatusBadRequest},
		{"oversized", "cp-0", e.tokens["cp-0"], `{"phase":"failed","step":"kubeadm","exitCode":1,"log":"` + strings.Repeat("a", MaxBody) + `"}`, http.StatusRequestEntityTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.code, e.post(tc.config, tc.token, tc.body))
			require.Nil(t, e.condition(t, "cp-0"))
		})
	}
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, Path+"ns/cp-0", nil))
	require.Equal(t, http.StatusMethodNotAllowed, w.Code)
}

// TestReportRateLimit: a config that reports too often gets 429 until its
// budget refills; other configs are not affected.
func TestReportRateLimit(t *testing.T) {
	e := newEnv(t)
	now := time.Unix(1000, 0)
	e.h.Now = func() time.Time { return now }
	e.h.Rate, e.h.Burst = 1, 3
	for i := 0; i < 3; i++ {
		require.NotEqual(t, http.StatusTooManyRequests, e.post("cp-0", e.tokens["cp-0"], `{"phase":"started"}`))
	}
	require.Equal(t, http.StatusTooManyRequests, e.post("cp-0", e.tokens["cp-0"], `{"phase":"succeeded"}`))
	require.Equal(t, RunningReason, e.condition(t, "cp-0").Reason)
	require.Equal(t, http.StatusAccepted, e.post("w-0", e.tokens["w-0"], `{"phase":"started"}`))
	now = now.Add(2 * time.Second)
	require.Equal(t, http.StatusAccepted, e.post("cp-0", e.tokens["cp-0"], `{"phase":"succeeded"}`))
}

// TestRedact: keys, tokens and passwords leave node output; the tail is
// at most MaxLogLines lines.
func TestRedact(t *testing.T) {
	key := "-----BEGIN RSA PRIVATE KEY-----\n" + strings.Repeat("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=\n", 60) + "-----END RSA PRIVATE KEY-----\n"
	var b bytes.Buffer
	b.WriteString(key)
	b.WriteString("kubeadm join 10.0.0.1:6443 --token abcdef.0123456789abcdef --certificate-key " + strings.Repeat("a1", 32) + "\n")
	b.WriteString("curl -H 'Authorization: Bearer eyJhbGciOi.abc' https://x\n")
	b.WriteString("password=" + secretMarker + "\n")
	b.WriteString("last line\n")
	out := Redact(b.String())
	for _, leaked := range []string{"QUJDREVG", "abcdef.0123456789abcdef", strings.Repeat("a1", 32), "eyJhbGciOi", secretMarker} {
		require.NotContains(t, out, leaked)
	}
	require.LessOrEqual(t, strings.Count(out, "\n")+1, MaxLogLines)
	require.True(t, strings.HasSuffix(out, "last line"))
}

// TestFailedEventKeepsLogEnd: a long log is cut at its start, so the Event
// keeps the step, the exit code and the lines that say why it failed.
func TestFailedEventKeepsLogEnd(t *testing.T) {
	e := newEnv(t)
	var log strings.Builder
	for i := 0; i < 49; i++ {
		log.WriteString("noise line with some length to fill the event up to its cap\n")
	}
	log.WriteString("FATAL: the reason at the end\n")
	body := `{"phase":"failed","step":"kubeadm","exitCode":1,"log":` + strconv.Quote(log.String()) + `}`
	require.Equal(t, http.StatusAccepted, e.post("w-0", e.tokens["w-0"], body))
	ev := <-e.events.Events
	require.Contains(t, ev, "kubeadm exited 1: FATAL: the reason at the end")
	require.True(t, strings.HasSuffix(ev, "FATAL: the reason at the end"), "the log's end is kept: %q", ev)
	require.LessOrEqual(t, len(ev), maxEvent+len("Warning BootstrapFailed "))
}

// TestFailedConditionNamesTheError: the condition carries the line that
// says why the step failed, as a real kubeadm prints it on a node (colours
// from its preflight, then the error, then its stack-trace hint): the e2e
// cluster's wrong-token worker first reported only the hint.
func TestFailedConditionNamesTheError(t *testing.T) {
	code := 1
	for _, tc := range []struct{ log, want string }{
		{
			log: "\x1b[0;37mCGROUPS_PIDS\x1b[0m: \x1b[0;32menabled\x1b[0m\n" +
				"error execution phase preflight: couldn't validate the identity of the API Server: token id \"abcdef\" is invalid for this cluster or it has expired\n" +
				"To see the stack trace of this error execute with --v=5 or higher\n\n",
			want: `kubeadm exited 1: error execution phase preflight: couldn't validate the identity of the API Server: token id "abcdef" is invalid for this cluster or it has expired`,
		},
		{log: "\x1b[0;37mCGROUPS_PIDS\x1b[0m: \x1b[0;32menabled\x1b[0m\n", want: "kubeadm exited 1: CGROUPS_PIDS: enabled"},
		{log: "To see the stack trace of this error execute with --v=5 or higher\n", want: "kubeadm exited 1"},
		{log: "", want: "kubeadm exited 1"},
	} {
		c := condition(&Report{Phase: PhaseFailed, Step: "kubeadm", ExitCode: &code, Log: tc.log})
		require.Equal(t, tc.want, c.Message)
	}
}
