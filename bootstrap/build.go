package bootstrap

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/blang/semver/v4"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/cluster-api/util/secret"

	"github.com/nodeboot/nodeboot/provisioning"
)

// Paths and commands CABPK uses on every node.
const (
	initConfigPath = "/run/kubeadm/kubeadm.yaml"
	joinConfigPath = "/run/kubeadm/kubeadm-join-config.yaml"
	// ignitionConfigPath is where CABPK's Ignition output keeps the kubeadm
	// configuration, for init and join alike; its unit runs while it exists.
	ignitionConfigPath = "/etc/kubeadm.yml"
	// Sentinel is written when kubeadm succeeded; Cluster API infrastructure
	// providers look for it.
	Sentinel = "/run/cluster-api/bootstrap-success.complete"
)

// Result is a built Plan and how to render it.
type Result struct {
	Plan *provisioning.Plan
	// Format is "cloud-config" or "ignition": the provisioner to render with.
	Format string
	// Options for the provisioner, from the spec and nodeboot's annotations.
	Options provisioning.Options
	// Strict makes Render refuse output that has warnings (nodeboot.dev/strict).
	Strict bool
	// Certificates are the cluster certificates used; those with Generated set
	// were created by this build and must be saved by the caller.
	Certificates secret.Certificates
	// Config is the KubeadmConfig with the defaults CABPK fills in (discovery,
	// control-plane endpoint), which the caller may persist as CABPK does.
	Config *bootstrapv1.KubeadmConfig
	// Secrets are objects the bootstrap data refers to (for example add-ons
	// the node fetches from the manager): the caller saves them, owned by the
	// KubeadmConfig, before the data itself, and a read-only caller
	// (verification) ignores them.
	Secrets []*corev1.Secret
	// Conditions are set on the KubeadmConfig once its data is stored; they
	// say how the data was made when that is not the default (for example
	// add-ons fetched because inline they exceed the size budget).
	Conditions []metav1.Condition
	// DataAnnotations are set on the bootstrap data Secret, in the same
	// write as the data (for example the first-boot add-ons the data
	// carries); a read-only caller (verification) ignores them. Nil for
	// everything CABPK would build, whose Secret has no annotations.
	DataAnnotations map[string]string
}

// Build decides the node's role as CABPK does and assembles its Plan. Input
// that can never render returns an *InvalidError; states CABPK waits on return
// one of the Err* sentinels.
func Build(ctx context.Context, in Input) (*Result, error) {
	if in.Config == nil || in.Cluster == nil || (in.Machine == nil) == (in.MachinePool == nil) {
		return nil, errors.New("bootstrap: Input needs a Config, a Cluster and exactly one of Machine and MachinePool")
	}
	if in.Secrets == nil {
		in.Secrets = SecretMap{}
	}
	in.Config = in.Config.DeepCopy()
	var ps problems
	ps.add(in.configRef(), validateSpec(&in.Config.Spec))
	format, opts := in.renderOptions(&ps)
	strict := in.boolAnnotation(AnnotationStrict, in.Strict, &ps)
	if err := ps.err(); err != nil {
		return nil, err
	}

	version, err := semver.ParseTolerant(in.version())
	if err != nil {
		ps.errorf(in.ownerRef(), ownerVersionPath(&in), "invalid Kubernetes version %q: %v", in.version(), err)
		return nil, ps.err()
	}

	b := &builder{in: &in, version: version, ps: &ps, plan: &provisioning.Plan{Sentinel: Sentinel}, ignition: format == FormatIgnition}
	initialized := conditions.IsTrue(in.Cluster, clusterv1.ClusterControlPlaneInitializedCondition)
	switch {
	case !initialized && !in.isControlPlaneMachine():
		return nil, ErrControlPlaneNotInitialized
	case !initialized:
		err = b.initControlPlane(ctx)
	case in.isControlPlaneMachine():
		err = b.joinControlPlane(ctx)
	default:
		err = b.joinWorker(ctx)
	}
	if err != nil {
		return nil, err
	}
	if err := ps.err(); err != nil {
		return nil, err
	}
	// Hazards are the provisioner's to judge: CABPK's dialects render them
	// with a warning, nodeboot's own modes refuse them (Result.Render).
	ps.add(in.configRef(), b.plan.Validate().Tolerate().Errors())
	if err := ps.err(); err != nil {
		return nil, err
	}
	r := &Result{Plan: b.plan, Format: format, Options: opts, Strict: strict, Certificates: b.certs, Config: in.Config}
	if opts.Version != provisioning.VersionCABPK || opts.Corrections {
		// nodeboot's own modes: no CABPK bytes to keep.
		r.QuietInitToken()
	}
	return r, nil
}

// skipTokenPrint stops kubeadm init from printing the default bootstrap
// token it creates (a credential valid for 24 hours that joins any node)
// into cloud-init-output.log or the journal. Cluster API never uses that
// token: it creates its own for each joining node.
const skipTokenPrint = "--skip-token-print"

