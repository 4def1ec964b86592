package bootstrap

import (
	"errors"

	"github.com/nodeboot/nodeboot/provisioning"
)

// Render renders the built Plan with the provisioner registered for its
// format. The provisioner's problems come back in spec terms: errors as an
// *InvalidError on the KubeadmConfig, warnings in Output.Warnings. With
// Strict, warnings are errors too and no output is returned.
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
	if r.Strict && len(out.Warnings) > 0 {
		var obj problems
		for _, w := range out.Warnings {
			w.Severity = provisioning.SeverityError
			w.Message += " (" + AnnotationStrict + ")"
			obj.add("KubeadmConfig "+r.Config.Namespace+"/"+r.Config.Name, provisioning.Problems{w})
		}
		return nil, obj.err()
	}
	return out, nil
}
