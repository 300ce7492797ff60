package cmdline

import "strings"

// tar: options that run programs.
func (k *call) tar() {
	for i, a := range k.args {
		t := a.text
		if !a.lit {
			continue
		}
		switch {
		case strings.HasPrefix(t, "--"):
			for _, o := range []string{"--to-command", "--use-compress-program", "--checkpoint-action", "--info-script", "--new-volume-script", "--rsh-command"} {
				if longIs(t, o) {
					k.raise(high, "tar "+o)
				}
			}
		case strings.HasPrefix(t, "-") && strings.ContainsAny(t, "IF"):
			k.raise(high, "tar -I")
		case i == 0 && strings.ContainsAny(t, "IF") && !strings.Contains(t, "/") && !strings.Contains(t, "."):
			k.raise(high, "tar -I")
		}
	}
}

func (k *call) zip() {
	for _, a := range k.args {
		if strings.HasPrefix(a.text, "-TT") || longIs(a.text, "--unzip-command") {
			k.raise(high, "zip -TT")
		}
	}
}
