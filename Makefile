# otelcol-ernic: OpenTelemetry Collector distribution with the rocm-ernic
# receiver. `make test` is the project's test command (CI runs it through
# .ci/run); `make run` starts the collector on a simulated run directory.

GO ?= go

# OpenTelemetry Collector Builder (ocb), pinned to the collector release the
# distribution is built from (builder-config.yaml).
BUILDER_VERSION := v0.165.0
BUILDER := bin/builder

OTELCOL := build/otelcol-ernic/otelcol-ernic

# Prometheus 3 for the fleet test (target prometheus3, below).
PROMETHEUS3_VERSION := v0.316.0
PROMETHEUS3 := bin/prometheus3

# Thanos (receive and query) for the fleet test against a sharded,
# replicated backend (target thanos, below).
THANOS_VERSION := v0.42.4
THANOS := bin/thanos

SIM := bin/ernic-sim

# The receiver is a Go module of its own (its go.mod): its Go commands run
# from its folder.
RECEIVER := receiver/ernicreceiver

# What the collector binary is built from: the ocb manifest, the go.mod/go.sum
# of the root module (the exporters) and of the receiver's module, and the
# components' non-test sources.
OTELCOL_INPUTS := builder-config.yaml go.mod go.sum $(RECEIVER)/go.mod $(RECEIVER)/go.sum \
	$(shell find receiver exporter extension -type f \( -name '*.go' -o -name '*.yaml' \) ! -name '*_test.go' 2>/dev/null)

.PHONY: all generate check-generate ocb otelcol sim run test test-deps unit-test fuzz e2e-test lint clean

# all: the collector and the simulator.
all: otelcol sim

# generate: regenerate the components' code and docs from their metadata.yaml
# (mdatagen), and the simulator's copies of the receiver parser's LIF counter
# names and device keys (internal/sim/internal/gennames).
generate:
	cd $(RECEIVER) && $(GO) generate ./...
	cd receiver/selftelemetryreceiver && $(GO) generate ./...
	cd exporter/remotewriteexporter && $(GO) generate ./...
	cd exporter/prometheustextexporter && $(GO) generate ./...
	cd exporter/otlpdurableexporter && $(GO) generate ./...
	cd exporter/otlphttpdurableexporter && $(GO) generate ./...
	cd extension/queuestorageextension && $(GO) generate ./...
	cd internal/sim && $(GO) generate ./...

# check-generate: regenerate and fail if that changed any file of the folders
# generate runs in, i.e. the committed generated code is not current.
check-generate:
	scripts/check-generate.sh

# ocb: install the collector builder into bin/ (only when bin/builder is missing).
ocb: $(BUILDER)

$(BUILDER):
	GOBIN=$(CURDIR)/bin $(GO) install go.opentelemetry.io/collector/cmd/builder@$(BUILDER_VERSION)

# otelcol: build the distribution build/otelcol-ernic/otelcol-ernic with ocb
# (rebuilt when the manifest, go.mod/go.sum, the receiver's sources or the
# version change).
otelcol: $(OTELCOL)

$(OTELCOL): $(OTELCOL_INPUTS) build/version | $(BUILDER)
	mkdir -p build
	sed 's|^  version: .*|  version: $(VERSION)|' builder-config.yaml >build/builder-config.yaml
	$(BUILDER) --config build/builder-config.yaml
	touch $@

# VERSION: the version of this build, from git (scripts/version.sh; `make
# VERSION=x.y.z` overrides it). It goes into the binary through ocb's
# dist.version, in a copy of the manifest under build/ (the generated main
# holds it as a literal, so -ldflags -X cannot set it). build/version is
# rewritten only when the version changes, so a commit rebuilds the
# collector and a make with nothing changed does not.
VERSION := $(shell scripts/version.sh)

.PHONY: FORCE
build/version: FORCE
	@mkdir -p build
	@[ "$$(cat $@ 2>/dev/null)" = '$(VERSION)' ] || echo '$(VERSION)' >$@

# sim: build the run-directory simulator bin/ernic-sim.
sim:
	$(GO) build -o $(SIM) ./cmd/ernic-sim

