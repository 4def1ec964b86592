// Command probe is the e2e workload: a static binary in the test's busybox
// image (whose static BusyBox wget crashes in name resolution here).
//
//	probe serve :8080 TEXT      answer every GET with TEXT
//	probe get URL               print the body of URL (5 s timeout)
//	probe lookup NAME SERVER    resolve NAME's A records asking SERVER:53 only
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "probe:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: probe serve ADDR TEXT | get URL | lookup NAME SERVER")
	}
	switch {
	case args[0] == "serve" && len(args) == 3:
		srv := &http.Server{Addr: args[1], ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, args[2]+"\n")
		})}
		return srv.ListenAndServe()
	case args[0] == "get" && len(args) == 2:
		c := &http.Client{Timeout: 5 * time.Second}
		resp, err := c.Get(args[1])
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s", args[1], resp.Status)
		}
		_, err = io.Copy(os.Stdout, io.LimitReader(resp.Body, 1<<20))
		return err
	case args[0] == "lookup" && len(args) == 3:
		server := net.JoinHostPort(args[2], "53")
		r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{Timeout: 3 * time.Second}).DialContext(ctx, network, server)
		}}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		ips, err := r.LookupIP(ctx, "ip4", args[1])
		if err != nil {
			return err
		}
		for _, ip := range ips {
			fmt.Println(ip)
		}
		return nil
	}
	return fmt.Errorf("unknown command %q", args)
}
