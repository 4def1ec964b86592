// Package nodereport is the manager half of bootstrap reports: the HTTPS
// endpoint where a node reports its first boot (started, succeeded, or
// failed with the step, exit code and redacted output), authenticated by a
// credential of its own KubeadmConfig, turned into a NodeBootstrapped
// condition and an Event on that KubeadmConfig. Its other half is the
// package nodereport, the node reporter this endpoint answers:
// Extension adds it to a config's Plan (nodereport.Apply) with a fresh
// credential, and the reporter posts a Report to Path.
//
// Handler serves the endpoint and Server runs it in the manager
// (--bootstrap-report-url, --bootstrap-report-bind-address); the credential
// index (NewCredentialIndex) lets a stranger's report cost no API read, and
// metrics.go counts what the endpoint received. Where a package imports both
// halves, this one is named nodereportctrl, as controllers/addons is
// addonsctrl beside addons.
package nodereport
