//go:build linux

package sandbox

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// maxWatchedEnv bounds the watched variables one event carries: past it
// the program cannot be decided (a refused program), as an argv past
// maxArgvBytes.
const maxWatchedEnv = 64 << 10

// envWatch is EnvWatch compiled for the tracer.
type envWatch struct {
	names    map[int][]string // lower case, by length
	prefixes []string         // lower case
	pins     []envPin
}

type envPin struct{ name, value string }

func compileEnvWatch(w EnvWatch) *envWatch {
	if len(w.Names) == 0 {
		return nil
	}
	c := &envWatch{names: map[int][]string{}}
	for _, n := range w.Names {
		if p, ok := strings.CutSuffix(n, "*"); ok {
			c.prefixes = append(c.prefixes, strings.ToLower(p))
		} else {
			c.names[len(n)] = append(c.names[len(n)], strings.ToLower(n))
		}
	}
	for _, p := range w.Pins {
		if k, v, ok := strings.Cut(p, "="); ok && c.watches([]byte(k)) {
			c.pins = append(c.pins, envPin{k, v})
		}
	}
	return c
}

// watches reports whether the variable named name is watched.
func (w *envWatch) watches(name []byte) bool {
	for _, n := range w.names[len(name)] {
		if bytes.EqualFold(name, []byte(n)) {
			return true
		}
	}
	for _, p := range w.prefixes {
		if len(name) >= len(p) && bytes.EqualFold(name[:len(p)], []byte(p)) {
			return true
		}
	}
	return false
}

// envReport collects one program's watched variables as its
// environment's entries are read.
type envReport struct {
	w     *envWatch
	set   []string
	seen  []bool // by pin: found (unchanged or changed)
	bytes int
}

// add takes one environment entry ("NAME=value" as the stack holds it;
// an entry without "=" is no variable a program reads).
func (r *envReport) add(entry []byte) error {
	k, v, ok := bytes.Cut(entry, []byte("="))
	if !ok || !r.w.watches(k) {
		return nil
	}
	report := true
	if i := slices.IndexFunc(r.w.pins, func(p envPin) bool { return p.name == string(k) }); i >= 0 {
		if r.seen == nil {
			r.seen = make([]bool, len(r.w.pins))
		}
		// A second entry of the same name (execve takes any list): which
		// one a program reads is its own choice, so it is shown.
		report = r.seen[i] || r.w.pins[i].value != string(v)
		r.seen[i] = true
	}
	if report {
		r.set = append(r.set, string(entry))
		r.bytes += len(entry)
	}
	if r.bytes > maxWatchedEnv {
		return fmt.Errorf("environment unreadable: its watched variables are over %d bytes", maxWatchedEnv)
	}
	return nil
}

// unset are the pins the environment lacks.
func (r *envReport) unset() []string {
	var out []string
	for i, p := range r.w.pins {
		if r.seen == nil || !r.seen[i] {
			out = append(out, p.name)
		}
	}
	return out
}
