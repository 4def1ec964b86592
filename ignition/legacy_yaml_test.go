package ignition

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	yaml "gopkg.in/yaml.v3"
)

// The readings are checked against yaml.v3 itself (the parser the
// transpiler uses) on the exact layout CABPK's template produces.

func TestPlainScalarMatchesYAML(t *testing.T) {
	for _, v := range []string{"plain", "", "~", "null", "true", "0644", "a #b", "'q'", "\"d\"", "a: b", "&x y", "!!str z",
		"- x", "@x", "[a]", "ssh-rsa AAAA key # note", "é ✓", "x\ty", " lead", "trail ", "-E", "a:b", "Null"} {
		t.Run(v, func(t *testing.T) {
			var doc struct {
				K *string `yaml:"k"`
			}
			err := yaml.Unmarshal([]byte("k: "+v+"\n"), &doc)
			got, null, ok := plainScalar(v)
			require.Equal(t, err == nil, ok, "parse error %v", err)
			if err != nil {
				return
			}
			require.Equal(t, doc.K == nil, null)
			if doc.K != nil {
				require.Equal(t, *doc.K, got)
			}
		})
	}
}

func TestLiteralBlockMatchesYAML(t *testing.T) {
	for _, c := range []string{"", "a", "a\n", "a\n\n\n", "  x\n  y\n", "  x\ny\n", "x\n  y\n", "\tx\n", "x\n\ty\n",
		"\n\nx\n", "  \n x\n", "   \n  x\n", "x\r\ny\r\n", "x\n   \n", "é\n", "a\x01b", "# c\nk: v\n", "x\n  \n", "\n"} {
		t.Run(strings.ReplaceAll(c, "\n", `\n`), func(t *testing.T) {
			var doc struct {
				K string `yaml:"k"`
				N string `yaml:"n"`
			}
			indent := strings.Repeat(" ", literalIndent)
			src := "k: |\n" + indent + strings.ReplaceAll(c, "\n", "\n"+indent) + "\nn: next\n"
			err := yaml.Unmarshal([]byte(src), &doc)
			got, _, ok := literalBlock(c)
			require.Equal(t, err == nil && doc.N == "next", ok, "yaml: %v %q", err, doc)
			if ok {
				require.Equal(t, doc.K, got)
			}
		})
	}
}

func TestYAMLMode(t *testing.T) {
	for _, c := range []struct {
		perm    string
		mode    int
		asMeant bool
	}{{"0644", 0o644, true}, {"0600", 0o600, true}, {"644", 644, false}, {"0755", 0o755, true}, {"000", 0, true}} {
		var doc struct {
			M int `yaml:"m"`
		}
		require.NoError(t, yaml.Unmarshal([]byte("m: "+c.perm), &doc))
		mode, asMeant := yamlMode(c.perm)
		require.Equal(t, doc.M, mode, c.perm)
		require.Equal(t, c.mode, mode, c.perm)
		require.Equal(t, c.asMeant, asMeant, c.perm)
	}
}
