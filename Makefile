# reiterate-shop — see README.md. `make test` is the test command CI runs; `make run` the demo.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
SWIFT ?= swift
## Release builds are optimized for size: the executable's code is most of what stays resident
## (-Osize: 1.5 MB less code, 0.9 MiB less RSS, 10% more CPU printing a million entries; docs/benchmarks.md).
RELEASE = -c release -Xswiftc -Osize
VENV ?= .venv
# The contract and end-to-end tests mostly wait (on sockets, tmux, the watch's rounds): three workers, a
# file each at a time (a file's fixtures and its stand-ins stay in one process), cut their time about
# in half on two cores. PYTEST_WORKERS= runs them in one process.
PYTEST_WORKERS ?= -n 3 --dist loadfile
PYTHON ?= python3
PORT ?= 8080
STUB := .build/debug/reiterate-stub
SHOP := .build/debug/reiterate-shop
export API_SPEC ?= $(abspath ../shared/api/reiterate-api.yaml)

.PHONY: install uninstall test-install demo-live demo-app all deps build test test-swift test-contract test-fuzz-corpus snapshots venv run run-tls certs stub bench release screenshots fuzz contract clean

all: build

## Install what a fresh Debian machine lacks (apt, when root; otherwise says what to install).
deps:
	@bash .ci/deps

## Build everything; fail on any compiler warning in our own sources.
build: deps
	@mkdir -p .build
	$(SWIFT) build --build-tests 2>&1 | tee .build/build.log
	@if grep -E '^$(CURDIR)/(Sources|Tests)/.*warning:' .build/build.log; then \
	  echo "error: compiler warnings in our sources (zero allowed)" >&2; exit 1; fi

## Everything CI runs: Swift unit tests, the fuzz corpus replayed, then the contract and HTTP tests
## against the real binary.
test: build venv
	$(SWIFT) test --skip-build
	@$(MAKE) --no-print-directory test-fuzz-corpus
	@test -f "$(API_SPEC)" || { echo "error: API contract not found at $(API_SPEC) (../shared beside the repo)" >&2; exit 1; }
	STUB_BIN=$(abspath $(STUB)) $(VENV)/bin/python -m pytest -q -p no:cacheprovider --durations=12 $(PYTEST_WORKERS) Tests/contract

## Screenshots/*.png from the real binary in tmux against the stand-in, rendered with Pillow.
screenshots: build venv
	@bash .ci/deps screenshots
	$(VENV)/bin/pip install -q --disable-pip-version-check -r Tests/screenshots/requirements.txt
	SHOP_BIN=$(abspath $(SHOP)) STUB_BIN=$(abspath $(STUB)) $(VENV)/bin/python Tests/screenshots/shoot.py Screenshots

## Benchmarks (release builds: the static one `make release` ships, and the dynamic one): each figure of issue 10 beside its floor or peer, measured in the same
## run, with the ratio (Tests/bench/bench.py); the rows also go to .build/bench.json. Fails on a missed goal.
## `swift build` takes one --product at a time; tui-bench (frame build + diff) only once Package.swift has it.
## venv: mitmdump, the peer of the app proxy's rows.
bench: release venv
	@bash .ci/deps bench
	$(SWIFT) build $(RELEASE) --product reiterate-shop
	$(SWIFT) build $(RELEASE) --product reiterate-stub
	@if $(SWIFT) package dump-package | $(PYTHON) -c 'import json, sys; p = json.load(sys.stdin); \
	  sys.exit(0 if "tui-bench" in [x["name"] for x in p["products"]] + [t["name"] for t in p["targets"] if t["type"] == "executable"] else 1)'; then \
	  echo "$(SWIFT) build $(RELEASE) --product tui-bench"; $(SWIFT) build $(RELEASE) --product tui-bench; \
	else echo "bench: Package.swift has no tui-bench yet; its rows show as not built"; rm -f .build/release/tui-bench; fi
	BIN_DIR=.build/release $(PYTHON) Tests/bench/bench.py

