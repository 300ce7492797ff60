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
	k.rsyncRemoves()
}

// rsyncValueOpts are rsync's long options that take the next word as
// their value when written without "="; rsyncValueLetters its short ones.
const (
	rsyncValueOpts = "--rsh --rsync-path --exclude --include --filter --files-from --exclude-from --include-from " +
		"--password-file --port --bwlimit --temp-dir --compare-dest --copy-dest --link-dest --backup-dir --suffix --chmod " +
		"--log-file --log-file-format --out-format --partial-dir --max-size --min-size --timeout --contimeout --info --debug " +
		"--remote-option --iconv --chown --usermap --groupmap --sockopts --checksum-choice --cc --compress-choice --zc " +
		"--compress-level --zl --skip-compress --modify-window --block-size --max-delete --max-alloc --stop-after --stop-at " +
		"--write-batch --read-batch --only-write-batch --protocol --address --checksum-seed --outbuf --early-input --mkpath-mode"
	rsyncValueLetters = "efTBM"
)

// rsyncRemoves: --delete (and its kinds) removes what the destination
// holds that the source lacks, so the destination is a tree it may empty
// (`rsync -a --delete empty/ .` empties the workspace); and
// --remove-source-files moves its sources away: removals of the sources
// where the destination lies outside the workspace (absolute, "..", or
// another host's). Both are judged as rm -r's operands (removeOperands).
func (k *call) rsyncRemoves() {
	del, moveOut := false, false
	var ops []arg
	for i := 0; i < len(k.args); i++ {
		a := k.args[i]
		t := a.text
		switch {
		case a.lit && strings.HasPrefix(t, "--"):
			name, _, inline := strings.Cut(t, "=")
			del = del || strings.HasPrefix(name, "--del")
			moveOut = moveOut || longIs(name, "--remove-source-files")
			if !inline && longOneOf(name, rsyncValueOpts) {
				i++
			}
		case a.lit && len(t) > 1 && t[0] == '-':
			for j, c := range t[1:] {
				if strings.ContainsRune(rsyncValueLetters, c) {
					if j == len(t)-2 {
						i++ // its value is the next word
					}
					break
				}
			}
		default:
			ops = append(ops, a)
		}
	}
	if len(ops) < 2 {
		return
	}
	dest, srcs := ops[len(ops)-1], ops[:len(ops)-1]
	if del {
		k.removeOperands("rsync --delete", []arg{dest}, false)
	}
	if moveOut && (dangerousTarget(dest, false) || strings.Contains(dest.text, ":")) {
		k.removeOperands("rsync --remove-source-files out of the workspace", srcs, false)
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
