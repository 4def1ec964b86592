package butane

import (
	"github.com/coreos/butane/config/common"
	fcos1_0 "github.com/coreos/butane/config/fcos/v1_0"
	fcos1_1 "github.com/coreos/butane/config/fcos/v1_1"
	fcos1_2 "github.com/coreos/butane/config/fcos/v1_2"
	fcos1_3 "github.com/coreos/butane/config/fcos/v1_3"
	fcos1_4 "github.com/coreos/butane/config/fcos/v1_4"
	fcos1_5 "github.com/coreos/butane/config/fcos/v1_5"
	fcos1_6 "github.com/coreos/butane/config/fcos/v1_6"
	flatcar1_0 "github.com/coreos/butane/config/flatcar/v1_0"
	flatcar1_1 "github.com/coreos/butane/config/flatcar/v1_1"
	"github.com/coreos/go-semver/semver"
	"github.com/coreos/vcontext/report"
	yaml "gopkg.in/yaml.v3"

	"github.com/nodeboot/nodeboot/provisioning/ignition"
)

func init() { ignition.RegisterButane(Translate) }

var _ ignition.ButaneTranslator = Translate

// translator is the signature of a Butane spec version's ToIgn3_xBytes
// entry point.
type translator func([]byte, common.TranslateBytesOptions) ([]byte, report.Report, error)

// translators lists, per variant package ignition accepts (flatcar and
// fcos) and stable spec version, the translator Butane's own registry
// (github.com/coreos/butane/config) holds for it. That registry imports
// every variant Butane knows (OpenShift, r4e, fiot and all experimental
// versions) and so links them into every program that imports it; naming the
// entry points here links only the ones nodeboot accepts. Experimental
// versions are refused by ignition before translation, so none is listed.
// TestTranslatorsMatchButane holds this table to Butane's registry.
var translators = map[string]map[string]translator{
	"fcos": {
		"1.0.0": fcos1_0.ToIgn3_0Bytes,
		"1.1.0": fcos1_1.ToIgn3_1Bytes,
		"1.2.0": fcos1_2.ToIgn3_2Bytes,
		"1.3.0": fcos1_3.ToIgn3_2Bytes,
		"1.4.0": fcos1_4.ToIgn3_3Bytes,
		"1.5.0": fcos1_5.ToIgn3_4Bytes,
		"1.6.0": fcos1_6.ToIgn3_5Bytes,
	},
	"flatcar": {
		"1.0.0": flatcar1_0.ToIgn3_3Bytes,
		"1.1.0": flatcar1_1.ToIgn3_4Bytes,
	},
}

// Translate is the ignition.ButaneTranslator this package registers. It
// does what Butane's config.TranslateBytes does, with the same errors and in
// the same order, over the flatcar and fcos stable versions only: read the
// variant and version, parse the version as semver and look its canonical
// form up (so "01.1.0" names 1.1.0, as in Butane), then translate. Any other
// variant or version is common.ErrUnknownVersion.
func Translate(input []byte) ([]byte, report.Report, error) {
	var head struct {
		Version string `yaml:"version"`
		Variant string `yaml:"variant"`
	}
	if err := yaml.Unmarshal(input, &head); err != nil {
		return nil, report.Report{}, common.ErrUnmarshal{Detail: err.Error()}
	}
	if head.Variant == "" {
		return nil, report.Report{}, common.ErrNoVariant
	}
	v, err := semver.NewVersion(head.Version)
	if err != nil {
		return nil, report.Report{}, common.ErrInvalidVersion
	}
	translate, ok := translators[head.Variant][v.String()]
	if !ok {
		return nil, report.Report{}, common.ErrUnknownVersion{Variant: head.Variant, Version: *v}
	}
	return translate(input, common.TranslateBytesOptions{})
}
