package tlsserve

import (
	"errors"
	"net/url"
	"strings"
)

// CheckNodeURL checks a URL nodes are told to reach an endpoint at (what
// names it in the error): https with a host, no credentials, query or
// fragment, and nothing a shell script quoting it could misread. The
// message never repeats the URL.
func CheckNodeURL(raw, what string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil ||
		len(raw) > 2048 || strings.ContainsAny(raw, " \t\n\r'\"\\`$") {
		return errors.New("the " + what + " URL must be an https URL with a host, without credentials, query or fragment")
	}
	return nil
}

// CheckCABundle checks a CA bundle given to nodes is PEM certificates.
func CheckCABundle(ca []byte, what string) error {
	if len(ca) > 0 && !strings.Contains(string(ca), "-----BEGIN CERTIFICATE-----") {
		return errors.New("the " + what + " CA bundle must be PEM certificates")
	}
	return nil
}
