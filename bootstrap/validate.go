package bootstrap

import (
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"

	"github.com/nodeboot/nodeboot/provisioning"
)

// validateSpec checks what CABPK's admission webhook checks (so an object
// created without the webhook still gets the same answer) plus what would
// otherwise make a broken node: each problem with its spec path.
func validateSpec(s *bootstrapv1.KubeadmConfigSpec) provisioning.Problems {
	var ps provisioning.Problems
	switch s.Format {
	case "", bootstrapv1.CloudConfig, bootstrapv1.Ignition:
	default:
		ps.Errorf(provisioning.NewPath("spec", "format"), "must be cloud-config or ignition, got %q", s.Format)
	}
	if s.Format != bootstrapv1.Ignition && s.Ignition.IsDefined() {
		ps.Errorf(provisioning.NewPath("spec", "format"), "must be %q if spec.ignition is set", bootstrapv1.Ignition)
	}
	seen := map[string]bool{}
	for i, f := range s.Files {
		p := provisioning.NewPath("spec", "files").Index(i)
		if f.Content != "" && f.ContentFrom.IsDefined() {
			ps.Errorf(p, "only one of content or contentFrom may be specified")
		}
		if f.ContentFrom.IsDefined() {
			if f.ContentFrom.Secret.Name == "" {
				ps.Errorf(p.Field("contentFrom").Field("secret").Field("name"), "must not be empty")
			}
			if f.ContentFrom.Secret.Key == "" {
				ps.Errorf(p.Field("contentFrom").Field("secret").Field("key"), "must not be empty")
			}
		}
		if seen[f.Path] && f.Path != "" {
			ps.Errorf(p.Field("path"), "duplicate path %q: path must be unique among all files", f.Path)
		}
		seen[f.Path] = true
		switch f.ContentFormat {
		case "", bootstrapv1.FileContentFormatRaw, bootstrapv1.FileContentFormatTemplate:
		default:
			ps.Errorf(p.Field("contentFormat"), "must be Raw or Template, got %q", f.ContentFormat)
		}
	}
	for i, u := range s.Users {
		p := provisioning.NewPath("spec", "users").Index(i)
		if u.Passwd != "" && u.PasswdFrom.IsDefined() {
			ps.Errorf(p, "only one of passwd or passwdFrom may be specified")
		}
		if u.PasswdFrom.IsDefined() {
			if u.PasswdFrom.Secret.Name == "" {
				ps.Errorf(p.Field("passwdFrom").Field("secret").Field("name"), "must not be empty")
			}
			if u.PasswdFrom.Secret.Key == "" {
				ps.Errorf(p.Field("passwdFrom").Field("secret").Field("key"), "must not be empty")
			}
		}
	}
	if v := s.Verbosity; v != nil && *v < 0 {
		ps.Errorf(provisioning.NewPath("spec", "verbosity"), "must not be negative")
	}
	kc := s.JoinConfiguration.Discovery.File.KubeConfig
	if kc.User.AuthProvider.IsDefined() && kc.User.Exec.IsDefined() {
		ps.Errorf(provisioning.NewPath("spec", "joinConfiguration", "discovery", "file", "kubeConfig", "user"), "only one of authProvider or exec may be defined")
	}
	return ps
}
