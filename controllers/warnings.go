package controllers

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cluster-api/util/conditions"

	nodebootv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
	"github.com/nodeboot/nodeboot/provisioning"
)

// maxEventBytes keeps a Warning Event well inside what the API server
// accepts for a message (1 KiB is the events.k8s.io note limit).
const maxEventBytes = 1000

// reportWarnings tells the owner of a config whose data was rendered with
// hazards CABPK renders too: a RenderWarnings condition (outside Ready, so
// nothing waits on it) and a Warning Event, one line per problem with its
// field path. Problem messages never carry values (a passwd or a
// contentFrom Secret may be among them), so they are safe to show.
func (r *Reconciler) reportWarnings(s *scope, warnings provisioning.Problems) {
	if len(warnings) == 0 {
		conditions.Delete(s.config, nodebootv1.RenderWarningsCondition)
		return
	}
	lines := make([]string, 0, len(warnings))
	for i, w := range warnings {
		if i == maxConditionProblems {
			lines = append(lines, "and "+strconv.Itoa(len(warnings)-i)+" more")
			break
		}
		lines = append(lines, w.String())
	}
	conditions.Set(s.config, metav1.Condition{
		Type:    nodebootv1.RenderWarningsCondition,
		Status:  metav1.ConditionTrue,
		Reason:  nodebootv1.CABPKHazardsReason,
		Message: strings.Join(lines, "; "),
	})
	if r.Recorder == nil {
		return
	}
	msg := strings.Join(lines, "\n")
	if len(msg) > maxEventBytes {
		msg = strings.ToValidUTF8(msg[:maxEventBytes-3], "") + "..."
	}
	r.Recorder.Event(s.config, corev1.EventTypeWarning, nodebootv1.CABPKHazardsReason, msg)
}