# run: build both, then run the collector with config/local.yaml; without
# ERNIC_RUN_DIR a simulator writes a temporary run directory (scripts/run.sh).
run: otelcol sim
	OTELCOL=$(OTELCOL) SIM=$(SIM) scripts/run.sh

# test: what the tests need installed (test-deps), generated code current,
# go vet and staticcheck (lint) of both modules, unit tests, a bounded fuzzing
# run (TEST_FUZZTIME per target), then the end-to-end tests, the packages'
# tests, the switch-over test and a short soak.
test: test-deps check-generate
	$(GO) vet ./...
	cd $(RECEIVER) && $(GO) vet ./...
	$(GO) vet -tags e2e ./test/e2e/... ./test/deploy/... ./test/dashboards/... ./test/package/... ./test/switch/...
	$(GO) vet -tags soak ./test/soak/...
	$(GO) vet -tags fleet ./test/fleet/...
	$(MAKE) lint
	$(MAKE) unit-test
	$(MAKE) fuzz FUZZTIME=$(TEST_FUZZTIME)
	$(MAKE) e2e-test
	$(MAKE) package-test
	$(MAKE) switch-test
	$(MAKE) soak SOAK_DURATION=$(TEST_SOAK_DURATION) SOAK_DIR= SOAK_TIMEOUT=15m

# test-deps: the Debian packages the system tests use, installed when
# missing and run as root; otherwise a message naming them
# (scripts/test-deps.sh lists them, each with the tests that need it).
test-deps:
	scripts/test-deps.sh

