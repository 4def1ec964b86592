package catalog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"reflect"
	"sort"
	"strings"
	"testing"
	"text/template"
	"text/template/parse"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
)

// strict decodes with client-go's scheme and rejects unknown fields, so a typo
// in a template shows up as a test failure rather than a silently ignored key.
var strict = serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()

// decodeAll decodes every document of a manifest into its typed object.
func decodeAll(t *testing.T, manifest []byte) []runtime.Object {
	t.Helper()
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(manifest)))
	var out []runtime.Object
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		obj, gvk, err := strict.Decode(doc, nil, nil)
		require.NoError(t, err, "document:\n%s", doc)
		require.NotEmpty(t, gvk.Kind)
		out = append(out, obj)
	}
	return out
}

func stripComments(doc []byte) []byte {
	var keep [][]byte
	for _, l := range bytes.Split(doc, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(l), []byte("#")) {
			keep = append(keep, l)
		}
	}
	return bytes.Join(keep, []byte("\n"))
}

func TestEmbeddedManifestsAreYAML(t *testing.T) {
	entries, err := fs.ReadDir(manifests, "manifests")
	require.NoError(t, err)
	files := map[string]bool{}
	for _, e := range entries {
		files["manifests/"+e.Name()] = true
	}
	for name, rs := range builtins {
		for _, r := range rs {
			require.True(t, files[r.file], "%s %s: %s is not embedded", name, r.version, r.file)
			delete(files, r.file)
			raw, err := manifests.ReadFile(r.file)
			require.NoError(t, err)
			// The unrendered template is itself valid YAML: placeholders
			// sit only inside scalars.
			dec := yaml.NewDecoder(bytes.NewReader(raw))
			docs := 0
			for {
				var n yaml.Node
				err := dec.Decode(&n)
				if errors.Is(err, io.EOF) {
					break
				}
				require.NoError(t, err, r.file)
				docs++
			}
			require.Greater(t, docs, 1, r.file)
		}
	}
	require.Empty(t, files, "embedded manifests no release uses")
}

func TestRenderDecodesIntoTypedObjects(t *testing.T) {
	cases := []struct {
		name, builtin string
		params        Params
		kinds         []string
	}{
		{"nodelocaldns iptables", NodeLocalDNS, Params{}, []string{"ServiceAccount", "Service", "ConfigMap", "DaemonSet", "Service"}},
		{"nodelocaldns ipvs", NodeLocalDNS, Params{KubeProxyMode: "ipvs", ServiceCIDR: "10.128.0.0/16", ClusterDomain: "example.internal"}, []string{"ServiceAccount", "Service", "ConfigMap", "DaemonSet", "Service"}},
		{"flannel", Flannel, Params{PodCIDR: "192.168.0.0/16"}, []string{"Namespace", "ClusterRole", "ClusterRoleBinding", "ServiceAccount", "ConfigMap", "DaemonSet"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := Render(c.builtin, "", c.params)
			require.NoError(t, err)
			require.Empty(t, placeholders(t, c.name, r.Manifest), "unrendered template actions")
			objs := decodeAll(t, r.Manifest)
			var kinds []string
			for _, o := range objs {
				gvks, _, err := scheme.Scheme.ObjectKinds(o)
				require.NoError(t, err)
				kinds = append(kinds, gvks[0].Kind)
			}
			require.Equal(t, c.kinds, kinds)
		})
	}
}

