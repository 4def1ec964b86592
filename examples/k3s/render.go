package main

import (
	"fmt"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/cloudinit"
	"github.com/nodeboot/nodeboot/provisioning/ignition"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/v3" // native Ignition v3 only: no CABPK dialect
	"github.com/nodeboot/nodeboot/provisioning/script"
)

// Output is one rendering: the file it is written to and how it was made.
type Output struct {
	// Suffix names the file: <node>.<Suffix>.
	Suffix  string
	Format  string
	Options provisioning.Options
}

// Outputs are the formats every node is rendered in: cloud-config in the
// plain dialect (CABPK's dialect is for KubeadmConfigs), Ignition 3.4 as
// Flatcar reads it, and a shell script.
var Outputs = []Output{
	{"cloud-config", cloudinit.Format, provisioning.Options{Version: cloudinit.VersionPlain}},
	{"ign", ignition.Format, provisioning.Options{Version: "3.4.0"}},
	{"sh", script.Format, provisioning.Options{}},
}

// Render renders plan in every format, keyed by file suffix. Any problem
// is an error naming the format and the field.
func Render(plan *provisioning.Plan) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, o := range Outputs {
		p, err := provisioning.Get(o.Format)
		if err != nil {
			return nil, err
		}
		r, err := p.Render(plan, o.Options)
		if err != nil {
			return nil, fmt.Errorf("render %s: %w", o.Suffix, err)
		}
		if len(r.Warnings) > 0 {
			return nil, fmt.Errorf("render %s: %w", o.Suffix, r.Warnings)
		}
		out[o.Suffix] = r.Data
	}
	return out, nil
}
