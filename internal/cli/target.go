package cli

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/runner"
	"github.com/mcpflight/mcpflight/transport"
)

// targetFlags are the flags that name the server under test, declared
// once for check, call, tools, shell and explore: --stdio (and --shell),
// --url (and its --header, --header-env) and, where a session is
// negotiated, --protocol.
type targetFlags struct {
	stdio    string
	shell    bool
	url      string
	headers  headerFlags
	protocol protocolFlag
}

// register declares the target flags on fs; withProtocol adds
// --protocol.
func (t *targetFlags) register(fs *flag.FlagSet, withProtocol bool) {
	fs.StringVar(&t.stdio, "stdio", "", "")
	fs.BoolVar(&t.shell, "shell", false, "")
	fs.StringVar(&t.url, "url", "", "")
	t.headers.register(fs)
	if withProtocol {
		t.protocol.register(fs)
	}
}

// check refuses the combinations no command accepts, and a --url that
// names no HTTP endpoint.
func (t targetFlags) check(usage string) error {
	switch {
	case t.url != "" && t.stdio != "":
		return usagef(usage, "--url and --stdio name two targets; pass one")
	case t.shell && t.stdio == "":
		return usagef(usage, "--shell needs --stdio")
	}
	return checkURL(t.url, usage)
}

// checkURL refuses a --url that is not an absolute http or https URL with
// a host ("127.0.0.1:3001/mcp" lacks its scheme), before anything is
// started; "" passes.
func checkURL(raw, usage string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		hint := ""
		if !strings.Contains(raw, "://") {
			hint = fmt.Sprintf(" (did you mean http://%s?)", chrono.Sanitize(raw, false))
		}
		return usagef(usage, "--url %q is not an http:// or https:// URL with a host%s", chrono.Sanitize(raw, false), hint)
	}
	return nil
}

// targetUsage documents the target flags in every command's usage.
const targetUsage = `  --stdio CMD          the server's command line, split like a shell would
                       (quotes, backslashes) but run without a shell
  --shell              run --stdio's (or --serve's) command line through /bin/sh -c
  --url URL            the MCP endpoint of a Streamable HTTP server
  --header 'NAME: VALUE'
                       send this header with every HTTP request (repeatable),
                       e.g. 'Authorization: Bearer …'; its value is redacted
                       from every output
  --header-env NAME=VAR
                       send header NAME with the value of environment
                       variable VAR (repeatable): the secret stays out of the
                       command line, where ps would show it
`

// stdioTarget is the runner's target for --stdio, or for the built-in
// reference server started as "mcpflight serve --stdio" (with o.faults),
// and the profile to use.
func (e Env) stdioTarget(o checkOptions) (runner.Target, *profile.Profile, error) {
	var (
		argv []string
		name string
		err  error
	)
	profileName := o.profile
	if o.stdio == "" {
		serve := e.ServeCommand
		if len(serve) == 0 {
			exe, err := os.Executable()
			if err != nil {
				return runner.Target{}, nil, fmt.Errorf("locating the mcpflight executable for the built-in server: %w", err)
			}
			serve = []string{exe}
		}
		argv = append(append([]string{}, serve...), "serve", "--stdio")
		for _, f := range o.faults {
			if _, err := refserver.ParseFault(f); err != nil {
				return runner.Target{}, nil, usagef(checkUsage, "--target-fault: %v", err)
			}
			argv = append(argv, "--fault", f)
		}
		name = "built-in reference server"
		if len(o.faults) > 0 {
			name += " with faults " + strings.Join(o.faults, ", ")
		}
		if profileName == "" {
			profileName = profile.Reference
		}
	} else {
		name = o.stdio
		if o.shell {
			argv = []string{o.stdio}
		} else if argv, err = transport.SplitArgs(o.stdio); err != nil {
			return runner.Target{}, nil, usagef(checkUsage, "--stdio: %v", err)
		} else if len(argv) == 0 {
			return runner.Target{}, nil, usagef(checkUsage, "--stdio: empty command line")
		}
		if profileName == "" && strings.Contains(o.stdio, "server-everything") {
			profileName = profile.ServerEverything
		}
	}
	prof, err := resolveProfile(profileName)
	if err != nil {
		return runner.Target{}, nil, err
	}
	return runner.StdioTarget(name, transport.StdioConfig{Argv: argv, Shell: o.shell, MaxFrame: o.maxFrame}), prof, nil
}