func objectsOf[T runtime.Object](objs []runtime.Object) []T {
	var out []T
	for _, o := range objs {
		if v, ok := o.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

func TestNodeLocalDNSValues(t *testing.T) {
	t.Run("iptables binds the link-local and kube-dns addresses", func(t *testing.T) {
		r, err := Render(NodeLocalDNS, "1.26.4", Params{ServiceCIDR: "10.128.0.0/16"})
		require.NoError(t, err)
		objs := decodeAll(t, r.Manifest)
		ds := objectsOf[*appsv1.DaemonSet](objs)[0]
		c := ds.Spec.Template.Spec.Containers[0]
		require.Equal(t, []string{"-localip", "169.254.20.10,10.128.0.10", "-conf", "/etc/Corefile", "-upstreamsvc", "kube-dns-upstream", "-pidfile", "/tmp/node-cache.pid"}, c.Args)
		require.Equal(t, "169.254.20.10", c.LivenessProbe.HTTPGet.Host)
		core := objectsOf[*corev1.ConfigMap](objs)[0].Data["Corefile"]
		require.True(t, strings.HasPrefix(core, "cluster.local:53 {\n"), core)
		require.Equal(t, 4, strings.Count(core, "bind 169.254.20.10 10.128.0.10\n"))
		require.Equal(t, 3, strings.Count(core, "forward . __PILLAR__CLUSTER__DNS__ {"))
	})
	t.Run("ipvs binds the link-local address and forwards to kube-dns", func(t *testing.T) {
		r, err := Render(NodeLocalDNS, "", Params{KubeProxyMode: "ipvs", LocalIP: "169.254.0.53", KubeDNSIP: "10.0.0.10", ClusterDomain: "corp.example"})
		require.NoError(t, err)
		objs := decodeAll(t, r.Manifest)
		c := objectsOf[*appsv1.DaemonSet](objs)[0].Spec.Template.Spec.Containers[0]
		require.Equal(t, "169.254.0.53", c.Args[1])
		core := objectsOf[*corev1.ConfigMap](objs)[0].Data["Corefile"]
		require.True(t, strings.HasPrefix(core, "corp.example:53 {\n"), core)
		require.Equal(t, 4, strings.Count(core, "bind 169.254.0.53\n"))
		require.Equal(t, 3, strings.Count(core, "forward . 10.0.0.10 {"))
		dns, err := KubeletClusterDNS(Params{KubeProxyMode: "ipvs", LocalIP: "169.254.0.53"})
		require.NoError(t, err)
		require.Equal(t, "169.254.0.53", dns)
	})
	t.Run("an IPv6 cluster gets an IPv6 cache", func(t *testing.T) {
		p := Params{KubeProxyMode: "ipvs", ServiceCIDR: "fd00:10::/108"}
		r, err := Render(NodeLocalDNS, "", p)
		require.NoError(t, err)
		objs := decodeAll(t, r.Manifest)
		c := objectsOf[*appsv1.DaemonSet](objs)[0].Spec.Template.Spec.Containers[0]
		require.Equal(t, DefaultLocalIPv6, c.Args[1])
		require.Equal(t, DefaultLocalIPv6, c.LivenessProbe.HTTPGet.Host)
		core := objectsOf[*corev1.ConfigMap](objs)[0].Data["Corefile"]
		// A host:port, as the health plugin listens on it.
		require.Contains(t, core, "health [fd00::10]:8080\n")
		require.Equal(t, 4, strings.Count(core, "bind fd00::10\n"))
		require.Equal(t, 3, strings.Count(core, "forward . fd00:10::a {"))
		dns, err := KubeletClusterDNS(p)
		require.NoError(t, err)
		require.Equal(t, DefaultLocalIPv6, dns)
		v4, err := Render(NodeLocalDNS, "", Params{})
		require.NoError(t, err)
		require.Contains(t, objectsOf[*corev1.ConfigMap](decodeAll(t, v4.Manifest))[0].Data["Corefile"], "health 169.254.20.10:8080\n")
	})
	t.Run("iptables leaves kubelets on kube-dns", func(t *testing.T) {
		dns, err := KubeletClusterDNS(Params{})
		require.NoError(t, err)
		require.Empty(t, dns)
	})
}

func TestFlannelValues(t *testing.T) {
	r, err := Render(Flannel, "", Params{PodCIDR: "10.244.0.0/16", VNI: 4096, Port: 4789})
	require.NoError(t, err)
	require.Equal(t, "v0.28.4", r.Version)
	objs := decodeAll(t, r.Manifest)
	var net struct {
		Network string
		Backend struct {
			Type string
			VNI  int
			Port int
		}
	}
	cm := objectsOf[*corev1.ConfigMap](objs)[0]
	require.NoError(t, json.Unmarshal([]byte(cm.Data["net-conf.json"]), &net))
	require.Equal(t, "10.244.0.0/16", net.Network)
	require.Equal(t, "vxlan", net.Backend.Type)
	require.Equal(t, 4096, net.Backend.VNI)
	require.Equal(t, 4789, net.Backend.Port)
	require.True(t, json.Valid([]byte(cm.Data["cni-conf.json"])))

	r, err = Render(Flannel, "", Params{PodCIDR: "192.168.0.0/16"})
	require.NoError(t, err)
	cm = objectsOf[*corev1.ConfigMap](decodeAll(t, r.Manifest))[0]
	require.NoError(t, json.Unmarshal([]byte(cm.Data["net-conf.json"]), &net))
	require.Equal(t, 1, net.Backend.VNI)
	require.Equal(t, 8472, net.Backend.Port)
}

func TestErrors(t *testing.T) {
	cases := []struct {
		name, builtin, version string
		params                 Params
		field                  string
		is                     error
	}{
		{"unknown builtin", "calico", "", Params{}, "", ErrUnknownBuiltin},
		{"unknown version", Flannel, "v0.1.0", Params{PodCIDR: "10.244.0.0/16"}, "", ErrUnknownVersion},
		{"flannel without pod CIDR", Flannel, "", Params{}, "podCIDR", ErrInvalidParameter},
		{"flannel with IPv6 pods", Flannel, "", Params{PodCIDR: "fd00::/48"}, "podCIDR", ErrInvalidParameter},
		{"flannel with host bits", Flannel, "", Params{PodCIDR: "10.244.1.0/16"}, "podCIDR", ErrInvalidParameter},
		{"flannel VNI too large", Flannel, "", Params{PodCIDR: "10.244.0.0/16", VNI: 1 << 24}, "vni", ErrInvalidParameter},
		{"flannel port", Flannel, "", Params{PodCIDR: "10.244.0.0/16", Port: -1}, "port", ErrInvalidParameter},
		{"local IP not link-local", NodeLocalDNS, "", Params{LocalIP: "10.0.0.1"}, "localIP", ErrInvalidParameter},
		{"local IP garbage", NodeLocalDNS, "", Params{LocalIP: "x"}, "localIP", ErrInvalidParameter},
		// Pods of one family cannot reach a cache of the other.
		{"IPv4 local IP, IPv6 services", NodeLocalDNS, "", Params{ServiceCIDR: "fd00:10::/108", LocalIP: "169.254.20.10"}, "localIP", ErrInvalidParameter},
		{"IPv6 local IP, IPv4 services", NodeLocalDNS, "", Params{LocalIP: "fd00::10"}, "localIP", ErrInvalidParameter},
		// resolv.conf cannot give a link-local nameserver its zone.
		{"IPv6 link-local local IP", NodeLocalDNS, "", Params{ServiceCIDR: "fd00:10::/108", LocalIP: "fe80::10"}, "localIP", ErrInvalidParameter},
		{"kube-dns IP garbage", NodeLocalDNS, "", Params{KubeDNSIP: "10.0.0"}, "kubeDNSIP", ErrInvalidParameter},
		{"service CIDR too small", NodeLocalDNS, "", Params{ServiceCIDR: "10.0.0.0/29"}, "serviceCIDR", ErrInvalidParameter},
		{"domain", NodeLocalDNS, "", Params{ClusterDomain: "Cluster_Local"}, "clusterDomain", ErrInvalidParameter},
		{"proxy mode", NodeLocalDNS, "", Params{KubeProxyMode: "nftables"}, "kubeProxyMode", ErrInvalidParameter},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Render(c.builtin, c.version, c.params)
			require.ErrorIs(t, err, c.is)
			var pe *ParamError
			if c.field != "" {
				require.ErrorAs(t, err, &pe)
				require.Equal(t, c.field, pe.Field)
			}
		})
	}
}

