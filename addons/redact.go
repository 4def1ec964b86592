package addons

import (
	"regexp"
	"strings"

	"github.com/nodeboot/nodeboot/internal/redact"
)

// RedactURL returns a URL fit to record or show: without its query,
// fragment and userinfo, which is where presigned URLs and basic
// authentication carry their credentials. It works on the text rather than
// on a parsed URL, so an unparseable value is redacted too, and it follows
// the same rules as redact() in apply.sh: cut at the first '?' or '#'; the
// authority ends at the first '/' after "://"; drop it up to its last '@';
// without "://", drop everything up to the last '@'.
func RedactURL(raw string) string {
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		raw = raw[:i]
	}
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		// Not a URL (a typo such as "https//user:password@host"): userinfo
		// cannot be told from a path, so everything to the last '@' goes.
		if i := strings.LastIndexByte(raw, '@'); i >= 0 {
			return raw[i+1:]
		}
		return raw
	}
	authority, path := rest, ""
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		authority, path = rest[:i], rest[i:]
	}
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		authority = authority[i+1:]
	}
	return scheme + "://" + authority + path
}

// urlInText is an http or https URL inside free text, up to a blank or a
// quote.
var urlInText = regexp.MustCompile("(?i)https?://[^\\s'\"`]+")

// RedactURLs applies RedactURL to every http or https URL in a text, such as
// a result an older apply step recorded.
func RedactURLs(text string) string {
	return urlInText.ReplaceAllStringFunc(text, RedactURL)
}

// RedactResult returns a result the apply step recorded, fit for a status
// and a condition: RedactURLs, then every secret internal/redact knows
// removed (a failed apply records kubectl's error output, which can quote a
// manifest's password or token), then control and bidi characters escaped.
// RedactURL stays separate from that table: it drops whole parts of a URL
// known to be one (a presigned query's signature has no recognisable
// shape), where the table finds secrets in free text.
func RedactResult(text string) string {
	return redact.Printable(redact.Text(RedactURLs(text)), false)
}
