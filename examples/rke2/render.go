package main

import (
	"errors"

	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/cloudinit"
	"github.com/nodeboot/nodeboot/provisioning/ignition"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/v3" // native Ignition v3 only: no CABPK dialect
	"github.com/nodeboot/nodeboot/provisioning/script"
)

// Output is one format a node is rendered in.
type Output struct {
	// Suffix names the file: <node>.<Suffix>.
	Suffix  string
	Format  string
	Options provisioning.Options
}

// Outputs are the formats every node is rendered in: cloud-config in the
// plain dialect (the zero Options), Ignition 3.4 and a shell script.
var Outputs = []Output{
	{"cloud-config", cloudinit.Format, provisioning.Options{}},
	{"ign", ignition.Format, provisioning.Options{Version: "3.4.0"}},
	{"sh", script.Format, provisioning.Options{}},
}

// Rendering is a node in one format, or why the format cannot carry it.
type Rendering struct {
	Output
	Data []byte
	// Unsupported are the fields the format cannot express; the node is
	// then not rendered in it.
	Unsupported []provisioning.Path
}

// Render renders plan in every format. A format that cannot express an
// element the Plan uses is a Rendering with Unsupported set; any other
// problem, warnings included, is an error naming the format and the field.
func Render(plan *provisioning.Plan) ([]Rendering, error) {
	var out []Rendering
	for _, o := range Outputs {
		p, err := provisioning.Get(o.Format)
		if err != nil {
			return nil, err
		}
		r, err := p.Render(plan, o.Options)
		if errors.Is(err, provisioning.ErrUnsupported) && !errors.Is(err, provisioning.ErrInvalid) {
			var ps provisioning.Problems
			if errors.As(err, &ps) {
				out = append(out, Rendering{Output: o, Unsupported: paths(ps)})
				continue
			}
		}
		if err != nil {
			return nil, errors.New("render " + o.Suffix + ": " + err.Error())
		}
		if len(r.Warnings) > 0 {
			return nil, errors.New("render " + o.Suffix + ": " + r.Warnings.Error())
		}
		out = append(out, Rendering{Output: o, Data: r.Data})
	}
	return out, nil
}

func paths(ps provisioning.Problems) []provisioning.Path {
	var out []provisioning.Path
	for _, p := range ps.Errors() {
		if errors.Is(p.Err, provisioning.ErrUnsupported) {
			out = append(out, p.Path)
		}
	}
	return out
}
