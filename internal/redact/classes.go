package redact

// Class is one kind of secret.
type Class struct {
	// Name is a short identifier, used in tests and the documentation.
	Name string
	// Catches says what the class is for, for the documentation.
	Catches string
	// Pattern is a POSIX extended regular expression matched within one
	// line, every match replaced.
	Pattern string
	// Replace replaces a match; \1 stands for the first group (the context
	// the class keeps, such as "password=").
	Replace string
	// Fold matches regardless of ASCII case.
	Fold bool
	// Hints, when set, are strings one of which (in ASCII lower case) every
	// match contains: Go skips the class on a line without any, which
	// spares it the slow path of leftmost-longest matching. Sed does not
	// need them; the corpus test holds both sides to the same output.
	Hints []string
	// End, when set, makes the class span lines, as a sed range does: a
	// line matching Pattern begins a block that the next line matching End
	// ends. The block's first line is replaced from Pattern's match to its
	// end; the block's other lines are dropped. A block never ended runs to
	// the end of the text, which is where a cut-off key is.
	End string
}

// Shared parts of the patterns.
const (
	// pemSecret is the BEGIN line of a PEM block that holds a secret: any
	// PRIVATE KEY (PKCS#1, PKCS#8, EC, OpenSSH, encrypted), PGP PRIVATE KEY
	// BLOCK, PGP SECRET KEY BLOCK.
	pemSecret = `-----BEGIN [A-Z0-9 ]*(PRIVATE|SECRET|ENCRYPTED)[A-Z0-9 ]*-----`
	pemEnd    = `-----END [A-Z0-9 ]*-----`
	// secretName ends a name that holds a secret; names that merely contain
	// one of these words (token_ttl, password_file, secretName) do not. A
	// bare "pass" counts after _ or - only (DB_PASS, --db-pass): bypass,
	// compass.
	secretName = `(pass(word|wd|phrase)|[_-]pass|pwd|secret|token|(api|access|secret|private|account|certificate|encryption)[_-]?key|` +
		`key[_-]?data|credentials?|sig(nature)?)`
	// quoted is a quoted value, to its closing quote or the line's end (a
	// cut-off quote); it becomes "[redacted]", so that redacting again finds
	// the same quoted value and JSON stays JSON.
	quoted = `("[^"]*"?|'[^']*'?)`
	// bare is an unquoted value: a run of non-blanks.
	bare = `[^[:space:]"'][^[:space:]]*`
	// flag is a command-line flag whose value is a secret, and what
	// separates it from its value.
	flag = `(^|[[:space:]])--?[A-Za-z0-9-]*` + secretName + `([[:space:]]+|=)`
	// passwordP is -p before a password: after login, sshpass or mysql, or
	// after -u and a user name (-p alone is too common: mkdir -p, ssh -p).
	passwordP = `(login|sshpass|mysql|[[:space:]]-u[[:space:]]*[^[:space:]-][^[:space:]]*)[^|;&]*[[:space:]]-p[[:space:]]?`
	// named is a name whose value is a secret, and its separator.
	// A name's other characters need no matching (they are kept), and
	// leaving them out spares Go's matcher a loop at every position.
	named = secretName + `["']?[[:space:]]*[:=][[:space:]]*`
)

// base64PEM is a base64-encoded PEM block whose BEGIN line names a private
// or secret key: after the encoding of "-----BEGIN " and at most 24 more
// characters (a label's words before PRIVATE, "SSH2 ENCRYPTED" the longest),
// the encoding of PRIVATE at each of its three alignments (UFJJVkFU, SVZB,
// UklWQVRF) or of SECRET at PGP's (U0VDUkVU), then the rest of the run; the
// lines after it in base64 wrapped at 76 columns are base64-line's.
// TestBase64PEM holds it to the key labels in use and to the public ones
// (certificates, public keys, requests, signatures) it must leave alone.
const base64PEM = `LS0tLS1CRUdJTi[A-Za-z0-9+/]{0,24}(UFJJVkFU|SVZB|UklWQVRF|U0VDUkVU)[A-Za-z0-9+/=]*`

// secretHints are the pieces every secretName alternative contains.
var secretHints = []string{"pass", "pwd", "secret", "token", "key", "cred", "sig"}

// Markers that replace a secret.
const (
	Redacted           = "[redacted]"
	RedactedToken      = "[redacted token]"
	RedactedPrivateKey = "[redacted private key]"
)

