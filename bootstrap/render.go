package bootstrap

import (
	"errors"

	"github.com/nodeboot/nodeboot/provisioning"
)

// Render renders the built Plan with the provisioner registered for its
// format. The provisioner's problems come back in spec terms: errors as an
// *InvalidError on the KubeadmConfig, warnings in Output.Warnings.
func (r *Result) Render() (*provisioning.Output, error) {
	p, err := provisioning.Get(r.Format)
	if err != nil {
		return nil, &InvalidError{Problems: []ObjectProblem{{
			Object:  "KubeadmConfig " + r.Config.Namespace + "/" + r.Config.Name,
			Problem: provisioning.Problem{Path: "spec.format", Message: err.Error()},
		}}}
	}
	out, err := p.Render(r.Plan, r.Options)
	var ps provisioning.Problems
	if errors.As(err, &ps) {
		var obj problems
		obj.add("KubeadmConfig "+r.Config.Namespace+"/"+r.Config.Name, specPaths(ps))
		return nil, obj.err()
	}
	if err != nil {
		return nil, err
	}
	out.Warnings = specPaths(out.Warnings)
	return out, nil
}