func TestNthAddress(t *testing.T) {
	for cidr, want := range map[string]string{
		"10.96.0.0/12":  "10.96.0.10",
		"10.128.0.0/16": "10.128.0.10",
		"fd00:10::/108": "fd00:10::a",
	} {
		a, err := kubeDNSIP(Params{ServiceCIDR: cidr})
		require.NoError(t, err, cidr)
		require.Equal(t, want, a.String(), cidr)
	}
	a, err := kubeDNSIP(Params{})
	require.NoError(t, err)
	require.Equal(t, "10.96.0.10", a.String())
}

func TestTemplateAndVersions(t *testing.T) {
	require.Equal(t, []string{Flannel, NodeLocalDNS}, Names())
	v, raw, err := Template(Flannel, "")
	require.NoError(t, err)
	require.Equal(t, "v0.28.4", v)
	require.Equal(t, []string{".PodCIDR", ".Port", ".VNI"}, placeholders(t, "flannel", raw))
	versions, err := Versions(Flannel)
	require.NoError(t, err)
	require.Equal(t, []string{"v0.28.4", "v0.26.7"}, versions)
}

// validParams are parameters every release of a built-in renders with.
var validParams = map[string]Params{Flannel: {PodCIDR: "10.244.0.0/16"}, NodeLocalDNS: {}}

