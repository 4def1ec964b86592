package cloudinit

import (
	"encoding/base64"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/nodeboot/nodeboot/provisioning"
)

// scan checks every value CABPK's layout writes, in the way the layout
// writes it (plain, single-quoted, Go-quoted, literal block), against what
// cloud-init reads. Messages name the construct at fault, never the value:
// values may come from Secrets (passwdFrom, contentFrom).
type scan struct {
	ps          *provisioning.Problems
	corrections bool
}

// hazard reports a problem. Under corrections, what the corrections fix is
// not reported at all.
func (s *scan) hazard(path provisioning.Path, correctable bool, format string, args ...any) {
	if s.corrections && correctable {
		return
	}
	msg := format
	if len(args) > 0 || strings.IndexByte(format, '%') >= 0 {
		msg = fmt.Sprintf(format, args...)
	}
	*s.ps = append(*s.ps, provisioning.Problem{Path: path, Message: msg, Severity: provisioning.SeverityWarning})
}

func (s *scan) warn(path provisioning.Path, format string, args ...any) {
	s.hazard(path, true, format, args...)
}

// warnText is warn for a message that is text already, not a format.
func (s *scan) warnText(path provisioning.Path, msg string) {
	if !s.corrections {
		*s.ps = append(*s.ps, provisioning.Problem{Path: path, Message: msg, Severity: provisioning.SeverityWarning})
	}
}

// plainFine is the allocation-free answer for the common value, in one
// pass: printable ASCII that YAML reads back as the same string, without
// jinja syntax. It may answer false for a fine value (plainAt then finds
// nothing to report), never true for a hazardous one.
func plainFine(v string) bool {
	n := len(v)
	if n == 0 {
		return true
	}
	switch c := v[0]; {
	case c == '-' || c == '?' || c == ':':
		// YAML lets a plain value start with these when a non-blank
		// follows (command-line options such as -E).
		if n == 1 || v[1] == ' ' {
			return false
		}
	case c == ' ' || plainIndicator[c]:
		return false
	}
	if last := v[n-1]; last == ' ' || last == ':' {
		return false
	}
	// Words of bytes that are fine anywhere are skipped eight at a time;
	// the byte loop takes over at the first word with anything else.
	i := 0
	for ; i+8 <= n && plainWordFine(word(v[i:i+8])); i += 8 {
	}
	if i+8 > n && n >= 8 && plainWordFine(word(v[n-8:])) {
		// The bytes after the last whole word, as the (overlapping)
		// last eight.
		i = n
	}
	for ; i < n; i++ {
		switch c := v[i]; {
		case plainByte[c], c == ':':
		case c == ' ':
			// v[0] is no blank, so i > 0.
			if v[i-1] == ':' {
				return false
			}
		case c == '#':
			// v[0] is no '#' (an indicator), so i > 0.
			if v[i-1] == ' ' {
				return false
			}
		default:
			return false
		}
	}
	return yamlKind(v) == "string"
}

// plainWordFine reports whether every byte of w is printable ASCII other
// than the blank and '{', by the borrow-free byte arithmetic of badBytes.
// '#' and ':' may pass: each is wrong only next to a blank, and the byte
// loop sees every byte from the first word with a blank on.
func plainWordFine(w uint64) bool {
	h := w | highs
	return (w|(h-0x7f*ones)|^(h-0x21*ones)|braceBytes(w))&highs == 0
}

// plainIndicator marks the YAML indicators that may not start a plain
// scalar (some may when a non-blank follows; see plainFine).
var plainIndicator = func() (t [256]bool) {
	for _, c := range "-?:,[]{}#&*!|>'\"%@`" {
		t[c] = true
	}
	return t
}()

// plainByte marks the bytes that are fine anywhere in a plain value:
// printable ASCII except the blank, ':' and '#', which are fine only
// in some places, and '{', which may start jinja syntax.
var plainByte = func() (t [256]bool) {
	for c := 0x21; c < 0x7f; c++ {
		t[c] = true
	}
	t[':'], t['#'], t['{'] = false, false, false
	return t
}()

// plainAt checks a value written as a YAML plain scalar at path. Callers
// ask plainFine first and build the path only for a value it does not
// pass: rendering checks every value, and building paths for all of them
// would cost more than the rendering.
func (s *scan) plainAt(path provisioning.Path, v string, key bool) {
	if bad := jinjaHazard(v); bad != "" {
		s.warn(path, "%s; under the '## template: jinja' header cloud-init renders it, which changes the value or fails the whole document (corrections escape it)", bad)
	}
	r, why := plainReading(v, key)
	if r != readsSame && s.corrections && !utf8.ValidString(v) {
		s.ps.Errorf(path, "contains invalid UTF-8, which no YAML document can carry")
		return
	}
	switch r {
	case readsInjected:
		// Joined rather than formatted: every typed mount field ("0")
		// lands here, and why is never a value.
		s.warnText(path, "contains "+why+": what follows is read as YAML of its own, which can add or replace cloud-config keys (corrections quote it)")
	case readsBroken:
		s.warnText(path, "contains "+why+": cloud-init cannot parse the document and runs none of it (corrections quote it)")
	case readsChanged:
		s.warnText(path, "contains "+why+", so cloud-init reads a different value than the one written (corrections quote it)")
	case readsTyped:
		s.warnText(path, typedMessage(why))
	}
}

