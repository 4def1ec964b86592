package nodereport

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Target is the provisioning system that runs the Plan; the reporter hooks
// into each one differently (see the package documentation).
type Target int

const (
	// CloudInit is cloud-config: runcmd is one shell script without set -e.
	CloudInit Target = iota
	// IgnitionLegacy is CABPK's Ignition 2.3: /etc/kubeadm.sh under set -e,
	// run by kubeadm.service.
	IgnitionLegacy
	// IgnitionV3 is native Ignition v3: /etc/nodeboot/bootstrap.sh under
	// set -e, run by nodeboot-bootstrap.service.
	IgnitionV3
)

func (t Target) String() string {
	switch t {
	case CloudInit:
		return "cloud-init"
	case IgnitionLegacy:
		return "ignition-legacy"
	case IgnitionV3:
		return "ignition-v3"
	}
	return fmt.Sprintf("Target(%d)", int(t))
}

// Limits of the options; the bootstrap data has to stay small.
const (
	MaxURL        = 2048
	MaxCredential = 256
	MaxCABundle   = 64 << 10
	minCredential = 16
)

// Options configure the reporter of one node.
type Options struct {
	// URL is the node's full report endpoint, https only, for example
	// https://host:9445/nodeboot/v1/report/<namespace>/<config>.
	URL string
	// Credential authenticates the node's reports (a bearer token).
	Credential string
	// CABundle is the PEM of the CA certificates the node trusts for URL,
	// and then nothing else (not its system store); empty uses the node's
	// system trust.
	CABundle []byte
	// FailFast stops the command sequence at the first failing command, so
	// the report names the real culprit (cloud-init; Ignition's scripts
	// stop there already).
	FailFast bool
	// Target is the provisioning system.
	Target Target
}

// OptionError is one invalid option; Field is its name ("url",
// "credential", "caBundle", "target"). It matches ErrInvalidOptions.
type OptionError struct {
	Field, Reason string
}

func (e *OptionError) Error() string { return "bootstrap report option " + e.Field + ": " + e.Reason }

// Is makes every OptionError match ErrInvalidOptions.
func (e *OptionError) Is(target error) bool { return target == ErrInvalidOptions }

// Validate returns every invalid option, each naming the option and never
// its value: the credential must not reach a log or a condition.
func (o Options) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &OptionError{Field: field, Reason: fmt.Sprintf(format, args...)})
	}
	switch {
	case o.URL == "":
		bad("url", "must be set")
	case len(o.URL) > MaxURL:
		bad("url", "must be at most %d bytes", MaxURL)
	case strings.ContainsAny(o.URL, " \t\r\n\"'`$\\<>{}|^"):
		// It is written into files and command lines on the node.
		bad("url", "must not contain blanks, quotes, backslashes or any of $<>{}|^")
	default:
		u, err := url.Parse(o.URL)
		switch {
		case err != nil:
			bad("url", "is not a URL")
		case u.Scheme != "https":
			bad("url", "must use https")
		case u.User != nil:
			bad("url", "must not carry user information (the credential is sent in a header)")
		case u.Host == "" || u.Hostname() == "":
			bad("url", "must name a host")
		case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.ContainsAny(o.URL, "?#"):
			bad("url", "must not have a query or a fragment")
		}
	}
	switch {
	case len(o.Credential) < minCredential:
		bad("credential", "must be at least %d characters", minCredential)
	case len(o.Credential) > MaxCredential:
		bad("credential", "must be at most %d characters", MaxCredential)
	case strings.Trim(o.Credential, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~") != "":
		// A header value, and a literal in the node's redaction: no
		// character that would need quoting in either.
		bad("credential", "must consist of letters, digits and -_.~")
	}
	if len(o.CABundle) > MaxCABundle {
		bad("caBundle", "must be at most %d bytes", MaxCABundle)
	} else if len(o.CABundle) > 0 {
		if err := checkBundle(o.CABundle); err != nil {
			bad("caBundle", "%v", err)
		}
	}
	if o.Target < CloudInit || o.Target > IgnitionV3 {
		bad("target", "must be CloudInit, IgnitionLegacy or IgnitionV3")
	}
	return errors.Join(errs...)
}

// checkBundle accepts PEM CERTIFICATE blocks only: a private key pasted
// into the bundle must not travel to every node.
func checkBundle(b []byte) error {
	n := 0
	for rest := b; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			if len(strings.TrimSpace(string(rest))) > 0 {
				return errors.New("must be PEM certificates only")
			}
			break
		}
		n++
		if block.Type != "CERTIFICATE" {
			return fmt.Errorf("PEM block %d is not a CERTIFICATE", n)
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return fmt.Errorf("block %d is not a valid certificate", n)
		}
	}
	if n == 0 {
		return errors.New("must contain at least one PEM certificate")
	}
	return nil
}
