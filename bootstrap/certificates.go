package bootstrap

import (
	"context"
	"errors"
	"fmt"

	"sigs.k8s.io/cluster-api/util/certs"
	"sigs.k8s.io/cluster-api/util/secret"

	"github.com/nodeboot/nodeboot/provisioning"
)

// lookupCertificates fills the builder's certificates from their Secrets
// (<cluster>-ca, -etcd, -proxy, -sa, -apiserver-etcd-client) the way CAPI's
// util/secret does, through the SecretGetter instead of a client.
func (b *builder) lookupCertificates(ctx context.Context, generate bool) error {
	ns, cluster := b.in.Cluster.Namespace, b.in.Cluster.Name
	for _, c := range b.certs {
		name := secret.Name(cluster, c.Purpose)
		data, err := b.in.Secrets.SecretData(ctx, ns, name)
		if errors.Is(err, ErrSecretNotFound) {
			if c.External {
				b.ps.missingSecret(secretRef(ns, name), provisioning.NewPath("data"), ns+"/"+name, "external etcd certificate Secret not found")
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("get certificate Secret %s/%s: %w", ns, name, err)
		}
		crt, ok := data[secret.TLSCrtDataName]
		if !ok {
			b.ps.errorf(secretRef(ns, name), provisioning.NewPath("data").Key(secret.TLSCrtDataName), "missing")
			continue
		}
		c.KeyPair = &certs.KeyPair{Cert: crt, Key: data[secret.TLSKeyDataName]}
	}
	if generate {
		if err := b.certs.Generate(); err != nil {
			return fmt.Errorf("generate cluster certificates: %w", err)
		}
	}
	return nil
}

// ensureCertificates is CAPI's EnsureAllExist, reported per Secret.
func (b *builder) ensureCertificates() {
	ns, cluster := b.in.Cluster.Namespace, b.in.Cluster.Name
	for _, c := range b.certs {
		ref := ns + "/" + secret.Name(cluster, c.Purpose)
		obj := secretRef(ns, secret.Name(cluster, c.Purpose))
		switch {
		case c.KeyPair == nil:
			b.ps.missingSecret(obj, provisioning.NewPath("data"), ref, "certificate Secret not found; a joining node needs it")
		case len(c.KeyPair.Cert) == 0:
			b.ps.errorf(obj, provisioning.NewPath("data").Key(secret.TLSCrtDataName), "empty")
		case !c.External && len(c.KeyPair.Key) == 0:
			b.ps.errorf(obj, provisioning.NewPath("data").Key(secret.TLSKeyDataName), "missing")
		}
	}
}

// secretRef names the Secret namespace/name as an input object.
func secretRef(namespace, name string) ObjectRef {
	return ObjectRef{Kind: "Secret", Namespace: namespace, Name: name}
}
