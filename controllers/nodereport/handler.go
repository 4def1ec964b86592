package nodereport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodebootv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
	"github.com/nodeboot/nodeboot/controllers"
	"github.com/nodeboot/nodeboot/controllers/nodeauth"
)

// Path prefixes the endpoint: POST Path<namespace>/<KubeadmConfig> with
// "Authorization: Bearer <credential>" and a JSON Report body.
const Path = "/nodeboot/v1/report/"

// Limits of one report.
const (
	// MaxBody caps a report's body.
	MaxBody = 64 << 10
	// MaxLogLines is how much of the failed step's output a report keeps.
	MaxLogLines = 50
	// maxMessage keeps the condition message short (the log goes to the Event).
	maxMessage = 512
	// maxEvent keeps the Event within what the API server accepts.
	maxEvent = 1000
)

// Phases a node reports, in the order a boot goes through them.
const (
	PhaseStarted   = "started"
	PhaseSucceeded = "succeeded"
	PhaseFailed    = "failed"
)

// Condition and reasons on the KubeadmConfig.
const (
	NodeBootstrappedCondition = nodebootv1.NodeBootstrappedCondition
	PendingReason             = nodebootv1.BootstrapPendingReason
	RunningReason             = nodebootv1.BootstrapRunningReason
	SucceededReason           = nodebootv1.BootstrapSucceededReason
	FailedReason              = nodebootv1.BootstrapFailedReason
)

// Report is what a node sends.
type Report struct {
	// Phase is started, succeeded or failed.
	Phase string `json:"phase"`
	// Step names the failed step: bootCommands[i], preKubeadmCommands[i],
	// kubeadm or postKubeadmCommands[i].
	Step string `json:"step,omitempty"`
	// ExitCode of the failed step.
	ExitCode *int `json:"exitCode,omitempty"`
	// Log is the tail of the failed step's output, redacted on the node and
	// again here.
	Log string `json:"log,omitempty"`
	// Node names the instance (its host name, what kubelet registers): a
	// MachinePool's instances share one config, and each reports its own
	// result. Optional for a Machine's config.
	Node string `json:"node,omitempty"`
}

