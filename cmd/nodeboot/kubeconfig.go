package main

import (
	"io"
	"net/url"
	"sort"
	"strings"

	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// minSecret is the shortest kubeconfig value the output replacement looks
// for: replacing every "x" of the output would make it unreadable, and
// messages are built never to include a credential in the first place.
const minSecret = 4

// kubeconfigSecrets are the credentials a kubeconfig holds, for every user
// and cluster (not only the current context's): tokens, passwords, client
// keys line by line, auth-provider and exec settings, and what a server
// URL carries besides its host.
func kubeconfigSecrets(c *clientcmdapi.Config) []string {
	var out []string
	for _, u := range c.AuthInfos {
		if u == nil {
			continue
		}
		out = append(out, u.Token, u.Password)
		out = append(out, pemLines(u.ClientKeyData)...)
		if u.AuthProvider != nil {
			for _, v := range u.AuthProvider.Config {
				out = append(out, v)
			}
		}
		if u.Exec != nil {
			for _, e := range u.Exec.Env {
				out = append(out, e.Value)
			}
			out = append(out, u.Exec.Args...)
		}
	}
	for _, cl := range c.Clusters {
		if cl != nil {
			out = append(out, urlSecrets(cl.Server)...)
			out = append(out, urlSecrets(cl.ProxyURL)...)
		}
	}
	return out
}

// restConfigSecrets are the credentials of the config verify connects with
// (a token file's content included).
func restConfigSecrets(c *rest.Config) []string {
	out := []string{c.BearerToken, c.Password}
	out = append(out, pemLines(c.KeyData)...)
	return append(out, urlSecrets(c.Host)...)
}

// pemLines are the lines of a PEM key (and the whole of it), so that part
// of one is replaced too.
func pemLines(key []byte) []string {
	if len(key) == 0 {
		return nil
	}
	out := []string{string(key)}
	for _, l := range strings.Split(string(key), "\n") {
		if l = strings.TrimSpace(l); !strings.HasPrefix(l, "-----") {
			out = append(out, l)
		}
	}
	return out
}

// urlSecrets are the user information, query values and fragment of a URL.
func urlSecrets(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil {
		// Unparsable: all of it, so an echo of it is replaced.
		return []string{raw}
	}
	var out []string
	if u.User != nil {
		p, _ := u.User.Password()
		out = append(out, u.User.String(), p, url.QueryEscape(p))
	}
	for _, vs := range u.Query() {
		out = append(out, vs...)
	}
	if u.RawQuery != "" {
		out = append(out, u.RawQuery)
	}
	return append(out, u.Fragment)
}

// redactURL is a URL to print: scheme, host and path, nothing a kubeconfig
// may hide credentials in.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(the kubeconfig's server URL, which does not parse)"
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String()
}

// redactingWriter replaces the secrets in everything written through it
// with "[redacted]". Callers write whole lines, so a secret is never split
// across two writes.
func redactingWriter(w io.Writer, secrets []string) io.Writer {
	var pairs []string
	seen := map[string]bool{}
	// Longest first, so a secret that contains another is replaced whole.
	sort.Slice(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
	for _, s := range secrets {
		if len(s) >= minSecret && !seen[s] {
			seen[s] = true
			pairs = append(pairs, s, "[redacted]")
		}
	}
	if len(pairs) == 0 {
		return w
	}
	return &redacting{w: w, r: strings.NewReplacer(pairs...)}
}

type redacting struct {
	w io.Writer
	r *strings.Replacer
}

func (r *redacting) Write(p []byte) (int, error) {
	if _, err := io.WriteString(r.w, r.r.Replace(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
