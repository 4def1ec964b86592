package bootstrap

import (
	"fmt"
	"strings"

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
		ps.Errorf("spec.format", "must be cloud-config or ignition, got %q", s.Format)
	}
	if s.Format != bootstrapv1.Ignition && s.Ignition.IsDefined() {
		ps.Errorf("spec.format", "must be %q if spec.ignition is set", bootstrapv1.Ignition)
	}
	seen := map[string]bool{}
	for i, f := range s.Files {
		p := fmt.Sprintf("spec.files[%d]", i)
		if f.Content != "" && f.ContentFrom.IsDefined() {
			ps.Errorf(p, "only one of content or contentFrom may be specified")
		}
		if f.ContentFrom.IsDefined() {
			if f.ContentFrom.Secret.Name == "" {
				ps.Errorf(p+".contentFrom.secret.name", "must not be empty")
			}
			if f.ContentFrom.Secret.Key == "" {
				ps.Errorf(p+".contentFrom.secret.key", "must not be empty")
			}
		}
		if seen[f.Path] && f.Path != "" {
			ps.Errorf(p+".path", "duplicate path %q: path must be unique among all files", f.Path)
		}
		seen[f.Path] = true
		switch f.ContentFormat {
		case "", bootstrapv1.FileContentFormatRaw, bootstrapv1.FileContentFormatTemplate:
		default:
			ps.Errorf(p+".contentFormat", "must be Raw or Template, got %q", f.ContentFormat)
		}
	}
	for i, u := range s.Users {
		p := fmt.Sprintf("spec.users[%d]", i)
		if u.Passwd != "" && u.PasswdFrom.IsDefined() {
			ps.Errorf(p, "only one of passwd or passwdFrom may be specified")
		}
		if u.PasswdFrom.IsDefined() {
			if u.PasswdFrom.Secret.Name == "" {
				ps.Errorf(p+".passwdFrom.secret.name", "must not be empty")
			}
			if u.PasswdFrom.Secret.Key == "" {
				ps.Errorf(p+".passwdFrom.secret.key", "must not be empty")
			}
		}
	}
	if v := s.Verbosity; v != nil && *v < 0 {
		ps.Errorf("spec.verbosity", "must not be negative")
	}
	kc := s.JoinConfiguration.Discovery.File.KubeConfig
	if kc.User.AuthProvider.IsDefined() && kc.User.Exec.IsDefined() {
		ps.Errorf("spec.joinConfiguration.discovery.file.kubeConfig.user", "only one of authProvider or exec may be defined")
	}
	return ps
}

// planPrefixes maps Plan field paths to the KubeadmConfig fields they come
// from, for elements that carry no Origin of their own.
var planPrefixes = []struct{ plan, spec string }{
	{"disks.partitions", "spec.diskSetup.partitions"},
	{"disks.filesystems", "spec.diskSetup.filesystems"},
	{"mounts", "spec.mounts"},
	{"bootCommands", "spec.bootCommands"},
	{"ntp", "spec.ntp"},
	{"additionalConfig", "spec.ignition.containerLinuxConfig.additionalConfig"},
	{"options.version", "metadata.annotations[" + AnnotationIgnitionVersion + "]"},
}

// specPaths rewrites Plan paths of problems into spec paths where known.
func specPaths(ps provisioning.Problems) provisioning.Problems {
	for i := range ps {
		ps[i].Path = SpecPath(ps[i].Path)
	}
	return ps
}

// SpecPath returns the KubeadmConfig field path for a Plan field path built by
// Build; paths that already name a spec field are returned unchanged.
func SpecPath(planPath string) string {
	for _, p := range planPrefixes {
		if strings.HasPrefix(planPath, p.plan) {
			return p.spec + strings.TrimPrefix(planPath, p.plan)
		}
	}
	return planPath
}