// classes are applied in this order to every line. Named contexts come
// before value formats, so that "--token abcdef.0123456789abcdef" becomes
// "--token [redacted]" and redacting again changes nothing (the manager
// redacts what the node already did).
var classes = []Class{
	{Name: "private-key", Catches: "a PEM private or secret key block on one line (also inside JSON, with \\n escapes)",
		Pattern: pemSecret + `.*` + pemEnd, Replace: RedactedPrivateKey},
	{Name: "private-key-block", Catches: "a PEM private or secret key over several lines, whole or cut off",
		Pattern: pemSecret, End: pemEnd, Replace: RedactedPrivateKey},
	{Name: "authorization-quoted", Catches: "a quoted Authorization or Proxy-Authorization header value (JSON)",
		Pattern: `(authorization["']?[[:space:]]*[:=][[:space:]]*)` + quoted, Replace: `\1"` + Redacted + `"`, Fold: true, Hints: []string{"authorization"}},
	{Name: "authorization", Catches: "an Authorization or Proxy-Authorization header's value (Bearer, Basic, any scheme)",
		Pattern: `(authorization["']?[[:space:]]*[:=][[:space:]]*)[^"']+`, Replace: `\1` + Redacted, Fold: true, Hints: []string{"authorization"}},
	{Name: "url-password", Catches: "the password in scheme://user:password@host",
		Pattern: `([A-Za-z][A-Za-z0-9+.-]*://[^/[:space:]:@"']*:)[^/[:space:]"']*@`, Replace: `\1` + Redacted + `@`, Hints: []string{"://"}},
	{Name: "flag-quoted", Catches: "a quoted value of a secret flag (--password \"...\")",
		Pattern: `(` + flag + `)` + quoted, Replace: `\1"` + Redacted + `"`, Fold: true, Hints: secretHints},
	{Name: "flag", Catches: "a command-line flag's value: --password, --token, --certificate-key, --client-secret, --api-key (space or =)",
		Pattern: `(` + flag + `)` + bare, Replace: `\1` + Redacted, Fold: true, Hints: secretHints},
	{Name: "password-p-quoted", Catches: "a quoted -p value (sshpass -p '...')",
		Pattern: `(` + passwordP + `)` + quoted, Replace: `\1"` + Redacted + `"`, Hints: []string{"-p"}},
	{Name: "password-p", Catches: "-p VALUE or -pVALUE after login, sshpass, mysql or a -u user (docker login, mysql)",
		Pattern: `(` + passwordP + `)` + bare, Replace: `\1` + Redacted, Hints: []string{"-p"}},
	{Name: "user-password", Catches: "-u/--user user:password (curl)",
		Pattern: `((^|[[:space:]])(-u|--user|--proxy-user)([[:space:]]+|=)?["']?[^[:space:]:"']*:)[^[:space:]"']+`, Replace: `\1` + Redacted, Hints: []string{"-u"}},
	{Name: "named-invalid-value", Catches: "a Kubernetes validation error quoting such a name's value (stringData.password: Invalid value: \"...\")",
		Pattern: `(` + named + `)invalid value:[[:space:]]*(` + quoted + `|` + bare + `)`, Replace: `\1` + Redacted + ` (invalid value)`, Fold: true, Hints: []string{"invalid value"}},
	{Name: "named-quoted", Catches: "a quoted value of a secret name (JSON, YAML, shell: \"clientSecret\": \"...\")",
		Pattern: `(` + named + `)` + quoted, Replace: `\1"` + Redacted + `"`, Fold: true, Hints: secretHints},
	{Name: "named", Catches: "NAME=value and NAME: value for names ending in password, passwd, pwd, secret, token, api_key, access_key, " +
		"secret_key, private_key, account_key, certificate_key, key_data, credential(s), signature, sig " +
		"(AWS_SECRET_ACCESS_KEY=, client-key-data:, \"private_key\":, AccountKey=, X-Amz-Signature=)",
		Pattern: `(` + named + `)` + bare, Replace: `\1` + Redacted, Fold: true, Hints: secretHints},
	{Name: "private-key-base64", Catches: "a base64-encoded PEM private or secret key (a Secret's tls.key as kubectl shows it), from its BEGIN line's encoding; certificates stay",
		Pattern: base64PEM, Replace: RedactedPrivateKey, Hints: []string{"ls0tls1crudjti"}},
	{Name: "bearer", Catches: "a Bearer credential outside a header",
		Pattern: `(bearer[[:space:]]+)[A-Za-z0-9._~+/=-]{8,}`, Replace: `\1` + Redacted, Fold: true, Hints: []string{"bearer"}},
	{Name: "jwt", Catches: "a JSON Web Token (service account tokens, OIDC ID tokens)",
		Pattern: `eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*`, Replace: Redacted},
	{Name: "bootstrap-token", Catches: "a kubeadm bootstrap token (abcdef.0123456789abcdef)",
		Pattern: `[a-z0-9]{6}\.[a-z0-9]{16}`, Replace: RedactedToken},
	{Name: "aws-access-key-id", Catches: "an AWS access key ID (AKIA..., ASIA...)",
		Pattern: `(AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA|ASCA)[A-Z0-9]{16}`, Replace: Redacted},
	{Name: "github-token", Catches: "a GitHub token (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_)",
		Pattern: `(gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{20,})`, Replace: Redacted},
	{Name: "gitlab-token", Catches: "a GitLab personal access token (glpat-)",
		Pattern: `glpat-[A-Za-z0-9_-]{20,}`, Replace: Redacted},
	{Name: "slack-token", Catches: "a Slack token (xoxb-, xoxp-, xoxa-, xoxo-, xoxs-, xoxr-)",
		Pattern: `xox[abposr]-[A-Za-z0-9-]{10,}`, Replace: Redacted},
	{Name: "google-api-key", Catches: "a Google API key (AIza...)",
		Pattern: `AIza[A-Za-z0-9_-]{35}`, Replace: Redacted},
	{Name: "stripe-key", Catches: "a Stripe secret or restricted key (sk_live_, rk_live_, sk_test_)",
		Pattern: `[sr]k_(live|test)_[A-Za-z0-9]{16,}`, Replace: Redacted},
	{Name: "base64-line", Catches: "a line that is only base64 or hex, 40 characters or more (key material, kubeadm's certificate key)",
		Pattern: `^[[:space:]]*[A-Za-z0-9+/=]{40,}[[:space:]]*$`, Replace: Redacted},
}

// Classes returns the classes in the order they are applied.
func Classes() []Class { return append([]Class(nil), classes...) }
