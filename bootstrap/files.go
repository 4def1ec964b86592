package bootstrap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"text/template"

	"github.com/blang/semver/v4"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"

	"github.com/nodeboot/nodeboot/provisioning"
)

// maxTemplateBytes bounds one rendered contentFormat: Template file, as in CABPK.
const maxTemplateBytes = 1 << 20

// resolveFiles turns spec.files into Plan files: contentFrom read from its
// Secret, contentFormat: Template rendered with the control-plane version.
func (b *builder) resolveFiles(ctx context.Context) ([]provisioning.File, error) {
	spec := &b.in.Config.Spec
	data := map[string]any{}
	if v := b.in.ControlPlaneVersion; v != "" {
		parsed, err := semver.ParseTolerant(v)
		if err != nil {
			b.ps.errorf("control plane of Cluster "+b.in.Cluster.Namespace+"/"+b.in.Cluster.Name, "spec.version", "invalid version %q: %v", v, err)
			return nil, nil
		}
		data["controlPlane"] = map[string]any{"version": "v" + parsed.String()}
	}
	out := make([]provisioning.File, 0, len(spec.Files))
	for i := range spec.Files {
		f := spec.Files[i]
		origin := fmt.Sprintf("spec.files[%d]", i)
		if f.ContentFrom.IsDefined() {
			s := f.ContentFrom.Secret
			content, err := b.secretKey(ctx, s.Name, s.Key, origin+".contentFrom.secret")
			if err != nil {
				return nil, err
			}
			f.Content = content
		}
		if f.ContentFormat == bootstrapv1.FileContentFormatTemplate {
			rendered, err := renderTemplate(f.Path, f.Content, data)
			if err != nil {
				b.ps.errorf(b.in.configRef(), origin+".content", "%v", err)
				continue
			}
			f.Content = rendered
		}
		out = append(out, planFile(f, origin))
	}
	return out, nil
}

func (b *builder) resolveUsers(ctx context.Context) ([]provisioning.User, error) {
	spec := &b.in.Config.Spec
	var out []provisioning.User
	for i, u := range spec.Users {
		origin := fmt.Sprintf("spec.users[%d]", i)
		passwd := u.Passwd
		if u.PasswdFrom.IsDefined() {
			s := u.PasswdFrom.Secret
			v, err := b.secretKey(ctx, s.Name, s.Key, origin+".passwdFrom.secret")
			if err != nil {
				return nil, err
			}
			passwd = v
		}
		out = append(out, provisioning.User{
			Name: u.Name, Gecos: u.Gecos, Groups: u.Groups, HomeDir: u.HomeDir, Inactive: u.Inactive,
			Shell: u.Shell, Passwd: passwd, PrimaryGroup: u.PrimaryGroup, LockPassword: u.LockPassword,
			Sudo: u.Sudo, SSHAuthorizedKeys: u.SSHAuthorizedKeys, Origin: origin,
		})
	}
	return out, nil
}

// secretKey reads one key of a Secret in the config's namespace. A missing
// Secret or key is a problem at path; other failures are returned.
func (b *builder) secretKey(ctx context.Context, name, key, path string) (string, error) {
	ns := b.in.Config.Namespace
	data, err := b.in.Secrets.SecretData(ctx, ns, name)
	if errors.Is(err, ErrSecretNotFound) {
		b.ps.missingSecret(b.in.configRef(), path+".name", ns+"/"+name, "Secret %s/%s not found", ns, name)
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("get Secret %s/%s for %s: %w", ns, name, path, err)
	}
	v, ok := data[key]
	if !ok {
		b.ps.errorf(b.in.configRef(), path+".key", "Secret %s/%s has no key %q", ns, name, key)
		return "", nil
	}
	return string(v), nil
}

func renderTemplate(name, content string, data map[string]any) (string, error) {
	t, err := template.New(name).Parse(content)
	if err != nil {
		return "", fmt.Errorf("invalid template: %w", err)
	}
	var buf bytes.Buffer
	if err := t.Execute(&limitedWriter{w: &buf, remaining: maxTemplateBytes}, data); err != nil {
		return "", fmt.Errorf("template failed: %w", err)
	}
	return buf.String(), nil
}

type limitedWriter struct {
	w         io.Writer
	remaining int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if len(p) > l.remaining {
		return 0, fmt.Errorf("rendered output exceeds the %d byte limit", maxTemplateBytes)
	}
	l.remaining -= len(p)
	return l.w.Write(p)
}
