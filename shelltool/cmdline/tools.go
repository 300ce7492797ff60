package cmdline

import "strings"

// Programs whose options make them run other programs.

// sort: --compress-program runs a program; -o writes a file.
func (k *call) sort() {
	for i, a := range k.args {
		t := a.text
		switch {
		case longIs(t, "--compress-program"):
			k.raise(high, "sort --compress-program")
		case longIs(t, "--output"):
			k.raise(high, "sort -o")
		case len(t) > 1 && t[0] == '-' && t[1] != '-':
			for j := 1; j < len(t); j++ {
				if t[j] == 'o' {
					k.raise(high, "sort -o")
				}
				if strings.IndexByte("ktST", t[j]) >= 0 {
					break
				}
			}
		}
		_ = i
	}
}

func (k *call) rg() {
	for _, a := range k.args {
		if name, _, _ := strings.Cut(a.text, "="); name == "--pre" || name == "--pre-glob" {
			k.raise(high, "rg --pre")
		}
	}
}

func (k *call) man() {
	for _, a := range k.args {
		if a.text == "-P" || a.text == "-H" || longIs(a.text, "--pager") || longIs(a.text, "--html") || strings.HasPrefix(a.text, "-P") {
			k.raise(high, "man -P")
		}
	}
}

func (k *call) vim() {
	for _, a := range k.args {
		t := a.text
		if t == "-c" || t == "--cmd" || t == "-S" || t == "-u" || (len(t) > 1 && t[0] == '+' && !isDigits(t[1:])) {
			k.raise(high, "vim -c")
		}
	}
}

func (k *call) emacs() {
	for _, a := range k.args {
		if has("--eval -l --load -f --funcall -x --script", strings.SplitN(a.text, "=", 2)[0]) {
			k.raise(high, "emacs --eval")
		}
	}
}