# lint: the license header of every hand-written Go file
# (scripts/check-headers.sh), then staticcheck over both modules, with the build tags of the
# system tests (e2e, soak, fleet) so that they are checked too. The version is
# pinned and run from the Go module proxy with `go run`, so nothing is added
# to go.mod (the first run downloads and builds it, about a minute; later
# runs use the Go caches). staticcheck 2026.2.2 (module v0.8.2) builds with
# Go 1.26. An exception is written down where it applies, with its reason
# (a //lint:ignore comment); today there are two, in
# test/dashboards/schema_test.go and exporter/otlpdurableexporter/exporter.go.
STATICCHECK_VERSION := v0.8.2
lint:
	scripts/check-headers.sh
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) -tags e2e,soak,fleet ./...
	cd $(RECEIVER) && $(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

# unit-test: the Go unit tests of the root module (test/e2e is behind the e2e
# tag) and of the receiver's module, and the receiver's again for a 32-bit
# platform (GOARCH=386), where int is 32 bits: run where the kernel can
# execute 32-bit programs, otherwise built and vetted with a line saying so
# (scripts/test-386.sh).
unit-test:
	$(GO) test ./...
	cd $(RECEIVER) && $(GO) test ./...
	cd $(RECEIVER) && GO=$(GO) $(CURDIR)/scripts/test-386.sh

# fuzz: run each fuzz target of the run-directory parsers for FUZZTIME (go
# test -fuzz takes one target per invocation). A failing input is written to
# receiver/ernicreceiver/internal/rundir/testdata/fuzz/<target>/ and replayed
# by every `go test` from then on: keep it as a regression test.
# `make test` gives each target a number of inputs, not a time: with a time,
# Go 1.26's fuzzing coordinator can fail the target with "context deadline
# exceeded" as the time runs out on a busy machine, with no failing input
# (go.dev/issue/75804, fixed in Go 1.27). 500,000 inputs take 14-22 s here.
# A bare "context deadline exceeded" at the end of a timed `make fuzz` is
# that race, not a finding.
FUZZTIME ?= 10m
TEST_FUZZTIME ?= 500000x
# FUZZ_PKG is relative to the receiver's module, where the targets run.
FUZZ_PKG := ./internal/rundir/
fuzz:
	cd $(RECEIVER) && $(GO) test -run='^$$' -fuzz='^FuzzParseStats$$' -fuzztime=$(FUZZTIME) $(FUZZ_PKG)
	cd $(RECEIVER) && $(GO) test -run='^$$' -fuzz='^FuzzParseManifest$$' -fuzztime=$(FUZZTIME) $(FUZZ_PKG)
	cd $(RECEIVER) && $(GO) test -run='^$$' -fuzz='^FuzzCutLine$$' -fuzztime=$(FUZZTIME) $(FUZZ_PKG)

# e2e-test: build the collector, then run it against fixture run directories
# and check its Prometheus output (test/e2e, build tag e2e). The remote-write
# tests start Prometheus servers: `prometheus` must be on PATH (Debian's
# package; .ci/run installs it) or named by PROMETHEUS_BIN; the fleet test
# also Prometheus 3 (bin/prometheus3, built here once; the push credentials
# test too), Thanos (bin/thanos, likewise) and root (it sets host names with
# unshare --uts). test/dashboards
# checks dashboards/ with promtool (same package; or PROMTOOL_BIN).
# The second collector of the OTLP tests and the comparison with contrib's
# prometheus exporter run the test build (otelcol-test). The tests mostly
# wait (outages, scrapes, rule evaluations): E2E_PARALLEL of them run at
# once, where go test's default is one per CPU; the package's whole run
# (about 6 minutes at 6) is above go test's default 10-minute timeout at 2.
E2E_PARALLEL ?= 6
e2e-test: otelcol otelcol-test $(if $(PROMETHEUS3_BIN),,$(PROMETHEUS3)) $(if $(THANOS_BIN),,$(THANOS))
	OTELCOL_BIN=$(CURDIR)/$(OTELCOL) OTELCOL_TEST_BIN=$(CURDIR)/$(OTELCOL_TEST) PROMETHEUS3_BIN=$${PROMETHEUS3_BIN:-$(CURDIR)/$(PROMETHEUS3)} THANOS_BIN=$${THANOS_BIN:-$(CURDIR)/$(THANOS)} $(GO) test -tags e2e -count=1 -v -timeout 40m -parallel $(E2E_PARALLEL) ./test/e2e/... ./test/deploy/... ./test/dashboards/...

# prometheus3: Prometheus 3 for the fleet test (test/e2e/fleet_test.go: its
# OTLP receiver, which Debian's 2.42 lacks), built once from the Go module
# proxy into bin/prometheus3 (about 4 minutes with the modules cached, more
# on a fresh machine; later runs reuse it). PROMETHEUS3_BIN names another.
.PHONY: prometheus3
prometheus3: $(PROMETHEUS3)

$(PROMETHEUS3):
	mkdir -p build/prometheus3
	GOBIN=$(CURDIR)/build/prometheus3 $(GO) install github.com/prometheus/prometheus/cmd/prometheus@$(PROMETHEUS3_VERSION)
	mkdir -p bin && mv build/prometheus3/prometheus $@

# thanos: Thanos for TestFleetThanos (test/e2e/fleet_thanos_test.go:
# receive, hashring and replication, and query), built once from the Go
# module proxy into bin/thanos; THANOS_BIN names another. `go install
# ...@version` refuses Thanos (its go.mod has replace directives), so the
# module's source is downloaded from the proxy and built as the main module,
# with its own go.mod and go.sum; nothing is added to ours. Its release
# build's tags (.promu.yml): without slicelabels, receive panics on its first
# store API answer (its labels are cast to Prometheus' slice layout). v0.42.5
# needs Go 1.26.10, hence v0.42.4.
.PHONY: thanos
thanos: $(THANOS)

$(THANOS):
	mkdir -p bin
	dir=$$(cd / && GOFLAGS= $(GO) mod download -json github.com/thanos-io/thanos@$(THANOS_VERSION) | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$$/\1/p') && \
		test -n "$$dir" && cd "$$dir" && GOFLAGS= $(GO) build -trimpath -tags netgo,slicelabels \
		-ldflags '-X github.com/prometheus/common/version.Version=$(THANOS_VERSION:v%=%)' -o $(CURDIR)/$@.tmp ./cmd/thanos
	mv $@.tmp $@

# soak: the collector with config/prometheus-remote-write.yaml against the
# chaos simulator (internal/sim/chaos.go) and a real Prometheus for
# SOAK_DURATION, then every sample checked against what the simulator wrote
# completely (test/soak, build tag soak; docs/development.md, Soak test). Summary and
# logs go to $(SOAK_DIR)/<time>/. `make test` runs it for TEST_SOAK_DURATION.
SOAK_DURATION ?= 1h
SOAK_DIR ?= $(CURDIR)/build/soak
SOAK_TIMEOUT ?= 3h
TEST_SOAK_DURATION ?= 90s
.PHONY: soak
soak: otelcol
	OTELCOL_BIN=$(CURDIR)/$(OTELCOL) SOAK_DURATION=$(SOAK_DURATION) SOAK_DIR=$(SOAK_DIR) \
		$(GO) test -tags soak -count=1 -v -timeout $(SOAK_TIMEOUT) ./test/soak/

# install: install the collector as a systemd service (deploy/README.md): the
# binary to $(BINDIR), the unit to $(UNITDIR) (its paths rewritten when BINDIR
# or CONFDIR are not the defaults) and $(DEFAULT_CONFIG) as
# $(CONFDIR)/config.yaml, unless a config is already there, and
# $(CONFDIR)/credentials, root's alone (mode 0700), for the files that
# deploy/otelcol-ernic.service.d/credentials.conf loads. DESTDIR stages
# the tree elsewhere (packaging, tests); run `systemctl daemon-reload` after.
DESTDIR ?=
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
UNITDIR ?= /etc/systemd/system
CONFDIR ?= /etc/otelcol-ernic
DEFAULT_CONFIG ?= config/local.yaml

.PHONY: install
install: otelcol
	install -d -m 0755 $(DESTDIR)$(BINDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(CONFDIR)
	install -d -m 0700 $(DESTDIR)$(CONFDIR)/credentials
	install -m 0755 $(OTELCOL) $(DESTDIR)$(BINDIR)/otelcol-ernic
	sed -e 's|/usr/local/bin/otelcol-ernic|$(BINDIR)/otelcol-ernic|g' \
		-e 's|/etc/otelcol-ernic/|$(CONFDIR)/|g' \
		deploy/otelcol-ernic.service >$(DESTDIR)$(UNITDIR)/otelcol-ernic.service.tmp
	chmod 0644 $(DESTDIR)$(UNITDIR)/otelcol-ernic.service.tmp
	mv -f $(DESTDIR)$(UNITDIR)/otelcol-ernic.service.tmp $(DESTDIR)$(UNITDIR)/otelcol-ernic.service
	@if [ -e $(DESTDIR)$(CONFDIR)/config.yaml ]; then \
		echo "install: keeping the existing $(DESTDIR)$(CONFDIR)/config.yaml"; \
	else \
		echo "install -m 0644 $(DEFAULT_CONFIG) $(DESTDIR)$(CONFDIR)/config.yaml"; \
		install -m 0644 $(DEFAULT_CONFIG) $(DESTDIR)$(CONFDIR)/config.yaml; \
	fi

# package: the .deb and .rpm of each of PACKAGE_ARCHS into build/dist/
# (otelcol-ernic_<version>-1_<arch>.deb, otelcol-ernic-<version>-1.<arch>.rpm;
# <version> as scripts/version.sh --deb prints it, -1 the package revision),
# made by nfpm (pinned, installed into bin/) from packaging/nfpm.yaml
# (scripts/package.sh; deploy/README.md describes what they install). The
# binary of each architecture is a GOARCH cross-build of the sources ocb
# generated for `make otelcol`, with ocb's flags; the host's is ocb's own.
NFPM_VERSION := v2.48.0
NFPM := bin/nfpm
PACKAGE_ARCHS ?= amd64 arm64
# The architecture ocb's `go build` builds for.
OTELCOL_ARCH := $(shell $(GO) env GOARCH)

.PHONY: package
package: $(foreach a,$(PACKAGE_ARCHS),build/package/$(a)/otelcol-ernic) | $(NFPM)
	VERSION='$(VERSION)' NFPM=$(NFPM) scripts/package.sh $(PACKAGE_ARCHS)

build/package/%/otelcol-ernic: $(OTELCOL)
	mkdir -p $(@D)
	if [ '$*' = '$(OTELCOL_ARCH)' ]; then cp $(OTELCOL) $@; else \
		cd build/otelcol-ernic && CGO_ENABLED=0 GOOS=linux GOARCH=$* \
		$(GO) build -trimpath -ldflags='-s -w' -gcflags= -o $(CURDIR)/$@ .; fi

$(NFPM):
	GOBIN=$(CURDIR)/bin $(GO) install github.com/goreleaser/nfpm/v2/cmd/nfpm@$(NFPM_VERSION)

# package-test: the packages' tests (test/package, build tag e2e): their
# contents, control data and scripts against golden files, lintian, the
# version in the binary and its telemetry, and (as root) dpkg install,
# upgrade, removal and purge in a throwaway root with the installed
# collector run on a simulated run directory, and the .rpm's install,
# upgrade and erase there.
.PHONY: package-test
package-test: package
	OTELCOL_BIN=$(CURDIR)/$(OTELCOL) $(GO) test -tags e2e -count=1 -v ./test/package/...

# debian-root: a minimal Debian bookworm root with systemd for
# systemd-nspawn --boot, made once with debootstrap from the Debian mirror
# into build/debian-root (scripts/debian-root.sh, as root; about 2 minutes)
# and made again only when missing. The switch-over test boots copies of it.
DEBIAN_ROOT := build/debian-root
.PHONY: debian-root
debian-root: $(DEBIAN_ROOT)

$(DEBIAN_ROOT):
	scripts/debian-root.sh $@

# switch-test: the switch from the legacy ernic-exporter.service to the
# package and the rollback, as deploy/README.md documents them (test/switch,
# build tag e2e): the .deb installed with dpkg in a booted Debian container
# (systemd-nspawn) while a real Prometheus scrapes it every 5 s; and the
# credentials drop-in (LoadCredential=) on in such a container. As root;
# otherwise the test skips and the Debian root is not made.
.PHONY: switch-test
switch-test: package sim
	@if [ "$$(id -u)" -eq 0 ]; then $(MAKE) --no-print-directory $(DEBIAN_ROOT); fi
	OTELCOL_BIN=$(CURDIR)/$(OTELCOL) SIM_BIN=$(CURDIR)/$(SIM) DEBIAN_ROOT=$(CURDIR)/$(DEBIAN_ROOT) \
		$(GO) test -tags e2e -count=1 -v -timeout 15m ./test/switch/...

# bench: the receiver's benchmarks in one run, so the ratios compare like
# with like (BenchmarkFloor: read and split into lines; BenchmarkParse;
# BenchmarkUnchanged: the same files when none was rewritten;
# BenchmarkScrape with default and all metrics; 1x16 to 64x1024 instances x
# QPs), then a table of them and the ratio targets (cmd/benchtable). Each
# benchmark runs BENCH_COUNT times and counts with its median. The
# benchmarks run in the receiver's module, the table in the root module.
BENCHTIME ?= 300ms
BENCH_COUNT ?= 5
.PHONY: bench
bench:
	cd $(RECEIVER) && $(GO) test -run '^$$' -bench 'Floor|Parse|Unchanged|Scrape|RecordFloor' -benchmem -benchtime $(BENCHTIME) -count $(BENCH_COUNT) . | tee $(CURDIR)/bench.out
	$(GO) run ./cmd/benchtable < bench.out

# bench-e2e: CPU seconds per minute, RSS and GET time of the collector for
# each size and shipped pipeline (pull, remote write into Prometheus, OTLP
# over gRPC and over HTTP into a second collector, the test build
# otelcol-test; against the legacy exporter: bench-legacy, below)
# (scripts/bench-e2e.sh: SIZES, PIPELINES, DURATION, WARMUP). The remote-write
# runs need Debian's prometheus; bench-e2e runs test-deps first, which
# installs it with the rest of the test packages (as root; otherwise it
# names them and stops), whatever PIPELINES holds.
.PHONY: bench-e2e bench-e2e-pprof otelcol-pprof
bench-e2e: test-deps otelcol otelcol-test sim
	OTELCOL=$(OTELCOL) OTELCOL_TEST=$(OTELCOL_TEST) SIM=$(SIM) scripts/bench-e2e.sh

# Build variants: builder-config.yaml under another name plus the components
# the variant adds (scripts/derive-manifest.sh), with this build's version,
# its manifest written to build/builder-config-NAME.yaml, the binary to
# build/NAME/NAME.
#
# otelcol-test: the distribution plus what only the system tests and the
# bench scripts use (no shipped config does): the OTLP receiver and the
# otlp_http exporter of the second collector that receives OTLP, and
# contrib's prometheus exporter that prometheus_text is compared with.
OTELCOL_TEST := build/otelcol-ernic-test/otelcol-ernic-test
OTELCOL_TEST_COMPONENTS := \
	receivers=go.opentelemetry.io/collector/receiver/otlpreceiver@v0.165.0 \
	exporters=go.opentelemetry.io/collector/exporter/otlphttpexporter@v0.165.0 \
	exporters=github.com/open-telemetry/opentelemetry-collector-contrib/exporter/prometheusexporter@v0.165.1
.PHONY: otelcol-test
otelcol-test: $(OTELCOL_TEST)

$(OTELCOL_TEST): $(OTELCOL_INPUTS) scripts/derive-manifest.sh build/version | $(BUILDER)
	mkdir -p build
	scripts/derive-manifest.sh otelcol-ernic-test $(OTELCOL_TEST_COMPONENTS) | \
		sed 's|^  version: .*|  version: $(VERSION)|' >build/builder-config-otelcol-ernic-test.yaml
	$(BUILDER) --config build/builder-config-otelcol-ernic-test.yaml
	touch $@

# otelcol-pprof: the distribution plus contrib's pprof extension, for
# profiling only (no shipped config uses it). It keeps its
# symbol table (ocb strips it by default, -s -w), so `perf` names its Go
# functions (bench-e2e's PERF); the table is not loaded at run time.
OTELCOL_PPROF := build/otelcol-ernic-pprof/otelcol-ernic-pprof
otelcol-pprof: $(OTELCOL_PPROF)

$(OTELCOL_PPROF): $(OTELCOL_INPUTS) scripts/derive-manifest.sh build/version | $(BUILDER)
	mkdir -p build
	scripts/derive-manifest.sh otelcol-ernic-pprof \
		extensions=github.com/open-telemetry/opentelemetry-collector-contrib/extension/pprofextension@v0.165.1 | \
		sed 's|^  version: .*|  version: $(VERSION)|' >build/builder-config-otelcol-ernic-pprof.yaml
	$(BUILDER) --config build/builder-config-otelcol-ernic-pprof.yaml --ldflags=-w
	touch $@

# otelcol-upgrade: the distribution built a second time under another
# version, UPGRADE_VERSION (the next patch's pre-release "-upgrade"), into
# build/otelcol-ernic-upgrade/otelcol-ernic: the build the fleet test's
# rolling upgrade goes to, as a package upgrade replaces the binary by one
# of another version. The version goes in through ocb's dist.version, as
# for `make otelcol`.
UPGRADE_VERSION ?= $(shell echo '$(VERSION)' | awk -F'[.+-]' '{ printf "%d.%d.%d-upgrade", $$1, $$2, $$3 + 1 }')
OTELCOL_UPGRADE := build/otelcol-ernic-upgrade/otelcol-ernic
.PHONY: otelcol-upgrade
otelcol-upgrade: $(OTELCOL_UPGRADE)

$(OTELCOL_UPGRADE): $(OTELCOL_INPUTS) build/version | $(BUILDER)
	mkdir -p build
	sed -e 's|^  version: .*|  version: $(UPGRADE_VERSION)|' -e 's|build/otelcol-ernic$$|build/otelcol-ernic-upgrade|' \
		builder-config.yaml >build/builder-config-otelcol-ernic-upgrade.yaml
	$(BUILDER) --config build/builder-config-otelcol-ernic-upgrade.yaml
	touch $@

# fleet-test: the fleet at its own size (test/fleet, build tag fleet;
# docs/operations.md, A fleet through an outage): FLEET_HOSTS collectors
# (100) with host names of their own (unshare --uts: as root, else the test
# skips), each on its own simulated run directory, push with the shipped
# remote-write configuration and the fleet profile into three Thanos
# receivers through an outage of every receiver for FLEET_OUTAGE (4m), a
# receiver killed mid-catch-up, 429s with odd Retry-After values, a host an
# hour ahead, and a rolling upgrade to otelcol-upgrade; every sample is
# compared with a reference Prometheus. About 10 minutes (8 after the builds); CI runs it after
# `make test` (.ci/run). Debian's prometheus (test-deps) and Thanos
# (bin/thanos, or THANOS_BIN) as for e2e-test.
FLEET_HOSTS ?= 100
FLEET_OUTAGE ?= 4m
.PHONY: fleet-test
fleet-test: test-deps otelcol otelcol-upgrade $(if $(THANOS_BIN),,$(THANOS))
	OTELCOL_BIN=$(CURDIR)/$(OTELCOL) OTELCOL_UPGRADE_BIN=$(CURDIR)/$(OTELCOL_UPGRADE) THANOS_BIN=$${THANOS_BIN:-$(CURDIR)/$(THANOS)} \
		FLEET_HOSTS=$(FLEET_HOSTS) FLEET_OUTAGE=$(FLEET_OUTAGE) \
		$(GO) test -tags fleet -count=1 -v -timeout 45m ./test/fleet/

# bench-outage: RSS and state directory of config/prometheus-remote-write.yaml
# during an outage of the backend, then the time to deliver the backlog
# (scripts/bench-outage.sh: SIZE, OUTAGE seconds, ERNIC_BUFFER_MAX_BYTES).
.PHONY: bench-outage
bench-outage: otelcol sim
	OTELCOL=$(OTELCOL) SIM=$(SIM) scripts/bench-outage.sh

# bench-budget: series, samples and request bytes per second of each push
# configuration, alone and with config/fleet.yaml, from the collectors' own
# telemetry, and what the fleet profile's local endpoint serves
# (scripts/bench-budget.sh: SIZES, WARMUP, WINDOW).
.PHONY: bench-budget
bench-budget: test-deps otelcol otelcol-test sim
	OTELCOL=$(OTELCOL) OTELCOL_TEST=$(OTELCOL_TEST) SIM=$(SIM) scripts/bench-budget.sh

# bench-pair: two collectors side by side at the same time on one run
# directory and one backend, CPU of B over A per round (scripts/bench-pair.sh:
# A_OTELCOL/B_OTELCOL, A_ENV/B_ENV, A_CONFIG/B_CONFIG, SIZE, PIPELINE or
# A_PIPELINE/B_PIPELINE pull, prw, otlp or otlphttp, WARMUP,
# DURATION, ROUNDS; TELEMETRY=1 adds what each sent a scrape: points,
# requests, bytes): for a change smaller than the machine's swing
# between two runs of bench-e2e.
.PHONY: bench-pair
bench-pair: test-deps otelcol otelcol-test sim
	OTELCOL=$(OTELCOL) OTELCOL_TEST=$(OTELCOL_TEST) SIM=$(SIM) scripts/bench-pair.sh

# bench-legacy: the collector (config/local.yaml, the systemd unit's
# runtime settings) and the legacy Python exporter side by side, at the same
# time, on one run directory per size, a GET of each every 5 s; CPU, RSS and
# GET time of each and collector / legacy per round, then the median and
# spread of the ratios (scripts/bench-legacy.sh: SIZES, ROUNDS, WARMUP,
# WINDOW); fails if a 16x64 round's CPU ratio is above 0.2. The legacy
# exporter is not in this repository: LEGACY_EXPORTER is the path of a local
# copy of rocm-ernic's prometheus/ernic-exporter (it needs Debian's
# python3-prometheus-client, installed as root when missing). Checked first,
# before anything is built.
.PHONY: bench-legacy bench-legacy-deps
bench-legacy: bench-legacy-deps otelcol sim
	LEGACY_EXPORTER='$(LEGACY_EXPORTER)' OTELCOL=$(OTELCOL) SIM=$(SIM) scripts/bench-legacy.sh

bench-legacy-deps:
	LEGACY_EXPORTER='$(LEGACY_EXPORTER)' scripts/bench-legacy.sh deps

# bench-e2e-pprof: bench-e2e on the pprof build variant, saving a CPU and a
# heap profile of each run under build/bench-e2e/ (PPROF: the port).
bench-e2e-pprof: test-deps otelcol-pprof otelcol-test sim
	OTELCOL=$(OTELCOL_PPROF) OTELCOL_TEST=$(OTELCOL_TEST) SIM=$(SIM) PPROF=$${PPROF:-19877} scripts/bench-e2e.sh

# clean: remove the builder, the simulator and the generated distribution.
clean:
	rm -rf bin build