// QuietInitToken adds --skip-token-print to a first control plane's
// kubeadm init. CABPK's command prints the token, so Build adds the flag
// only in nodeboot's own modes (Ignition v3, corrections); an extension
// that already changes the data (the reporter, add-ons) adds it too. It
// does nothing for other roles and is idempotent.
func (r *Result) QuietInitToken() {
	if r == nil || r.Plan == nil || r.Plan.Role != provisioning.RoleInit {
		return
	}
	const prefix = "kubeadm init "
	for i, c := range r.Plan.Commands {
		if c.Phase == provisioning.PhaseBootstrap && strings.HasPrefix(c.Script, prefix) && !strings.Contains(c.Script, skipTokenPrint) {
			r.Plan.Commands[i].Script = prefix + skipTokenPrint + " " + strings.TrimPrefix(c.Script, prefix)
		}
	}
}

func ownerVersionPath(in *Input) provisioning.Path {
	if in.MachinePool != nil {
		return provisioning.NewPath("spec", "template", "spec", "version")
	}
	return provisioning.NewPath("spec", "version")
}

type builder struct {
	in      *Input
	version semver.Version
	ps      *problems
	plan    *provisioning.Plan
	certs   secret.Certificates
	// ignition selects CABPK's Ignition conventions for the kubeadm file and
	// command (one path for init and join, no leading document marker).
	ignition bool
}

func (b *builder) verbosity() string {
	if v := b.in.Config.Spec.Verbosity; v != nil {
		return "--v " + strconv.Itoa(int(*v))
	}
	return ""
}

// common adds everything all three roles share, around the role's own files
// and bootstrap command.
func (b *builder) common(ctx context.Context, certFiles []bootstrapv1.File, extra []bootstrapv1.File, kubeadmFile provisioning.File, bootstrapScript string) error {
	spec := &b.in.Config.Spec
	files, err := b.resolveFiles(ctx)
	if err != nil {
		return err
	}
	users, err := b.resolveUsers(ctx)
	if err != nil {
		return err
	}
	p := b.plan
	for _, f := range certFiles {
		p.Files = append(p.Files, planFile(f, provisioning.Path{}))
	}
	p.Files = append(p.Files, files...)
	for _, f := range extra {
		p.Files = append(p.Files, planFile(f, provisioning.NewPath("spec", "joinConfiguration", "discovery", "file", "kubeConfig")))
	}
	p.Origins = planOrigins
	p.Files = append(p.Files, kubeadmFile)
	p.Users = users
	if spec.NTP.IsDefined() {
		p.NTP = &provisioning.NTP{Enabled: spec.NTP.Enabled, Servers: spec.NTP.Servers}
	}
	if spec.DiskSetup.IsDefined() {
		p.Disks = planDisks(&spec.DiskSetup)
	}
	for _, m := range spec.Mounts {
		p.Mounts = append(p.Mounts, provisioning.Mount(m))
	}
	p.BootCommands = spec.BootCommands
	for i, c := range spec.PreKubeadmCommands {
		p.Commands = append(p.Commands, provisioning.Command{Phase: provisioning.PhasePre, Script: c, Origin: provisioning.NewPath("spec", "preKubeadmCommands").Index(i)})
	}
	p.Commands = append(p.Commands, provisioning.Command{Phase: provisioning.PhaseBootstrap, Script: bootstrapScript})
	for i, c := range spec.PostKubeadmCommands {
		p.Commands = append(p.Commands, provisioning.Command{Phase: provisioning.PhasePost, Script: c, Origin: provisioning.NewPath("spec", "postKubeadmCommands").Index(i)})
	}
	return nil
}

func planFile(f bootstrapv1.File, origin provisioning.Path) provisioning.File {
	return provisioning.File{
		Path:        f.Path,
		Owner:       f.Owner,
		Permissions: f.Permissions,
		Encoding:    provisioning.Encoding(f.Encoding),
		Append:      f.Append,
		Content:     f.Content,
		Origin:      origin,
	}
}

func planDisks(d *bootstrapv1.DiskSetup) *provisioning.DiskSetup {
	out := &provisioning.DiskSetup{}
	for _, p := range d.Partitions {
		pp := provisioning.Partition{Device: p.Device, Layout: p.Layout, Overwrite: p.Overwrite, TableType: p.TableType}
		for _, s := range p.DiskLayout {
			pp.DiskLayout = append(pp.DiskLayout, provisioning.PartitionSpec{Percentage: s.Percentage, PartitionType: s.PartitionType})
		}
		out.Partitions = append(out.Partitions, pp)
	}
	for _, f := range d.Filesystems {
		out.Filesystems = append(out.Filesystems, provisioning.Filesystem{
			Device: f.Device, Filesystem: f.Filesystem, Label: f.Label, Partition: f.Partition,
			Overwrite: f.Overwrite, ReplaceFS: f.ReplaceFS, ExtraOpts: f.ExtraOpts,
		})
	}
	return out
}

// planOrigins are the KubeadmConfig fields of the Plan sections whose
// elements carry no Origin of their own: problems about them name the spec.
var planOrigins = provisioning.Origins{
	NTP:          provisioning.NewPath("spec", "ntp"),
	Partitions:   provisioning.NewPath("spec", "diskSetup", "partitions"),
	Filesystems:  provisioning.NewPath("spec", "diskSetup", "filesystems"),
	Mounts:       provisioning.NewPath("spec", "mounts"),
	BootCommands: provisioning.NewPath("spec", "bootCommands"),
}
