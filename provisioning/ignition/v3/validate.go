package ignitionv3

import (
	"github.com/coreos/ignition/v2/config/shared/errors"
	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/coreos/vcontext/path"
	"github.com/coreos/vcontext/report"

	"github.com/nodeboot/nodeboot/provisioning/ignition/internal/units"
)

// validateGenerated runs Ignition's own checks on the config v3Builder
// built, without serialising it and parsing it back. Ignition's validator
// walks every field of every struct by reflection and calls each node's
// Validate method, then looks for duplicate keys in every list; that walk,
// and the JSON round trip before it, were most of the render's time. The
// builder only ever fills the nodes below, so calling their Validate methods
// and checking their lists for duplicates is the same verdict:
// TestGeneratedPassesIgnition proves it against Ignition's parser over a
// generated corpus, and test/ignition runs upstream ignition-validate on
// every vector in every version. Left out on purpose: decoding the data:
// URLs, which textURL and base64 encoding build so that they always decode
// (FuzzDataURL), Systemd.Validate (see below), and the parts of the config
// the builder never sets, zero values Ignition accepts.
func validateGenerated(cfg *types.Config) report.Report {
	// Context paths only name findings, and building them is most of the
	// cost of a clean config: a clean pass goes without them, and a config
	// with findings is checked again with them.
	if r := validateWith(cfg, ctx{}); len(r.Entries) == 0 {
		return r
	}
	return validateWith(cfg, ctx{paths: true})
}

// ctx builds context paths when paths is set, and empty ones otherwise.
type ctx struct{ paths bool }

func (x ctx) at(c path.ContextPath, elems ...any) path.ContextPath {
	if !x.paths {
		return c
	}
	return c.Append(elems...)
}

func validateWith(cfg *types.Config, x ctx) report.Report {
	var r report.Report
	c := path.New("json")
	// The newest types carry every dialect's version (see checkV3); their
	// own check accepts only theirs, and the version is one of dialects.
	ign := cfg.Ignition
	ign.Version = types.MaxVersion.String()
	r.Merge(ign.Validate(x.at(c, "ignition")))
	r.Merge(cfg.Validate(c))

	sc := x.at(c, "storage")
	s := &cfg.Storage
	r.Merge(s.Validate(sc))
	nodes := make(map[string]struct{}, len(s.Files))
	for i := range s.Files {
		f := &s.Files[i]
		fc := x.at(sc, "files", i)
		r.Merge(f.Validate(fc))
		r.Merge(f.User.Validate(x.at(fc, "user")))
		r.Merge(f.Group.Validate(x.at(fc, "group")))
		validateResource(&r, x, &f.Contents, x.at(fc, "contents"))
		for j := range f.Append {
			validateResource(&r, x, &f.Append[j], x.at(fc, "append", j))
		}
		dup(&r, nodes, f.Path, fc)
	}
	disks := make(map[string]struct{}, len(s.Disks))
	for i := range s.Disks {
		d := &s.Disks[i]
		dc := x.at(sc, "disks", i)
		r.Merge(d.Validate(dc))
		parts := make(map[string]struct{}, len(d.Partitions))
		for j := range d.Partitions {
			p := &d.Partitions[j]
			pc := x.at(dc, "partitions", j)
			r.Merge(p.Validate(pc))
			dup(&r, parts, p.Key(), pc)
		}
		dup(&r, disks, d.Device, dc)
	}
	filesystems := make(map[string]struct{}, len(s.Filesystems))
	for i := range s.Filesystems {
		f := &s.Filesystems[i]
		fc := x.at(sc, "filesystems", i)
		r.Merge(f.Validate(fc))
		dup(&r, filesystems, f.Device, fc)
	}

	pc := x.at(c, "passwd")
	users := make(map[string]struct{}, len(cfg.Passwd.Users))
	for i := range cfg.Passwd.Users {
		u := &cfg.Passwd.Users[i]
		uc := x.at(pc, "users", i)
		dup(&r, users, u.Name, uc)
		groups := make(map[string]struct{}, len(u.Groups))
		for j, g := range u.Groups {
			dup(&r, groups, string(g), x.at(uc, "groups", j))
		}
		keys := make(map[string]struct{}, len(u.SSHAuthorizedKeys))
		for j, k := range u.SSHAuthorizedKeys {
			dup(&r, keys, string(k), x.at(uc, "sshAuthorizedKeys", j))
		}
	}
	groups := make(map[string]struct{}, len(cfg.Passwd.Groups))
	for i := range cfg.Passwd.Groups {
		dup(&r, groups, cfg.Passwd.Groups[i].Name, x.at(pc, "groups", i))
	}

	yc := x.at(c, "systemd")
	// Systemd.Validate is left out: it only warns (an enabled instance of a
	// template unit without an Install section), compiling a regular
	// expression each time, and the builder writes no template units.
	names := make(map[string]struct{}, len(cfg.Systemd.Units))
	for i := range cfg.Systemd.Units {
		u := &cfg.Systemd.Units[i]
		uc := x.at(yc, "units", i)
		key := units.Key{Name: u.Name, Enabled: u.Enabled != nil && *u.Enabled}
		if u.Contents != nil {
			key.Contents = "\x00" + *u.Contents // nil and "" differ to Ignition
		}
		if !cleanUnits.Has(key) {
			rep := u.Validate(uc)
			if len(rep.Entries) == 0 {
				cleanUnits.Add(key)
			}
			r.Merge(rep)
		}
		for j := range u.Dropins {
			r.Merge(u.Dropins[j].Validate(x.at(uc, "dropins", j)))
		}
		dup(&r, names, u.Name, uc)
	}
	return r
}

// validateResource runs Resource.Validate except for the source, which the
// builder encodes itself (see validateGenerated).
func validateResource(r *report.Report, x ctx, res *types.Resource, c path.ContextPath) {
	checked := *res
	checked.Source = nil
	checked.Verification = types.Verification{}
	if res.Verification.Hash != nil && res.Source == nil {
		r.AddOnError(x.at(c, "verification", "hash"), errors.ErrVerificationAndNilSource)
	}
	r.Merge(checked.Validate(c))
}

// dup is Ignition's ValidateDups for one list: a key seen before is an error.
func dup(r *report.Report, seen map[string]struct{}, key string, c path.ContextPath) {
	if _, ok := seen[key]; ok {
		r.AddOnError(c, errors.ErrDuplicate)
		return
	}
	seen[key] = struct{}{}
}

// cleanUnits remembers the units Ignition v3's validator passed without a
// finding.
var cleanUnits units.CleanSet
