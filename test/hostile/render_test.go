package hostile

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"errors"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"text/template"
	"time"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"

	"github.com/nodeboot/nodeboot/bootstrap"
	"github.com/nodeboot/nodeboot/provisioning"
	_ "github.com/nodeboot/nodeboot/provisioning/cloudinit"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/legacy"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/v3"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// rnMarker is in every Secret value and hostile text of these cases; no
// message may contain it.
const rnMarker = "rn-s3cret-91f4"

// rnSecret is the Secret (in the config's namespace) the cases read with
// contentFrom and passwdFrom.
const rnSecret = "rn-hostile"

type rnOutcome int

const (
	rnRenders rnOutcome = iota // output, no problem at the path
	rnWarns                    // output, a warning at the path
	rnFails                    // no output, an error at the path
)

func (o rnOutcome) String() string { return [...]string{"renders", "warns", "fails"}[o] }

// rnDialect is the format a case renders in.
type rnDialect int

const (
	rnCloudConfig rnDialect = iota
	rnLegacyIgnition
	rnIgnitionV3
)

var rnVectors = map[rnDialect]string{
	rnCloudConfig:    "cc-join-worker-minimal-v1.33",
	rnLegacyIgnition: "ign-join-worker-minimal-v1.33",
	rnIgnitionV3:     "ign-join-worker-minimal-v1.33",
}

type rnCase struct {
	name    string
	dialect rnDialect
	strict  bool
	// secret is the data of the Secret rnSecret.
	secret map[string]string
	// add changes the spec; "#" in path stands for the index of the first
	// file, user or postKubeadmCommand it appends.
	add     func(*bootstrapv1.KubeadmConfigSpec)
	outcome rnOutcome
	path    string
	msg     string
	// Limits of the case: wall time and bytes allocated (an upper bound of
	// the heap it can have grown by).
	maxTime  time.Duration
	maxAlloc uint64
	// check, when set, inspects the rendered Plan.
	check func(t *testing.T, res *bootstrap.Result)
}

func rnTemplate(content string) func(*bootstrapv1.KubeadmConfigSpec) {
	return func(s *bootstrapv1.KubeadmConfigSpec) {
		s.Files = append(s.Files, bootstrapv1.File{Path: "/etc/rn/t" + rnSuffix(s.Files), Permissions: "0644", ContentFormat: bootstrapv1.FileContentFormatTemplate, Content: content})
	}
}

