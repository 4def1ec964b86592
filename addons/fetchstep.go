package addons

import "cmp"

// The fetch step is the node half of fetching an add-on: fetch() in
// apply.sh gets every URL add-on into the add-ons' directory before any is
// applied, with retries inside the step's deadline, pinned by its sha256.
// With a CA bundle it trusts that CA only; with a credential it sends it as
// a bearer token read from a 0600 file (never in the URL, on a command line
// or in a trace), over https only and following no redirect. Its manager
// half is the fetch endpoint of controllers/addons (FetchHandler and
// FetchServer, fetchendpoint.go): when the fetch fallback moves a config's
// manifests out of its bootstrap data, each becomes a URL add-on on that
// endpoint with the endpoint's CA and the config's credential, and this
// step is what fetches it. fetchstep_test.go runs the step with real
// shells, curl and wget against real TLS servers.

// fetchColumns returns what the fetch step reads of URL add-on a in the
// index: its URL and the optional columns after it, the CA bundle's file
// ("-" for none when a credential follows) and the credential's file. once
// adds each file to the add-ons' directory (mode 0600) the first time it
// is named; the names are digests of the content, so add-ons that share a
// CA bundle or a credential share its file.
// CredentialFilePrefix starts the name of every credential file the add-on
// step writes (then 16 hex digits of the credential's digest), so tools
// that show bootstrap data, nodeboot diff among them, can hide its content.
const CredentialFilePrefix = "token-"

func fetchColumns(a Addon, once func(name, content string)) (url, extra string) {
	var ca, cred string
	if len(a.CABundle) > 0 {
		ca = "ca-" + Digest(a.CABundle)[:16] + ".pem"
		once(ca, string(a.CABundle))
	}
	if a.Credential != "" {
		cred = CredentialFilePrefix + Digest([]byte(a.Credential))[:16]
		once(cred, a.Credential)
	}
	switch {
	case cred != "":
		extra = "\t" + cmp.Or(ca, "-") + "\t" + cred
	case ca != "":
		extra = "\t" + ca
	}
	return a.URL, extra
}
