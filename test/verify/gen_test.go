package verify_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

func bufioReader(b []byte) *bufio.Reader { return bufio.NewReader(io.NopCloser(bytes.NewReader(b))) }

// A small generator of ordinary KubeadmConfigs: the shapes a management
// cluster holds (files, contentFrom and passwdFrom Secrets, users, commands,
// NTP, kubelet arguments, several Kubernetes versions, every role, both
// formats). The hostile values are test/differential's business; here the
// point is the live read path.
type gen struct{ r *rand.Rand }

var (
	versions = []string{"v1.28.15", "v1.30.14", "v1.31.12", "v1.33.4", "v1.34.1"}
	contents = []string{"plain\n", "key: value\nother: 1\n", "#!/bin/sh\necho hello\n", "[section]\nname = x\n", "{{ ds.meta_data.local_hostname }}\n", "no newline"}
	commands = []string{"echo pre", "systemctl restart containerd", "sysctl --system", "mkdir -p /var/lib/app", "echo 'quoted: value'"}
)

func (g *gen) chance(pct int) bool      { return g.r.IntN(100) < pct }
func (g *gen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }
func (g *gen) cmds(n int) (out []string) {
	for range g.r.IntN(n + 1) {
		out = append(out, g.pick(commands...))
	}
	return out
}

// spec draws a spec; secrets are the Secrets its contentFrom/passwdFrom use.
func (g *gen) spec(name string, format bootstrapv1.Format) (bootstrapv1.KubeadmConfigSpec, []*corev1.Secret) {
	var secrets []*corev1.Secret
	s := bootstrapv1.KubeadmConfigSpec{Format: format, PreKubeadmCommands: g.cmds(3), PostKubeadmCommands: g.cmds(2)}
	for k := range g.r.IntN(4) {
		f := bootstrapv1.File{Path: fmt.Sprintf("/etc/gen/%s-%d.conf", name, k), Permissions: g.pick("", "0644", "0600", "0755"), Owner: g.pick("", "root:root")}
		if format == bootstrapv1.Ignition && f.Permissions == "" {
			// CABPK's Ignition transpiler refuses a file without a mode.
			f.Permissions = "0644"
		}
		switch content := g.pick(contents...); {
		case g.chance(20):
			sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-file-%d", name, k)}, Data: map[string][]byte{"data": []byte(content)}}
			secrets = append(secrets, sec)
			f.ContentFrom = bootstrapv1.FileSource{Secret: bootstrapv1.SecretFileSource{Name: sec.Name, Key: "data"}}
		case g.chance(20):
			f.Encoding, f.Content = bootstrapv1.Base64, base64.StdEncoding.EncodeToString([]byte(content))
		default:
			f.Content = content
		}
		s.Files = append(s.Files, f)
	}
	for k := range g.r.IntN(3) {
		u := bootstrapv1.User{Name: fmt.Sprintf("user%d", k), Shell: g.pick("", "/bin/bash"), Groups: g.pick("", "docker", "wheel,docker")}
		if g.chance(50) {
			u.Sudo = "ALL=(ALL) NOPASSWD:ALL"
		}
		if g.chance(50) {
			u.SSHAuthorizedKeys = []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGeneratedKeyForTests user@example"}
		}
		if g.chance(30) {
			u.LockPassword = ptr.To(g.chance(50))
		}
		if g.chance(25) {
			sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-passwd-%d", name, k)}, Data: map[string][]byte{"passwd": []byte("$6$rounds=4096$salt$hashedpasswordvalue")}}
			secrets = append(secrets, sec)
			u.PasswdFrom = bootstrapv1.PasswdSource{Secret: bootstrapv1.SecretPasswdSource{Name: sec.Name, Key: "passwd"}}
		}
		s.Users = append(s.Users, u)
	}
	if g.chance(30) {
		s.NTP = bootstrapv1.NTP{Enabled: ptr.To(true), Servers: []string{"0.pool.ntp.org", "1.pool.ntp.org"}}
	}
	if g.chance(20) {
		s.Verbosity = ptr.To[int32](int32(g.r.IntN(6)))
	}
	if format == bootstrapv1.CloudConfig && g.chance(20) {
		s.Mounts = []bootstrapv1.MountPoints{{"LABEL=data", "/var/lib/data"}}
	}
	nr := bootstrapv1.NodeRegistrationOptions{}
	if g.chance(50) {
		nr.Name = "{{ ds.meta_data.local_hostname }}"
	}
	if g.chance(50) {
		nr.KubeletExtraArgs = []bootstrapv1.Arg{{Name: "cloud-provider", Value: ptr.To("external")}}
	}
	s.JoinConfiguration.NodeRegistration = nr
	return s, secrets
}

