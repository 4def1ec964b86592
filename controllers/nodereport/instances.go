package nodereport

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	nodebootv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
)

// A MachinePool's instances share one KubeadmConfig, one bootstrap data
// and one credential, so one condition cannot hold each node's outcome:
// the first success would hide every later failure. Each instance's result
// is kept, keyed by the node name of its reports, in
// BootstrapReportsAnnotation (the status schema is CABPK's and prunes
// anything else), and NodeBootstrapped summarises them. New data for the
// pool changes neither.

// MaxInstances bounds the instances tracked per MachinePool config.
// Succeeded ones are forgotten first, so a failure stays visible.
const MaxInstances = 100

// maxInstanceMessage bounds a failed instance's message in the annotation
// (about 60 KB for MaxInstances failed nodes with the longest names).
const maxInstanceMessage = 256

// instance is one node's result.
type instance struct {
	// Result is a NodeBootstrapped reason: Running, Succeeded or Failed.
	Result string `json:"result"`
	// Message of a failure: the step, exit code and the log's last line.
	Message string `json:"message,omitempty"`
	// Time of the last change.
	Time metav1.Time `json:"time"`
}

type instances map[string]instance

// ownedByPool tells whether the config's owner, found as the reconciler
// finds it (the first Machine or MachinePool reference), is a MachinePool.
func ownedByPool(config *bootstrapv1.KubeadmConfig) bool {
	for _, ref := range config.OwnerReferences {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil || gv.Group != clusterv1.GroupVersion.Group {
			continue
		}
		switch ref.Kind {
		case "Machine":
			return false
		case "MachinePool":
			return true
		}
	}
	return false
}

// readInstances decodes the annotation. Entries that could not have been
// written by the handler (an operator's edit) are dropped, and a value that
// does not decode counts as none: the annotation is advisory state, never a
// reason to refuse a node's report.
func readInstances(config *bootstrapv1.KubeadmConfig) instances {
	in := instances{}
	raw, ok := config.Annotations[nodebootv1.BootstrapReportsAnnotation]
	if !ok {
		return in
	}
	if err := json.Unmarshal([]byte(raw), &in); err != nil {
		return instances{}
	}
	for node, i := range in {
		if !validNode(node) || len(i.Message) > maxInstanceMessage ||
			(i.Result != RunningReason && i.Result != SucceededReason && i.Result != FailedReason) {
			delete(in, node)
		}
	}
	in.evict()
	return in
}

// validNode: a node name is a DNS subdomain (what kubelet registers).
func validNode(node string) bool {
	return len(node) <= 253 && dnsSubdomain.MatchString(node)
}

// record applies a node's report with the same rules as a config's single
// condition: success is final, a replay changes nothing, a late "started"
// does not hide a failure. It reports whether the node's entry changed.
func (in instances) record(node string, c metav1.Condition, now time.Time) bool {
	cur, ok := in[node]
	if ok && (cur.Result == SucceededReason || cur.Result == c.Reason && cur.Message == instanceMessage(c) ||
		cur.Result == FailedReason && c.Reason == RunningReason) {
		return false
	}
	in[node] = instance{Result: c.Reason, Message: instanceMessage(c), Time: metav1.NewTime(now.Truncate(time.Second))}
	in.evict()
	return true
}

func instanceMessage(c metav1.Condition) string {
	if c.Reason != FailedReason {
		return ""
	}
	return truncate(c.Message, maxInstanceMessage)
}

// evict forgets instances beyond MaxInstances: the oldest succeeded first,
// then the oldest running, failed ones last.
func (in instances) evict() {
	if len(in) <= MaxInstances {
		return
	}
	rank := map[string]int{SucceededReason: 0, RunningReason: 1, FailedReason: 2}
	nodes := make([]string, 0, len(in))
	for n := range in {
		nodes = append(nodes, n)
	}
	sort.Slice(nodes, func(i, j int) bool {
		a, b := in[nodes[i]], in[nodes[j]]
		if rank[a.Result] != rank[b.Result] {
			return rank[a.Result] < rank[b.Result]
		}
		if !a.Time.Equal(&b.Time) {
			return a.Time.Before(&b.Time)
		}
		return nodes[i] < nodes[j]
	})
	for _, n := range nodes[:len(in)-MaxInstances] {
		delete(in, n)
	}
}

// encode is the annotation's value; map keys are sorted, so equal sets of
// results encode equally.
func (in instances) encode() (string, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return "", fmt.Errorf("encode %s: %w", nodebootv1.BootstrapReportsAnnotation, err)
	}
	return string(b), nil
}

// condition summarises the instances: "2/3 succeeded, 1 failed: pool-c:
// kubeadm exited 3: ..." (the most recent failures first). Any failure makes
// it False with reason Failed (and so Ready False), otherwise a booting
// instance makes it Running, otherwise it is True.
func (in instances) condition() metav1.Condition {
	var succeeded, running int
	var failed []string
	for n, i := range in {
		switch i.Result {
		case SucceededReason:
			succeeded++
		case RunningReason:
			running++
		case FailedReason:
			failed = append(failed, n)
		}
	}
	sort.Slice(failed, func(i, j int) bool {
		a, b := in[failed[i]], in[failed[j]]
		if !a.Time.Equal(&b.Time) {
			return b.Time.Before(&a.Time)
		}
		return failed[i] < failed[j]
	})
	msg := fmt.Sprintf("%d/%d succeeded", succeeded, len(in))
	if len(failed) > 0 {
		msg += fmt.Sprintf(", %d failed", len(failed))
	}
	if running > 0 {
		msg += fmt.Sprintf(", %d running", running)
	}
	c := metav1.Condition{Type: NodeBootstrappedCondition}
	switch {
	case len(failed) > 0:
		parts := make([]string, len(failed))
		for i, n := range failed {
			parts[i] = n + ": " + in[n].Message
		}
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, FailedReason, truncate(msg+": "+strings.Join(parts, "; "), maxMessage)
	case running > 0:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, RunningReason, msg
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, SucceededReason, msg
	}
	return c
}

// truncate cuts s to at most n bytes of valid UTF-8, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n-3], "") + "..."
}
