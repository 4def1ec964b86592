package v1alpha1

// Condition types of a FirstBootAddon.
const (
	// SourceValidCondition is True when the spec is valid and its source
	// resolves into manifests with a known digest.
	SourceValidCondition = "SourceValid"
	// AppliedCondition is True when every selected Cluster's node recorded
	// the add-on as applied with the expected digest.
	AppliedCondition = "Applied"
)

// Reasons of the SourceValid condition. Messages name the offending field,
// e.g. "spec.url.sha256: Required value".
const (
	// ValidReason: the source resolved.
	ValidReason = "Valid"
	// InvalidSpecReason: a field is malformed or sources conflict.
	InvalidSpecReason = "InvalidSpec"
	// UnknownBuiltinReason: spec.builtin names no built-in add-on or version.
	UnknownBuiltinReason = "UnknownBuiltin"
	// SourceNotFoundReason: the ConfigMap or Secret does not exist.
	SourceNotFoundReason = "SourceNotFound"
	// MalformedManifestReason: a manifest is not YAML Kubernetes objects.
	MalformedManifestReason = "MalformedManifest"
)

// Reasons of the Applied condition.
const (
	// AppliedReason: every selected Cluster applied the add-on.
	AppliedReason = "Applied"
	// ApplyFailedReason: at least one Cluster recorded a failure.
	ApplyFailedReason = "ApplyFailed"
	// PendingReason: at least one Cluster has not applied it yet.
	PendingReason = "Pending"
	// NoClustersReason: the selector matches no Cluster.
	NoClustersReason = "NoClusters"
	// SourceInvalidReason: nothing is delivered while the source is invalid.
	SourceInvalidReason = "SourceInvalid"
)

// Conditions nodeboot adds to a KubeadmConfig (whose API is CABPK's). Only
// a failed NodeBootstrapped takes part in Ready; a swap back to CABPK
// leaves them stale but harmless (CABPK recomputes Ready from its own).
const (
	// RenderWarningsCondition is True when the bootstrap data was rendered
	// with hazards that CABPK renders the same way: what would break or
	// change the node. The message lists field paths and what is wrong,
	// never values. Without hazards the condition is absent, so status
	// stays exactly CABPK's.
	RenderWarningsCondition = "RenderWarnings"
	// CABPKHazardsReason: the data has CABPK's bytes and these hazards;
	// the nodeboot.dev/cloud-init-corrections or nodeboot.dev/strict
	// annotations fix or refuse them.
	CABPKHazardsReason = "CABPKHazards"
)

// AddonsFetchedCondition is True on an init node's KubeadmConfig whose
// add-on manifests did not fit the size budget inline, so the node fetches
// them from the manager's fetch endpoint (each pinned by sha256, with a
// credential of that config only) right after kubeadm init. The message
// names the add-ons and the inline and budget sizes. Absent otherwise.
const (
	AddonsFetchedCondition = "AddonsFetched"
	// BootstrapDataTooLargeReason on a KubeadmConfig's DataSecretAvailable
	// condition (False): the rendered data exceeds its size budget, even
	// with the add-ons fetched; the message gives both sizes. CABPK has no
	// budget, so it never sets this reason.
	BootstrapDataTooLargeReason = "BootstrapDataTooLarge"
	// OverBudgetReason: inline, the bootstrap data would exceed the budget.
	OverBudgetReason = "OverBudget"
)

// NodeBootstrappedCondition is what the node itself reported about its first
// boot, when bootstrap reporting is on (--bootstrap-report-url): Running
// once it started, True when the sentinel was written, False with reason
// Failed and a message naming the step and exit code (for example
// "preKubeadmCommands[2] exited 127: kubeadm: command not found") when a
// step failed. A failure makes Ready False, so the Machine's
// BootstrapConfigReady shows it. Absent when reporting is off.
const (
	NodeBootstrappedCondition = "NodeBootstrapped"
	// BootstrapPendingReason: the data is out, the node has not reported yet.
	BootstrapPendingReason = "Pending"
	// BootstrapRunningReason: the node started its bootstrap commands.
	BootstrapRunningReason = "Running"
	// BootstrapSucceededReason: the bootstrap commands succeeded.
	BootstrapSucceededReason = "Succeeded"
	// BootstrapFailedReason: a bootstrap step failed; the message names it.
	BootstrapFailedReason = "Failed"
)

// BootstrapReportsAnnotation on a KubeadmConfig owned by a MachinePool (one
// config, many nodes) holds each instance's own result, keyed by the node
// name its report carries: a JSON object such as
// {"pool-a":{"result":"Succeeded","time":"..."},"pool-c":{"result":"Failed","message":"kubeadm exited 3: ...","time":"..."}},
// results being the NodeBootstrapped reasons. NodeBootstrapped summarises it
// ("2/3 succeeded, 1 failed: pool-c: kubeadm exited 3: ..."). A new token
// and new data for the pool leave it alone, so an instance's final result
// is never reset; at most 100 instances are kept (succeeded ones are
// forgotten first). An annotation rather than status because the status
// schema is CABPK's; removing it forgets every instance's result.
const BootstrapReportsAnnotation = "nodeboot.dev/bootstrap-reports"

// The Secret holding a KubeadmConfig's bootstrap report credential: named
// <config>.nodeboot-report, of this type, controlled by the config. Its
// presence tells that the config's data carries a reporter.
const (
	BootstrapReportSecretType   = "nodeboot.dev/bootstrap-report"
	BootstrapReportSecretSuffix = ".nodeboot-report"
)
