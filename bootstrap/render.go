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
			Object:  r.configRef(),
			Problem: provisioning.Problem{Path: provisioning.NewPath("spec", "format"), Message: err.Error(), Err: err},
		}}}
	}
	out, err := p.Render(r.Plan, r.Options)
	var ps provisioning.Problems
	if errors.As(err, &ps) {
		var obj problems
		obj.add(r.configRef(), ps)
		return nil, obj.err()
	}
	if err != nil {
		return nil, err
	}
	if r.Strict && len(out.Warnings) > 0 {
		var obj problems
		for _, w := range out.Warnings {
			w.Severity = provisioning.SeverityError
			w.Message += " (" + AnnotationStrict + ")"
			obj.add(r.configRef(), provisioning.Problems{w})
		}
		return nil, obj.err()
	}
	return out, nil
}

func (r *Result) configRef() ObjectRef {
	return ObjectRef{Kind: "KubeadmConfig", Namespace: r.Config.Namespace, Name: r.Config.Name}
}
