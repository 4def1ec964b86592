package differential

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/webhooks/admission"
	"sigs.k8s.io/cluster-api/util/secret"
)

// TestHarnessDetectsDifferences proves the differential can fail: CABPK's
// real output for a generated config, mutated by one byte anywhere (or
// shortened, or lengthened), is reported as different, naming the line; and
// one side erroring while the other renders is reported too, as are both
// erroring for reasons that name no field (TestClassifierReachesEveryOutcome
// has the rest).
func TestHarnessDetectsDifferences(t *testing.T) {
	enableGates(t)
	certs := secret.NewCertificatesForInitialControlPlane(nil)
	require.NoError(t, certs.Generate())
	for _, format := range []bootstrapv1.Format{bootstrapv1.CloudConfig, bootstrapv1.Ignition} {
		fill := (*gen).spec
		if format == bootstrapv1.Ignition {
			fill = (*gen).ignitionSpec
		}
		scenarios, _ := draw(t, 40, 99, format, fill)
		var want cabpkResult
		for _, s := range scenarios {
			if want = cabpk(t, s, objects(t, s, certs)); want.err == nil {
				break
			}
		}
		require.NoError(t, want.err, "no generated %s config rendered", format)
		data := want.data
		require.Empty(t, judge(want, append([]byte{}, data...), nil, format), "identical bytes must compare equal")
		for _, at := range []int{0, 1, len(data) / 3, len(data) / 2, len(data) - 2, len(data) - 1} {
			for _, b := range []byte{' ', '\n', 'x', 0} {
				mutated := append([]byte{}, data...)
				if mutated[at] == b {
					continue
				}
				mutated[at] = b
				d := judge(want, mutated, nil, format)
				require.NotEmpty(t, d, "%s: byte %d set to %q not detected", format, at, b)
				require.Contains(t, d, "at line ")
			}
		}
		require.NotEmpty(t, judge(want, data[:len(data)-1], nil, format), "a truncated document must differ")
		require.NotEmpty(t, judge(want, append(append([]byte{}, data...), '\n'), nil, format), "an extra byte must differ")
		require.NotEmpty(t, judge(want, nil, errors.New("refused"), format), "nodeboot refusing what CABPK renders must fail")
		require.NotEmpty(t, judge(cabpkResult{err: errors.New("cabpk failed")}, data, nil, format), "nodeboot rendering what CABPK refuses must fail")
		require.NotEmpty(t, judge(cabpkResult{err: errors.New("cabpk failed")}, nil, errors.New("refused"), format),
			"both refusing, for reasons that name no field, is not agreement")
		wrongFormat := want
		wrongFormat.format = "other"
		require.NotEmpty(t, judge(wrongFormat, data, nil, format), "a Secret of another format must fail")
	}
	d := compare([]byte("a\nb\nc\n"), []byte("a\nb\nC\n"))
	require.True(t, strings.HasPrefix(d, "bytes differ (CABPK 6 bytes, nodeboot 6) at line 3, byte 1"), d)
}

// TestRefusalChecksRefuse: the CRD and webhook checks the generators rely on
// to exclude inputs refuse what the API server and CABPK's webhook refuse
// (so exclusions are real), and accept a plain config.
func TestRefusalChecksRefuse(t *testing.T) {
	enableGates(t)
	v, err := loadCRDValidator()
	require.NoError(t, err)
	base := func() *bootstrapv1.KubeadmConfig {
		return &bootstrapv1.KubeadmConfig{Spec: bootstrapv1.KubeadmConfigSpec{Files: []bootstrapv1.File{{Path: "/etc/x", Content: "x"}}}}
	}
	require.Empty(t, v.validate(base()))
	for name, change := range map[string]func(*bootstrapv1.KubeadmConfigSpec){
		"partitionType not in the CEL rule": func(s *bootstrapv1.KubeadmConfigSpec) {
			s.DiskSetup.Partitions = []bootstrapv1.Partition{{Device: "/dev/sdb", DiskLayout: []bootstrapv1.PartitionSpec{{Percentage: 50, PartitionType: "83"}}}}
		},
		"neither layout nor diskLayout": func(s *bootstrapv1.KubeadmConfigSpec) {
			s.DiskSetup.Partitions = []bootstrapv1.Partition{{Device: "/dev/sdb"}}
		},
		"both layout and diskLayout": func(s *bootstrapv1.KubeadmConfigSpec) {
			s.DiskSetup.Partitions = []bootstrapv1.Partition{{Device: "/dev/sdb", Layout: ptr.To(true), DiskLayout: []bootstrapv1.PartitionSpec{{Percentage: 50}}}}
		},
		"percentage over 100": func(s *bootstrapv1.KubeadmConfigSpec) {
			s.DiskSetup.Partitions = []bootstrapv1.Partition{{Device: "/dev/sdb", DiskLayout: []bootstrapv1.PartitionSpec{{Percentage: 101}}}}
		},
		"empty ssh key item": func(s *bootstrapv1.KubeadmConfigSpec) {
			s.Users = []bootstrapv1.User{{Name: "u", SSHAuthorizedKeys: []string{""}}}
		},
		"empty command":        func(s *bootstrapv1.KubeadmConfigSpec) { s.PreKubeadmCommands = []string{""} },
		"permissions too long": func(s *bootstrapv1.KubeadmConfigSpec) { s.Files[0].Permissions = "01234567890123456" },
		"tableType not an enum": func(s *bootstrapv1.KubeadmConfigSpec) {
			s.DiskSetup.Partitions = []bootstrapv1.Partition{{Device: "d", Layout: ptr.To(true), TableType: "dos"}}
		},
		"empty mount field": func(s *bootstrapv1.KubeadmConfigSpec) { s.Mounts = []bootstrapv1.MountPoints{{"a", ""}} },
		"empty mount":       func(s *bootstrapv1.KubeadmConfigSpec) { s.Mounts = []bootstrapv1.MountPoints{{}} },
		"unknown format":    func(s *bootstrapv1.KubeadmConfigSpec) { s.Format = "yaml" },
		"duplicate kubelet args": func(s *bootstrapv1.KubeadmConfigSpec) {
			s.JoinConfiguration.NodeRegistration.KubeletExtraArgs = []bootstrapv1.Arg{{Name: "a", Value: ptr.To("1")}, {Name: "a", Value: ptr.To("2")}}
		},
	} {
		c := base()
		change(&c.Spec)
		require.NotEmpty(t, v.validate(c), "the CRD must refuse: %s", name)
	}
	c := base()
	c.Spec.Files = append(c.Spec.Files, c.Spec.Files[0])
	require.Empty(t, v.validate(c))
	require.NotEmpty(t, admission.Validate(&c.Spec, false, field.NewPath("spec")), "the webhook refuses duplicate paths")
}
