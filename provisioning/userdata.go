package provisioning

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// UserData is free-form user data a provider's user supplies next to what
// the Plan generates, such as CAPRKE2's additionalUserData: a document of
// the node's own provisioning system that the provisioner carries as it is,
// beside the Plan's output, for that system to apply. Its Type says what it
// is, so a provisioner takes only what its system can apply and refuses the
// rest (ErrUnsupported at userData[i].type) rather than shipping a document
// the node would ignore.
//
// What each Type means once carried:
//
//   - UserDataCloudConfig is a cloud-config document. cloud-init merges it
//     into the Plan's cloud-config with cloud-init's own merge rules, as a
//     later part: by default (no merge_how of its own) its lists are
//     appended to the Plan's (its write_files written after the Plan's, its
//     runcmd lines run after the Plan's commands, in the same runcmd script)
//     and its other keys are added where the Plan has none; a merge_how of
//     its own decides instead, and may replace what the Plan generates.
//   - UserDataShellScript is a script with a "#!" line, run once as root
//     after the Plan's commands, by its own interpreter. Where a Plan
//     command failed, cloud-init still runs it (scripts_user runs every user
//     script and reports each failure); the script provisioner does not (it
//     stops at the first failure).
//   - UserDataIgnition is an Ignition v3 config (JSON), which Ignition
//     merges over the Plan's config (ignition.config.merge), the user's
//     config winning, except that it may not replace what the Plan's
//     bootstrap needs (the provisioner refuses that, as for
//     Options.AdditionalConfig).
type UserData struct {
	// Type says what Content is.
	Type UserDataType
	// Content is the document, at most MaxUserDataBytes.
	Content string
	// Origin is the input field path, as for File.
	Origin Path
}

// UserDataType is the kind of document a UserData is.
type UserDataType string

const (
	// UserDataCloudConfig is a cloud-config document ("#cloud-config").
	UserDataCloudConfig UserDataType = "cloud-config"
	// UserDataShellScript is a script that starts with "#!".
	UserDataShellScript UserDataType = "shell-script"
	// UserDataIgnition is an Ignition v3 config in JSON.
	UserDataIgnition UserDataType = "ignition"
)

// MaxUserDataBytes bounds each UserData's Content: CABPK bounds a user's
// additional config to 32 KiB, and cloud user data itself is 16 KiB on
// EC2, so a larger document is a mistake, not a node.
const MaxUserDataBytes = 32 << 10

// maxUserData bounds how many documents a Plan carries.
const maxUserData = 16

// UserDataPath is the path of UserData[i] for problems: its Origin, or
// userData[i].
func (p *Plan) UserDataPath(i int) Path {
	return elementPath(p.UserData[i].Origin, "userData", i)
}

// UserDataTypePath is where a provisioner reports that it cannot carry
// UserData[i]'s Type.
func (p *Plan) UserDataTypePath(i int) Path {
	return FieldPath(p.UserData[i].Origin, index("userData", i), "type")
}

// RefuseUserData adds, for a provisioner (or dialect) that carries no user
// data of the types not in accept, an ErrUnsupported problem at each such
// document's type.
func RefuseUserData(ps *Problems, p *Plan, provisioner string, accept ...UserDataType) {
	if p == nil {
		return
	}
outer:
	for i := range p.UserData {
		for _, t := range accept {
			if p.UserData[i].Type == t {
				continue outer
			}
		}
		Unsupported(ps, provisioner, p.UserDataTypePath(i), fmt.Sprintf("user data of type %q", p.UserData[i].Type))
	}
}

func validateUserData(ps *Problems, p *Plan) {
	if len(p.UserData) > maxUserData {
		ps.Errorf(NewPath("userData"), "has %d documents, at most %d", len(p.UserData), maxUserData)
	}
	for i := range p.UserData {
		u := &p.UserData[i]
		content := FieldPath(u.Origin, index("userData", i), "content")
		switch u.Type {
		case UserDataCloudConfig, UserDataShellScript, UserDataIgnition:
		default:
			ps.Errorf(p.UserDataTypePath(i), "unknown type (want cloud-config, shell-script or ignition)")
			continue
		}
		switch {
		case len(u.Content) > MaxUserDataBytes:
			ps.Errorf(content, "is %d bytes, at most %d", len(u.Content), MaxUserDataBytes)
			continue
		case strings.TrimSpace(u.Content) == "":
			ps.Errorf(content, "must not be empty")
			continue
		case !utf8.ValidString(u.Content) || strings.IndexByte(u.Content, 0) >= 0:
			ps.Errorf(content, "must be UTF-8 text without NUL")
			continue
		}
		if u.Type == UserDataShellScript && !strings.HasPrefix(u.Content, "#!") {
			ps.Errorf(content, "must start with a \"#!\" line naming its interpreter")
		}
	}
}