## `make install PREFIX=…` (default ~/.local): the release's two binaries, a man page made from the
## argument parser's own help (its generate-manual tool, run on the release binary: the plugin of the
## same name would build the whole package again in release mode), and bash, zsh and fish completions from
## `--generate-completion-script`. What it wrote is listed in PREFIX/share/reiterate-shop/installed.txt,
## and `make uninstall PREFIX=…` removes exactly that.
PREFIX ?= $(HOME)/.local
INSTALLED = bin/reiterate-shop bin/reiterate-contract share/man/man1/reiterate-shop.1 \
  share/bash-completion/completions/reiterate-shop share/zsh/site-functions/_reiterate-shop \
  share/fish/vendor_completions.d/reiterate-shop.fish share/reiterate-shop/installed.txt

install: release
	$(SWIFT) build $(RELEASE) --static-swift-stdlib --scratch-path .build-static --product generate-manual
	mkdir -p .build/man
	.build-static/release/generate-manual dist/reiterate-shop --date "$$(git log -1 --format=%cs 2>/dev/null || date +%F)" --output-directory .build/man
	install -d "$(PREFIX)"/bin "$(PREFIX)"/share/man/man1 "$(PREFIX)"/share/bash-completion/completions \
	  "$(PREFIX)"/share/zsh/site-functions "$(PREFIX)"/share/fish/vendor_completions.d "$(PREFIX)"/share/reiterate-shop
	install -m 0755 dist/reiterate-shop dist/reiterate-contract "$(PREFIX)"/bin/
	install -m 0644 .build/man/reiterate-shop.1 "$(PREFIX)"/share/man/man1/
	dist/reiterate-shop --generate-completion-script bash > "$(PREFIX)"/share/bash-completion/completions/reiterate-shop
	dist/reiterate-shop --generate-completion-script zsh > "$(PREFIX)"/share/zsh/site-functions/_reiterate-shop
	dist/reiterate-shop --generate-completion-script fish > "$(PREFIX)"/share/fish/vendor_completions.d/reiterate-shop.fish
	printf '%s\n' $(INSTALLED) > "$(PREFIX)"/share/reiterate-shop/installed.txt
	@echo "installed into $(PREFIX): $(INSTALLED)"

## CI: `make install` into a fresh folder, the installed tree checked (Tests/contract/test_install.py: runs
## without the toolchain, --version, man -l, completions in bash, zsh and fish), then `make uninstall`
## must leave the folder empty.
test-install: build venv
	@bash .ci/deps install
	@prefix=$$(mktemp -d); trap 'rm -rf "$$prefix"' EXIT; \
	$(MAKE) --no-print-directory install PREFIX="$$prefix"; \
	INSTALL_PREFIX="$$prefix" STUB_BIN=$(abspath $(STUB)) $(VENV)/bin/python -m pytest -q -p no:cacheprovider -rs Tests/contract/test_install.py; \
	$(MAKE) --no-print-directory uninstall PREFIX="$$prefix"; \
	left=$$(find "$$prefix" -type f); if [ -n "$$left" ]; then echo "uninstall left: $$left" >&2; exit 1; fi; \
	echo "test-install: installed, checked and removed again"

uninstall:
	@if [ -f "$(PREFIX)"/share/reiterate-shop/installed.txt ]; then \
	  for f in $$(cat "$(PREFIX)"/share/reiterate-shop/installed.txt); do rm -f "$(PREFIX)/$$f"; done; \
	  rmdir "$(PREFIX)"/share/reiterate-shop 2>/dev/null || true; echo "removed from $(PREFIX)"; \
	else echo "nothing of reiterate-shop installed in $(PREFIX)"; fi

