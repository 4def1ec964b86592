package addons

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"

	"github.com/nodeboot/nodeboot/provisioning"
)

// Addon is one add-on to deliver, already resolved to manifest bytes or a URL.
type Addon struct {
	// Name is a DNS label, unique among a node's add-ons. It names the
	// manifest file and the add-on's keys in the record ConfigMap.
	Name string
	// Version is recorded with the result; may be empty.
	Version string
	// Order sorts add-ons: lower first, then by Name.
	Order int32
	// Manifest is multi-document YAML written inline into the bootstrap data.
	// Exactly one of Manifest and URL is set.
	Manifest []byte
	// URL is fetched by the node, with retries, and used only when its
	// sha256 is SHA256.
	URL string
	// SHA256 is the hex digest of the manifest. Required with URL; computed
	// from Manifest when empty, and checked against it when set.
	SHA256 string
	// CABundle, with URL, is the PEM certificates the node trusts, instead
	// of its system's, when it fetches URL: the manager's serving CA for
	// add-ons it serves itself (see controllers/addons' fetch fallback).
	CABundle []byte
	// Credential, with an https URL, is a bearer token the node sends in
	// an Authorization header when it fetches URL (the fetch fallback's
	// per-config credential). It travels in a 0600 file of its own, never
	// in the URL, on a command line or in a log; with it the node follows
	// no redirect and uses no tool that cannot verify the server.
	Credential string
	// Origin is where the add-on came from, typically a path in an object
	// (provisioning.Path{}.In(FirstBootAddon ns/name)); it prefixes the paths of
	// its problems and becomes the Origin of its manifest file.
	Origin provisioning.Path
}

// Digest returns the hex sha256 of b.
func Digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// digest returns the add-on's expected digest.
func (a *Addon) digest() string {
	if a.SHA256 != "" || len(a.Manifest) == 0 {
		return a.SHA256
	}
	return Digest(a.Manifest)
}

// maxCABundle bounds a CA bundle: a few certificates, not a trust store.
const maxCABundle = 64 << 10

// maxCredential bounds a credential: a token, not a document.
const maxCredential = 256

var (
	label   = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
	version = regexp.MustCompile(`^[A-Za-z0-9][-A-Za-z0-9._+]{0,63}$`)
	hexSum  = regexp.MustCompile(`^[a-f0-9]{64}$`)
	// token is what a header value and a line of the node's files can
	// carry without quoting.
	token = regexp.MustCompile(`^[A-Za-z0-9._~+/=-]+$`)
)

// ValidName reports whether name can name an add-on: a DNS label (it is
// the key of the node's record and of its files).
func ValidName(name string) bool { return label.MatchString(name) }

// ValidVersion reports whether v can be an add-on's version: letters,
// digits and '.-_+', at most 64.
func ValidVersion(v string) bool { return version.MatchString(v) }

// Validate returns every problem of the add-ons, each with its path.
func Validate(list []Addon) provisioning.Problems {
	var ps provisioning.Problems
	seen := map[string]provisioning.Path{}
	for i := range list {
		a := &list[i]
		at := func(field string) provisioning.Path {
			return provisioning.FieldPath(a.Origin, provisioning.NewPath("addons").Index(i), field)
		}
		switch {
		case !label.MatchString(a.Name):
			ps.Errorf(at("name"), "must be a DNS label (lower-case letters, digits, '-'), got %q", a.Name)
		case !seen[a.Name].IsZero():
			ps.Errorf(at("name"), "duplicate add-on %q (also %s)", a.Name, seen[a.Name])
		default:
			seen[a.Name] = at("name")
		}
		if a.Version != "" && !version.MatchString(a.Version) {
			ps.Errorf(at("version"), "must be letters, digits and '.-_+', got %q", a.Version)
		}
		if a.Order < 0 || a.Order > 999 {
			ps.Errorf(at("order"), "must be between 0 and 999, got %d", a.Order)
		}
		switch {
		case len(a.Manifest) > 0 && a.URL != "":
			ps.Errorf(at("url"), "must not be set together with an inline manifest")
		case len(a.Manifest) == 0 && a.URL == "":
			ps.Errorf(at("manifest"), "is empty and no url is set")
		case a.URL != "":
			if !(strings.HasPrefix(a.URL, "https://") || strings.HasPrefix(a.URL, "http://")) || strings.ContainsAny(a.URL, " \t\n\r'\"\\`$") {
				ps.Errorf(at("url"), "must be an http or https URL without blanks or quotes, got %q", RedactURL(a.URL))
			}
			if a.SHA256 == "" {
				ps.Errorf(at("sha256"), "is required with a url")
			}
		}
		if len(a.CABundle) > 0 {
			switch {
			case a.URL == "":
				ps.Errorf(at("caBundle"), "is only used with a url")
			case len(a.CABundle) > maxCABundle:
				ps.Errorf(at("caBundle"), "is %d bytes, more than %d", len(a.CABundle), maxCABundle)
			case !bytes.Contains(a.CABundle, []byte("-----BEGIN CERTIFICATE-----")):
				ps.Errorf(at("caBundle"), "must be PEM certificates")
			}
		}
		if a.Credential != "" {
			// Messages never show the credential.
			switch {
			case !strings.HasPrefix(a.URL, "https://"):
				ps.Errorf(at("credential"), "is only sent to an https url")
			case len(a.Credential) > maxCredential:
				ps.Errorf(at("credential"), "is %d bytes, more than %d", len(a.Credential), maxCredential)
			case !token.MatchString(a.Credential):
				ps.Errorf(at("credential"), "must be letters, digits and '._~+/=-'")
			}
		}
		if a.SHA256 != "" && !hexSum.MatchString(a.SHA256) {
			ps.Errorf(at("sha256"), "must be 64 lower-case hex digits, got %q", a.SHA256)
		} else if a.SHA256 != "" && len(a.Manifest) > 0 && a.SHA256 != Digest(a.Manifest) {
			ps.Errorf(at("sha256"), "is %s but the manifest's is %s", a.SHA256, Digest(a.Manifest))
		}
	}
	return ps
}
