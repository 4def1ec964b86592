// Package cabpkversion says how the bootstrap data of each CABPK release
// operators run differs from v1.14.2's, which nodeboot renders.
//
// Cluster API supports two minor releases at once, so a management cluster
// swapping to nodeboot may hold data written by CABPK v1.13 or v1.14.0.
// `nodeboot verify` must tell such data (a known upstream difference) from a
// defect, without nodeboot rendering anything but v1.14.2's bytes. Each
// release's difference is therefore data: a list of byte rewrites that turn
// v1.14.2's data into that release's, read off CABPK's own source and held
// to it by a test that links CABPK v1.13.6's reconciler (test/cabpkversions).
//
// What differs, from the sources of v1.13.0 to v1.13.6, v1.14.0, v1.14.1 and
// v1.14.2 (bootstrap/kubeadm internal/ and pkg/ cloudinit, ignition, types,
// the reconciler, the API module and the CRDs):
//   - Ignition 2.3 (format: ignition): the kubeadm.service unit of
//     bootstrap/kubeadm/pkg/ignition/clc/clc.go runs `ExecStart=/etc/kubeadm.sh`
//     up to v1.14.0 and `ExecStart=/bin/bash /etc/kubeadm.sh` from v1.14.1 on,
//     so that the script runs on Flatcar 4628 and later, whose /etc is noexec.
//   - cloud-config: nothing; the templates differ only in how errors are wrapped.
//   - v1.13 has no files[].contentFormat (v1.14's Template files): a v1.13
//     cluster cannot store a config that uses it, so there is no data to compare.
package cabpkversion

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Errors of this package.
var (
	// ErrUnknownVersion: a version name that is no supported CABPK release.
	ErrUnknownVersion = errors.New("not a supported CABPK version")
	// ErrNotDerivable: the data is not shaped as CABPK renders it (a rewrite's
	// bytes are not there exactly once), so this release's data cannot be
	// derived from it.
	ErrNotDerivable = errors.New("data cannot be rewritten for this CABPK version")
)

// Version is a range of CABPK releases whose bootstrap data is the same.
type Version struct {
	// Name is what --cabpk-version takes and verify prints: "v1.13".
	Name string
	// Releases says which releases Name stands for.
	Releases string
	// Rewrites turn v1.14.2's data into this version's, in order.
	Rewrites []Rewrite
}

// Rewrite is one difference between v1.14.2's data and a release's: in data
// of Format (and, for Ignition, of IgnitionSpec), the one occurrence of From
// becomes To.
type Rewrite struct {
	Format string
	// IgnitionSpec limits the rewrite to Ignition configs of this spec
	// version: CABPK's dialect, not nodeboot's opt-in Ignition v3.
	IgnitionSpec string
	From, To     []byte
}

// The kubeadm.service unit of CABPK's Container Linux Config template
// (bootstrap/kubeadm/pkg/ignition/clc/clc.go), %s its ExecStart.
const kubeadmUnit = "[Unit]\nDescription=kubeadm\n# Run only once. After successful run, this file is moved to /tmp/.\n" +
	"ConditionPathExists=/etc/kubeadm.yml\nAfter=network.target\n[Service]\n" +
	"# To not restart the unit when it exits, as it is expected.\nType=oneshot\n" +
	"ExecStart=%s\n[Install]\nWantedBy=multi-user.target\n"

// kubeadmUnitJSON is the unit as it appears in CABPK's Ignition 2.3 JSON.
func kubeadmUnitJSON(execStart string) []byte {
	b, err := json.Marshal(struct {
		Contents string `json:"contents"`
		Enabled  bool   `json:"enabled"`
		Name     string `json:"name"`
	}{fmt.Sprintf(kubeadmUnit, execStart), true, "kubeadm.service"})
	if err != nil {
		panic(err) // a fixed struct of strings always marshals
	}
	return b
}