// rnSuffix keeps template paths unique; the first is /etc/rn/t.
func rnSuffix(files []bootstrapv1.File) string {
	n := 0
	for _, f := range files {
		if strings.HasPrefix(f.Path, "/etc/rn/t") {
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return "-" + strconv.Itoa(n)
}

func rnFromSecret(key string, format bootstrapv1.FileContentFormat, enc bootstrapv1.Encoding) func(*bootstrapv1.KubeadmConfigSpec) {
	return func(s *bootstrapv1.KubeadmConfigSpec) {
		s.Files = append(s.Files, bootstrapv1.File{Path: "/etc/rn/s", Permissions: "0644", ContentFormat: format, Encoding: enc,
			ContentFrom: bootstrapv1.FileSource{Secret: bootstrapv1.SecretFileSource{Name: rnSecret, Key: key}}})
	}
}

func rnEncoded(enc bootstrapv1.Encoding, content string) func(*bootstrapv1.KubeadmConfigSpec) {
	return func(s *bootstrapv1.KubeadmConfigSpec) {
		s.Files = append(s.Files, bootstrapv1.File{Path: "/etc/rn/e", Permissions: "0644", Encoding: enc, Content: content})
	}
}

func rnPasswdFrom(key string) func(*bootstrapv1.KubeadmConfigSpec) {
	return func(s *bootstrapv1.KubeadmConfigSpec) {
		s.Users = append(s.Users, bootstrapv1.User{Name: "rn",
			PasswdFrom: bootstrapv1.PasswdSource{Secret: bootstrapv1.SecretPasswdSource{Name: rnSecret, Key: key}}})
	}
}

func rnGzip(s string) string {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(s))
	zw.Close()
	return b.String()
}

func rnB64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// rnCABPKTemplate renders as CABPK v1.14.2's reconciler does (text/template
// named after the path, the control plane's version as data): the oracle
// for templates within the limits.
func rnCABPKTemplate(t *testing.T, name, content string, data map[string]any) string {
	t.Helper()
	tpl, err := template.New(name).Parse(content)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := tpl.Execute(&b, data); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func rnFileContent(path string) func(t *testing.T, res *bootstrap.Result) string {
	return func(t *testing.T, res *bootstrap.Result) string {
		for _, f := range res.Plan.Files {
			if f.Path == path {
				return f.Content
			}
		}
		t.Fatalf("no file %s in the plan", path)
		return ""
	}
}

const rnControlPlaneVersion = "v1.33.2"

// rnTemplateData is what CABPK passes its templates for that version.
var rnTemplateData = map[string]any{"controlPlane": map[string]any{"version": rnControlPlaneVersion}}

const (
	rnSecond = time.Second
	rnMiB    = 1 << 20
)

// Template limits take up to MaxTemplateTime (wall clock, under any load)
// plus the setup; 8s leaves room for a loaded CI machine.
const rnTemplateTime = bootstrap.MaxTemplateTime + 6*time.Second

// rnStepsAlloc bounds what a template that runs out of steps allocates:
// about 90 bytes of garbage per step (text/template's reflective calls),
// most of it collected as it goes.
const rnStepsAlloc = 192 * rnMiB

func rnCases() []rnCase {
	nestedLoop := "{{ range 1000000000 }}{{ range 1000000000 }}{{ end }}{{ end }}"
	valid := "v={{ .controlPlane.version }}\n{{ range $i := 3 }}{{ $i }}{{ end }}\n{{ printf \"%05d\" 42 }}\n"
	return []rnCase{
		// contentFormat: Template, bounded in steps, time, depth, output and allocation.
		{name: "nested range writing nothing", add: rnTemplate(nestedLoop), outcome: rnFails,
			path: "spec.files[#].content", msg: "template", maxTime: rnTemplateTime, maxAlloc: rnStepsAlloc},
		{name: "nested range writing a byte per step", add: rnTemplate("{{ range 1000000 }}{{ range 1000000 }}x{{ end }}{{ end }}"), outcome: rnFails,
			path: "spec.files[#].content", msg: "template", maxTime: rnTemplateTime, maxAlloc: 256 * rnMiB},
		{name: "one huge range", add: rnTemplate("{{ range 100000000000 }}{{ end }}"), outcome: rnFails,
			path: "spec.files[#].content", msg: "template", maxTime: rnTemplateTime, maxAlloc: rnStepsAlloc},
		{name: "endless recursion", add: rnTemplate(`{{ define "a" }}{{ template "a" . }}{{ end }}{{ template "a" . }}`), outcome: rnFails,
			path: "spec.files[#].content", msg: "nests template calls deeper than 1000", maxTime: 5 * rnSecond, maxAlloc: 64 * rnMiB},
		{name: "exponential template calls", add: rnTemplate(`{{ define "a" }}{{ template "b" }}{{ template "b" }}{{ end }}{{ define "b" }}{{ template "c" }}{{ template "c" }}{{ end }}{{ define "c" }}{{ template "d" }}{{ template "d" }}{{ end }}{{ define "d" }}{{ range 100000 }}{{ end }}{{ end }}{{ range 100000 }}{{ template "a" }}{{ end }}`), outcome: rnFails,
			path: "spec.files[#].content", msg: "template", maxTime: rnTemplateTime, maxAlloc: rnStepsAlloc},
		{name: "printf width bomb", add: rnTemplate(`{{ printf "` + strings.Repeat("%01000000d", 40) + `" 1 | len }}`), outcome: rnFails,
			path: "spec.files[#].content", msg: "a function call could produce more than", maxTime: 5 * rnSecond, maxAlloc: 16 * rnMiB},
		{name: "doubling a string", add: rnTemplate("{{ $s := `ab` }}" + strings.Repeat("{{ $s = print $s $s }}", 40) + "{{ len $s }}"), outcome: rnFails,
			path: "spec.files[#].content", msg: "template", maxTime: 5 * rnSecond, maxAlloc: 256 * rnMiB},
		{name: "allocating without writing", add: rnTemplate(`{{ range 1000000 }}{{ $x := printf "%0900000d" 1 }}{{ end }}`), outcome: rnFails,
			path: "spec.files[#].content", msg: "template", maxTime: rnTemplateTime, maxAlloc: 256 * rnMiB},
		{name: "output over CABPK's 1 MiB", add: rnTemplate(`{{ range 2000 }}{{ printf "%01000d" 0 }}{{ end }}`), outcome: rnFails,
			path: "spec.files[#].content", msg: "rendered output exceeds the 1048576 byte limit", maxTime: 5 * rnSecond, maxAlloc: 64 * rnMiB},
		{name: "many files share one budget", add: func(s *bootstrapv1.KubeadmConfigSpec) {
			for range 20 {
				rnTemplate("{{ range 400000 }}{{ end }}")(s)
			}
		}, outcome: rnFails, path: "", msg: "template", maxTime: rnTemplateTime, maxAlloc: 128 * rnMiB},
		{name: "unparsable template from a Secret", secret: map[string]string{"t": "line one\n{{ " + rnMarker + " }}\n"},
			add: rnFromSecret("t", bootstrapv1.FileContentFormatTemplate, ""), outcome: rnFails,
			path: "spec.files[#].contentFrom.secret", msg: "template line 2: cannot be parsed", maxTime: 2 * rnSecond, maxAlloc: 16 * rnMiB},
		{name: "failing template from a Secret", secret: map[string]string{"t": "a\nb\n{{ index .controlPlane \"" + rnMarker + "\" 1 }}"},
			add: rnFromSecret("t", bootstrapv1.FileContentFormatTemplate, ""), outcome: rnFails,
			path: "spec.files[#].contentFrom.secret", msg: "template line 3: execution failed", maxTime: 2 * rnSecond, maxAlloc: 16 * rnMiB},
		{name: "undefined template named by a Secret", secret: map[string]string{"t": `{{ template "` + rnMarker + `" }}`},
			add: rnFromSecret("t", bootstrapv1.FileContentFormatTemplate, ""), outcome: rnFails,
			path: "spec.files[#].contentFrom.secret", msg: "template line 1: execution failed", maxTime: 2 * rnSecond, maxAlloc: 16 * rnMiB},
		{name: "template limit in legacy Ignition", dialect: rnLegacyIgnition, add: rnTemplate(nestedLoop), outcome: rnFails,
			path: "spec.files[#].content", msg: "template", maxTime: rnTemplateTime, maxAlloc: rnStepsAlloc},
		{name: "template limit in Ignition v3", dialect: rnIgnitionV3, add: rnTemplate(nestedLoop), outcome: rnFails,
			path: "spec.files[#].content", msg: "template", maxTime: rnTemplateTime, maxAlloc: rnStepsAlloc},
		{name: "valid template renders CABPK's bytes", add: rnTemplate(valid), outcome: rnRenders, path: "spec.files[#].content",
			maxTime: 2 * rnSecond, maxAlloc: 16 * rnMiB, check: func(t *testing.T, res *bootstrap.Result) {
				want := rnCABPKTemplate(t, "/etc/rn/t", valid, rnTemplateData)
				if got := rnFileContent("/etc/rn/t")(t, res); got != want {
					t.Errorf("content %q, CABPK's %q", got, want)
				}
			}},
		{name: "valid template from a Secret in legacy Ignition", dialect: rnLegacyIgnition, secret: map[string]string{"t": valid},
			add: rnFromSecret("t", bootstrapv1.FileContentFormatTemplate, ""), outcome: rnRenders, path: "spec.files[#].contentFrom.secret",
			maxTime: 2 * rnSecond, maxAlloc: 16 * rnMiB, check: func(t *testing.T, res *bootstrap.Result) {
				want := rnCABPKTemplate(t, "/etc/rn/s", valid, rnTemplateData)
				if got := rnFileContent("/etc/rn/s")(t, res); got != want {
					t.Errorf("content %q, CABPK's %q", got, want)
				}
			}},

		// Corrupt encoded content: a warning in CABPK's dialects, an error in v3.
		{name: "base64 that is not base64", add: rnEncoded(bootstrapv1.Base64, "not base64! "+rnMarker), outcome: rnWarns,
			path: "spec.files[#].content", msg: "is not valid base64", maxTime: 2 * rnSecond, maxAlloc: 16 * rnMiB},
		{name: "base64 without padding", add: rnEncoded(bootstrapv1.Base64, "aGVsbG8"), outcome: rnWarns,
			path: "spec.files[#].content", msg: "is not valid base64", maxTime: 2 * rnSecond, maxAlloc: 16 * rnMiB},
		{name: "gzip that is not gzip", add: rnEncoded(bootstrapv1.Gzip, "plain "+rnMarker), outcome: rnWarns,
			path: "spec.files[#].content", msg: "is not a valid gzip stream", maxTime: 2 * rnSecond, maxAlloc: 16 * rnMiB},
		{name: "truncated gzip", add: rnEncoded(bootstrapv1.Gzip, rnGzip(strings.Repeat(rnMarker, 100))[:30]), outcome: rnWarns,
			path: "spec.files[#].content", msg: "is not a valid gzip stream", maxTime: 2 * rnSecond, maxAlloc: 16 * rnMiB},
		{name: "gzip+base64 of plain text", add: rnEncoded(bootstrapv1.GzipBase64, rnB64("plain "+rnMarker)), outcome: rnWarns,
			path: "spec.files[#].content", msg: "decodes from base64 but is not a valid gzip stream", maxTime: 2 * rnSecond, maxAlloc: 16 * rnMiB},
		{name: "gzip+base64 with a corrupt checksum", add: rnEncoded(bootstrapv1.GzipBase64, func() string {
			g := []byte(rnGzip("hello " + rnMarker))
			g[len(g)-5] ^= 0xff
			return rnB64(string(g))
		}()), outcome: rnWarns, path: "spec.files[#].content", msg: "not a valid gzip stream", maxTime: 2 * rnSecond, maxAlloc: 16 * rnMiB},
		{name: "corrupt base64 from a Secret", secret: map[string]string{"b": "%%" + rnMarker}, add: rnFromSecret("b", "", bootstrapv1.Base64),
			outcome: rnWarns, path: "spec.files[#].content", msg: "is not valid base64", maxTime: 2 * rnSecond, maxAlloc: 16 * rnMiB},
		// CABPK's Ignition transpiler refuses it (a YAML !!binary), so nodeboot does too.
		{name: "corrupt base64 in legacy Ignition", dialect: rnLegacyIgnition, add: rnEncoded(bootstrapv1.Base64, "@@"+rnMarker), outcome: rnFails,
			path: "spec.files[#].content", msg: "is not valid base64", maxTime: 2 * rnSecond, maxAlloc: 16 * rnMiB},
		{name: "corrupt base64 in Ignition v3", dialect: rnIgnitionV3, add: rnEncoded(bootstrapv1.Base64, "@@"+rnMarker), outcome: rnFails,
			path: "spec.files[#].content", msg: "is not valid base64", maxTime: 2 * rnSecond, maxAlloc: 16 * rnMiB},
		{name: "gzip+base64 of plain text in Ignition v3", dialect: rnIgnitionV3, add: rnEncoded(bootstrapv1.GzipBase64, rnB64(rnMarker)), outcome: rnFails,
			path: "spec.files[#].content", msg: "not a valid gzip stream", maxTime: 2 * rnSecond, maxAlloc: 16 * rnMiB},
		{name: "corrupt base64 under strict", strict: true, add: rnEncoded(bootstrapv1.Base64, "@@"+rnMarker), outcome: rnFails,
			path: "spec.files[#].content", msg: "is not valid base64", maxTime: 2 * rnSecond, maxAlloc: 16 * rnMiB},
		{name: "base64 wrapped at 76 columns is fine", add: rnEncoded(bootstrapv1.Base64, func() string {
			s := rnB64(strings.Repeat("x", 200))
			return s[:76] + "\n" + s[76:152] + "\n" + s[152:] + "\n"
		}()), outcome: rnRenders, path: "spec.files[#].content", maxTime: 2 * rnSecond, maxAlloc: 16 * rnMiB},
		{name: "valid gzip+base64 is fine", add: rnEncoded(bootstrapv1.GzipBase64, rnB64(rnGzip("hello"))), outcome: rnRenders,
			path: "spec.files[#].content", maxTime: 2 * rnSecond, maxAlloc: 16 * rnMiB},
		{name: "valid gzip+base64 in Ignition v3 is fine", dialect: rnIgnitionV3, add: rnEncoded(bootstrapv1.GzipBase64, rnB64(rnGzip("hello"))), outcome: rnRenders,
			path: "spec.files[#].content", maxTime: 2 * rnSecond, maxAlloc: 16 * rnMiB},

		// Secret values in hazards: the field and line, never the value.
		{name: "jinja statement on line 3 of a Secret", secret: map[string]string{"j": "a\nb\n{% " + rnMarker + " %}\n"}, add: rnFromSecret("j", "", ""),
			outcome: rnWarns, path: "spec.files[#].content", msg: "line 3 contains a jinja statement", maxTime: 2 * rnSecond, maxAlloc: 16 * rnMiB},
		{name: "jinja expression in a Secret under strict", strict: true, secret: map[string]string{"j": "x\n{{ " + rnMarker + " }}"}, add: rnFromSecret("j", "", ""),
			outcome: rnFails, path: "spec.files[#].content", msg: "line 2 contains a jinja expression", maxTime: 2 * rnSecond, maxAlloc: 16 * rnMiB},
		{name: "jinja in a command", add: func(s *bootstrapv1.KubeadmConfigSpec) {
			s.PostKubeadmCommands = append(s.PostKubeadmCommands, "echo {{ "+rnMarker+" }}")
		}, outcome: rnWarns, path: "spec.postKubeadmCommands[#]", msg: "contains a jinja expression", maxTime: 2 * rnSecond, maxAlloc: 16 * rnMiB},
		{name: "password hash with YAML syntax", secret: map[string]string{"p": "$6$x: " + rnMarker}, add: rnPasswdFrom("p"),
			outcome: rnWarns, path: "spec.users[#].passwd", msg: "contains", maxTime: 2 * rnSecond, maxAlloc: 16 * rnMiB},
		{name: "password hash with a line break", secret: map[string]string{"p": "$6$x\nsudo: " + rnMarker}, add: rnPasswdFrom("p"),
			outcome: rnWarns, path: "spec.users[#].passwd", msg: "line break", maxTime: 2 * rnSecond, maxAlloc: 16 * rnMiB},
		{name: "password hash with jinja", secret: map[string]string{"p": "{% " + rnMarker}, add: rnPasswdFrom("p"),
			outcome: rnWarns, path: "spec.users[#].passwd", msg: "jinja", maxTime: 2 * rnSecond, maxAlloc: 16 * rnMiB},
		{name: "password hash legacy Ignition cannot carry", dialect: rnLegacyIgnition, secret: map[string]string{"p": "{" + rnMarker}, add: func(s *bootstrapv1.KubeadmConfigSpec) {
			rnPasswdFrom("p")(s)
			f := false
			s.Users[len(s.Users)-1].LockPassword = &f
		}, outcome: rnFails, path: "spec.users[#].passwd", msg: "", maxTime: 2 * rnSecond, maxAlloc: 16 * rnMiB},
	}
}

// rnSecrets layers the case's Secret over the vector's.
type rnSecrets struct {
	base bootstrap.SecretGetter
	ns   string
	data map[string][]byte
}

func (s rnSecrets) SecretData(ctx context.Context, ns, name string) (map[string][]byte, error) {
	if ns == s.ns && name == rnSecret && s.data != nil {
		return s.data, nil
	}
	return s.base.SecretData(ctx, ns, name)
}

// rnProblem is one message of a run, with its path.
type rnProblem struct {
	path, msg string
	warning   bool
}

func TestRenderHostile(t *testing.T) {
	cases := rnCases()
	if len(cases) < 25 {
		t.Fatalf("%d cases, the suite promises at least 25", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := testenv.VectorInput(t, filepath.Join(testenv.VectorsDir(t), rnVectors[tc.dialect]))
			// The version {{ .controlPlane.version }} reads, as a control
			// plane object would give it.
			in.ControlPlaneVersion = rnControlPlaneVersion
			spec := &in.Config.Spec
			files, users, posts := len(spec.Files), len(spec.Users), len(spec.PostKubeadmCommands)
			tc.add(spec)
			path := tc.path
			switch {
			case strings.HasPrefix(path, "spec.files"):
				path = strings.Replace(path, "#", strconv.Itoa(files), 1)
			case strings.HasPrefix(path, "spec.users"):
				path = strings.Replace(path, "#", strconv.Itoa(users), 1)
			case strings.HasPrefix(path, "spec.postKubeadmCommands"):
				path = strings.Replace(path, "#", strconv.Itoa(posts), 1)
			}
			if in.Config.Annotations == nil {
				in.Config.Annotations = map[string]string{}
			}
			if tc.dialect == rnIgnitionV3 {
				in.Config.Annotations[bootstrap.AnnotationIgnitionVersion] = "3.4.0"
			}
			if tc.strict {
				in.Config.Annotations[bootstrap.AnnotationStrict] = "true"
			}
			if tc.secret != nil {
				data := map[string][]byte{}
				for k, v := range tc.secret {
					data[k] = []byte(v)
				}
				in.Secrets = rnSecrets{base: in.Secrets, ns: in.Config.Namespace, data: data}
			}

			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			res, out, err := rnRender(*in)
			elapsed := time.Since(start)
			runtime.ReadMemStats(&after)
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%s: %s, %.1f MiB allocated (limits %s, %d MiB)", tc.outcome, elapsed.Round(time.Millisecond), float64(alloc)/rnMiB, tc.maxTime, tc.maxAlloc/rnMiB)
			if elapsed > tc.maxTime {
				t.Errorf("took %s, limit %s", elapsed, tc.maxTime)
			}
			if alloc > tc.maxAlloc {
				t.Errorf("allocated %d MiB, limit %d MiB", alloc/rnMiB, tc.maxAlloc/rnMiB)
			}

			problems, ok := rnProblems(err, out)
			if !ok {
				t.Fatalf("an error that is not an *InvalidError: %v", err)
			}
			for _, p := range problems {
				if strings.Contains(p.path+p.msg, rnMarker) {
					t.Errorf("a message quotes the Secret/hostile text: %s: %s", p.path, p.msg)
				}
			}
			at := func(warning bool) bool {
				for _, p := range problems {
					if p.warning == warning && (tc.path == "" || p.path == path) && strings.Contains(p.msg, tc.msg) {
						return true
					}
				}
				return false
			}
			switch tc.outcome {
			case rnFails:
				if err == nil || !at(false) {
					t.Fatalf("want an error at %s containing %q; got %v", path, tc.msg, problems)
				}
			case rnWarns:
				if err != nil || !at(true) {
					t.Fatalf("want output and a warning at %s containing %q; got err %v, problems %v", path, tc.msg, err, problems)
				}
			case rnRenders:
				if err != nil {
					t.Fatalf("want output; got %v", err)
				}
				for _, p := range problems {
					if strings.HasPrefix(p.path, path) {
						t.Errorf("unexpected problem %s: %s", p.path, p.msg)
					}
				}
			}
			if tc.check != nil {
				tc.check(t, res)
			}
		})
	}
}

// rnRender builds and renders as the CLI and the controller do.
func rnRender(in bootstrap.Input) (*bootstrap.Result, *provisioning.Output, error) {
	res, err := bootstrap.Build(context.Background(), in)
	if err != nil {
		return nil, nil, err
	}
	out, err := res.Render()
	return res, out, err
}

// rnProblems lists the problems of a run; ok is false for an error that
// names no field.
func rnProblems(err error, out *provisioning.Output) (ps []rnProblem, ok bool) {
	if out != nil {
		for _, w := range out.Warnings {
			ps = append(ps, rnProblem{path: w.Path.String(), msg: w.Message, warning: true})
		}
	}
	if err == nil {
		return ps, true
	}
	var invalid *bootstrap.InvalidError
	if !errors.As(err, &invalid) {
		return ps, false
	}
	for _, p := range invalid.Problems {
		ps = append(ps, rnProblem{path: p.Path.String(), msg: p.Message})
	}
	return ps, true
}