// placeholders parses text as a template and returns what its actions
// print, sorted and without duplicates: ".Field" for a field, the node's
// text for anything else (a condition, a range, a function call). Rendered
// manifests have none.
func placeholders(t *testing.T, name string, text []byte) []string {
	t.Helper()
	tmpl, err := template.New(name).Parse(string(text))
	require.NoError(t, err, name)
	seen := map[string]bool{}
	var walk func(parse.Node)
	walk = func(n parse.Node) {
		switch n := n.(type) {
		case *parse.ListNode:
			for _, c := range n.Nodes {
				walk(c)
			}
		case *parse.TextNode, *parse.CommentNode:
		case *parse.ActionNode:
			if len(n.Pipe.Decl) == 0 && len(n.Pipe.Cmds) == 1 && len(n.Pipe.Cmds[0].Args) == 1 {
				if f, ok := n.Pipe.Cmds[0].Args[0].(*parse.FieldNode); ok {
					seen["."+strings.Join(f.Ident, ".")] = true
					return
				}
			}
			seen[n.String()] = true
		default:
			seen[n.String()] = true
		}
	}
	if tmpl.Tree != nil {
		walk(tmpl.Tree.Root)
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// TestTemplatesUseEveryValue: each release's template prints plain fields
// only, and exactly the fields of the values its Params become: none
// missing, none unused.
func TestTemplatesUseEveryValue(t *testing.T) {
	for name, rs := range builtins {
		for _, r := range rs {
			t.Run(name+" "+r.version, func(t *testing.T) {
				values, err := r.values(validParams[name])
				require.NoError(t, err)
				typ := reflect.TypeOf(values)
				require.Equal(t, reflect.Struct, typ.Kind())
				var want []string
				for i := range typ.NumField() {
					want = append(want, "."+typ.Field(i).Name)
				}
				sort.Strings(want)
				raw, err := manifests.ReadFile(r.file)
				require.NoError(t, err)
				require.Equal(t, want, placeholders(t, r.file, raw))
			})
		}
	}
}

// TestImagesArePinned: every container image of every release names a tag
// other than "latest" (or a digest), and the add-on's own containers run the
// release the catalog declares; init containers may run helper images of
// their own version.
func TestImagesArePinned(t *testing.T) {
	for name, rs := range builtins {
		for _, r := range rs {
			t.Run(name+" "+r.version, func(t *testing.T) {
				rendered, err := Render(name, r.version, validParams[name])
				require.NoError(t, err)
				var pods []corev1.PodSpec
				for _, o := range decodeAll(t, rendered.Manifest) {
					switch o := o.(type) {
					case *appsv1.DaemonSet:
						pods = append(pods, o.Spec.Template.Spec)
					case *appsv1.Deployment:
						pods = append(pods, o.Spec.Template.Spec)
					}
				}
				require.NotEmpty(t, pods, "no workload")
				for _, pod := range pods {
					require.NotEmpty(t, pod.Containers)
					for _, c := range pod.InitContainers {
						repo, tag, digest := imageRef(c.Image)
						require.NotEmpty(t, repo, c.Name)
						require.True(t, digest != "" || (tag != "" && tag != "latest"), "init container %s: image %q is not pinned", c.Name, c.Image)
					}
					for _, c := range pod.Containers {
						repo, tag, _ := imageRef(c.Image)
						require.NotEmpty(t, repo, c.Name)
						require.Equal(t, r.version, tag, "container %s: image %q", c.Name, c.Image)
					}
				}
			})
		}
	}
}

// imageRef splits an image reference into repository, tag and digest.
func imageRef(image string) (repo, tag, digest string) {
	repo, digest, _ = strings.Cut(image, "@")
	if i := strings.LastIndexByte(repo, ':'); i > strings.LastIndexByte(repo, '/') {
		repo, tag = repo[:i], repo[i+1:]
	}
	return repo, tag, digest
}

func TestImageRef(t *testing.T) {
	for image, want := range map[string][3]string{
		"registry.k8s.io/dns/k8s-dns-node-cache:1.26.4": {"registry.k8s.io/dns/k8s-dns-node-cache", "1.26.4", ""},
		"localhost:5000/flannel":                        {"localhost:5000/flannel", "", ""},
		"flannel:v1@sha256:abc":                         {"flannel", "v1", "sha256:abc"},
		"flannel":                                       {"flannel", "", ""},
	} {
		repo, tag, digest := imageRef(image)
		require.Equal(t, want, [3]string{repo, tag, digest}, image)
	}
}

// TestImageRepository: every image of every release moves under the
// repository with its name and tag kept, and nothing else changes.
func TestImageRepository(t *testing.T) {
	for name, rs := range builtins {
		for _, r := range rs {
			t.Run(name+" "+r.version, func(t *testing.T) {
				plain, err := Render(name, r.version, validParams[name])
				require.NoError(t, err)
				p := validParams[name]
				p.ImageRepository = "mirror.example:5000/k8s"
				mirrored, err := Render(name, r.version, p)
				require.NoError(t, err)
				before, after := images(t, plain.Manifest), images(t, mirrored.Manifest)
				require.NotEmpty(t, before)
				require.Len(t, after, len(before))
				for i, img := range before {
					require.Equal(t, "mirror.example:5000/k8s/"+img[strings.LastIndexByte(img, '/')+1:], after[i])
				}
				// Only the image lines differ.
				pl, ml := strings.Split(string(plain.Manifest), "\n"), strings.Split(string(mirrored.Manifest), "\n")
				require.Len(t, ml, len(pl))
				changed := 0
				for i := range pl {
					if pl[i] != ml[i] {
						changed++
						require.Contains(t, pl[i], "image: ")
					}
				}
				require.Equal(t, len(before), changed)
			})
		}
	}
	for _, bad := range []string{"https://mirror.example", "Mirror.example/k8s", "mirror.example/k8s:v1", "mirror.example/k8s@sha256:00", "mirror.example/", "/k8s", "a b", strings.Repeat("a", 256)} {
		_, err := Render(Flannel, "", Params{PodCIDR: "10.244.0.0/16", ImageRepository: bad})
		var pe *ParamError
		require.ErrorAs(t, err, &pe, bad)
		require.Equal(t, "imageRepository", pe.Field, bad)
		require.ErrorIs(t, err, ErrInvalidParameter)
	}
	for _, good := range []string{"localhost:5000", "mirror.example", "mirror.example/a/b-c/d_e", "e2e.invalid"} {
		_, err := Render(NodeLocalDNS, "", Params{ImageRepository: good})
		require.NoError(t, err, good)
	}
}

// images lists every container image of a manifest's workloads, in order.
func images(t *testing.T, manifest []byte) []string {
	t.Helper()
	var out []string
	for _, o := range decodeAll(t, manifest) {
		var pod corev1.PodSpec
		switch o := o.(type) {
		case *appsv1.DaemonSet:
			pod = o.Spec.Template.Spec
		case *appsv1.Deployment:
			pod = o.Spec.Template.Spec
		default:
			continue
		}
		for _, c := range append(pod.InitContainers, pod.Containers...) {
			out = append(out, c.Image)
		}
	}
	return out
}
