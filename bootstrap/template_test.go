package bootstrap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"text/template"
	"time"
)

// cabpkTemplate is CABPK v1.14.2's renderTemplates for one file
// (bootstrap/kubeadm/reconcilers/kubeadmconfig/template.go): text/template
// named after the path, its output bounded at 1 MiB and nothing else. It is
// the oracle, unexported in CABPK, so restated here from its source.
func cabpkTemplate(name, content string, data map[string]any) (string, error) {
	tpl, err := template.New(name).Parse(content)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := tpl.Execute(&cabpkWriter{w: &buf, remaining: 1 << 20}, data); err != nil {
		return "", err
	}
	return buf.String(), nil
}

type cabpkWriter struct {
	w         io.Writer
	remaining int
}

func (l *cabpkWriter) Write(p []byte) (int, error) {
	if len(p) > l.remaining {
		return 0, fmt.Errorf("rendered output exceeds the %d byte limit", 1<<20)
	}
	l.remaining -= len(p)
	return l.w.Write(p)
}

var templateData = map[string]any{"controlPlane": map[string]any{"version": "v1.34.1"}}

// validTemplates use every construct the bounds touch: loops (int, map,
// string-free), defines, blocks, recursion through slice, the replaced
// builtins and whitespace trimming around the injected hooks.
var validTemplates = []string{
	"plain\n",
	"cp: {{ .controlPlane.version }}\n",
	"{{ if .controlPlane }}has{{ else }}none{{ end }}\n",
	"{{ range 3 }}[{{ . }}]{{ end }}\n",
	"{{- range $i := 4 -}}\n  {{ $i }}\n{{- end }}\n",
	"{{ range $k, $v := .controlPlane }}{{ $k }}={{ $v }}{{ end }}",
	"{{ range 0 }}x{{ else }}empty{{ end }}",
	"{{ range 10 }}{{ if eq . 3 }}{{ break }}{{ end }}{{ . }}{{ end }}",
	"{{ range 5 }}{{ if eq . 2 }}{{ continue }}{{ end }}{{ . }}{{ end }}",
	"{{ range 20 }}{{ range 20 }}.{{ end }}\n{{ end }}",
	`{{ define "x" }}<{{ . }}>{{ end }}{{ template "x" 1 }}{{ template "x" .controlPlane.version }}`,
	`{{ block "b" . }}default {{ .controlPlane.version }}{{ end }}`,
	`{{ define "r" }}{{ if . }}{{ printf "%.1s" . }}{{ template "r" (slice . 1) }}{{ end }}{{ end }}{{ template "r" .controlPlane.version }}`,
	`{{ printf "%q %5d %-8s| %x %08.3f %v" "a: b" 42 "left" "hex" 3.14159 .controlPlane }}`,
	`{{ printf "%[2]s %[1]s %*d %%" "a" "b" 6 7 }}`,
	`{{ print 1 "a" 2 }} {{ println "x" 3 }}`,
	`{{ html "<a href='x'>&\"" }} {{ js "</script>\u2028'" }} {{ urlquery "a b&c=d" }}`,
	`{{ .controlPlane.version | len }} {{ index .controlPlane "version" }} {{ slice .controlPlane.version 1 3 }}`,
	`{{ with $v := .controlPlane.version }}{{ $v }}{{ end }}{{ $x := 1 }}{{ $x = 2 }}{{ $x }}`,
	`{{/* comment */}}x {{- /* trimmed */ -}} y`,
	`{{ and 1 0 }} {{ or 0 "" 3 }} {{ not true }} {{ lt 1 2 }} {{ ne "a" "b" }}`,
	"{{ .missing }} {{ .controlPlane.missing }}",
	`{{ "{{ ds.meta_data.local_hostname }}" }}`,
	`{{ printf "%01000d" 7 | len }}`,
}

// TestTemplateMatchesCABPK: for templates CABPK renders, the bounded
// renderer writes the same bytes.
func TestTemplateMatchesCABPK(t *testing.T) {
	for _, data := range []map[string]any{templateData, {}} {
		for _, tpl := range validTemplates {
			want, werr := cabpkTemplate("/etc/f", tpl, data)
			got, err := renderTemplate(newTemplateBudget(context.Background()), "/etc/f", tpl, data)
			if werr != nil && len(data) > 0 {
				t.Fatalf("oracle refuses %q: %v", tpl, werr)
			}
			if (err == nil) != (werr == nil) {
				t.Errorf("%q: got %v, CABPK %v", tpl, err, werr)
				continue
			}
			if err != nil && werr != nil {
				continue
			}
			if err != nil {
				t.Errorf("%q: %v", tpl, err)
				continue
			}
			if got != want {
				t.Errorf("%q:\n got %q\nwant %q", tpl, got, want)
			}
		}
	}
}

