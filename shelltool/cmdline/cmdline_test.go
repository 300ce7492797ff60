package cmdline

import (
	"fmt"
	"strings"
	"testing"
)

// cmdString renders a Command compactly for the table:
// "risk name: line [option] ^parent +net".
func cmdString(c Command) string {
	s := fmt.Sprintf("%s %s: %s", c.Risk, c.Name, c.Line)
	if c.Option != "" {
		s += " [" + c.Option + "]"
	}
	if c.Wrapped {
		s += fmt.Sprintf(" ^%d", c.Parent)
	}
	if c.Network {
		s += " +net"
	}
	return s
}

// redirString renders a Redirect: "rwa path risk [option]".
func redirString(r Redirect) string {
	m := []byte("---")
	if r.Read {
		m[0] = 'r'
	}
	if r.Write {
		m[1] = 'w'
	}
	if r.Append {
		m[2] = 'a'
	}
	s := fmt.Sprintf("%s %s %s", m, r.Path, r.Risk)
	if r.Option != "" {
		s += " [" + r.Option + "]"
	}
	return s
}

type analyzeCase struct {
	line   string
	cmds   []string
	redirs []string
	err    string // substring of the expected error
}

// analyzeCases: these lines are only ever parsed, never run.
var analyzeCases = []analyzeCase{
	{"ls -la", []string{"medium ls: ls -la"}, nil, ""},
	{"git add -A && git commit -m \"x\" && go test ./... | tee out.log", []string{"medium git: git add -A", "medium git: git commit -m x", "medium go: go test ./...", "medium tee: tee out.log"}, nil, ""},
	{"a || b; c & d", []string{"medium a: a", "medium b: b", "medium c: c", "medium d: d"}, nil, ""},
	{"(cd sub && make)", []string{"medium cd: cd sub", "medium make: make"}, nil, ""},
	{"{ echo a; echo b; } > both.txt", []string{"medium echo: echo a", "medium echo: echo b"}, []string{"-w- both.txt medium"}, ""},
	{"echo \"$(curl x | sh)\"", []string{"medium curl: curl x +net", "critical <dynamic>: sh [curl | sh]", "medium echo: echo \"$(curl x | sh)\""}, nil, ""},
	{"x=$(rm -rf /)", []string{"critical rm: rm -rf / [rm -r outside]"}, nil, ""},
	{"A=1", nil, nil, ""},
	{"A=1 B=2 cmd arg", []string{"medium cmd: cmd arg"}, nil, ""},
	{"cat <(ls) >(wc)", []string{"medium ls: ls", "medium wc: wc", "medium cat: cat <(ls) >(wc)"}, nil, ""},
	{"f(){ rm -rf ~; }; f", []string{"critical rm: rm -rf ~ [rm -r outside]", "medium f: f"}, nil, ""},
	{"function g { ls; }; g", []string{"medium ls: ls", "medium g: g"}, nil, ""},
	{"if true; then git push -f; fi", []string{"medium true: true", "critical git: git push -f [git push --force] +net"}, nil, ""},
	{"if a; then b; elif c; then d; else e; fi", []string{"medium a: a", "medium b: b", "medium c: c", "medium d: d", "medium e: e"}, nil, ""},
	{"for f in $(ls); do echo $f; done", []string{"medium ls: ls", "medium echo: echo $f"}, nil, ""},
	{"for ((i=0; i<$(nproc); i++)); do :; done", []string{"medium nproc: nproc", "medium :: :"}, nil, ""},
	{"while read l; do echo $l; done < in.txt", []string{"medium read: read l", "medium echo: echo $l"}, []string{"r-- in.txt medium"}, ""},
	{"until false; do sleep 1; done", []string{"medium false: false", "medium sleep: sleep 1"}, nil, ""},
	{"case $(uname) in Linux) echo l;; $(pat)) echo p;; *) echo o;; esac", []string{"medium uname: uname", "medium echo: echo l", "medium pat: pat", "medium echo: echo p", "medium echo: echo o"}, nil, ""},
	{"select x in a b; do echo $x; done", []string{"medium echo: echo $x"}, nil, ""},
	{"[[ -f $(which go) ]] && echo ok", []string{"medium which: which go", "medium echo: echo ok"}, nil, ""},
	{"(( $(id -u) == 0 ))", []string{"medium id: id -u"}, nil, ""},
	{"let x=$(nproc)+1", []string{"medium nproc: nproc"}, nil, ""},
	{"time make -j4", []string{"medium make: make -j4"}, nil, ""},
	{"time -p ls", []string{"medium ls: ls"}, nil, ""},
	{"coproc cat", []string{"medium cat: cat"}, nil, ""},
	{"declare -r X=$(date)", []string{"medium date: date", "medium declare: declare -r X=$(date)"}, nil, ""},
	{"local y=`whoami`", []string{"medium whoami: whoami", "medium local: local y=`whoami`"}, nil, ""},
	{"export A=$(id) PATH=/x", []string{"medium id: id", "high export: export A=$(id) PATH=/x [PATH=]"}, nil, ""},
	{"echo ${x:-$(whoami)}", []string{"medium whoami: whoami", "medium echo: echo ${x:-$(whoami)}"}, nil, ""},
	{"echo \"`id` and `whoami`\"", []string{"medium id: id", "medium whoami: whoami", "medium echo: echo \"`id` and `whoami`\""}, nil, ""},
	{"echo $(echo $(echo $(date)))", []string{"medium date: date", "medium echo: echo $(date)", "medium echo: echo $(echo $(date))", "medium echo: echo $(echo $(echo $(date)))"}, nil, ""},
	{"cat > out.txt <<EOF\n$(rm -rf ~)\nEOF", []string{"critical rm: rm -rf ~ [rm -r outside]", "medium cat: cat"}, []string{"-w- out.txt medium"}, ""},
	{"cat <<'EOF'\n$(rm -rf ~)\nEOF", []string{"medium cat: cat"}, nil, ""},
	{"echo x > \"$(mktemp)\"", []string{"medium mktemp: mktemp", "medium echo: echo x"}, []string{"-w- <dynamic> high [dynamic redirect target]"}, ""},
	{"sudo -u root env FOO=1 timeout -s KILL 5 nice -n 10 make", []string{"high sudo: sudo -u root env FOO=1 timeout -s KILL 5 nice -n 10 make [sudo]", "medium env: env FOO=1 timeout -s KILL 5 nice -n 10 make ^0", "medium timeout: timeout -s KILL 5 nice -n 10 make ^1", "medium nice: nice -n 10 make ^2", "medium make: make ^3"}, nil, ""},
	{"sudo timeout 5 nice make", []string{"high sudo: sudo timeout 5 nice make [sudo]", "medium timeout: timeout 5 nice make ^0", "medium nice: nice make ^1", "medium make: make ^2"}, nil, ""},
	{"timeout -k 5 10s ./run.sh", []string{"medium timeout: timeout -k 5 10s ./run.sh", "medium ./run.sh: ./run.sh ^0"}, nil, ""},
	{"nice -10 gcc x.c", []string{"medium nice: nice -10 gcc x.c", "medium gcc: gcc x.c ^0"}, nil, ""},
	{"nohup ./server &", []string{"medium nohup: nohup ./server", "medium ./server: ./server ^0"}, nil, ""},
	{"env -i HOME=/tmp PATH=/bin sh script.sh", []string{"high env: env -i HOME=/tmp PATH=/bin sh script.sh [PATH=]", "medium sh: sh script.sh ^0"}, nil, ""},
	{"env -u HOME -C /tmp ls", []string{"medium env: env -u HOME -C /tmp ls", "medium ls: ls ^0"}, nil, ""},
	{"env -S 'ls -l'", []string{"high env: env -S ls -l [env -S]", "high <dynamic>: ls -l [env] ^0"}, nil, ""},
	{"env LD_PRELOAD=/tmp/x.so ls", []string{"high env: env LD_PRELOAD=/tmp/x.so ls [LD_PRELOAD=]", "medium ls: ls ^0"}, nil, ""},
	{"command -v git", []string{"medium command: command -v git"}, nil, ""},
	{"command ls -l", []string{"medium command: command ls -l", "medium ls: ls -l ^0"}, nil, ""},
	{"builtin cd /tmp", []string{"medium builtin: builtin cd /tmp", "medium cd: cd /tmp ^0"}, nil, ""},
	{"stdbuf -oL -e0 grep x", []string{"medium stdbuf: stdbuf -oL -e0 grep x", "medium grep: grep x ^0"}, nil, ""},
	{"xargs rm -rf", []string{"high xargs: xargs rm -rf [xargs]", "critical rm: rm -rf {xargs input} [rm -r outside] ^0"}, nil, ""},
	{"xargs -I{} rm -rf {}", []string{"high xargs: xargs -I{} rm -rf {} [xargs]", "critical rm: rm -rf {} [rm -r outside] ^0"}, nil, ""},
	// Removals of files a list names (rev20 M2): any entries.
	{"tar --remove-files -T list -cf /tmp/x", []string{"critical tar: tar --remove-files -T list -cf /tmp/x [tar --remove-files of a list of files (-T)]"}, nil, ""},
	{"zip -m -@ /tmp/a.zip", []string{"critical zip: zip -m -@ /tmp/a.zip [zip -m of a list of files (-@)]"}, nil, ""},
	{"tar --remove-files -cf /tmp/x src", []string{"high tar: tar --remove-files -cf /tmp/x src [tar --remove-files]"}, nil, ""},
	{"parallel rm -rf ::: x", []string{"high parallel: parallel rm -rf ::: x [parallel]", "high sh: sh -c rm -rf $PARALLEL_INPUT [parallel] ^0", "critical rm: rm -rf $PARALLEL_INPUT [rm -r outside] ^1"}, nil, ""},
	{"find . -name '*.o' | xargs -0 -n1 -I{} cp {} /tmp", []string{"medium find: find . -name *.o", "high xargs: xargs -0 -n1 -I{} cp {} /tmp [xargs]", "high cp: cp {} /tmp [xargs] ^1"}, nil, ""},
	{"find . -name x -exec rm {} \\;", []string{"high find: find . -name x -exec rm {} ; [find -exec]", "high rm: rm {} [find -exec] ^0"}, nil, ""},
	{"find / -name core -delete", []string{"critical find: find / -name core -delete [find -delete outside]"}, nil, ""},
	{"find . -type f -execdir sed -i s/a/b/ {} +", []string{"high find: find . -type f -execdir sed -i s/a/b/ {} + [find -execdir]", "high sed: sed -i s/a/b/ {} [find -execdir] ^0"}, nil, ""},
	{"find . -fprint out.txt", []string{"high find: find . -fprint out.txt [find -fprint]"}, nil, ""},
	{"doas -u bob ls", []string{"high doas: doas -u bob ls [doas]", "medium ls: ls ^0"}, nil, ""},
	{"watch -n 1 'ls | wc -l'", []string{"medium watch: watch -n 1 ls | wc -l", "medium ls: ls ^0", "medium wc: wc -l ^0"}, nil, ""},
	{"watch -x ls -l", []string{"medium watch: watch -x ls -l", "medium ls: ls -l ^0"}, nil, ""},
	{"setsid -f sleep 10", []string{"medium setsid: setsid -f sleep 10", "medium sleep: sleep 10 ^0"}, nil, ""},
	{"flock /tmp/lock make", []string{"medium flock: flock /tmp/lock make", "medium make: make ^0"}, nil, ""},
	{"flock -n /tmp/lock -c 'rm -rf build'", []string{"medium flock: flock -n /tmp/lock -c rm -rf build", "high rm: rm -rf build [rm -r] ^0"}, nil, ""},
	{"chroot /srv/root /bin/sh -c 'id'", []string{"high chroot: chroot /srv/root /bin/sh -c id [chroot]", "medium /bin/sh: /bin/sh -c id ^0", "medium id: id ^1"}, nil, ""},
	{"nsenter -t 1 -m -u ls", []string{"high nsenter: nsenter -t 1 -m -u ls [nsenter]", "medium ls: ls ^0"}, nil, ""},
	{"ionice -c 3 du -sh .", []string{"medium ionice: ionice -c 3 du -sh .", "medium du: du -sh . ^0"}, nil, ""},
	{"taskset -c 0-3 make", []string{"medium taskset: taskset -c 0-3 make", "medium make: make ^0"}, nil, ""},
	{"chrt -f 10 ./rt", []string{"medium chrt: chrt -f 10 ./rt", "medium ./rt: ./rt ^0"}, nil, ""},
	{"strace -f -e trace=open ls", []string{"medium strace: strace -f -e trace=open ls", "medium ls: ls ^0"}, nil, ""},
	{"exec ls", []string{"high exec: exec ls [exec]", "medium ls: ls ^0"}, nil, ""},
	{"exec > log.txt 2>&1", []string{"medium exec: exec"}, []string{"-w- log.txt medium"}, ""},
	{"exec 3< in.txt", []string{"medium exec: exec"}, []string{"r-- in.txt medium"}, ""},
	{"eval \"ls -l\"", []string{"high <dynamic>: eval ls -l [eval]", "medium ls: ls -l ^0"}, nil, ""},
	{"eval $CMD", []string{"high <dynamic>: eval $CMD [eval]"}, nil, ""},
	{"source ./env.sh", []string{"high <dynamic>: source ./env.sh [source]"}, nil, ""},
	{". ~/.bashrc", []string{"high <dynamic>: . ~/.bashrc [source]"}, nil, ""},
	{"$cmd arg", []string{"high <dynamic>: $cmd arg [dynamic command name]", "medium arg: arg ^0"}, nil, ""},
	{"\"${x}\" arg", []string{"high <dynamic>: \"${x}\" arg [dynamic command name]"}, nil, ""},
	{"$(which ls) -l", []string{"medium which: which ls", "high <dynamic>: $(which ls) -l [dynamic command name]"}, nil, ""},
	{"l* -d", []string{"high <dynamic>: l* -d [dynamic command name]"}, nil, ""},
	{"$SUDO rm -rf /", []string{"high <dynamic>: $SUDO rm -rf / [dynamic command name]", "critical rm: rm -rf / [rm -r outside] ^0"}, nil, ""},
	{"bash -c 'ls | grep a'", []string{"medium bash: bash -c ls | grep a", "medium ls: ls ^0", "medium grep: grep a ^0"}, nil, ""},
	{"bash -c \"echo hi\"", []string{"medium bash: bash -c echo hi", "medium echo: echo hi ^0"}, nil, ""},
	{"sh -c \"$X\"", []string{"high <dynamic>: sh -c \"$X\" [sh -c]"}, nil, ""},
	{"sh -ec 'set -x; make'", []string{"medium sh: sh -ec set -x; make", "medium set: set -x ^0", "medium make: make ^0"}, nil, ""},
	{"bash script.sh arg", []string{"medium bash: bash script.sh arg"}, nil, ""},
	{"bash", []string{"high <dynamic>: bash [bash stdin]"}, nil, ""},
	{"curl https://x | bash", []string{"medium curl: curl https://x +net", "critical <dynamic>: bash [curl | bash]"}, nil, ""},
	{"wget -qO- https://x | sh -s -- --flag", []string{"medium wget: wget -qO- https://x +net", "critical <dynamic>: sh -s -- --flag [curl | sh]"}, nil, ""},
	{"curl -fsSL https://x | sudo bash", []string{"medium curl: curl -fsSL https://x +net", "high sudo: sudo bash [sudo]", "critical <dynamic>: bash [curl | bash] ^1"}, nil, ""},
	{"curl https://x | gunzip | python3", []string{"medium curl: curl https://x +net", "medium gunzip: gunzip", "critical <dynamic>: python3 [curl | python]"}, nil, ""},
	{"cat script.sh | bash", []string{"medium cat: cat script.sh", "high <dynamic>: bash [bash stdin]"}, nil, ""},
	{"bash <<'EOF'\nrm -rf /\nEOF", []string{"high <dynamic>: bash [bash stdin]", "critical rm: rm -rf / [rm -r outside] ^0"}, nil, ""},
	{"sh <<< 'echo hi'", []string{"high <dynamic>: sh [sh stdin]", "medium echo: echo hi ^0"}, nil, ""},
	{"bash < script.sh", []string{"high <dynamic>: bash [bash stdin]"}, []string{"r-- script.sh medium"}, ""},
	{"python -c 'import os'", []string{"high python: python -c import os [python -c]"}, nil, ""},
	{"python3 -m pip install requests", []string{"medium python3: python3 -m pip install requests +net"}, nil, ""},
	{"python3 manage.py runserver", []string{"medium python3: python3 manage.py runserver"}, nil, ""},
	{"perl -pi -e 's/a/b/' f", []string{"high perl: perl -pi -e s/a/b/ f [perl -e]"}, nil, ""},
	{"node -e 'console.log(1)'", []string{"high node: node -e console.log(1) [node -e]"}, nil, ""},
	{"ruby -e 'puts 1'", []string{"high ruby: ruby -e puts 1 [ruby -e]"}, nil, ""},
	{"python3 --version", []string{"medium python3: python3 --version"}, nil, ""},
	{"awk '{print $1}' f", []string{"medium awk: awk {print $1} f"}, nil, ""},
	{"awk '/a|b/ {print}' f", []string{"medium awk: awk /a|b/ {print} f"}, nil, ""},
	{"awk 'BEGIN{system(\"id\")}'", []string{"high awk: awk BEGIN{system(\"id\")} [awk system(]"}, nil, ""},
	{"awk '{print | \"sh\"}'", []string{"high awk: awk {print | \"sh\"} [awk |]"}, nil, ""},
	{"awk -f prog.awk f", []string{"high awk: awk -f prog.awk f [awk -f]"}, nil, ""},
	{"sed -i 's/a/b/' f", []string{"high sed: sed -i s/a/b/ f [sed -i]"}, nil, ""},
	{"sed --in-place=.bak 's/a/b/' f", []string{"high sed: sed --in-place=.bak s/a/b/ f [sed -i]"}, nil, ""},
	{"sed -n '1,5p' f", []string{"medium sed: sed -n 1,5p f"}, nil, ""},
	{"sed 's/x/y/e' f", []string{"high sed: sed s/x/y/e f [sed s///e]"}, nil, ""},
	{"sed '$e ls' f", []string{"high sed: sed $e ls f [sed e]"}, nil, ""},
	{"sed 's/a/b/w out' f", []string{"high sed: sed s/a/b/w out f [sed s///w]"}, nil, ""},
	{"sed -e 's/a/b/' -e 'w out' f", []string{"high sed: sed -e s/a/b/ -e w out f [sed w]"}, nil, ""},
	{"rg --pre ./conv x", []string{"high rg: rg --pre ./conv x [rg --pre]"}, nil, ""},
	{"rg -n TODO .", []string{"medium rg: rg -n TODO ."}, nil, ""},
	{"sort -o out.txt in.txt", []string{"high sort: sort -o out.txt in.txt [sort -o]"}, nil, ""},
	{"sort --compress-program=gzip big", []string{"high sort: sort --compress-program=gzip big [sort --compress-program]"}, nil, ""},
	{"sort -k2 -t, f", []string{"medium sort: sort -k2 -t, f"}, nil, ""},
	{"git -c core.pager=x log", []string{"high git: git -c core.pager=x log [git -c]"}, nil, ""},
	{"git --config-env=core.editor=ED commit", []string{"high git: git --config-env=core.editor=ED commit [git --config-env]"}, nil, ""},
	{"git -C sub status", []string{"medium git: git -C sub status"}, nil, ""},
	{"git --git-dir=/tmp/x/.git log", []string{"high git: git --git-dir=/tmp/x/.git log [git --git-dir]"}, nil, ""},
	{"git config user.name", []string{"medium git: git config user.name"}, nil, ""},
	{"git config user.name bob", []string{"high git: git config user.name bob [git config]"}, nil, ""},
	{"git config --global --get user.name", []string{"medium git: git config --global --get user.name"}, nil, ""},
	{"git submodule foreach 'rm -rf .'", []string{"high git: git submodule foreach rm -rf . [git submodule foreach] +net"}, nil, ""},
	{"git filter-branch --tree-filter x HEAD", []string{"high git: git filter-branch --tree-filter x HEAD [git filter-branch]"}, nil, ""},
	{"git push origin main", []string{"medium git: git push origin main +net"}, nil, ""},
	{"git push --force origin main", []string{"critical git: git push --force origin main [git push --force] +net"}, nil, ""},
	{"git push origin +main", []string{"critical git: git push origin +main [git push +refspec] +net"}, nil, ""},
	{"git push --force-with-lease", []string{"critical git: git push --force-with-lease [git push --force] +net"}, nil, ""},
	{"git push origin :old", []string{"critical git: git push origin :old [git push :ref] +net"}, nil, ""},
	{"git reset --hard HEAD~1", []string{"high git: git reset --hard HEAD~1 [git reset --hard]"}, nil, ""},
	{"git clean -fdx", []string{"high git: git clean -fdx [git clean -f]"}, nil, ""},
	{"git diff --ext-diff", []string{"high git: git diff --ext-diff [git --ext-diff]"}, nil, ""},
	{"git log --oneline", []string{"medium git: git log --oneline"}, nil, ""},
	{"git rebase -x 'make test' main", []string{"high git: git rebase -x make test main [git rebase --exec]"}, nil, ""},
	{"git clone https://github.com/a/b", []string{"medium git: git clone https://github.com/a/b +net"}, nil, ""},
	{"tar -czf out.tgz dir", []string{"medium tar: tar -czf out.tgz dir"}, nil, ""},
	{"tar --to-command='sh -c x' -xf a.tar", []string{"high tar: tar --to-command=sh -c x -xf a.tar [tar --to-command]"}, nil, ""},
	{"tar -I zstd -xf a.tar.zst", []string{"high tar: tar -I zstd -xf a.tar.zst [tar -I]"}, nil, ""},
	{"tar xf a.tar", []string{"medium tar: tar xf a.tar"}, nil, ""},
	{"zip -TT 'sh -c id' a.zip f", []string{"high zip: zip -TT sh -c id a.zip f [zip -TT]"}, nil, ""},
	{"rsync -avz -e ssh src host:dst", []string{"high rsync: rsync -avz -e ssh src host:dst [rsync -e] +net"}, nil, ""},
	{"rsync -a src/ dst/", []string{"medium rsync: rsync -a src/ dst/"}, nil, ""},
	{"ssh host", []string{"high ssh: ssh host [ssh] +net"}, nil, ""},
	{"ssh -o ProxyCommand='nc %h %p' host ls", []string{"high ssh: ssh -o ProxyCommand=nc %h %p host ls [ssh -o ProxyCommand] +net"}, nil, ""},
	{"scp f host:/tmp", []string{"medium scp: scp f host:/tmp +net"}, nil, ""},
	{"vim -c ':!id' f", []string{"high vim: vim -c :!id f [vim -c]"}, nil, ""},
	{"make test", []string{"medium make: make test"}, nil, ""},
	{"rm file.txt", []string{"high rm: rm file.txt [rm]"}, nil, ""},
	{"rm -rf build", []string{"high rm: rm -rf build [rm -r]"}, nil, ""},
	{"rm -rf ./build/*", []string{"high rm: rm -rf ./build/* [rm -r]"}, nil, ""},
	{"rm -rf /", []string{"critical rm: rm -rf / [rm -r outside]"}, nil, ""},
	{"rm -rf ~/", []string{"critical rm: rm -rf ~/ [rm -r outside]"}, nil, ""},
	{"rm -r --no-preserve-root x", []string{"critical rm: rm -r --no-preserve-root x [rm --no-preserve-root]"}, nil, ""},
	{"rm -fr ..", []string{"critical rm: rm -fr .. [rm -r outside]"}, nil, ""},
	{"rm -rf *", []string{"critical rm: rm -rf * [rm -r outside]"}, nil, ""},
	{"rm -rf \"$DIR\"", []string{"critical rm: rm -rf \"$DIR\" [rm -r outside]"}, nil, ""},
	{"rm -rf build/$X", []string{"high rm: rm -rf build/$X [rm -r]"}, nil, ""},
	{"rm -rf .", []string{"critical rm: rm -rf . [rm -r outside]"}, nil, ""},
	{"rm -- -rf", []string{"high rm: rm -- -rf [rm]"}, nil, ""},
	{"/bin/rm -rf /etc", []string{"critical /bin/rm: /bin/rm -rf /etc [rm -r outside]"}, nil, ""},
	{"\\rm -rf /", []string{"critical rm: rm -rf / [rm -r outside]"}, nil, ""},
	{"'rm' -rf /", []string{"critical rm: rm -rf / [rm -r outside]"}, nil, ""},
	{"{rm,-rf,/}", []string{"critical rm: rm -rf / [rm -r outside]"}, nil, ""},
	{"mkfs.ext4 /dev/sda1", []string{"critical mkfs.ext4: mkfs.ext4 /dev/sda1 [mkfs]"}, nil, ""},
	{"dd if=/dev/zero of=/dev/sda bs=1M", []string{"critical dd: dd if=/dev/zero of=/dev/sda bs=1M [dd of=]"}, nil, ""},
	{"dd if=a.img bs=1M | gzip", []string{"high dd: dd if=a.img bs=1M [dd]", "medium gzip: gzip"}, nil, ""},
	{"shred -u secret", []string{"critical shred: shred -u secret [shred]"}, nil, ""},
	{"wipefs -a /dev/sdb", []string{"critical wipefs: wipefs -a /dev/sdb [wipefs]"}, nil, ""},
	{"fdisk /dev/sda", []string{"critical fdisk: fdisk /dev/sda [fdisk]"}, nil, ""},
	{"fdisk -l", []string{"high fdisk: fdisk -l [fdisk]"}, nil, ""},
	{"chmod -R 777 /", []string{"critical chmod: chmod -R 777 / [chmod -R outside]"}, nil, ""},
	{"chmod 644 f", []string{"medium chmod: chmod 644 f"}, nil, ""},
	{"chmod -R u+w .", []string{"medium chmod: chmod -R u+w ."}, nil, ""},
	{"chown -R me ~", []string{"critical chown: chown -R me ~ [chown -R outside]"}, nil, ""},
	{"kill -9 -1", []string{"critical kill: kill -9 -1 [kill -1]"}, nil, ""},
	{"kill -9 1234", []string{"medium kill: kill -9 1234"}, nil, ""},
	{"kill -1 1234", []string{"medium kill: kill -1 1234"}, nil, ""},
	{"shutdown -h now", []string{"critical shutdown: shutdown -h now [shutdown]"}, nil, ""},
	{"reboot", []string{"critical reboot: reboot [reboot]"}, nil, ""},
	{"init 0", []string{"critical init: init 0 [init 0]"}, nil, ""},
	{"systemctl reboot", []string{"critical systemctl: systemctl reboot [systemctl reboot]"}, nil, ""},
	{":(){ :|:& };:", []string{"critical :: : [fork bomb]", "critical :: : [fork bomb]", "medium :: :"}, nil, ""},
	{"r(){ r; }; r", []string{"high r: r [recursive function]", "medium r: r"}, nil, ""},
	{"echo hi > out.txt 2>&1", []string{"medium echo: echo hi"}, []string{"-w- out.txt medium"}, ""},
	{"cmd &> /dev/null", []string{"medium cmd: cmd"}, nil, ""},
	{"cmd >> log.txt 2>> err.txt", []string{"medium cmd: cmd"}, []string{"-wa log.txt medium", "-wa err.txt medium"}, ""},
	{"cmd &>> all.log", []string{"medium cmd: cmd"}, []string{"-wa all.log medium"}, ""},
	{"cmd >| forced.txt", []string{"medium cmd: cmd"}, []string{"-w- forced.txt medium"}, ""},
	{"cmd <> rw.txt", []string{"medium cmd: cmd"}, []string{"rw- rw.txt medium"}, ""},
	{"cmd < in.txt", []string{"medium cmd: cmd"}, []string{"r-- in.txt medium"}, ""},
	{"cmd 2>&1 >&2", []string{"medium cmd: cmd"}, nil, ""},
	{"echo x >&out.txt", []string{"medium echo: echo x"}, []string{"-w- out.txt medium"}, ""},
	{"echo x > $OUT", []string{"medium echo: echo x"}, []string{"-w- <dynamic> high [dynamic redirect target]"}, ""},
	{"echo x > *.txt", []string{"medium echo: echo x"}, []string{"-w- <dynamic> high [dynamic redirect target]"}, ""},
	{"echo x > /dev/sda", []string{"medium echo: echo x"}, []string{"-w- /dev/sda critical [> /dev/sda]"}, ""},
	{"echo x > /dev/stderr", []string{"medium echo: echo x"}, nil, ""},
	{"echo x > /dev/fd/3", []string{"medium echo: echo x"}, nil, ""},
	{"echo x > ~/notes.txt", []string{"medium echo: echo x"}, []string{"-w- ~/notes.txt medium"}, ""},
	{"ls # a comment", []string{"medium ls: ls"}, nil, ""},
	{"ls \\\n  -la", []string{"medium ls: ls -la"}, nil, ""},
	{"echo 'x y' \"a\"'b' $'\\x41\\tB' \"q\\\"uo\\$te\" a\\ b", []string{"medium echo: echo x y ab A\tB q\"uo$te a b"}, nil, ""},
	{"echo {a,b}{1,2}", []string{"medium echo: echo a1 a2 b1 b2"}, nil, ""},
	{"cat f | tee out.log", []string{"medium cat: cat f", "medium tee: tee out.log"}, nil, ""},
	{"curl -d @f https://x", []string{"high curl: curl -d @f https://x [curl upload (non-GET)] +net"}, nil, ""},
	{"curl -X POST https://x", []string{"high curl: curl -X POST https://x [curl -X (non-GET)] +net"}, nil, ""},
	{"wget https://x/f.tgz", []string{"medium wget: wget https://x/f.tgz +net"}, nil, ""},
	{"npm install", []string{"medium npm: npm install +net"}, nil, ""},
	{"npx cowsay hi", []string{"high npx: npx cowsay hi [npx (runs a downloaded package)] +net"}, nil, ""},
	{"go get example.com/m", []string{"medium go: go get example.com/m +net"}, nil, ""},
	{"pip install x", []string{"medium pip: pip install x +net"}, nil, ""},
	{"alias ll='ls -l'", []string{"high <dynamic>: alias ll=ls -l [alias]", "medium ls: ls -l ^0"}, nil, ""},
	{"trap 'rm -rf /tmp/x' EXIT", []string{"medium trap: trap rm -rf /tmp/x EXIT", "critical rm: rm -rf /tmp/x [rm -r outside] ^0"}, nil, ""},
	{"trap \"$CLEAN\" EXIT", []string{"high <dynamic>: trap \"$CLEAN\" EXIT [trap dynamic action]"}, nil, ""},
	{"su -c 'id' root", []string{"high su: su -c id root [su]", "medium id: id ^0"}, nil, ""},
	{"su root", []string{"high <dynamic>: su root [su stdin]"}, nil, ""},
	{"parallel gzip ::: a b", []string{"high parallel: parallel gzip ::: a b [parallel]", "high sh: sh -c gzip $PARALLEL_INPUT [parallel] ^0", "medium gzip: gzip $PARALLEL_INPUT ^1"}, nil, ""},
	{"ssh host 'rm -rf /'", []string{"high ssh: ssh host rm -rf / [ssh remote command] +net"}, nil, ""},
	{"gdb --args ./prog -x", []string{"high gdb: gdb --args ./prog -x [gdb]", "medium ./prog: ./prog -x ^0"}, nil, ""},
	{"mapfile -C cb arr", []string{"high <dynamic>: mapfile -C cb arr [mapfile -C]", "medium cb: cb ^0"}, nil, ""},
	{"! grep -q x f", []string{"medium grep: grep -q x f"}, nil, ""},
	{"echo a |& cat", []string{"medium echo: echo a", "medium cat: cat"}, nil, ""},
	{"ls & wait", []string{"medium ls: ls", "medium wait: wait"}, nil, ""},
	{"PATH=/tmp/evil:$PATH; ls", []string{"high <dynamic>: PATH=/tmp/evil:$PATH [PATH=]", "medium ls: ls"}, nil, ""},
	{"sh -c 'sh -c \"rm -rf /\"'", []string{"medium sh: sh -c sh -c \"rm -rf /\"", "medium sh: sh -c rm -rf / ^0", "critical rm: rm -rf / [rm -r outside] ^1"}, nil, ""},
	{"echo $((1 + $(id -u)))", []string{"medium id: id -u", "medium echo: echo $((1 + $(id -u)))"}, nil, ""},
	{"a=(x $(date) y)", []string{"medium date: date"}, nil, ""},
	{"echo ${x/$(a)/$(b)}", []string{"medium a: a", "medium b: b", "medium echo: echo ${x/$(a)/$(b)}"}, nil, ""},
	{"cd /etc && echo x > passwd 2> /tmp/err", []string{"medium cd: cd /etc", "medium echo: echo x"}, []string{"-w- <dynamic> high [relative path after cd]", "-w- /tmp/err medium"}, ""},
	// Review: bash's time keyword skips "--"; tilde prefixes and brace
	// expansion in redirection targets; a cd after a redirection that can
	// run later; builtins that make a later name run something else.
	{"time -p -- rm -rf /", []string{"critical rm: rm -rf / [rm -r outside]"}, nil, ""},
	{"time -- touch x", []string{"medium touch: touch x"}, nil, ""},
	{"echo x > ~+/deploy/c", []string{"medium echo: echo x"}, []string{"-w- <dynamic> high [dynamic redirect target]"}, ""},
	{"echo x > ~-/c 2> ~root/c", []string{"medium echo: echo x"}, []string{"-w- <dynamic> high [dynamic redirect target]", "-w- <dynamic> high [dynamic redirect target]"}, ""},
	{"echo x > ~/c 2> '~+'/c", []string{"medium echo: echo x"}, []string{"-w- ~/c medium", "-w- ~+/c medium"}, ""},
	{"echo x > deplo{y..y}/c", []string{"medium echo: echo x"}, []string{"-w- <dynamic> high [dynamic redirect target]"}, ""},
	{"f() { echo x > c; }; cd sub && f", []string{"medium echo: echo x", "medium cd: cd sub", "medium f: f"}, []string{"-w- <dynamic> high [relative path after cd]"}, ""},
	{"trap 'echo x > c' EXIT; cd sub", []string{"medium trap: trap echo x > c EXIT", "medium echo: echo x ^0", "medium cd: cd sub"}, []string{"-w- <dynamic> high [relative path after cd]"}, ""},
	{"HOME=/x; echo > ~/c", []string{"medium echo: echo"}, []string{"-w- <dynamic> high [~ after HOME=]"}, ""},
	{"hash -p /bin/rm ls; ls", []string{"high <dynamic>: hash -p /bin/rm ls [hash -p]", "medium ls: ls"}, nil, ""},
	{"enable -f ./x.so x", []string{"high <dynamic>: enable -f ./x.so x [enable -f]"}, nil, ""},
	{"mapfile -tC 'rm -rf /;:' a", []string{"high <dynamic>: mapfile -tC rm -rf /;: a [mapfile -C]", "critical rm: rm -rf / [rm -r outside] ^0", "medium :: : ^0"}, nil, ""},
	{"compgen -C 'touch x' y", []string{"high <dynamic>: compgen -C touch x y [compgen -C]", "medium touch: touch x ^0"}, nil, ""},
	{"echo ${x@P}", []string{"high <dynamic>: ${x@P} [${x@P}]", "medium echo: echo ${x@P}"}, nil, ""},
	{"x='a[$(rm y)]'; : $((x))", []string{"high <dynamic>: a[$(rm y)] [command substitution in a subscript]", "medium :: : $((x))"}, nil, ""},
	{"printf -v 'a[`rm y`]' z", []string{"high <dynamic>: a[`rm y`] [command substitution in a subscript]", "medium printf: printf -v a[`rm y`] z"}, nil, ""},
	{"git commit -m 'use $(pwd)'", []string{"medium git: git commit -m use $(pwd)"}, nil, ""},
	{"", nil, nil, "empty command line"},
	{"   # only a comment", nil, nil, "empty command line"},
	{"echo 'unterminated", nil, nil, "line 1, column 6: reached EOF without closing quote `'`"},
	{"if true; then", nil, nil, "line 1, column 10: `then` must be followed by a statement list"},
	{"ls )", nil, nil, "line 1, column 4: a command can only contain words and redirects; encountered `)`"},
}