// typedMessage is the warning for a value read as why says. Every typed
// mount field ("0", "2") lands here: the common readings are whole
// constants rather than text joined on each render.
func typedMessage(why string) string {
	const pre, post = "is read by cloud-init as ", " (corrections quote it)"
	switch why {
	case "a YAML number, not a string":
		return pre + "a YAML number, not a string" + post
	case "a YAML boolean, not a string":
		return pre + "a YAML boolean, not a string" + post
	case "a YAML null, not a string":
		return pre + "a YAML null, not a string" + post
	}
	return pre + why + post
}

// quotedPermissions checks permissions, which the layout writes in single
// quotes. Validate reports modes that are not octal; this reports the ones
// that also break or change the document.
func (s *scan) quotedPermissions(pathFn func() provisioning.Path, v string) {
	if singleQuotable(v) {
		return
	}
	path := pathFn()
	if bad := jinjaHazard(v); bad != "" {
		s.warn(path, "%s; under the '## template: jinja' header cloud-init renders it (corrections escape it)", bad)
	}
	switch {
	case !printable(v):
		s.warn(path, "contains a control character, NUL or invalid UTF-8: cloud-init cannot parse the document and runs none of it (corrections quote it)")
	case hasLineBreak(v):
		s.warn(path, "contains a line break, which YAML folds into a blank inside quotes (corrections quote it)")
	case strings.Contains(v, "'"):
		s.warn(path, "contains a single quote, which ends the quoted value early: cloud-init cannot parse the document (corrections quote it)")
	}
}

// quotedCommand checks a command, which the layout writes Go-quoted (%q).
// Go quotes a byte of invalid UTF-8 as \xNN, which YAML reads as the
// character U+00NN: the shell would run other bytes.
func (s *scan) quotedCommand(pathFn func() provisioning.Path, v string) {
	if utf8.ValidString(v) {
		return
	}
	path := pathFn()
	if s.corrections {
		s.ps.Errorf(path, "contains invalid UTF-8, which no YAML document can carry")
		return
	}
	s.ps.Warnf(path, "contains invalid UTF-8: the quoted command is read back with different bytes")
}

// content checks file contents, which the layout writes as a literal block.
// The caller has found that they are not a simpleBlock: for those,
// literalReading's fast path, YAML reads the lines back as written, at
// most clipping the end, and there is no CR.
func (s *scan) content(pathFn func() provisioning.Path, f *provisioning.File) {
	got, exact, ok, why := literalReading(f.Content)
	if exact || ok && why == "" && !strings.Contains(f.Content, "\r") {
		return
	}
	path := pathFn()
	_, _, fixable := correctedContent(f, false)
	if s.corrections && !fixable {
		s.ps.Errorf(path, "is %s content that YAML cannot carry, and its encoding leaves no way to re-encode it", f.Encoding)
		return
	}
	switch {
	case f.Encoding == provisioning.EncodingGzip && !ok:
		s.hazard(path, fixable, "holds raw gzip bytes, which YAML cannot carry: cloud-init cannot parse the document and runs none of it (corrections write it as gzip+base64)")
	case !ok:
		s.hazard(path, fixable, "contains %s: cloud-init cannot parse the document and runs none of it (corrections write it base64-encoded)", why)
	case !exact && why != "":
		s.hazard(path, fixable, "contains %s (corrections write it base64-encoded)", why)
	case !exact && strings.Contains(f.Content, "\r\n") && strings.TrimRight(got, "\n") == strings.TrimRight(strings.ReplaceAll(f.Content, "\r\n", "\n"), "\n"):
		s.hazard(path, fixable, "has CRLF line ends, which YAML reads as LF (corrections write it base64-encoded)")
	}
}

// correctedContent is how corrections write a file's content: exactly
// what the author declared, re-encoded when the literal block would carry
// something else. fixable is false when no encoding can carry it.
func correctedContent(f *provisioning.File, jinja bool) (content string, enc provisioning.Encoding, fixable bool) {
	switch f.Encoding {
	case provisioning.EncodingNone:
		if _, exact, _, _ := literalReading(f.Content); exact && !jinja {
			return f.Content, f.Encoding, true
		}
		// Base64 has no braces, so cloud-init's jinja step passes it
		// through, and write_files decodes the exact bytes declared.
		return base64.StdEncoding.EncodeToString([]byte(f.Content)), provisioning.EncodingBase64, true
	case provisioning.EncodingGzip:
		if _, _, ok, _ := literalReading(f.Content); ok && printable(f.Content) {
			return f.Content, f.Encoding, true
		}
		return base64.StdEncoding.EncodeToString([]byte(f.Content)), provisioning.EncodingGzipBase64, true
	}
	_, _, ok, _ := literalReading(f.Content)
	return f.Content, f.Encoding, ok
}

