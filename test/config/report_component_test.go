// Package config tests the deployment manifests under config/ as kustomize
// builds them.
package config

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestReportComponent builds config/default with the bootstrap report
// component, as docs/bootstrap-report.md tells operators to, and checks that
// the manager keeps its own arguments, gains the report flags, port and
// certificate, and that the Service and Certificate point at them.
func TestReportComponent(t *testing.T) {
	kubectl := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		t.Fatalf("kubectl from KUBEBUILDER_ASSETS (see .ci/run): %v", err)
	}
	dir := t.TempDir()
	if out, err := exec.Command("cp", "-r", "../../config", dir).CombinedOutput(); err != nil {
		t.Fatalf("copy config: %v: %s", err, out)
	}
	k := filepath.Join(dir, "config", "default", "kustomization.yaml")
	b, err := os.ReadFile(k)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(k, append(b, "components:\n- ../report\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(kubectl, "kustomize", filepath.Join(dir, "config", "default")).Output()
	if err != nil {
		t.Fatalf("kubectl kustomize: %v", err)
	}

	var deploy, service, cert map[string]any
	dec := yaml.NewDecoder(bytes.NewReader(out))
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			break
		}
		name := get(doc, "metadata", "name")
		switch get(doc, "kind") {
		case "Deployment":
			deploy = doc
		case "Service":
			if name == "capi-kubeadm-bootstrap-report" {
				service = doc
			}
		case "Certificate":
			if name == "capi-kubeadm-bootstrap-report-cert" {
				cert = doc
			}
		}
	}
	if deploy == nil || service == nil || cert == nil {
		t.Fatalf("want the Deployment, the report Service and its Certificate; got %v %v %v", deploy != nil, service != nil, cert != nil)
	}
	c := list(deploy, "spec", "template", "spec", "containers")[0].(map[string]any)
	var args []string
	for _, a := range list(c, "args") {
		args = append(args, a.(string))
	}
	for _, want := range []string{"--leader-elect", "--bootstrap-report-url=https://REPORT_HOST", "--bootstrap-report-bind-address=:9445", "--bootstrap-report-cert-dir=/tmp/bootstrap-report/serving-certs"} {
		if !slices.Contains(args, want) {
			t.Errorf("manager args %q lack %q", args, want)
		}
	}
	if !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--feature-gates=") }) {
		t.Errorf("the component replaced the manager's own args: %q", args)
	}
	port := ""
	for _, p := range list(c, "ports") {
		if get(p.(map[string]any), "containerPort") == 9445 {
			port = get(p.(map[string]any), "name").(string)
		}
	}
	if port == "" || get(list(service, "spec", "ports")[0].(map[string]any), "targetPort") != port {
		t.Errorf("the Service's targetPort does not name the manager's report port %q", port)
	}
	if sel := get(service, "spec", "selector", "control-plane"); sel != "controller-manager" {
		t.Errorf("the Service selects control-plane=%v", sel)
	}
	secret := get(cert, "spec", "secretName")
	mounted := false
	for _, v := range list(deploy, "spec", "template", "spec", "volumes") {
		vm := v.(map[string]any)
		if get(vm, "secret", "secretName") == secret {
			for _, m := range list(c, "volumeMounts") {
				mm := m.(map[string]any)
				mounted = mounted || get(mm, "name") == get(vm, "name") && get(mm, "mountPath") == "/tmp/bootstrap-report/serving-certs"
			}
		}
	}
	if !mounted {
		t.Errorf("the report certificate's Secret %v is not mounted at the report cert dir", secret)
	}
	if get(cert, "spec", "privateKey", "algorithm") != "ECDSA" {
		t.Errorf("the report certificate is not ECDSA (its CA goes into every node's data)")
	}
}

func get(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[p]
	}
	return v
}

func list(m map[string]any, path ...string) []any {
	l, _ := get(m, path...).([]any)
	return l
}
