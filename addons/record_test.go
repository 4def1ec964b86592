package addons

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseRecord(t *testing.T) {
	got := ParseRecord(map[string]string{
		"cni.version":      "v0.26.7",
		"cni.sha256":       "ab",
		"cni.result":       "applied",
		"cni.objects":      "namespace/kube-flannel\ndaemonset.apps/kube-flannel-ds\n",
		"dns.result":       "failed: sha256 mismatch: got cd",
		"dns.sha256":       "ef",
		"stray":            "ignored",
		"cni.unknown":      "ignored",
		"my.dotted.sha256": "01",
	})
	require.Equal(t, map[string]Record{
		"cni":       {Version: "v0.26.7", SHA256: "ab", Result: "applied", Objects: []string{"daemonset.apps/kube-flannel-ds", "namespace/kube-flannel"}},
		"dns":       {SHA256: "ef", Result: "failed: sha256 mismatch: got cd"},
		"my.dotted": {SHA256: "01"},
	}, got)
	require.True(t, got["cni"].Applied())
	require.False(t, got["dns"].Applied())
}