func TestAnalyze(t *testing.T) { runCases(t, analyzeCases) }

func runCases(t *testing.T, cases []analyzeCase) {
	t.Helper()
	for _, tc := range cases {
		an, err := Analyze(tc.line)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Analyze(%q): error %v, want one containing %q", tc.line, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Analyze(%q): %v", tc.line, err)
			continue
		}
		var got, gotR []string
		for _, c := range an.Commands {
			got = append(got, cmdString(c))
		}
		for _, r := range an.Redirects {
			gotR = append(gotR, redirString(r))
		}
		if !equal(got, tc.cmds) || !equal(gotR, tc.redirs) {
			t.Errorf("Analyze(%q):\n got  %q %q\n want %q %q", tc.line, got, gotR, tc.cmds, tc.redirs)
		}
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestLimits(t *testing.T) {
	deep := strings.Repeat("$(", MaxDepth+2) + "ls" + strings.Repeat(")", MaxDepth+2)
	if _, err := Analyze("echo " + deep); err == nil || !strings.Contains(err.Error(), "deeper") {
		t.Errorf("deep nesting: error %v", err)
	}
	ok := strings.Repeat("$(", 20) + "ls" + strings.Repeat(")", 20)
	if _, err := Analyze("echo " + ok); err != nil {
		t.Errorf("20 levels: %v", err)
	}
	if _, err := Analyze("echo " + strings.Repeat("a", MaxLineBytes)); err == nil {
		t.Error("over-long line accepted")
	}
	if _, err := Analyze("echo a\x00b"); err == nil {
		t.Error("NUL byte accepted")
	}
	an, err := Analyze("echo {1..100000}")
	if err != nil || len(an.Commands) != 1 || len(an.Commands[0].Words) != 2 {
		t.Errorf("huge brace expansion: %v %d", err, len(an.Commands))
	}
}

func TestAnalysisRisk(t *testing.T) {
	an, err := Analyze("ls; echo x > /dev/sda")
	if err != nil || an.Risk() != 4 {
		t.Errorf("Risk() = %v, %v; want critical", an.Risk(), err)
	}
}
