package bootstrap

import (
	"context"
	"errors"
	"fmt"

	"github.com/blang/semver/v4"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"

	"github.com/nodeboot/nodeboot/provisioning"
)

// resolveFiles turns spec.files into Plan files: contentFrom read from its
// Secret, contentFormat: Template rendered with the control-plane version.
func (b *builder) resolveFiles(ctx context.Context) ([]provisioning.File, error) {
	spec := &b.in.Config.Spec
	data := map[string]any{}
	if v := b.in.ControlPlaneVersion; v != "" {
		parsed, err := semver.ParseTolerant(v)
		if err != nil {
			b.ps.errorf(ObjectRef{Kind: "Cluster", Namespace: b.in.Cluster.Namespace, Name: b.in.Cluster.Name}, provisioning.NewPath("spec", "controlPlaneRef"), "the control plane's spec.version: invalid version %q: %v", v, err)
			return nil, nil
		}
		data["controlPlane"] = map[string]any{"version": "v" + parsed.String()}
	}
	out := make([]provisioning.File, 0, len(spec.Files))
	var budget *templateBudget
	for i := range spec.Files {
		f := spec.Files[i]
		origin := provisioning.NewPath("spec", "files").Index(i).WithFields()
		// The template's text is where the user wrote it: in a Secret for
		// contentFrom, which the message names but never quotes.
		source := origin.Field("content")
		if f.ContentFrom.IsDefined() {
			s := f.ContentFrom.Secret
			content, err := b.secretKey(ctx, s.Name, s.Key, origin.Field("contentFrom").Field("secret"))
			if err != nil {
				return nil, err
			}
			f.Content = content
			source = origin.Field("contentFrom").Field("secret")
		}
		if f.ContentFormat == bootstrapv1.FileContentFormatTemplate {
			if budget == nil {
				budget = newTemplateBudget(ctx)
			}
			rendered, err := renderTemplate(budget, f.Path, f.Content, data)
			if ctx.Err() != nil {
				return nil, fmt.Errorf("render %s of %s: %w", source, b.in.configRef(), ctx.Err())
			}
			if err != nil {
				b.ps.errorf(b.in.configRef(), source, "%v", err)
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
		origin := provisioning.NewPath("spec", "users").Index(i).WithFields()
		passwd := u.Passwd
		if u.PasswdFrom.IsDefined() {
			s := u.PasswdFrom.Secret
			v, err := b.secretKey(ctx, s.Name, s.Key, origin.Field("passwdFrom").Field("secret"))
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
func (b *builder) secretKey(ctx context.Context, name, key string, path provisioning.Path) (string, error) {
	ns := b.in.Config.Namespace
	data, err := b.in.Secrets.SecretData(ctx, ns, name)
	if errors.Is(err, ErrSecretNotFound) {
		b.ps.missingSecret(b.in.configRef(), path.Field("name"), ns+"/"+name, "Secret %s/%s not found", ns, name)
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("get Secret %s/%s for %s: %w", ns, name, path, err)
	}
	v, ok := data[key]
	if !ok {
		b.ps.errorf(b.in.configRef(), path.Field("key"), "Secret %s/%s has no key %q", ns, name, key)
		return "", nil
	}
	return string(v), nil
}