## A self-contained release (issue 21): both executables with the Swift runtime and Foundation linked in
## (--static-swift-stdlib; a scratch folder of their own, so the bench's dynamic build stays), stripped,
## in dist/, reiterate-shop stamped with the commit (--version). Only the system's C libraries stay dynamic: the recipe fails if ldd names a Swift one.
release: deps
	$(SWIFT) build $(RELEASE) --static-swift-stdlib --scratch-path .build-static --product reiterate-shop
	$(SWIFT) build $(RELEASE) --static-swift-stdlib --scratch-path .build-static --product reiterate-contract
	mkdir -p dist
	strip -o dist/reiterate-shop .build-static/release/reiterate-shop
	strip -o dist/reiterate-contract .build-static/release/reiterate-contract
	@if commit=$$(git rev-parse --short=12 HEAD 2>/dev/null); then \
	  [ -z "$$(git status --porcelain -- Sources Package.swift)" ] || commit="$$commit-dirty"; commit="$$commit $$(git log -1 --format=%cs)"; \
	else commit="unknown (not a git checkout)"; fi; \
	$(PYTHON) scripts/stamp-build.py dist/reiterate-shop "$$commit"
	@dist/reiterate-shop --version
	@for f in dist/reiterate-shop dist/reiterate-contract; do \
	  echo "$$f: $$(du -h $$f | cut -f1)B; needs: $$(ldd $$f | awk '{print $$1}' | tr '\n' ' ')"; \
	  if ldd $$f | grep -Eq 'libswift|libFoundation|libdispatch|libBlocksRuntime'; then echo "$$f still needs a Swift library"; exit 1; fi; \
	done

test-swift: build
	$(SWIFT) test --skip-build

## The fuzz targets built as plain programs (no libFuzzer) replay the seeds and every crash `make fuzz`
## ever found (kept in Tests/Fuzz/corpus): each is a regression test.
## Each target names its inputs replayed; a missing or empty corpus folder, or a failing input, stops `make test`.
test-fuzz-corpus:
	@for t in $(FUZZ_TARGETS); do .build/debug/$$t Tests/Fuzz/corpus/$$t || exit 1; done

## Records the TUI snapshots (Tests/ShopTUITests/__Snapshots__) from what the code draws now: the
## snapshot tests only, with RECORD_SNAPSHOTS=1. Look at `git diff` before committing them. Never in
## CI: a test run with RECORD_SNAPSHOTS and CI both set fails.
snapshots:
	RECORD_SNAPSHOTS=1 $(SWIFT) test --filter ShopTUITests

## libFuzzer (-sanitize=fuzzer) on the JSON tokenizer and what reads it, the text sanitizer and display
## width, and the config reader: FUZZ_TIME seconds each (default 600). New inputs go to
## .build-fuzz/corpus, crashes to .build-fuzz/crashes (copy one into Tests/Fuzz/corpus/TARGET to keep
## it as a test). Not part of `make test`. gold cannot link these targets here (an internal error), so
## clang is pointed at the toolchain's lld under gold's name.
FUZZ_TIME ?= 600
FUZZ_TARGETS ?= fuzz-json fuzz-text fuzz-config fuzz-proxy
fuzz: deps
	@mkdir -p .build-fuzz/linker .build-fuzz/crashes
	@printf '#!/bin/sh\nexec %s "$$@"\n' "$$(dirname "$$(readlink -f "$$(command -v swiftc)")")/ld.lld" > .build-fuzz/linker/ld.gold
	@chmod +x .build-fuzz/linker/ld.gold
	for t in $(FUZZ_TARGETS); do \
	  PATH="$(CURDIR)/.build-fuzz/linker:$$PATH" $(SWIFT) build -c release --scratch-path .build-fuzz --product $$t -Xswiftc -sanitize=fuzzer -Xswiftc -DFUZZING; done
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p .build-fuzz/corpus/$$t; echo "== $$t, $(FUZZ_TIME) s"; \
	  SWIFT_BACKTRACE=enable=no .build-fuzz/release/$$t -max_total_time=$(FUZZ_TIME) -print_final_stats=1 \
	    -artifact_prefix=.build-fuzz/crashes/$$t- .build-fuzz/corpus/$$t Tests/Fuzz/corpus/$$t > .build-fuzz/$$t.log 2>&1 \
	    || { tail -n 30 .build-fuzz/$$t.log; echo "fuzz: $$t crashed: see .build-fuzz/crashes/"; exit 1; }; \
	  grep -E '^#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units|stat::peak_rss_mb' .build-fuzz/$$t.log; done