// execStartWithoutBash is v1.14.0's and v1.13's kubeadm.service: the script
// is executed directly, which a noexec /etc (Flatcar 4628+) refuses.
var execStartWithoutBash = Rewrite{
	Format: "ignition", IgnitionSpec: "2.3.0",
	From: kubeadmUnitJSON("/bin/bash /etc/kubeadm.sh"),
	To:   kubeadmUnitJSON("/etc/kubeadm.sh"),
}

// The supported versions. Current is what nodeboot renders.
var (
	Current = Version{Name: "v1.14", Releases: "v1.14.1 and later"}
	V1_14_0 = Version{Name: "v1.14.0", Releases: "v1.14.0", Rewrites: []Rewrite{execStartWithoutBash}}
	V1_13   = Version{Name: "v1.13", Releases: "v1.13.0 to v1.13.6", Rewrites: []Rewrite{execStartWithoutBash}}
)

// All are the supported versions in the order verify tries them: the
// current one first, then older minors before older patches.
var All = []Version{Current, V1_13, V1_14_0}

// versionName is what Lookup accepts: a minor, or a minor and patch.
var versionName = regexp.MustCompile(`^v?1\.(13|14)(?:\.(0|[1-9][0-9]{0,3}))?$`)

// Lookup returns the version a --cabpk-version value names: "v1.14" (or any
// v1.14.N with N >= 1), "v1.14.0", "v1.13" or v1.13.0 to v1.13.6. Later v1.13
// patches are not known and so not accepted: one could carry v1.14.1's fix.
func Lookup(name string) (Version, error) {
	m := versionName.FindStringSubmatch(name)
	if m == nil {
		return Version{}, fmt.Errorf("%q: %w (want one of %s)", name, ErrUnknownVersion, Names())
	}
	patch := -1
	if m[2] != "" {
		patch, _ = strconv.Atoi(m[2]) // at most four digits
	}
	switch {
	case m[1] == "13" && patch <= 6:
		return V1_13, nil
	case m[1] == "14" && patch == 0:
		return V1_14_0, nil
	case m[1] == "14":
		return Current, nil
	}
	return Version{}, fmt.Errorf("%q: %w: CABPK v1.13 is known up to v1.13.6 (want one of %s)", name, ErrUnknownVersion, Names())
}

// Names lists the names of All, for messages.
func Names() string {
	names := make([]string, len(All))
	for i, v := range All {
		names[i] = v.Name
	}
	return strings.Join(names, ", ")
}

// Render turns data that nodeboot rendered (v1.14.2's bytes) of format into
// what this version of CABPK renders for the same objects. Rewrites of other
// formats are left out; one whose bytes are not there exactly once is
// ErrNotDerivable.
func (v Version) Render(format string, data []byte) ([]byte, error) {
	for _, r := range v.Rewrites {
		if r.Format != format || (r.IgnitionSpec != "" && ignitionSpec(data) != r.IgnitionSpec) {
			continue
		}
		if n := bytes.Count(data, r.From); n != 1 {
			return nil, fmt.Errorf("CABPK %s: %w (%d matches of a rewrite, want 1)", v.Name, ErrNotDerivable, n)
		}
		data = bytes.Replace(data, r.From, r.To, 1)
	}
	return data, nil
}

// ignitionSpec is the spec version of an Ignition config, "" when data is not one.
func ignitionSpec(data []byte) string {
	var c struct {
		Ignition struct {
			Version string `json:"version"`
		} `json:"ignition"`
	}
	if json.Unmarshal(data, &c) != nil {
		return ""
	}
	return c.Ignition.Version
}

// Match returns the versions among whose data for the objects nodeboot
// rendered as rendered is exactly stored, in the order of among.
func Match(stored []byte, storedFormat string, rendered []byte, renderedFormat string, among []Version) []Version {
	if storedFormat != renderedFormat {
		return nil
	}
	var out []Version
	for _, v := range among {
		if d, err := v.Render(renderedFormat, rendered); err == nil && bytes.Equal(d, stored) {
			out = append(out, v)
		}
	}
	return out
}
