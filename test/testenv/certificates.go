package testenv

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"sync"
	"testing"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/cluster-api/util/secret"

	"github.com/nodeboot/nodeboot/bootstrap"
)

// defaultCertificates are the cluster CA, etcd CA, front-proxy CA and
// service-account key pairs as Cluster API generates them by default
// (RSA-2048), made once per test binary: key generation is slow.
var defaultCertificates = sync.OnceValues(func() (map[secret.Purpose][2][]byte, error) {
	out := map[secret.Purpose][2][]byte{}
	for _, c := range secret.NewCertificatesForInitialControlPlane(&bootstrapv1.ClusterConfiguration{}) {
		if err := c.Generate(); err != nil {
			return nil, err
		}
		if c.KeyPair != nil {
			out[c.Purpose] = [2][]byte{c.KeyPair.Cert, c.KeyPair.Key}
		}
	}
	return out, nil
})

// UseDefaultCertificates replaces the input's cluster certificate Secrets
// (<cluster>-ca, -etcd, -proxy, -sa; an external etcd CA is left alone) with
// key pairs made by Cluster API's own generator, RSA-2048 as a management
// cluster creates them, instead of the reference vectors' small EC keys.
// The input's Secrets must be a bootstrap.SecretMap.
func UseDefaultCertificates(t testing.TB, in *bootstrap.Input) {
	t.Helper()
	pairs, err := defaultCertificates()
	if err != nil {
		t.Fatalf("generate cluster certificates: %v", err)
	}
	old, ok := in.Secrets.(bootstrap.SecretMap)
	if !ok {
		t.Fatalf("UseDefaultCertificates needs a bootstrap.SecretMap, got %T", in.Secrets)
	}
	secrets := bootstrap.SecretMap{}
	for k, v := range old {
		secrets[k] = v
	}
	ns, cluster := in.Cluster.Namespace, in.Cluster.Name
	for _, c := range secret.NewCertificatesForInitialControlPlane(&in.Config.Spec.ClusterConfiguration) {
		pair, ok := pairs[c.Purpose]
		if c.External || !ok {
			continue
		}
		secrets[ns+"/"+secret.Name(cluster, c.Purpose)] = map[string][]byte{secret.TLSCrtDataName: pair[0], secret.TLSKeyDataName: pair[1]}
	}
	in.Secrets = secrets
}

// IsRSA2048 reports whether a PEM private key is an RSA-2048 key.
func IsRSA2048(key []byte) bool {
	block, _ := pem.Decode(key)
	if block == nil {
		return false
	}
	var k any
	var err error
	if k, err = x509.ParsePKCS1PrivateKey(block.Bytes); err != nil {
		if k, err = x509.ParsePKCS8PrivateKey(block.Bytes); err != nil {
			return false
		}
	}
	rk, ok := k.(*rsa.PrivateKey)
	return ok && rk.N.BitLen() == 2048
}