var (
	dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$`)
	stepName     = regexp.MustCompile(`^((bootCommands|preKubeadmCommands|postKubeadmCommands)\[[0-9]{1,4}\]|kubeadm)$`)
)

// validate checks a decoded report; messages name fields, never values.
func (r *Report) validate() error {
	if r.Node != "" && !validNode(r.Node) {
		return errors.New("node must be a DNS subdomain of at most 253 characters")
	}
	switch r.Phase {
	case PhaseStarted, PhaseSucceeded:
		if r.Step != "" || r.ExitCode != nil || r.Log != "" {
			return errors.New("step, exitCode and log are only for a failed report")
		}
	case PhaseFailed:
		if !stepName.MatchString(r.Step) {
			return errors.New("step must be bootCommands[i], preKubeadmCommands[i], kubeadm or postKubeadmCommands[i]")
		}
		if r.ExitCode == nil || *r.ExitCode < 0 || *r.ExitCode > 255 {
			return errors.New("exitCode must be 0 to 255")
		}
	default:
		return errors.New("phase must be started, succeeded or failed")
	}
	return nil
}

// Handler accepts node reports. Credentials live in the config's
// CredentialSecret; a report changes the config's NodeBootstrapped
// condition only forward (a replay, or anything after success, changes
// nothing) and is rate limited per config.
type Handler struct {
	// Credentials authenticates a report (NewCredentialIndex): no API
	// call for a request without the config's credential.
	Credentials *nodeauth.Index
	// Reader reads the KubeadmConfig a report is recorded on, once it is
	// authenticated (uncached: the patch is computed against it).
	Reader client.Reader
	// Client patches the KubeadmConfig's status.
	Client client.Client
	// Recorder, when set, gets a Warning Event with the redacted log of a
	// failed boot and a Normal one on success.
	Recorder record.EventRecorder
	// Rate and Burst limit reports per config; defaults 1/s and 10.
	Rate  rate.Limit
	Burst int
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	mu       sync.Mutex
	limiters map[string]*limiter
}

type limiter struct {
	*rate.Limiter
	last time.Time
}

// maxLimiters bounds the per-config limiter table; idle ones are dropped.
const maxLimiters = 100000

func (h *Handler) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// allow takes one report from key's budget.
func (h *Handler) allow(key string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	if h.limiters == nil {
		h.limiters = map[string]*limiter{}
	}
	l, ok := h.limiters[key]
	if !ok {
		if len(h.limiters) >= maxLimiters {
			for k, v := range h.limiters {
				if now.Sub(v.last) > 10*time.Minute {
					delete(h.limiters, k)
				}
			}
			if len(h.limiters) >= maxLimiters {
				return false
			}
		}
		r, b := h.Rate, h.Burst
		if r == 0 {
			r = 1
		}
		if b == 0 {
			b = 10
		}
		l = &limiter{Limiter: rate.NewLimiter(r, b)}
		h.limiters[key] = l
	}
	l.last = now
	return l.AllowN(now, 1)
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, Path)
	ns, name, two := strings.Cut(rest, "/")
	token, bearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || !two || len(ns) > 63 || !dnsSubdomain.MatchString(ns) || !dnsSubdomain.MatchString(name) || !bearer || token == "" {
		ReportsTotal.WithLabelValues(ResultUnauthorized).Inc()
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	key := client.ObjectKey{Namespace: ns, Name: name}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	switch err := h.authenticate(ctx, key, token); {
	case errors.Is(err, nodeauth.ErrUnauthorized):
		ReportsTotal.WithLabelValues(ResultUnauthorized).Inc()
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	case err != nil:
		ReportsTotal.WithLabelValues(ResultError).Inc()
		if !errors.Is(err, nodeauth.ErrNotReady) {
			ctrl.LoggerFrom(ctx).Error(err, "bootstrap report: cannot authenticate", "KubeadmConfig", key.String())
		}
		w.Header().Set("Retry-After", "5")
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
		return
	}
	// Limited after authentication, so that strangers cannot use up a
	// node's budget.
	if !h.allow(key.String()) {
		ReportsTotal.WithLabelValues(ResultRateLimited).Inc()
		w.Header().Set("Retry-After", "5")
		http.Error(w, "too many reports", http.StatusTooManyRequests)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	if err != nil {
		ReportsTotal.WithLabelValues(ResultInvalid).Inc()
		http.Error(w, "cannot read the report", http.StatusBadRequest)
		return
	}
	if len(body) > MaxBody {
		ReportsTotal.WithLabelValues(ResultInvalid).Inc()
		http.Error(w, "report larger than "+strconv.Itoa(MaxBody)+" bytes", http.StatusRequestEntityTooLarge)
		return
	}
	var rep Report
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil || dec.More() {
		ReportsTotal.WithLabelValues(ResultInvalid).Inc()
		http.Error(w, "the report is not a JSON report object", http.StatusBadRequest)
		return
	}
	if err := rep.validate(); err != nil {
		ReportsTotal.WithLabelValues(ResultInvalid).Inc()
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	changed, err := h.record(ctx, key, &rep)
	if errors.Is(err, errNodeRequired) {
		ReportsTotal.WithLabelValues(ResultInvalid).Inc()
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if err != nil {
		ReportsTotal.WithLabelValues(ResultError).Inc()
		ctrl.LoggerFrom(ctx).Error(err, "bootstrap report: cannot record", "KubeadmConfig", key.String())
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
		return
	}
	if !changed {
		ReportsTotal.WithLabelValues(ResultUnchanged).Inc()
		w.WriteHeader(http.StatusOK)
		return
	}
	ReportsTotal.WithLabelValues(rep.Phase).Inc()
	w.WriteHeader(http.StatusAccepted)
}

// authenticate checks the credential against the config's through the
// index: a stranger's request costs no API call and is answered after the
// index's wait, whatever was wrong (see package nodeauth).
func (h *Handler) authenticate(ctx context.Context, key client.ObjectKey, token string) error {
	if h.Credentials == nil {
		return nodeauth.ErrNotReady
	}
	_, err := h.Credentials.Authenticate(ctx, key.Namespace, key.Name, CredentialSecretName(key.Name), token)
	return err
}

// errNodeRequired refuses a report without a node name for a MachinePool's
// config: the pool's instances share the config, and a nameless report
// could be any of them.
var errNodeRequired = errors.New("node is required for a MachinePool's KubeadmConfig")

// maxRecordAttempts bounds the reads and writes of one report among
// conflicting writers.
const maxRecordAttempts = 5

// record moves the condition forward; it reports whether anything changed.
// Every write carries the resourceVersion it was computed from: the
// reconciler writes the same conditions list, and a merge patch replaces
// the whole list, so a patch over a stale read would drop what the other
// wrote. A conflict reads again. For a MachinePool's config the node's own
// result is recorded first (see instances.go), then the summary.
func (h *Handler) record(ctx context.Context, key client.ObjectKey, rep *Report) (bool, error) {
	want := condition(rep)
	var config *bootstrapv1.KubeadmConfig
	recorded, pool := false, false
	var started time.Time
	for attempt := 0; ; attempt++ {
		if attempt == maxRecordAttempts {
			return false, fmt.Errorf("record a report on KubeadmConfig %s: still conflicting after %d attempts", key, attempt)
		}
		config = &bootstrapv1.KubeadmConfig{}
		if err := h.Reader.Get(ctx, key, config); err != nil {
			return false, err
		}
		next := want
		if pool = ownedByPool(config); pool {
			if rep.Node == "" {
				return false, errNodeRequired
			}
			in := readInstances(config)
			prev := in[rep.Node]
			if in.record(rep.Node, want, h.now()) {
				if err := h.patchInstances(ctx, config, in); apierrors.IsConflict(err) {
					continue
				} else if err != nil {
					return false, err
				}
				recorded = true
				if prev.Result == RunningReason {
					started = prev.Time.Time
				}
			}
			next = in.condition()
			if cur := conditions.Get(config, NodeBootstrappedCondition); cur != nil && conditions.HasSameStateExceptObservedGeneration(cur, &next) {
				break
			}
		} else if cur := conditions.Get(config, NodeBootstrappedCondition); cur != nil && (cur.Reason == SucceededReason ||
			cur.Reason == want.Reason && cur.Message == want.Message || cur.Reason == FailedReason && want.Reason == RunningReason) {
			// Success is final; a replay is a no-op; a late "started" after a
			// failure (retries are out of order) does not hide the failure.
			return false, nil
		}
		orig := config.DeepCopy()
		conditions.Set(config, next)
		if err := controllers.SetReady(config); err != nil {
			return false, err
		}
		err := h.Client.Status().Patch(ctx, config, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
		if err == nil {
			recorded = recorded || !pool
			break
		}
		if !apierrors.IsConflict(err) {
			return false, err
		}
	}
	if !recorded {
		return false, nil
	}
	if want.Reason == SucceededReason {
		if pool {
			if !started.IsZero() {
				BootstrapSeconds.Observe(h.now().Sub(started).Seconds())
			}
		} else if c := conditions.Get(config, bootstrapv1.KubeadmConfigDataSecretAvailableCondition); c != nil && c.Status == metav1.ConditionTrue {
			BootstrapSeconds.Observe(h.now().Sub(c.LastTransitionTime.Time).Seconds())
		}
	}
	if h.Recorder != nil {
		prefix := ""
		if pool {
			prefix = rep.Node + ": "
		}
		switch want.Reason {
		case FailedReason:
			// The step and exit code first, then as much of the log's end
			// as fits: the last lines are the ones that say why.
			msg := prefix + want.Message
			if log := eventLog(rep.Log); log != "" {
				if room := maxEvent - len(msg) - len("\n..."); len(log) > room {
					log = "..." + strings.ToValidUTF8(log[len(log)-room:], "")
				}
				msg += "\n" + log
			}
			h.Recorder.Event(config, corev1.EventTypeWarning, "BootstrapFailed", msg)
		case SucceededReason:
			h.Recorder.Event(config, corev1.EventTypeNormal, "BootstrapSucceeded", prefix+want.Message)
		}
	}
	return true, nil
}

// patchInstances writes a MachinePool config's instance results, with the
// resourceVersion they were read at.
func (h *Handler) patchInstances(ctx context.Context, config *bootstrapv1.KubeadmConfig, in instances) error {
	value, err := in.encode()
	if err != nil {
		return err
	}
	orig := config.DeepCopy()
	if config.Annotations == nil {
		config.Annotations = map[string]string{}
	}
	config.Annotations[nodebootv1.BootstrapReportsAnnotation] = value
	return h.Client.Patch(ctx, config, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
}

// condition is what a report says about the node.
func condition(rep *Report) metav1.Condition {
	c := metav1.Condition{Type: NodeBootstrappedCondition}
	switch rep.Phase {
	case PhaseStarted:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, RunningReason, "the node started bootstrapping"
	case PhaseSucceeded:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, SucceededReason, "the node bootstrapped"
	default:
		msg := fmt.Sprintf("%s exited %d", rep.Step, *rep.ExitCode)
		if last := lastLine(Redact(rep.Log)); last != "" {
			msg += ": " + last
		}
		if len(msg) > maxMessage {
			msg = strings.ToValidUTF8(msg[:maxMessage-3], "") + "..."
		}
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, FailedReason, msg
	}
	return c
}