// owner kinds of generated configs.
const (
	ownInit = iota
	ownWorker
	ownControlPlane
	ownPool
)

// createConfig creates the owner (Machine or MachinePool), the Secrets and
// the KubeadmConfig, with a real owner UID.
func createConfig(ns, cluster, name string, own int, version string, spec bootstrapv1.KubeadmConfigSpec, secrets []*corev1.Secret) error {
	ctx := context.Background()
	for _, s := range secrets {
		s.Namespace = ns
		if err := k8s.Create(ctx, s); err != nil {
			return err
		}
	}
	ref := clusterv1.ContractVersionedObjectReference{APIGroup: bootstrapv1.GroupVersion.Group, Kind: "KubeadmConfig", Name: name}
	labels := map[string]string{clusterv1.ClusterNameLabel: cluster}
	machineSpec := clusterv1.MachineSpec{ClusterName: cluster, Version: version, Bootstrap: clusterv1.Bootstrap{ConfigRef: ref},
		InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "DockerMachine", Name: name}}
	var kind string
	var uid types.UID
	if own == ownPool {
		mp := &clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
			Spec: clusterv1.MachinePoolSpec{ClusterName: cluster, Replicas: ptr.To[int32](1), Template: clusterv1.MachineTemplateSpec{Spec: machineSpec}}}
		if err := k8s.Create(ctx, mp); err != nil {
			return err
		}
		kind, uid = "MachinePool", mp.UID
	} else {
		m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{clusterv1.ClusterNameLabel: cluster}}, Spec: machineSpec}
		if own == ownInit || own == ownControlPlane {
			m.Labels[clusterv1.MachineControlPlaneLabel] = ""
		}
		if err := k8s.Create(ctx, m); err != nil {
			return err
		}
		kind, uid = "Machine", m.UID
	}
	c := &bootstrapv1.KubeadmConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: kind, Name: name, UID: uid}}},
		Spec: spec,
	}
	if err := k8s.Create(ctx, c); err != nil {
		return fmt.Errorf("create KubeadmConfig %s/%s: %w", ns, name, err)
	}
	return nil
}

// parallel runs the creations with a few workers (the API server's
// admission of Cluster API objects is the slow part) and fails on the
// first error.
func parallel(t testing.TB, fns []func() error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, len(fns))
	next := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = fns[i]()
			}
		}()
	}
	for i := range fns {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

// fleet creates clusters namespaces, each with one Cluster whose first
// control plane CABPK initializes (data rendered while the Cluster is not
// initialized, as in life), then perCluster-1 joins of every kind, formats
// alternating. It returns the namespaces once CABPK wrote every Secret.
func fleet(t testing.TB, prefix string, clusters, perCluster int, seed uint64) []string {
	t.Helper()
	g := &gen{r: rand.New(rand.NewPCG(seed, 0x5eed))}
	certs := vectorCerts(t)
	formats := []bootstrapv1.Format{bootstrapv1.CloudConfig, bootstrapv1.Ignition}
	var namespaces []string
	var cs []*clusterv1.Cluster
	for i := range clusters {
		ns := newNamespace(t, prefix)
		namespaces = append(namespaces, ns)
		c := createCluster(t, ns, "cluster", certs)
		cs = append(cs, c)
		spec, secrets := g.spec("cp-0", formats[i%2])
		spec.InitConfiguration.NodeRegistration = spec.JoinConfiguration.NodeRegistration
		spec.JoinConfiguration = bootstrapv1.JoinConfiguration{}
		spec.ClusterConfiguration.APIServer.ExtraArgs = []bootstrapv1.Arg{{Name: "v", Value: ptr.To("2")}}
		if err := createConfig(ns, "cluster", "cp-0", ownInit, g.pick(versions...), spec, secrets); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	waitForData(t, 60*time.Second, namespaces...)
	t.Logf("fleet: init data after %s", time.Since(start).Round(time.Millisecond))
	var creates []func() error
	for i, c := range cs {
		setInitialized(t, c, true)
		for j := 1; j < perCluster; j++ {
			own := []int{ownWorker, ownWorker, ownWorker, ownControlPlane, ownPool}[j%5]
			name := fmt.Sprintf("m-%03d", j)
			spec, secrets := g.spec(name, formats[(i+j)%2])
			version := g.pick(versions...)
			creates = append(creates, func() error { return createConfig(namespaces[i], "cluster", name, own, version, spec, secrets) })
		}
	}
	parallel(t, creates)
	t.Logf("fleet: joins created after %s", time.Since(start).Round(time.Millisecond))
	waitForData(t, 60*time.Second, namespaces...)
	t.Logf("fleet: join data after %s", time.Since(start).Round(time.Millisecond))
	return namespaces
}