// TestTemplateErrorsMatchCABPKAndQuoteNothing: what CABPK refuses is
// refused, and the message keeps the line but none of the template's text.
func TestTemplateErrorsMatchCABPKAndQuoteNothing(t *testing.T) {
	const marker = "S3CRETmarker"
	for _, tc := range []struct {
		tpl  string
		line string
	}{
		{"a\n{{ " + marker + " }}", "template line 2: cannot be parsed"},
		{"{{ index . \"" + marker + "\" 1 }}", "template line 1: execution failed"},
		{"x\ny\n{{ template \"" + marker + "\" }}", "template line 3: execution failed"},
		{"{{ .controlPlane.version." + marker + " }}", "template line 1: execution failed"},
		{"{{ printf \"%s\" (index .controlPlane \"version\" \"" + marker + "\") }}", "template line 1: execution failed"},
		{"{{ " + marker + " unclosed", "template line 1: cannot be parsed"},
		{"{{ nodeboot_step }}" + marker, "template line 1: cannot be parsed"},
		{strings.Repeat("x", 1<<20) + "{{ `" + marker + "` }}", "template: rendered output exceeds the 1048576 byte limit"},
	} {
		if _, err := cabpkTemplate("/etc/f", tc.tpl, templateData); err == nil {
			t.Fatalf("the oracle renders %.40q (else the case proves nothing)", tc.tpl)
		}
		_, err := renderTemplate(newTemplateBudget(context.Background()), "/etc/f", tc.tpl, templateData)
		if err == nil || !strings.HasPrefix(err.Error(), tc.line) || strings.Contains(err.Error(), marker) {
			t.Errorf("%.60q: got %v, want prefix %q without the marker", tc.tpl, err, tc.line)
		}
	}
}

func TestTemplateLimits(t *testing.T) {
	for _, tc := range []struct {
		name, tpl string
	}{
		{"nested range without output", "{{ range 100000000 }}{{ range 100000000 }}{{ end }}{{ end }}"},
		{"recursion", `{{ define "a" }}{{ template "a" }}{{ end }}{{ template "a" }}`},
		{"exponential calls", `{{ define "a" }}{{ template "b" }}{{ template "b" }}{{ end }}{{ define "b" }}{{ template "c" }}{{ template "c" }}{{ end }}{{ define "c" }}{{ range 1000000 }}{{ end }}{{ end }}{{ range 1000 }}{{ template "a" }}{{ end }}`},
		{"nested range with output", "{{ range 100000 }}{{ range 100000 }}x{{ end }}{{ end }}"},
		{"printf width bomb", strings.Repeat(`{{ printf "%01000000d%01000000d%01000000d%01000000d%01000000d%01000000d%01000000d%01000000d%01000000d%01000000d%01000000d%01000000d%01000000d%01000000d%01000000d%01000000d%01000000d" 1 | len }}`, 1)},
		{"unprinted allocations", `{{ range 1000000 }}{{ $x := printf "%0900000d" 1 }}{{ end }}`},
		{"doubling", "{{ $s := `ab` }}" + strings.Repeat("{{ $s = print $s $s }}", 40) + "{{ len $s }}"},
		{"escape growth", "{{ $s := printf `%0900000d` 0 | print `<` }}{{ $s = print $s $s $s $s }}{{ js $s | len }}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err := renderTemplate(newTemplateBudget(context.Background()), "/etc/f", tc.tpl, templateData)
			if !errors.Is(err, ErrTemplateLimit) {
				t.Fatalf("got %v, want a limit error", err)
			}
			if d := time.Since(start); d > MaxTemplateTime+time.Second {
				t.Errorf("took %s", d)
			}
		})
	}
}

func TestTemplateStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := renderTemplate(newTemplateBudget(ctx), "/etc/f", "{{ range 10 }}{{ end }}", templateData)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
}

// FuzzTemplate: the bounded renderer never panics, stays within its limits,
// and agrees with CABPK's code path whenever it renders or refuses input
// for a reason other than a limit.
func FuzzTemplate(f *testing.F) {
	for _, s := range validTemplates {
		f.Add(s)
	}
	f.Add("{{ range 1000000 }}{{ range 1000000 }}{{ end }}{{ end }}")
	f.Add(`{{ define "a" }}{{ template "a" }}{{ end }}{{ template "a" }}`)
	f.Fuzz(func(t *testing.T, tpl string) {
		if len(tpl) > 4096 {
			return
		}
		start := time.Now()
		got, err := renderTemplate(newTemplateBudget(context.Background()), "/etc/f", tpl, templateData)
		if d := time.Since(start); d > MaxTemplateTime+2*time.Second {
			t.Fatalf("took %s", d)
		}
		if len(got) > MaxTemplateBytes {
			t.Fatalf("%d bytes", len(got))
		}
		if errors.Is(err, ErrTemplateLimit) {
			return
		}
		want, werr := cabpkTemplate("/etc/f", tpl, templateData)
		if (err == nil) != (werr == nil) || got != want {
			t.Fatalf("nodeboot %q, %v; CABPK %q, %v", got, err, want, werr)
		}
	})
}

// BenchmarkTemplate compares CABPK's code path with the bounded renderer on
// an ordinary template and on a loop-heavy one, to price the bounds.
func BenchmarkTemplate(b *testing.B) {
	for _, bc := range []struct{ name, tpl string }{
		{"version", "KUBERNETES_VERSION={{ .controlPlane.version }}\n{{ if .controlPlane }}set{{ end }}\n"},
		{"loops", "{{ range 100 }}{{ range 100 }}{{ printf \"%d\" . }}{{ end }}\n{{ end }}"},
	} {
		b.Run(bc.name+"/cabpk", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := cabpkTemplate("/etc/f", bc.tpl, templateData); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bc.name+"/nodeboot", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := renderTemplate(newTemplateBudget(context.Background()), "/etc/f", bc.tpl, templateData); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
