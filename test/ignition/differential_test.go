package ignition

// The legacy Ignition differential lives in test/differential
// (TestLegacyIgnitionMatchesCABPK): generated configs rendered by CABPK's
// own reconciler with format: ignition and by nodeboot, bytes compared.
// What stays here is CABPK's pkg/ignition renderer fed a built Plan, which
// BenchmarkRenderIgnition measures against nodeboot's renderers.

import (
	"fmt"
	"strings"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/cloudinit"
	cabpk "sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/ignition"

	"github.com/nodeboot/nodeboot/bootstrap"
	"github.com/nodeboot/nodeboot/provisioning"
)

// cabpkRender renders res's Plan inputs with CABPK's own pkg/ignition: the
// spec's OS half as CABPK's reconciler passes it, the Plan's resolved files
// (certificates, spec.files, discovery kubeconfig) as its write_files.
func cabpkRender(res *bootstrap.Result) ([]byte, error) {
	spec := &res.Config.Spec
	var files []bootstrapv1.File
	kubeadmConfig := ""
	for _, f := range res.Plan.Files {
		if f.BootstrapInput {
			kubeadmConfig = strings.TrimPrefix(f.Content, "---\n")
			continue
		}
		files = append(files, bootstrapv1.File{Path: f.Path, Owner: f.Owner, Permissions: f.Permissions, Encoding: bootstrapv1.Encoding(f.Encoding), Append: f.Append, Content: f.Content})
	}
	base := cloudinit.BaseUserData{AdditionalFiles: files, PreKubeadmCommands: spec.PreKubeadmCommands, PostKubeadmCommands: spec.PostKubeadmCommands,
		Users: spec.Users, Mounts: spec.Mounts, BootCommands: spec.BootCommands}
	if spec.NTP.IsDefined() {
		base.NTP = &spec.NTP
	}
	if spec.DiskSetup.IsDefined() {
		base.DiskSetup = &spec.DiskSetup
	}
	if spec.Verbosity != nil {
		base.KubeadmVerbosity = fmt.Sprintf("--v %d", *spec.Verbosity)
	}
	ign := &spec.Ignition
	switch res.Plan.Role {
	case provisioning.RoleInit:
		cc, ic, _ := strings.Cut(kubeadmConfig, "\n---\n")
		out, _, err := cabpk.NewInitControlPlane(&cabpk.ControlPlaneInput{ControlPlaneInput: &cloudinit.ControlPlaneInput{BaseUserData: base, ClusterConfiguration: cc, InitConfiguration: ic}, Ignition: ign})
		return out, err
	case provisioning.RoleJoinControlPlane:
		out, _, err := cabpk.NewJoinControlPlane(&cabpk.ControlPlaneJoinInput{ControlPlaneJoinInput: &cloudinit.ControlPlaneJoinInput{BaseUserData: base, JoinConfiguration: kubeadmConfig}, Ignition: ign})
		return out, err
	default:
		out, _, err := cabpk.NewNode(&cabpk.NodeInput{NodeInput: &cloudinit.NodeInput{BaseUserData: base, JoinConfiguration: kubeadmConfig}, Ignition: ign})
		return out, err
	}
}
