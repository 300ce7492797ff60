package cmdline

import "strings"

func riskySSHOpt(o string) bool {
	o = strings.ToLower(o)
	for _, p := range []string{"proxycommand", "localcommand", "permitlocalcommand", "knownhostscommand", "remotecommand", "match"} {
		if strings.HasPrefix(o, p) {
			return true
		}
	}
	return false
}

// ssh: any session runs commands on another machine.
func (k *call) ssh() {
	k.raise(high, "ssh")
	proxy := false
	args := k.args
	i := 0
	for ; i < len(args); i++ {
		t := args[i].text
		if !args[i].lit || len(t) < 2 || t[0] != '-' {
			break
		}
		if t == "-o" && i+1 < len(args) && riskySSHOpt(args[i+1].text) || strings.HasPrefix(t, "-o") && riskySSHOpt(t[2:]) {
			proxy = true
		}
		if last := t[len(t)-1:]; strings.Contains("BbcDEeFIiJLlmOoPpQRSWw", last) && !strings.HasPrefix(t, "--") {
			i++
		}
	}
	switch {
	case k.risk > high:
	case proxy:
		k.option = "ssh -o ProxyCommand"
	case i+1 < len(args):
		k.option = "ssh remote command"
	}
}

func (k *call) curl() {
	for i, a := range k.args {
		t := a.text
		switch {
		case has("-d -F -T", t) || strings.HasPrefix(t, "-d") && len(t) > 2 && t[1] == 'd' ||
			longIs(t, "--data") || longIs(t, "--data-binary") || longIs(t, "--data-raw") || longIs(t, "--data-urlencode") ||
			longIs(t, "--form") || longIs(t, "--upload-file") || longIs(t, "--json"):
			k.raise(high, "curl upload (non-GET)")
		case t == "-X" || longIs(t, "--request"):
			if i+1 < len(k.args) && !has("GET HEAD OPTIONS", strings.ToUpper(k.args[i+1].text)) {
				k.raise(high, "curl -X (non-GET)")
			}
		case strings.HasPrefix(t, "-X") && len(t) > 2 && !has("GET HEAD OPTIONS", strings.ToUpper(t[2:])):
			k.raise(high, "curl -X (non-GET)")
		}
	}
}

func (k *call) scp() {
	args := k.args
	for i, a := range args {
		t := a.text
		if t == "-S" || t == "-F" || (t == "-o" && i+1 < len(args) && riskySSHOpt(args[i+1].text)) ||
			(strings.HasPrefix(t, "-o") && riskySSHOpt(t[2:])) {
			k.raise(high, k.name+" "+t)
		}
	}
}

func (k *call) rsync() {
	for _, a := range k.args {
		if longIs(a.text, "--rsh") || longIs(a.text, "--rsync-path") || shortHas(a.text, "e") {
			k.raise(high, "rsync -e")
		}
	}
}

func (k *call) wget() {
	for _, a := range k.args {
		if longIs(a.text, "--post-data") || longIs(a.text, "--post-file") || longIs(a.text, "--method") || longIs(a.text, "--body-data") || longIs(a.text, "--body-file") {
			k.raise(high, "wget --post (non-GET)")
		}
	}
}

func (k *call) nc() {
	for _, a := range k.args {
		if shortHas(a.text, "ec") || longIs(a.text, "--exec") || longIs(a.text, "--sh-exec") || longIs(a.text, "--lua-exec") {
			k.raise(high, k.name+" -e")
		}
	}
}

func (k *call) socat() {
	for _, a := range k.args {
		u := strings.ToUpper(a.text)
		if strings.HasPrefix(u, "EXEC:") || strings.HasPrefix(u, "SYSTEM:") {
			k.raise(high, "socat EXEC")
		}
	}
}

func (k *call) npm() {
	if sub, _ := firstOperand(k.args, ""); sub == "exec" || sub == "x" || sub == "dlx" {
		k.raise(high, k.name+" "+sub)
	}
}
