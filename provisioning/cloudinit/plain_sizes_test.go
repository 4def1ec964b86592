package cloudinit

import (
	"bytes"
	"testing"

	yaml "gopkg.in/yaml.v3"

	"github.com/nodeboot/nodeboot/provisioning"
)

// TestPlainSizesAreTheParts: the sizes read off the document are what
// each part takes when encoded alone with the document's indentation.
func TestPlainSizesAreTheParts(t *testing.T) {
	enabled := true
	p := withUnits(&provisioning.Plan{
		Files:        []provisioning.File{{Path: "/etc/a", Content: "write_files: x\nruncmd:\n"}, {Path: "/etc/b", Content: "b"}},
		Units:        []provisioning.Unit{{Name: "a.service", Enabled: &enabled, Contents: "[Service]\nExecStart=/bin/true\n"}},
		BootCommands: []string{"echo boot"},
		Commands:     []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: "echo run"}},
		Users:        []provisioning.User{{Name: "ops", Sudo: "ALL=(ALL) ALL"}},
	})
	d := plainDocument(p)
	data, sizes, err := marshalPlain(d)
	if err != nil {
		t.Fatal(err)
	}
	alone := func(part *plainDoc) int {
		var b bytes.Buffer
		enc := yaml.NewEncoder(&b)
		enc.SetIndent(2)
		if err := enc.Encode(part); err != nil {
			t.Fatal(err)
		}
		_ = enc.Close()
		return b.Len()
	}
	want := map[string]int{
		provisioning.SizeTotal:      len(data),
		provisioning.SizeWriteFiles: alone(&plainDoc{WriteFiles: d.WriteFiles}),
		provisioning.SizeCommands:   alone(&plainDoc{RunCmd: d.RunCmd}) + alone(&plainDoc{BootCmd: d.BootCmd}),
	}
	for k, v := range want {
		if sizes[k] != v {
			t.Errorf("sizes[%s] = %d, want %d", k, sizes[k], v)
		}
	}
}
