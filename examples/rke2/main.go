package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "rke2:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("rke2", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "out", "directory the rendered files are written to")
	server := fs.String("server", "https://192.0.2.10:9345", "the first server's supervisor URL")
	tokenPath := fs.String("token-file", "", "file with the join token (default: a new random token)")
	version := fs.String("version", "v1.31.4+rke2r1", "the RKE2 release to install")
	installCmd := fs.String("install-command", "", "shell command that installs /usr/local/bin/rke2 (default: RKE2's installer from get.rke2.io)")
	mirror := fs.String("mirror", "", "registry mirror for docker.io (default: none)")
	admin := fs.String("admin", "jane.doe", "account with passwordless sudo (empty: none)")
	sshKey := fs.String("ssh-key", "", "the admin's public ssh key")
	ntp := fs.String("ntp", "0.pool.ntp.org,1.pool.ntp.org", "comma-separated time servers (empty: the image's default)")
	plans := fs.Bool("plans", false, "print the Plans as JSON on stdout (they hold the token) and render nothing")
	if err := fs.Parse(args); err != nil {
		return err
	}
	token, err := readToken(*tokenPath)
	if err != nil {
		return err
	}
	var servers []string
	for _, s := range strings.Split(*ntp, ",") {
		if s = strings.TrimSpace(s); s != "" {
			servers = append(servers, s)
		}
	}
	nodes := []struct {
		name string
		node Node
	}{{"server", Node{Server: true}}, {"agent", Node{}}}
	for i := range nodes {
		n := &nodes[i].node
		n.ServerURL, n.Token, n.Version, n.InstallCommand = *server, token, *version, *installCmd
		n.Mirror, n.Admin, n.SSHKey, n.NTPServers = *mirror, *admin, *sshKey, servers
	}
	if *plans {
		all := map[string]any{}
		for _, n := range nodes {
			all[n.name] = Plan(n.node)
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(all)
	}
	if err := os.MkdirAll(*out, 0o700); err != nil {
		return err
	}
	for _, n := range nodes {
		rs, err := Render(Plan(n.node))
		if err != nil {
			return fmt.Errorf("%s: %w", n.name, err)
		}
		for _, r := range rs {
			if len(r.Unsupported) > 0 {
				fmt.Fprintf(stderr, "%s.%s: not written: %s cannot express %v\n", n.name, r.Suffix, r.Format, r.Unsupported)
				continue
			}
			// The data holds the join token: owner-only.
			f := filepath.Join(*out, n.name+"."+r.Suffix)
			if err := os.WriteFile(f, r.Data, 0o600); err != nil {
				return err
			}
			fmt.Fprintln(stdout, f)
		}
	}
	return nil
}

func readToken(path string) (string, error) {
	if path == "" {
		b := make([]byte, 24)
		if _, err := rand.Read(b); err != nil {
			return "", err
		}
		return hex.EncodeToString(b), nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if fi.Size() > 4096 {
		return "", fmt.Errorf("-token-file: %d bytes, a token is at most 4096", fi.Size())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	token := strings.TrimRight(string(b), "\r\n")
	if token == "" {
		return "", fmt.Errorf("-token-file: the file is empty")
	}
	return token, nil
}