## Copies ../shared/api/reiterate-api.yaml into the package (the binary's built-in contract, embedded by
## SwiftPM), and beside it the form OpenAPIKit reads it in (what a session starts with: no parse).
contract:
	@bash scripts/bundle-contract.sh "$(API_SPEC)"
	$(SWIFT) build --product reiterate-contract
	$(dir $(SHOP))reiterate-contract --built-in > Sources/ShopAPI/Contract/reiterate-api.contract.json
	$(SWIFT) build --product reiterate-shop

test-contract: build venv
	STUB_BIN=$(abspath $(STUB)) $(VENV)/bin/python -m pytest -q -p no:cacheprovider --durations=12 $(PYTEST_WORKERS) Tests/contract

## Python tools for the contract check, in a git-ignored virtualenv.
venv: $(VENV)/.installed
$(VENV)/.installed: Tests/contract/requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -r Tests/contract/requirements.txt
	@touch $@

## The demo: the stand-in on a free port in the background, the TUI against it as qa-alice;
## the stand-in is stopped when the TUI exits (q, Ctrl-C or a failure). The stand-in's App Store side is on
## (its test chain and API key in APPSTORE_DIR), and its purchase_cheer verifies each transaction with it
## (APPSTORE_VERIFY= turns that off: made-up transaction ids are credited again). The TUI runs with its app
## proxy on a free port and the `make-run` environment, App Store table included, in
## .build/demo-run/reiterate-shop/config.toml: a copy of the developer's own config with `make-run` appended
## (the developer's file is never written; one that has a `make-run` already stops make run). Once the proxy
## accepts connections, scripts/demo-purchases.py plays the app in the background (its output in
## .build/demo-run/purchases.log): four sandbox purchases for qa-alice, three posted through the proxy (one
## refunded after), so that the Purchases tab (6) judges them.
APPSTORE_DIR ?= .build/appstore
APPSTORE_VERIFY ?= --appstore-verify
DEMO_RUN = $(CURDIR)/.build/demo-run
run: build
	@out=$$(mktemp); beside=; app=; \
	$(STUB) --port 0 --quiet --appstore-dir "$(abspath $(APPSTORE_DIR))" $(APPSTORE_VERIFY) > "$$out" & stub=$$!; \
	trap 'kill $$stub $$beside $$app 2>/dev/null; wait $$stub 2>/dev/null; rm -f "$$out"' EXIT INT TERM HUP; \
	for i in $$(seq 200); do grep -q "listening on" "$$out" && break; sleep 0.05; done; \
	url=$$(awk '/listening on/ {print $$4}' "$$out"); \
	test -n "$$url" || { echo "error: reiterate-stub did not start" >&2; exit 1; }; \
	proxy=127.0.0.1:$$($(PYTHON) scripts/demo-purchases.py port) || exit 1; \
	$(PYTHON) scripts/demo-purchases.py config "$$url" --appstore-dir "$(abspath $(APPSTORE_DIR))" \
	  --config-home "$(DEMO_RUN)" --shop $(SHOP) --proxy "$$proxy" || exit 1; \
	$(PYTHON) scripts/demo-purchases.py post "$$url" --proxy "$$proxy" > "$(DEMO_RUN)/purchases.log" 2>&1 < /dev/null & app=$$!; \
	if [ -n "$(RUN_BESIDE)" ]; then $(RUN_BESIDE) "$$url" & beside=$$!; fi; \
	XDG_CONFIG_HOME="$(DEMO_RUN)" REITERATE_TOKEN=$${REITERATE_TOKEN:-dev-token} \
	  $(SHOP) --env make-run --proxy "$$proxy" $(RUN_ARGS) --cache-dir "$(CURDIR)/.build/demo-cache"

## The TUI watching qa-alice (the 5 Live tab) while scripts/phone.py plays the phone: spends and
## purchases through the stand-in's API every few seconds, and now and then a fault that breaks a rule.
## Each purchase is bought at the stand-in's App Store side first (--appstore), as `make run`'s verifies.
demo-live:
	@$(MAKE) --no-print-directory run RUN_ARGS=--watch RUN_BESIDE="python3 scripts/phone.py --appstore"

