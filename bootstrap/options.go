package bootstrap

import (
	"strings"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"

	"github.com/nodeboot/nodeboot/provisioning"
)

// Opt-in annotations. They are read from the KubeadmConfig first, then from
// the KubeadmConfigTemplate it was cloned from (its own metadata, then its
// spec.template.metadata). Without them the output is exactly CABPK's.
const (
	// AnnotationCloudInitCorrections: "true" renders cloud-config that avoids
	// the hazards of CABPK's layout (see package cloudinit).
	AnnotationCloudInitCorrections = "nodeboot.dev/cloud-init-corrections"
	// AnnotationIgnitionVersion selects native Ignition of this spec version
	// (e.g. "3.4.0") instead of CABPK's Ignition 2.3 for format: ignition.
	AnnotationIgnitionVersion = "nodeboot.dev/ignition-version"
	// AnnotationStrict: "true" turns every render warning into an error
	// naming the field, so no hazard CABPK would render reaches a node;
	// "false" opts out where the manager is strict for all configs.
	AnnotationStrict = "nodeboot.dev/strict"
)

// FormatCloudConfig and FormatIgnition are the values of spec.format and of
// the bootstrap Secret's format key.
const (
	FormatCloudConfig = string(bootstrapv1.CloudConfig)
	FormatIgnition    = string(bootstrapv1.Ignition)
)

func (in *Input) annotation(key string) (string, bool) {
	if v, ok := in.Config.Annotations[key]; ok {
		return v, true
	}
	if t := in.Template; t != nil {
		if v, ok := t.Annotations[key]; ok {
			return v, true
		}
		if v, ok := t.Spec.Template.ObjectMeta.Annotations[key]; ok {
			return v, true
		}
	}
	return "", false
}

// boolAnnotation reads an opt-in annotation that is "true" or "false".
func (in *Input) boolAnnotation(key string, def bool, ps *problems) bool {
	v, ok := in.annotation(key)
	if !ok {
		return def
	}
	switch strings.ToLower(v) {
	case "true":
		return true
	case "false", "":
		return false
	}
	ps.errorf(in.configRef(), annotationPath(key), "must be \"true\" or \"false\"")
	return def
}

// renderOptions derives the format and provisioner options from the spec and
// the opt-in annotations.
func (in *Input) renderOptions(ps *problems) (string, provisioning.Options) {
	spec := &in.Config.Spec
	format := string(spec.Format)
	if format == "" {
		format = FormatCloudConfig
	}
	// The library's zero Options are its plain dialects; a KubeadmConfig
	// gets CABPK's unless an annotation opts out (an empty ignition-version
	// annotation keeps CABPK's, as it always has).
	opts := provisioning.Options{Version: provisioning.VersionCABPK}
	opts.Corrections = in.boolAnnotation(AnnotationCloudInitCorrections, false, ps)
	if format == FormatIgnition {
		if v, ok := in.annotation(AnnotationIgnitionVersion); ok && v != "" {
			opts.Version = v
		}
		opts.Origins.Version = annotationPath(AnnotationIgnitionVersion)
		opts.Origins.AdditionalConfig = provisioning.NewPath("spec", "ignition", "containerLinuxConfig", "additionalConfig")
		clc := spec.Ignition.ContainerLinuxConfig
		opts.AdditionalConfig = []byte(clc.AdditionalConfig)
		// CABPK's strict is about the Container Linux Config alone;
		// nodeboot.dev/strict (Result.Strict) is the one for every warning.
		opts.StrictAdditionalConfig = clc.Strict != nil && *clc.Strict
	}
	return format, opts
}

// annotationPath is the path of annotation key of the KubeadmConfig (or of
// the template it came from, which has the same key).
func annotationPath(key string) provisioning.Path {
	return provisioning.NewPath("metadata", "annotations").Key(key)
}