// resolveProfile resolves --profile (or the default chosen for the
// target); "" is no profile.
func resolveProfile(name string) (*profile.Profile, error) {
	if name == "" {
		return nil, nil
	}
	prof, err := profile.Resolve(name)
	if err != nil {
		return nil, usagef(checkUsage, "--profile: %v", err)
	}
	return prof, nil
}

// httpBound is how long a response of a case with deadline caseTimeout
// may keep its headers back, or stay silent once they are in: three
// quarters of the deadline, so that a server that never answers is named
// as such (transport.ErrStalled) before the case's own deadline ends the
// case with a vaguer error.
func httpBound(caseTimeout time.Duration) time.Duration { return caseTimeout * 3 / 4 }

// httpTarget is the runner's target for a Streamable HTTP endpoint: the
// URL given with --url, or the built-in reference server served in this
// process (--transport http), a server of its own for each case on a free
// loopback port, so that cases run side by side share nothing; it stops
// when the case is over. Its chronologies redact the run's secrets.
func (e Env) httpTarget(o checkOptions) (runner.Target, *profile.Profile, error) {
	name, profileName := e.redactedURL(o.url), o.profile
	var set refserver.FaultSet
	if o.url == "" {
		set = refserver.FaultSet{}
		for _, f := range o.faults {
			fault, err := refserver.ParseFault(f)
			if err != nil {
				return runner.Target{}, nil, usagef(checkUsage, "--target-fault: %v", err)
			}
			set[fault] = true
		}
		name = "built-in reference server over HTTP (in this process, one per case on 127.0.0.1)"
		if len(o.faults) > 0 {
			name += " with faults " + strings.Join(o.faults, ", ")
		}
		if profileName == "" {
			profileName = profile.Reference
		}
	} else if profileName == "" && strings.Contains(o.url, "server-everything") {
		profileName = profile.ServerEverything
	}
	prof, err := resolveProfile(profileName)
	if err != nil {
		return runner.Target{}, nil, err
	}
	bound := httpBound(o.caseTimeout)
	config := func(url string) transport.HTTPConfig {
		return transport.HTTPConfig{URL: url, Headers: o.header, MaxEvent: int64(o.maxFrame), StallTimeout: bound, HeaderTimeout: bound}
	}
	if o.url != "" {
		return runner.HTTPTarget(name, config(o.url)).Redacting(e.redact), prof, nil
	}
	version := e.version()
	target := runner.Target{Name: name, Transport: runner.TransportHTTP}
	target.PerCase = func(context.Context) (func(context.Context, *chrono.Log) (transport.Conn, error), func(), error) {
		srv := refserver.New(refserver.Options{Faults: set, Version: version})
		// The case and its teardown are over when the server stops:
		// nothing is left to drain.
		ep, err := srv.ListenHTTP("127.0.0.1:0", refserver.BindOptions{})
		if err != nil {
			return nil, nil, err
		}
		return runner.HTTPTarget(name, config(ep.URL)).Dial, ep.Close, nil
	}
	return target.Redacting(e.redact), prof, nil
}

// sessionTarget is the target of call, tools, shell and explore: --url
// (with its headers), --stdio, or the built-in reference server over
// stdio. stop ends whatever the target needed; it is never nil.
func (e Env) sessionTarget(o checkOptions, usage string) (runner.Target, *profile.Profile, func(), error) {
	nop := func() {}
	if err := o.targetFlags.check(usage); err != nil {
		return runner.Target{}, nil, nop, err
	}
	if o.headers.given() && o.url == "" {
		return runner.Target{}, nil, nop, usagef(usage, "%v", errHeadersNeedHTTP)
	}
	var err error
	if o.header, err = e.resolveHeaders(o.headers, usage); err != nil {
		return runner.Target{}, nil, nop, err
	}
	if o.url != "" {
		target, prof, err := e.httpTarget(o)
		return target, prof, nop, err
	}
	target, prof, err := e.stdioTarget(o)
	return target, prof, nop, err
}
