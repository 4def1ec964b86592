package provisioning

import (
	"strconv"
	"strings"
)

// Unit is a systemd unit to install on the node. Renderers with native unit
// support (Ignition) carry it as a unit; others write it under
// /etc/systemd/system and reload systemd, so a Plan says "this is a unit"
// once instead of every provider hand-writing unit files and systemctl calls.
type Unit struct {
	// Name is the unit's file name with its type suffix, such as
	// "k3s.service"; it must not contain '/'.
	Name string
	// Contents is the unit file. Empty is allowed only when DropIns is not:
	// the unit then already exists on the image and is only amended.
	Contents string
	// Enabled true enables (and, where the provisioner runs after boot has
	// begun, starts) the unit; false disables it; nil leaves it as the image
	// has it.
	Enabled *bool
	// DropIns are written to <Name>.d/<DropIn.Name>, in this order.
	DropIns []DropIn
	// Origin is the input field path, as for File.
	Origin Path
}

// DropIn is a systemd drop-in file that amends a Unit.
type DropIn struct {
	// Name is the drop-in's file name; it ends in ".conf".
	Name string
	// Contents is the drop-in file.
	Contents string
}

// UnitDir is where provisioners without native unit support write unit
// files and their drop-in directories: the administrator's unit directory,
// which overrides the units an image ships.
const UnitDir = "/etc/systemd/system/"

// UnitFile is the file a unit's Contents is written to by provisioners
// that write units as files.
func UnitFile(name string) string { return UnitDir + name }

// DropInFile is the file a drop-in of unit is written to by provisioners
// that write units as files.
func DropInFile(unit, dropIn string) string { return UnitDir + unit + ".d/" + dropIn }

// UnitPath is the path of Units[i] for problems: its Origin, or units[i].
func (p *Plan) UnitPath(i int) Path {
	return elementPath(p.Units[i].Origin, "units", i)
}

// unitTypes are systemd's unit type suffixes (systemd.unit(5)).
var unitTypes = []string{".service", ".socket", ".device", ".mount", ".automount", ".swap", ".target", ".path", ".timer", ".slice", ".scope"}

// maxUnitName is systemd's UNIT_NAME_MAX less the terminating NUL.
const maxUnitName = 255

// validateUnits adds the problems of p.Units: names systemd accepts,
// each unit once, drop-ins named *.conf, and something to write. Units
// come only from nodeboot's library API (KubeadmConfigs have none), so
// every problem is an error, never a hazard.
func validateUnits(ps *Problems, p *Plan) {
	if len(p.Units) == 0 {
		return
	}
	names := make(map[string]int, len(p.Units))
	paths := make(map[string]Path, len(p.Units))
	for i := range p.Units {
		u := &p.Units[i]
		up := p.UnitPath(i)
		pp := up.Member
		if msg := unitNameProblem(u.Name); msg != "" {
			ps.Errorf(pp("name"), "%s", msg)
		} else if prev, dup := names[u.Name]; dup {
			ps.Errorf(pp("name"), "duplicate unit name (also %s)", p.UnitPath(prev))
		} else {
			names[u.Name] = i
		}
		if u.Contents == "" && len(u.DropIns) == 0 {
			ps.Errorf(pp("contents"), "must not be empty unless the unit has drop-ins (which amend a unit the image has)")
		}
		if u.Contents != "" {
			paths[UnitFile(u.Name)] = up
		}
		dropIns := make(map[string]bool, len(u.DropIns))
		for j := range u.DropIns {
			d := &u.DropIns[j]
			dp := pp("dropIns").Index(j)
			switch {
			case d.Name == ".conf" || !strings.HasSuffix(d.Name, ".conf"):
				ps.Errorf(dp.Field("name"), "must be a file name ending in .conf (systemd reads no other drop-in)")
			case !unitChars(d.Name):
				ps.Errorf(dp.Field("name"), "must be a file name of letters, digits and -_.@:\\ (no '/', blanks or line breaks)")
			case dropIns[d.Name]:
				ps.Errorf(dp.Field("name"), "duplicate drop-in name in this unit")
			}
			dropIns[d.Name] = true
			if d.Contents == "" {
				ps.Errorf(dp.Field("contents"), "must not be empty")
			}
			paths[DropInFile(u.Name, d.Name)] = dp
		}
	}
	// A file at a unit's path would race the unit for the same file, with
	// a result that depends on the provisioner's ordering. Provisioners
	// that write units as files (cloudinit's withUnits) give those files
	// the unit's path as Origin, and Validate the result again.
	for i := range p.Files {
		f := &p.Files[i]
		if strings.HasPrefix(f.Path, UnitDir) {
			if unit, ok := paths[f.Path]; ok && !fromUnit(p, f) {
				ps.Errorf(p.FilePath(i).Member("path"), "is the file of %s; write the unit through units only", unit)
			}
		}
	}
}

// unitNameProblem says what is wrong with a unit name, or "" when systemd
// accepts it: name, optional @instance, then a type suffix, in systemd's
// character set.
func unitNameProblem(name string) string {
	if name == "" {
		return "must not be empty"
	}
	if len(name) > maxUnitName {
		return "must be at most " + strconv.Itoa(maxUnitName) + " bytes (systemd's limit)"
	}
	if !unitChars(name) {
		return "must be a unit file name of letters, digits and -_.@:\\ (no '/', blanks or line breaks)"
	}
	suffix := ""
	for _, t := range unitTypes {
		if strings.HasSuffix(name, t) {
			suffix = t
			break
		}
	}
	if suffix == "" {
		return "must end in a unit type suffix (" + strings.Join(unitTypes, ", ") + ")"
	}
	prefix := strings.TrimSuffix(name, suffix)
	if prefix == "" || prefix[0] == '@' || strings.Count(prefix, "@") > 1 {
		return "must be NAME" + suffix + ", NAME@" + suffix + " or NAME@INSTANCE" + suffix
	}
	return ""
}

// unitChars reports whether s uses only systemd's unit name characters
// and '@'.
func unitChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-', c == '_', c == '.', c == ':', c == '\\':
		case c == '@':
		default:
			return false
		}
	}
	return true
}