## A throwaway CA and server certificates (openssl) in .build/certs: ca.pem, right/wrong/expired .pem/.key.
certs: deps
	@bash Tests/tls/make-certs.sh .build/certs

## The demo over HTTPS: the stand-in serves .build/certs/right.pem; the app trusts the throwaway CA
## through `ca_file` in a demo config (the `demo-tls` environment).
run-tls: build certs
	@out=$$(mktemp); \
	$(STUB) --port 0 --quiet --tls-cert .build/certs/right.pem --tls-key .build/certs/right.key > "$$out" & stub=$$!; \
	trap 'kill $$stub 2>/dev/null; wait $$stub 2>/dev/null; rm -f "$$out"' EXIT INT TERM HUP; \
	for i in $$(seq 200); do grep -q "listening on" "$$out" && break; sleep 0.05; done; \
	url=$$(awk '/listening on/ {print $$4}' "$$out"); \
	test -n "$$url" || { echo "error: reiterate-stub did not start" >&2; exit 1; }; \
	mkdir -p .build/demo-tls/reiterate-shop; \
	printf '[environments.demo-tls]\nbase_url = "%s"\nca_file = "%s"\n' "$$url" "$(CURDIR)/.build/certs/ca.pem" > .build/demo-tls/reiterate-shop/config.toml; \
	XDG_CONFIG_HOME="$(CURDIR)/.build/demo-tls" REITERATE_TOKEN=$${REITERATE_TOKEN:-dev-token} $(SHOP) --env demo-tls --user qa-alice --cache-dir "$(CURDIR)/.build/demo-cache"

## The app's proxy (issue 29): the stand-in over HTTPS, the TUI watching qa-alice with the app's proxy
## on (PROXY_PORT, default 8877), and scripts/phone.py playing the app through the proxy, trusting the
## proxy's CA (made in .build/demo-state on first use). The app's requests join the Requests tab
## (FROM app); now and then the app misbehaves, and the stand-in breaks a rule: findings of both blames.
PROXY_PORT ?= 8877
demo-app: build certs
	@out=$$(mktemp); beside=; \
	$(STUB) --port 0 --quiet --tls-cert .build/certs/right.pem --tls-key .build/certs/right.key > "$$out" & stub=$$!; \
	trap 'kill $$stub $$beside 2>/dev/null; wait $$stub 2>/dev/null; rm -f "$$out"' EXIT INT TERM HUP; \
	for i in $$(seq 200); do grep -q "listening on" "$$out" && break; sleep 0.05; done; \
	url=$$(awk '/listening on/ {print $$4}' "$$out" | sed 's|//127.0.0.1:|//localhost:|'); \
	test -n "$$url" || { echo "error: reiterate-stub did not start" >&2; exit 1; }; \
	mkdir -p .build/demo-app/reiterate-shop .build/demo-state; \
	printf '[environments.demo-app]\ntier = "local"\nbase_url = "%s"\nca_file = "%s"\nproxy_listen = "127.0.0.1:%s"\n' "$$url" "$(CURDIR)/.build/certs/ca.pem" "$(PROXY_PORT)" > .build/demo-app/reiterate-shop/config.toml; \
	python3 scripts/phone.py "$$url" --proxy 127.0.0.1:$(PROXY_PORT) --proxy-ca "$(CURDIR)/.build/demo-state/reiterate-shop/proxy-ca/ca.pem" \
	  --server-ca "$(CURDIR)/.build/certs/ca.pem" & beside=$$!; \
	XDG_CONFIG_HOME="$(CURDIR)/.build/demo-app" XDG_STATE_HOME="$(CURDIR)/.build/demo-state" REITERATE_TOKEN=$${REITERATE_TOKEN:-dev-token} \
	  $(SHOP) --env demo-app --user qa-alice --watch --proxy --cache-dir "$(CURDIR)/.build/demo-cache"

## The stand-in alone, in the foreground, on http://127.0.0.1:$(PORT).
stub: build
	$(STUB) --port $(PORT)

clean:
	rm -rf .build $(VENV)