func (s *scan) user(i int, u *provisioning.User) {
	pp := func(field string) provisioning.Path {
		return provisioning.FieldPath(u.Origin, provisioning.NewPath("users").Index(i), field)
	}
	for _, f := range []struct{ field, v string }{
		{"name", u.Name}, {"passwd", u.Passwd}, {"gecos", u.Gecos}, {"groups", u.Groups}, {"homeDir", u.HomeDir},
		{"shell", u.Shell}, {"primaryGroup", u.PrimaryGroup}, {"sudo", u.Sudo},
	} {
		if !plainFine(f.v) {
			s.plainAt(pp(f.field), f.v, false)
		}
	}
	for j, k := range u.SSHAuthorizedKeys {
		if !plainFine(k) {
			s.plainAt(pp("sshAuthorizedKeys").Index(j), k, false)
		}
	}
	if u.Inactive != nil {
		s.warn(pp("inactive"), "is written as a boolean, which cloud-init ignores (it wants a number of days); corrections express inactive: true as an expiry date in the past")
	}
}

func (s *scan) disks(p *provisioning.Plan, d *provisioning.DiskSetup) {
	if len(d.Partitions) == 0 {
		s.warn(p.SectionPath(provisioning.SectionPartitions), "is empty, so 'disk_setup:' is written without entries, which cloud-init's schema rejects (corrections leave it out)")
	}
	for i := range d.Partitions {
		pt := &d.Partitions[i]
		// Paths are formatted only for a value with a problem.
		pp := func(field string) provisioning.Path {
			return provisioning.FieldPath(provisioning.Path{}, p.SectionPath(provisioning.SectionPartitions).Index(i), field)
		}
		if !plainFine(pt.Device) {
			s.plainAt(pp("device"), pt.Device, true)
		}
		if hasLineBreak(pt.Device) {
			s.hazard(pp("device"), false, "contains a line break, which cloud-init's schema rejects in a disk_setup key however it is quoted")
		}
		if !plainFine(pt.TableType) {
			s.plainAt(pp("tableType"), pt.TableType, false)
		}
		if pt.Layout == nil && len(pt.DiskLayout) == 0 {
			s.warn(pp("layout"), "is unset and written as '<nil>', which cloud-init's schema rejects (corrections write false)")
		}
		for j, l := range pt.DiskLayout {
			if code := partitionTypeCode(l.PartitionType); l.PartitionType != "" && yamlKind(code) != "number" {
				s.hazard(pp("diskLayout").Index(j).Field("partitionType"), false,
					"is written as a type code that is not a number; cloud-init's schema (22.4) wants a number there, although its partitioning passes the code on as written")
			}
		}
	}
	if len(d.Filesystems) == 0 {
		s.warn(p.SectionPath(provisioning.SectionFilesystems), "is empty, so 'fs_setup:' is written without entries, which cloud-init's schema rejects (corrections leave it out)")
	}
	for i := range d.Filesystems {
		fs := &d.Filesystems[i]
		pp := func(field string) provisioning.Path {
			return provisioning.FieldPath(provisioning.Path{}, p.SectionPath(provisioning.SectionFilesystems).Index(i), field)
		}
		for _, f := range [...]struct{ field, v string }{{"label", fs.Label}, {"filesystem", fs.Filesystem}, {"device", fs.Device}} {
			if f.v == "" {
				s.warn(pp(f.field), "is unset and written as an empty value, which cloud-init's schema rejects (corrections leave it out)")
			}
		}
		if !plainFine(fs.Label) {
			s.plainAt(pp("label"), fs.Label, false)
		}
		if !plainFine(fs.Filesystem) {
			s.plainAt(pp("filesystem"), fs.Filesystem, false)
		}
		if !plainFine(fs.Device) {
			s.plainAt(pp("device"), fs.Device, false)
		}
		switch fs.Partition {
		case "", "auto", "any", "none":
		default:
			s.hazard(pp("partition"), false, "is neither auto, any nor none, which cloud-init's schema (22.4) rejects, although cloud-init uses a partition number at boot")
			if r, _ := plainReading(fs.Partition, false); r != readsSame && r != readsTyped {
				if !plainFine(fs.Partition) {
					s.plainAt(pp("partition"), fs.Partition, false)
				}
			}
		}
		if !plainFine(fs.ReplaceFS) {
			s.plainAt(pp("replaceFS"), fs.ReplaceFS, false)
		}
		for j, o := range fs.ExtraOpts {
			if !plainFine(o) {
				s.plainAt(pp("extraOpts").Index(j), o, false)
			}
		}
	}
}
